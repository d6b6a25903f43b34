import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import { SingpassSign } from '../../../nodes/SingpassSign/SingpassSign.node';
import { fixture } from '../../fixtures/pdfs';
import { binaryBuffer, executeContext, pdfItem } from '../context';
import { startSignSandbox, type SignSandbox } from '../sign-harness';

/**
 * Issue 17 in the n8n operations, against the sandbox over real HTTP: Finalize Signature outputs the signed record
 * to store (not an error) when the TSA or an OCSP responder fails for the moment, and run again on it finishes with
 * one signature; a failure for good ends the session in the output; Submit Document Hash's first call refused is the
 * service's verdict, while After an Interruption takes "already submitted" as the earlier call having got through.
 */
describe('Singpass Sign node: resumable finishing and the first hash call', () => {
  let env: SignSandbox;
  beforeAll(async () => {
    env = await startSignSandbox();
  }, 120_000);
  afterAll(() => env?.close());

  const run = (params: Record<string, unknown>, items: INodeExecutionData[] = [{ json: {} }]) =>
    new SingpassSign().execute.call(executeContext({ params, items, credentials: env.credentials }));
  const submit = (record: unknown, afterInterruption?: boolean) =>
    run({ resource: 'session', operation: 'submitDocumentHash', record, ...(afterInterruption === undefined ? {} : { afterInterruption }) });
  const finalize = (record: unknown, input: Buffer) =>
    run({ resource: 'session', operation: 'finalizeSignature', record, binaryPropertyName: 'data', outputBinaryPropertyName: 'data' }, [pdfItem(input)]);

  /** Create → scan → Prepare PDF Signature (the save point's record, as stored). */
  async function atSavePoint(input: Buffer, level = 'B-B') {
    const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'F.pdf', level, options: {} }, [pdfItem(input)]);
    const signRef = created.json.signRef as string;
    await env.sb.phone.scan(signRef, { user: 'p256' });
    const cert = await env.next(0);
    const [[prepared]] = await run({ resource: 'session', operation: 'preparePdfSignature', record: created.json.record, delivery: cert.json.delivery, binaryPropertyName: 'data' }, [pdfItem(input)]);
    expect(prepared.json).toMatchObject({ readyToSubmit: true });
    return { signRef, record: JSON.parse(JSON.stringify(prepared.json.record)) as IDataObject };
  }

  /** … → Submit → approve → Apply Webhook Event: the signed record (the second save point). */
  async function signed(input: Buffer, level: string) {
    const s = await atSavePoint(input, level);
    const [[submitted]] = await submit(s.record);
    expect(submitted.json.status).toBe('hash_submitted');
    await env.sb.phone.approve(s.signRef);
    const sig = await env.next(1);
    const [[applied]] = await run({ resource: 'session', operation: 'applyEvent', record: submitted.json.record, delivery: sig.json.delivery, binaryPropertyName: 'data' });
    expect(applied.json.status).toBe('signed');
    return { signRef: s.signRef, record: JSON.parse(JSON.stringify(applied.json.record)) as IDataObject };
  }

  function pdfsig(pdf: Buffer): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-finish-'));
    try {
      fs.writeFileSync(path.join(dir, 'signed.pdf'), pdf);
      execFileSync('qpdf', ['--check', path.join(dir, 'signed.pdf')]);
      return execFileSync('pdfsig', [path.join(dir, 'signed.pdf')]).toString();
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  }

  it.each([
    ['the TSA', 'tsa', 'embed', 'TSA_FAILED'],
    ['the OCSP responder', 'ocsp', 'validationData', 'OCSP_FAILED'],
  ] as const)('%s down: Finalize outputs the signed record with lastFinishFailure and no PDF; run again on it once it is back, one signature at B-LTA', async (_name, responder, stage, code) => {
    const input = await fixture('classic');
    const s = await signed(input, 'B-LTA');
    env.sb.ca.failNext(responder, 1000);
    let record = s.record;
    const deferrals: IDataObject[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const [[out]] = await finalize(record, input);
        expect(out.json).toMatchObject({ status: 'signed', retryLater: true, error: { code }, finishFailure: { stage, attempts: i + 1 } });
        expect(out.binary?.data).toBeUndefined(); // the unsigned input is not handed on as the result
        record = out.json.record as IDataObject;
        deferrals.push(record.lastFinishFailure as IDataObject);
      }
    } finally {
      env.sb.ca.failNext(responder, 0);
    }
    // the backoff grows; the finishing window stays the one set by the first failure
    expect(deferrals.map((d) => (d.retryAt as number) - (d.at as number))).toEqual([1000, 2000]);
    expect(deferrals[1].finishBy).toBe(deferrals[0].finishBy);
    expect(record).toMatchObject({ state: { status: 'signed' }, prepared: expect.any(Object) }); // the signature is kept

    const [[done]] = await finalize(record, input);
    expect(done.json).toMatchObject({ status: 'completed', retryLater: false, result: { level: 'B-LTA', valid: true } });
    expect(done.json.record).not.toHaveProperty('lastFinishFailure');
    const report = pdfsig(binaryBuffer(done.binary!.data));
    const parts = report.split(/^Signature #\d+:$/m).slice(1);
    expect(parts.filter((p) => /ETSI\.CAdES\.detached/.test(p))).toHaveLength(1); // ONE user signature
    expect(parts.filter((p) => /Time Stamping Authority/.test(p))).toHaveLength(1); // and the document timestamp
  }, 180_000);

  it('a TSA refusing the request for good (RFC 3161 badRequest): completed with the signed PDF at B-B in the output field, result.missing says what is missing', async () => {
    const input = await fixture('classic');
    const s = await signed(input, 'B-LTA');
    env.sb.ca.failNext('tsa', 1000, 'badRequest');
    try {
      const [[out]] = await finalize(s.record, input);
      expect(out.json).toMatchObject({
        status: 'completed', retryLater: false,
        result: { level: 'B-B', valid: true, missing: { requested: 'B-LTA', stage: 'embed', code: 'TSA_FAILED', message: expect.stringContaining('badRequest') } },
      });
      expect(out.json).not.toHaveProperty('error');
      const report = pdfsig(binaryBuffer(out.binary!.data));
      expect(report.split(/^Signature #\d+:$/m).slice(1)).toHaveLength(1);
      expect(report).toContain('Signature Validation: Signature is Valid.');
    } finally {
      env.sb.ca.failNext('tsa', 0);
    }
  }, 120_000);

  it('a failure retrying cannot fix ends the session in the output (not thrown): failed with the reason, no PDF', async () => {
    const input = await fixture('classic');
    const s = await signed(input, 'B-T');
    const state = s.record.state as IDataObject;
    const sig = state.signature as string;
    // a signature that does not verify over the prepared attributes (as if the service had sent another one)
    const tampered = { ...s.record, state: { ...state, signature: sig.slice(0, -4) + (sig.endsWith('00') ? '11' : '00') + sig.slice(-2) } };
    const [[out]] = await finalize(tampered, input);
    expect(out.json).toMatchObject({ status: 'failed', retryLater: false, error: { code: 'SIGNATURE_INVALID' } });
    expect(out.binary?.data).toBeUndefined();
    expect(out.json.record).not.toHaveProperty('prepared');
  }, 120_000);

  it('a first hash call the service refuses (400) fails the session with the service\'s code and message; nothing is sent twice', async () => {
    const input = await fixture('classic');
    const s = await atSavePoint(input);
    expect((s.record.submitting as IDataObject).attempts).toBe(0);
    env.sb.sign.faults.refuseHash(1, 'certificate not delivered yet');
    const [[out]] = await submit(s.record);
    expect(out.json).toMatchObject({ status: 'failed', retryLater: false, error: { code: 'SIGN_REQUEST_REJECTED', message: expect.stringContaining('certificate not delivered yet') } });
    expect(env.sb.sign.hashCalls().filter((h) => h.signRef === s.signRef).map((h) => h.status)).toEqual([400]);
  }, 120_000);

  it('After an Interruption: the stored save point resent after a call that got through is "already submitted" → the session waits; the same record without it is a first call, refused for good', async () => {
    const input = await fixture('classic');
    const s = await atSavePoint(input);
    const [[first]] = await submit(s.record); // n8n "dies" before storing this answer: the stored record is still s.record
    expect(first.json.status).toBe('hash_submitted');
    const [[resumed]] = await submit(s.record, true);
    expect(resumed.json).toMatchObject({ status: 'hash_submitted', retryLater: false });
    expect(env.sb.sign.session(s.signRef)?.docHash).toBe((s.record.submitting as IDataObject).documentHash);
    const [[live]] = await submit(s.record, false);
    expect(live.json).toMatchObject({ status: 'failed', error: { code: 'SIGN_REQUEST_REJECTED' } });
  }, 120_000);
});
