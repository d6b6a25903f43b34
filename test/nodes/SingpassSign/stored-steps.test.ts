/**
 * The certificate branch as the sample shows it, on the session store: Check Certificate Status (the trigger's
 * certificate, passed on) → Prepare PDF Signature (Session Record) → Submit Document Hash (Session Record), then the
 * signature through Run Due Step taking the session from the trigger's item. No expression anywhere: every field comes
 * from the items and the store credential. Against the sandbox over real HTTP, a folder store.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { INodeExecutionData } from 'n8n-workflow';
import { SingpassSign } from '../../../nodes/SingpassSign/SingpassSign.node';
import { STORE_CREDENTIAL } from '../../../nodes/shared/record-store';
import { FileSessionStore } from '../../../src/session';
import { fixture } from '../../fixtures/pdfs';
import { binaryBuffer, executeContext, pdfItem } from '../context';
import { startSignSandbox, type SignSandbox } from '../sign-harness';

describe('Singpass Sign node: the certificate branch on the session store (Check Certificate Status → Prepare → Submit)', () => {
  let env: SignSandbox;
  let dir: string;
  let store: FileSessionStore;
  beforeAll(async () => {
    env = await startSignSandbox();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-stored-steps-'));
    store = new FileSessionStore(dir);
    env.credentials[STORE_CREDENTIAL] = { kind: 'folder', folder: dir, idleSeconds: 45 };
    env.triggerParams.sessionRecords = 'store';
  }, 120_000);
  afterAll(async () => {
    await env?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const run = (params: Record<string, unknown>, items: INodeExecutionData[] = [{ json: {} }], continueOnFail = false) =>
    new SingpassSign().execute.call(executeContext({ params, items, credentials: env.credentials, typeVersion: 2, continueOnFail }));
  const check = (item: INodeExecutionData, continueOnFail = false) => run({ resource: 'certificate', operation: 'checkCertificateStatus', certificateFrom: 'delivery' }, [item], continueOnFail);
  const prepare = (item: INodeExecutionData) => run({ resource: 'sessionRecord', operation: 'prepareStoredSignature' }, [item]);
  const submit = (item: INodeExecutionData) => run({ resource: 'sessionRecord', operation: 'submitStoredHash' }, [item]);

  /** Create Session (Session Record: saved with its PDF) → the phone scans: the trigger's certificate item. */
  async function scanned(user: 'p256' | 'revoked' = 'p256'): Promise<{ signRef: string; item: INodeExecutionData; pdf: Buffer }> {
    const pdf = await fixture('classic');
    const [[created]] = await run({ resource: 'sessionRecord', operation: 'createStoredSession', binaryPropertyName: 'data', documentName: 'S.pdf', level: 'B-T', options: { qrImages: false } }, [pdfItem(pdf)]);
    const signRef = created.json.signRef as string;
    expect(created.json).toMatchObject({ saved: true, revision: 1, status: 'waiting_for_scan' });
    await env.sb.phone.scan(signRef, { user });
    const item = await env.next(0);
    expect(item.json).toMatchObject({ type: 'certificate', signRef });
    return { signRef, item, pdf };
  }

  it('Create Session (Session Record) saves the record and the PDF before it hands on, and outputs what Create Session does', async () => {
    const pdf = await fixture('classic');
    const [[created]] = await run({ resource: 'sessionRecord', operation: 'createStoredSession', binaryPropertyName: 'data', documentName: 'C.pdf', level: 'B-T', options: { qrImages: false, reason: 'Approved' } }, [pdfItem(pdf)]);
    const signRef = created.json.signRef as string;
    expect(created.json).toMatchObject({ saved: true, revision: 1, documentName: 'C.pdf', challengeCode: expect.stringMatching(/^\d{4}$/), signerLink: { query: expect.stringContaining(encodeURIComponent(signRef)) } });
    expect(created.json.qrPayload).toEqual(expect.any(String));
    const stored = (await store.get(signRef))!;
    expect(stored).toMatchObject({ revision: 1, request: { documentName: 'C.pdf', level: 'B-T', reason: 'Approved' } });
    expect(stored).toEqual({ ...created.json.record as object, revision: 1, phase: 'waitingForScan' });
    expect((await store.getDocument(signRef))!.equals(pdf)).toBe(true);
    // the PDF stays on the item for the workflow
    expect(binaryBuffer(created.binary!.data).equals(pdf)).toBe(true);
  });

  it('the chain end to end: OCSP good with the event passed on; the save point saved before anything is sent; the hash sent once; the signature finished by Run Due Step from the trigger\'s item', async () => {
    const s = await scanned();
    const [[status]] = await check(s.item);
    expect(status.json).toMatchObject({ status: 'good', good: true, signRef: s.signRef, delivery: s.item.json.delivery });

    const [[prepared]] = await prepare(status);
    expect(prepared.json).toMatchObject({ found: true, prepared: true, lost: false, signRef: s.signRef, status: 'certificate_received' });
    const atSavePoint = (await store.get(s.signRef))!;
    expect(atSavePoint.revision).toBe(prepared.json.revision);
    expect(atSavePoint.submitting).toMatchObject({ attempts: 0, documentHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(env.sb.sign.session(s.signRef)?.docHash).toBeUndefined(); // nothing sent yet

    const [[submitted]] = await submit(prepared);
    expect(submitted.json).toMatchObject({ submitted: true, lost: false, status: 'hash_submitted', retryLater: false });
    expect(env.sb.sign.session(s.signRef)?.docHash).toBe(atSavePoint.submitting!.documentHash);
    expect((await store.get(s.signRef))!.state.status).toBe('hash_submitted');

    await env.sb.phone.approve(s.signRef);
    const signature = await env.next(1);
    const [[finished]] = await run({ resource: 'sessionRecord', operation: 'runDueStep', sessionFrom: 'item', outputBinaryPropertyName: 'data' }, [signature]);
    expect(finished.json).toMatchObject({ action: 'finish', ended: false, handOver: true, attempt: 1, status: 'completed', phase: 'handingOver', event: 'signature', result: { level: 'B-T', valid: true } });
    expect(binaryBuffer(finished.binary!.data).subarray(0, 5).toString()).toBe('%PDF-');
  }, 120_000);

  it('the same certificate event again (a redelivery, a second execution): prepared false, and Submit sends nothing', async () => {
    const s = await scanned();
    const [[first]] = await prepare(s.item);
    expect(first.json.prepared).toBe(true);
    const [[again]] = await prepare(s.item);
    expect(again.json).toMatchObject({ prepared: false, status: 'certificate_received', revision: first.json.revision });
    const [[none]] = await submit(again);
    expect(none.json).toMatchObject({ submitted: false });
    expect(env.sb.sign.session(s.signRef)?.docHash).toBeUndefined();
    // the run that prepared still sends it
    const [[sent]] = await submit(first);
    expect(sent.json).toMatchObject({ submitted: true, status: 'hash_submitted' });
  }, 120_000);

  it('a revoked certificate: Check reports it (the event passed on), Prepare ends the session in the store with OCSP_REVOKED, Submit sends nothing', async () => {
    const s = await scanned('revoked');
    const [[status]] = await check(s.item);
    expect(status.json).toMatchObject({ status: 'revoked', good: false, code: 'OCSP_REVOKED', signRef: s.signRef });
    const [[prepared]] = await prepare(status);
    expect(prepared.json).toMatchObject({ prepared: false, status: 'failed', error: { code: 'OCSP_REVOKED' } });
    expect((await store.get(s.signRef))!.state.status).toBe('failed');
    const [[submitted]] = await submit(prepared);
    expect(submitted.json.submitted).toBe(false);
    expect(env.sb.sign.session(s.signRef)?.docHash).toBeUndefined();
  }, 120_000);

  it('Check Certificate Status with On Error: continue hands the trigger\'s event on with the error, so Prepare still decides', async () => {
    const s = await scanned();
    // the OCSP responder down for the check, back for Prepare
    env.sb.ca.failNext('ocsp', 1000);
    let failed: INodeExecutionData;
    try {
      [[failed]] = await check(s.item, true);
    } finally {
      env.sb.ca.failNext('ocsp', 0);
    }
    expect(failed.json).toMatchObject({ signRef: s.signRef, delivery: s.item.json.delivery });
    expect(failed.json.code).toBe('OCSP_FAILED');
    const [[prepared]] = await prepare(failed);
    expect(prepared.json.prepared).toBe(true);
  }, 120_000);

  it('refuses an item without the trigger\'s event, or with another event, naming what to connect', async () => {
    await expect(prepare({ json: { signRef: 'x' } })).rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/Certificate output/) });
    await expect(check({ json: {} })).rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/Certificate From/) });
    await expect(submit({ json: {} })).rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/Prepare PDF Signature/) });
    await expect(run({ resource: 'sessionRecord', operation: 'runDueStep', sessionFrom: 'item' }, [{ json: {} }])).rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/signRef/) });
  });
});
