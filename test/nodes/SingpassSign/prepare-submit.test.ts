import type { INodeExecutionData } from 'n8n-workflow';
import { SingpassSign } from '../../../nodes/SingpassSign/SingpassSign.node';
import { fixture } from '../../fixtures/pdfs';
import { executeContext, pdfItem } from '../context';
import { startSignSandbox, type SignSandbox } from '../sign-harness';

/**
 * The certificate step in two nodes (the workflow stores the record in between, so an n8n that dies after the hash
 * call resubmits the same hash): Prepare PDF Signature sends nothing; Submit Document Hash takes only its record.
 * Against the sandbox over real HTTP.
 */
describe('Singpass Sign node: Prepare PDF Signature → Submit Document Hash', () => {
  let env: SignSandbox;
  beforeAll(async () => {
    env = await startSignSandbox();
  }, 120_000);
  afterAll(() => env?.close());

  const run = (params: Record<string, unknown>, items: INodeExecutionData[] = [{ json: {} }]) =>
    new SingpassSign().execute.call(executeContext({ params, items, credentials: env.credentials }));
  const prepare = (record: unknown, delivery: unknown, input: Buffer) =>
    run({ resource: 'session', operation: 'preparePdfSignature', record, delivery, binaryPropertyName: 'data' }, [pdfItem(input)]);
  const submit = (record: unknown, afterInterruption = false) => run({ resource: 'session', operation: 'submitDocumentHash', record, afterInterruption });

  /** A session whose user scanned: the created record and the trigger's certificate delivery. */
  async function scanned(input: Buffer, user: 'p256' | 'revoked' = 'p256') {
    const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'P.pdf', level: 'B-B', options: {} }, [pdfItem(input)]);
    const signRef = created.json.signRef as string;
    await env.sb.phone.scan(signRef, { user });
    const cert = await env.next(0);
    expect(cert.json).toMatchObject({ type: 'certificate', signRef });
    return { signRef, record: created.json.record, delivery: cert.json.delivery };
  }

  it('prepare outputs the save point and sends no hash; submit sends it; the session then signs and finalizes', async () => {
    const input = await fixture('classic');
    const s = await scanned(input);
    const [[prepared]] = await prepare(s.record, s.delivery, input);
    expect(prepared.json).toMatchObject({ status: 'certificate_received', readyToSubmit: true, duplicate: false });
    const saved = prepared.json.record as { submitting?: { documentHash: string } };
    expect(saved.submitting?.documentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(env.sb.sign.session(s.signRef)?.docHash).toBeUndefined(); // nothing left n8n yet

    // the record as the workflow stored it (JSON round trip) is what Submit gets
    const [[submitted]] = await submit(JSON.parse(JSON.stringify(saved)));
    expect(submitted.json).toMatchObject({ status: 'hash_submitted' });
    expect(submitted.json.record).not.toHaveProperty('submitting');
    expect(env.sb.sign.session(s.signRef)?.docHash).toBe(saved.submitting!.documentHash);

    await env.sb.phone.approve(s.signRef);
    const sig = await env.next(1);
    const [[signedEvent]] = await run({ resource: 'session', operation: 'applyEvent', record: submitted.json.record, delivery: sig.json.delivery, binaryPropertyName: 'data' });
    expect(signedEvent.json.status).toBe('signed');
    const [[finalized]] = await run({ resource: 'session', operation: 'finalizeSignature', record: signedEvent.json.record, binaryPropertyName: 'data', outputBinaryPropertyName: 'data' }, [pdfItem(input)]);
    expect(finalized.json).toMatchObject({ status: 'completed', result: { level: 'B-B', valid: true } });
  }, 120_000);

  it('submit replayed After an Interruption on the stored save point (n8n died after the call): the service says already submitted → the session waits', async () => {
    const input = await fixture('classic');
    const s = await scanned(input);
    const [[prepared]] = await prepare(s.record, s.delivery, input);
    const [[first]] = await submit(prepared.json.record);
    const hash = env.sb.sign.session(s.signRef)?.docHash;
    expect(first.json.status).toBe('hash_submitted');
    const [[replayed]] = await submit(prepared.json.record, true);
    expect(replayed.json).toMatchObject({ status: 'hash_submitted' });
    expect(env.sb.sign.session(s.signRef)?.docHash).toBe(hash); // the same hash, not a second one

    // the certificate delivery replayed into Prepare on the stored save point gives the same save point (no new hash)
    const [[again]] = await prepare(prepared.json.record, s.delivery, input);
    expect((again.json.record as { submitting: unknown }).submitting).toEqual((prepared.json.record as { submitting: unknown }).submitting);
  }, 120_000);

  it('a hash call the service cannot take now (503): the record stays at the save point (the engine\'s rule, no option) and a later run submits the same hash; a permanent refusal fails the session', async () => {
    const input = await fixture('classic');
    const s = await scanned(input);
    const [[prepared]] = await prepare(s.record, s.delivery, input);
    const saved = prepared.json.record as { submitting: { documentHash: string }; prepared: unknown; revision: number };
    env.sb.sign.faults.serviceError(2, 503); // both attempts of the client
    const [[kept]] = await submit(saved);
    expect(kept.json).toMatchObject({ status: 'certificate_received', readyToSubmit: true, retryLater: true, error: { code: 'SIGN_SERVICE_ERROR' } });
    const keptRecord = kept.json.record as typeof saved & { lastSubmitFailure?: { code: string; attempts: number; retryAt: number } };
    expect(keptRecord.submitting).toEqual({ ...saved.submitting, attempts: 1 }); // the same hash goes next time, and the call is counted
    expect(keptRecord.prepared).toEqual(saved.prepared);
    expect(keptRecord.lastSubmitFailure).toMatchObject({ code: 'SIGN_SERVICE_ERROR', status: 503, attempts: 1 });
    expect(env.sb.sign.session(s.signRef)?.docHash).toBeUndefined();
    const [[later]] = await submit(kept.json.record);
    expect(later.json).toMatchObject({ status: 'hash_submitted', readyToSubmit: false, retryLater: false });
    expect(later.json).not.toHaveProperty('error');
    expect(later.json.record).not.toHaveProperty('lastSubmitFailure');
    expect(env.sb.sign.session(s.signRef)?.docHash).toBe(saved.submitting.documentHash);

    // the service no longer knows the session (SIGN_REF_NOT_FOUND): a refusal for good, the session fails
    const other = await scanned(input);
    const [[prepared2]] = await prepare(other.record, other.delivery, input);
    env.sb.sign.faults.expireSession(other.signRef);
    const [[ended]] = await submit(prepared2.json.record);
    expect(ended.json).toMatchObject({ status: 'failed', readyToSubmit: false, retryLater: false, error: { code: 'SIGN_REF_NOT_FOUND' } });
  }, 120_000);

  it('prepare on a certificate another execution applied first (a redelivery) is a duplicate, not ready to submit: no second "first call" that would fail the session', async () => {
    const input = await fixture('classic');
    const s = await scanned(input);
    const [[prepared]] = await prepare(s.record, s.delivery, input);
    expect(prepared.json).toMatchObject({ readyToSubmit: true, duplicate: false });
    // the redelivered certificate, on the record the first execution saved at the save point
    const [[again]] = await prepare(prepared.json.record, s.delivery, input);
    expect(again.json).toMatchObject({ status: 'certificate_received', readyToSubmit: false, duplicate: true });
    expect(again.json.record).toEqual(prepared.json.record);
    expect(env.sb.sign.session(s.signRef)?.docHash).toBeUndefined();
  }, 120_000);

  it('submit refuses a record that is not at the save point (no hash without the certificate check)', async () => {
    const input = await fixture('classic');
    const s = await scanned(input);
    await expect(submit(s.record)).rejects.toMatchObject({ context: { code: 'STATE_INVALID' }, message: expect.stringMatching(/Prepare PDF Signature.*waiting_for_scan/) });
    const [[prepared]] = await prepare(s.record, s.delivery, input);
    const [[submitted]] = await submit(prepared.json.record);
    await expect(submit(submitted.json.record)).rejects.toMatchObject({ context: { code: 'STATE_INVALID' }, message: expect.stringMatching(/hash_submitted/) });
    expect(env.sb.sign.session(s.signRef)?.docHash).toBe((prepared.json.record as { submitting: { documentHash: string } }).submitting.documentHash);
  }, 120_000);

  it('a revoked certificate ends the session at prepare: failed, not submittable, no hash', async () => {
    const input = await fixture('classic');
    const s = await scanned(input, 'revoked');
    const [[prepared]] = await prepare(s.record, s.delivery, input);
    expect(prepared.json).toMatchObject({ status: 'failed', readyToSubmit: false, error: { code: 'OCSP_REVOKED' } });
    await expect(submit(prepared.json.record)).rejects.toMatchObject({ context: { code: 'STATE_INVALID' } });
    expect(env.sb.sign.session(s.signRef)?.docHash).toBeUndefined();
  }, 120_000);

  it('prepare refuses an event that is not a certificate event', async () => {
    const input = await fixture('classic');
    const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'X.pdf', level: 'B-B', options: {} }, [pdfItem(input)]);
    await env.sb.phone.reject(created.json.signRef as string);
    const err = await env.next(2);
    await expect(prepare(created.json.record, err.json.delivery, input)).rejects.toMatchObject({ context: { code: 'STATE_INVALID' }, message: expect.stringMatching(/certificate event, got the "error" event/) });
  }, 120_000);
});
