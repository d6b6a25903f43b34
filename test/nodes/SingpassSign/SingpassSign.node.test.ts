import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { INodeExecutionData } from 'n8n-workflow';
import { SingpassSign } from '../../../nodes/SingpassSign/SingpassSign.node';
import { fixture } from '../../fixtures/pdfs';
import { binaryBuffer, executeContext, pdfItem } from '../context';
import { startSignSandbox, type SignSandbox } from '../sign-harness';

/**
 * The Singpass Sign node's operations one after the other, as the sample workflow wires them, against the sandbox
 * over real HTTP; the trigger node receives the sandbox's webhooks. PDFs are checked with pdfsig and qpdf.
 */
describe('Singpass Sign node: a whole session against the sandbox', () => {
  let env: SignSandbox;
  beforeAll(async () => {
    env = await startSignSandbox();
  }, 120_000);
  afterAll(() => env?.close());

  const run = (params: Record<string, unknown>, items: INodeExecutionData[], continueOnFail = false) =>
    new SingpassSign().execute.call(executeContext({ params, items, credentials: env.credentials, continueOnFail }));

  it('create → certificate → apply (OCSP, prepare, hash) → signature → finalize B-T → B-LT → B-LTA → verify', async () => {
    const input = await fixture('classic');
    const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: '', level: 'B-T', options: { reason: 'Approved' } }, [pdfItem(input)]);
    expect(created.json).toMatchObject({ status: 'waiting_for_scan', challengeCode: expect.stringMatching(/^\d{4}$/), documentName: 'contract.pdf' });
    expect(binaryBuffer(created.binary!.qr).subarray(0, 4).toString('latin1')).toBe('\x89PNG');
    const signRef = created.json.signRef as string;
    let record = created.json.record;

    await env.sb.phone.scan(signRef, { user: 'p256' });
    const cert = await env.next(0);
    expect(cert.json).toMatchObject({ type: 'certificate', signRef });
    const [[applied]] = await run({ resource: 'session', operation: 'applyEvent', record, delivery: cert.json.delivery, binaryPropertyName: 'data' }, [pdfItem(input)]);
    expect(applied.json).toMatchObject({ status: 'hash_submitted', duplicate: false, event: 'certificate' });
    const submittedHash = env.sb.sign.session(signRef)?.docHash;
    expect(submittedHash).toMatch(/^[0-9a-f]{64}$/);

    // A retried certificate delivery applied to the new record changes nothing: never a second hash.
    const [[again]] = await run({ resource: 'session', operation: 'applyEvent', record: applied.json.record, delivery: cert.json.delivery, binaryPropertyName: 'data' }, [pdfItem(input)]);
    expect(again.json).toMatchObject({ duplicate: true, status: 'hash_submitted' });
    expect(env.sb.sign.session(signRef)?.docHash).toBe(submittedHash);
    record = applied.json.record;

    await env.sb.phone.approve(signRef);
    const sig = await env.next(1);
    const [[signedEvent]] = await run({ resource: 'session', operation: 'applyEvent', record, delivery: sig.json.delivery, binaryPropertyName: 'data' }, [{ json: {} }]);
    expect(signedEvent.json.status).toBe('signed');

    const [[finalized]] = await run({ resource: 'session', operation: 'finalizeSignature', record: signedEvent.json.record, binaryPropertyName: 'data', outputBinaryPropertyName: 'data' }, [pdfItem(input)]);
    expect(finalized.json).toMatchObject({ status: 'completed', result: { level: 'B-T', valid: true } });
    expect(JSON.stringify(finalized.json.record)).not.toContain('"certificate"');
    expect(finalized.binary!.data.fileName).toBe('contract-signed.pdf');

    const [[lt]] = await run({ resource: 'document', operation: 'addValidationData', binaryPropertyName: 'data', outputBinaryPropertyName: 'data' }, [finalized]);
    const [[lta]] = await run({ resource: 'document', operation: 'addDocumentTimestamp', binaryPropertyName: 'data', outputBinaryPropertyName: 'data', timestampValidationData: true }, [lt]);
    const [[verified]] = await run({ resource: 'document', operation: 'verifySignedPdf', binaryPropertyName: 'data', failIfInvalid: true }, [lta]);
    expect(verified.json.verification).toMatchObject({ valid: true, level: 'B-LTA' });

    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'n8n-sign-')), 'signed.pdf');
    fs.writeFileSync(file, binaryBuffer(lta.binary!.data));
    try {
      execFileSync('qpdf', ['--check', file]);
      const pdfsig = execFileSync('pdfsig', [file]).toString();
      expect(pdfsig).toMatch(/Signature #1:[\s\S]*Signature Validation: Signature is Valid/);
      expect(pdfsig).toMatch(/Signature #2:[\s\S]*Time Stamping Authority/); // the B-LTA document timestamp (this pdfsig cannot validate RFC 3161 ones)
    } finally {
      fs.rmSync(path.dirname(file), { recursive: true });
    }
  }, 120_000);

  it('the trigger answers 400 to a delivery without a Bearer and does not start the workflow', async () => {
    const before = env.fired.length;
    const res = await fetch(env.sb.sign.clients()[0].notificationUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: 'x.y.z' }) });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'INVALID_CLIENT_NOTIFICATION_TOKEN', ndi_request_id: expect.any(String) });
    expect(env.fired.length).toBe(before);
  });

  it('wrong state, missing binary and a malformed record are clear errors', async () => {
    const input = await fixture('classic');
    const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'A.pdf', level: 'B-B', options: {} }, [pdfItem(input)]);
    await expect(run({ resource: 'session', operation: 'finalizeSignature', record: created.json.record, binaryPropertyName: 'data', outputBinaryPropertyName: 'data' }, [pdfItem(input)]))
      .rejects.toMatchObject({ context: { code: 'STATE_INVALID' }, message: expect.stringMatching(/waiting_for_scan/) });
    await expect(run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'file', documentName: '', level: 'B-B', options: {} }, [pdfItem(input)]))
      .rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/no binary property "file" \(it has: data\)/) });
    await expect(run({ resource: 'session', operation: 'expireSession', record: '{"format":"x"}' }, [{ json: {} }]))
      .rejects.toMatchObject({ context: { code: 'STATE_INVALID' } });
    const [[failed]] = await run({ resource: 'session', operation: 'applyEvent', record: created.json.record, delivery: { nope: 1 }, binaryPropertyName: 'data' }, [{ json: {} }], true);
    expect(failed).toMatchObject({ json: { code: 'INVALID_INPUT' }, pairedItem: { item: 0 } });
  });

  it('an encrypted PDF is refused before any session is created', async () => {
    const before = env.sb.sign.sessions().length;
    await expect(run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'E.pdf', level: 'B-B', options: {} }, [pdfItem(await fixture('encrypted'))]))
      .rejects.toMatchObject({ context: { code: 'PDF_ENCRYPTED' } });
    expect(env.sb.sign.sessions().length).toBe(before);
  });

  it('a user who rejects ends on the error output; applying it fails the session', async () => {
    const input = await fixture('classic');
    const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'R.pdf', level: 'B-B', options: {} }, [pdfItem(input)]);
    await env.sb.phone.reject(created.json.signRef as string);
    const err = await env.next(2);
    expect(err.json).toMatchObject({ type: 'error', signRef: created.json.signRef, error: { code: expect.any(String) } });
    const [[applied]] = await run({ resource: 'session', operation: 'applyEvent', record: created.json.record, delivery: err.json.delivery, binaryPropertyName: 'data' }, [{ json: {} }]);
    expect(applied.json).toMatchObject({ status: 'failed', error: { code: expect.any(String) } });
  });
});
