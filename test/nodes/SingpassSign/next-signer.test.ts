/**
 * Several signers in order with the Singpass Sign node (Create Session's signer place, Start Next Signer, Signer
 * Page), against the sandbox over real HTTP with a folder store: signer 1 signs, then signer 2 signs signer 1's
 * signed PDF in a session of their own (started once, whoever asks first); the final PDF carries both signatures,
 * valid and trusted, B-LTA after the last (pdfsig and `singpass-flows verify`). A second signer who declines or runs
 * out of time signs nothing, signer 1's signed PDF stays, and the link starts a new session for them.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { INodeExecutionData } from 'n8n-workflow';
import { main } from '../../../cli';
import { SingpassSign } from '../../../nodes/SingpassSign/SingpassSign.node';
import { verifyPdfSignatures } from '../../../src/pades';
import { FileSessionStore, type SessionRecord } from '../../../src/session';
import { fixture } from '../../fixtures/pdfs';
import { binaryBuffer, executeContext, pdfItem } from '../context';
import { startSignSandbox, type SignSandbox } from '../sign-harness';

describe('Singpass Sign node: several signers in order', () => {
  let env: SignSandbox;
  let dir: string;
  let store: FileSessionStore;
  beforeAll(async () => {
    env = await startSignSandbox();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-next-signer-'));
    store = new FileSessionStore(dir);
    env.triggerParams.recordFolder = dir;
    env.credentials.singpassSignApi = { ...env.credentials.singpassSignApi, tsaUrl: env.sb.urls.tsa };
  }, 120_000);
  afterAll(async () => {
    await env?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const run = (params: Record<string, unknown>, items: INodeExecutionData[] = [{ json: {} }]) =>
    new SingpassSign().execute.call(executeContext({ params, items, credentials: env.credentials }));
  const queryOf = (q: string) => Object.fromEntries(new URLSearchParams(q));
  const next = async (link: { query: string }, extra: Record<string, unknown> = {}) =>
    (await run({ resource: 'sessionRecord', operation: 'startNextSigner', store: 'folder', folder: dir, previousSignRef: queryOf(link.query).ref, linkKey: queryOf(link.query).key, label: 'Landlord', level: 'auto', ...extra }))[0][0].json;
  const status = async (signRef: string, key: string) =>
    JSON.parse((await run({ resource: 'sessionRecord', operation: 'signerPage', store: 'folder', folder: dir, signRef, linkKey: key, view: 'status', outputBinaryPropertyName: 'data' }))[0][0].json.body as string);
  const runDue = (signRef: string, delivery: unknown) =>
    run({ resource: 'sessionRecord', operation: 'runDueStep', store: 'folder', folder: dir, signRef, delivery, idleSeconds: 45, outputBinaryPropertyName: 'data' });

  /** Scan and approve on the phone; the webhook events applied as the sample's trigger branch does (Run Due Step). */
  async function sign(signRef: string, user = 'p256'): Promise<INodeExecutionData> {
    await env.sb.phone.scan(signRef, { user });
    await runDue(signRef, (await env.next(0)).json.delivery);
    await env.sb.phone.approve(signRef);
    const [[done]] = await runDue(signRef, (await env.next(1)).json.delivery);
    // finished to this signer's level and handed over; the sample's storage then acknowledges it
    expect(done.json).toMatchObject({ status: 'completed', phase: 'handingOver', handOver: true, attempt: 1 });
    const [[acked]] = await run({ resource: 'sessionRecord', operation: 'acknowledgeStoredPdf', store: 'folder', folder: dir, signRef });
    expect(acked.json).toMatchObject({ acknowledged: true, phase: 'completed' });
    return done;
  }

  async function firstSigner(): Promise<{ signRef: string; created: INodeExecutionData }> {
    const pdf = await fixture('classic');
    const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'Lease.pdf', level: 'B-T', options: { signer: '{ "position": 1, "of": 2, "label": "Tenant" }' } }, [pdfItem(pdf)]);
    await run({ resource: 'sessionRecord', operation: 'saveRecord', store: 'folder', folder: dir, record: created.json.record, saveAs: 'new', pdfBinaryField: 'data' }, [pdfItem(pdf)]);
    return { signRef: created.json.signRef as string, created };
  }

  it('signer 1 signs, then signer 2 signs signer 1\'s output on their own page; both signatures valid and trusted, B-LTA after the last', async () => {
    const { signRef: first, created } = await firstSigner();
    const link = created.json.nextSignerLink as { query: string; expiresAt: string };
    expect(Date.parse(link.expiresAt) - Date.now()).toBeGreaterThan(6 * 86_400_000);
    // before signer 1 signed: not yet, a page that asks again
    const early = await next(link);
    expect(early).toMatchObject({ answer: 'notice', statusCode: 200, code: 'WAITING_FOR_PREVIOUS_SIGNER' });
    expect(early.body).toContain('<meta http-equiv="refresh" content="10">');
    expect(early.body).toContain('Tenant has not signed yet');

    const signed1 = binaryBuffer((await sign(first)).binary!.data);
    // signer 1's PDF at the level their session asked for (B-T): no document timestamp before the last signature
    expect((await store.get(first))!.result).toMatchObject({ level: 'B-T', valid: true });
    expect((await verifyPdfSignatures(signed1, { trustedRoots: [env.sb.pki.root.certPem] })).signatures.map((s) => [s.type, s.level])).toEqual([['signature', 'B-T']]);
    const started = await next(link);
    expect(started).toMatchObject({ answer: 'started', statusCode: 303, startedNow: true, status: 'waiting_for_scan', signer: { position: 2, of: 2, label: 'Landlord', previousSignRef: first } });
    const second = started.signRef as string;
    // a reload (or another process) gets the same session; the previous record names it
    expect(await next(link)).toMatchObject({ answer: 'started', signRef: second, startedNow: false });
    expect((await store.get(first))!.nextSigner).toEqual({ signRef: second });
    // signer 2 signs exactly signer 1's signed PDF, at B-LTA (the last)
    expect(await store.getDocument(second)).toEqual(signed1);
    const rec2 = (await store.get(second))!;
    expect(rec2.request).toMatchObject({ level: 'B-LTA', documentName: 'Lease.pdf', signer: { position: 2, of: 2, previousSignRef: first } });
    const page = await status(second, queryOf((started.signerLink as { query: string }).query).key);
    expect(page).toMatchObject({ stage: 'waitingForScan', signer: { position: 2, of: 2, label: 'Landlord' } });

    const final = binaryBuffer((await sign(second, 'p384')).binary!.data);
    expect(rec2.state.signRef).toBe(second);
    expect((await store.get(second))!.result).toMatchObject({ level: 'B-LTA', valid: true });
    const file = path.join(dir, 'final.pdf');
    fs.writeFileSync(file, final);
    execFileSync('qpdf', ['--check', file]);
    const pdfsig = execFileSync('pdfsig', [file]).toString();
    const parts = pdfsig.split(/^Signature #\d+:$/m).slice(1);
    const users = parts.filter((p) => /ETSI\.CAdES\.detached/.test(p));
    expect(users).toHaveLength(2);
    for (const u of users) expect(u).toMatch(/Signature Validation: Signature is Valid/);
    // signer 1 at B-T, signer 2 at B-LTA: one document timestamp, after the last signature
    expect((await verifyPdfSignatures(final, { trustedRoots: [env.sb.pki.root.certPem] })).signatures.map((s) => s.type)).toEqual(['signature', 'signature', 'docTimestamp']);
    // `singpass-flows verify` reports each signer, trusted, and the file at B-LTA
    fs.writeFileSync(path.join(dir, 'root.pem'), env.sb.pki.root.certPem);
    const out: string[] = [];
    const log = jest.spyOn(console, 'log').mockImplementation((...a: unknown[]) => { out.push(a.join(' ')); });
    try {
      expect(await main(['verify', file, '--root', path.join(dir, 'root.pem')])).toBe(0);
    } finally {
      log.mockRestore();
    }
    const text = out.join('\n');
    expect(text.match(/^\s*Signer: .+/gm)?.length).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/Result: VALID \(B-LTA\)/);
    expect(text).not.toContain('NOT trusted');
    // the chain is done
    const [[again]] = await run({ resource: 'sessionRecord', operation: 'startNextSigner', store: 'folder', folder: dir, previousSignRef: second, linkKey: queryOf(link.query).key, label: 'x', level: 'auto' });
    expect(again.json).toMatchObject({ statusCode: 403 }); // signer 1's link opens nothing of signer 2's
  }, 180_000);

  it('signer 2 declines: nothing signed, signer 1\'s signed PDF kept and downloadable; the link then starts a new session for signer 2', async () => {
    const { signRef: first, created } = await firstSigner();
    const link = created.json.nextSignerLink as { query: string };
    const signed1 = binaryBuffer((await sign(first)).binary!.data);
    const started = await next(link);
    const second = started.signRef as string;
    await env.sb.phone.scan(second, { user: 'p256' });
    await runDue(second, (await env.next(0)).json.delivery);
    await env.sb.phone.reject(second);
    const [[declined]] = await runDue(second, (await env.next(2)).json.delivery);
    expect(declined.json).toMatchObject({ status: 'failed', ended: true });
    const key2 = queryOf((started.signerLink as { query: string }).query).key;
    expect(await status(second, key2)).toMatchObject({ stage: 'failed', done: true, detail: 'You declined the signing in the Singpass app. Nothing was signed.' });
    // signer 1's signed PDF is where it was, and their own page still hands it out
    expect(await store.getSignedDocument(first)).toEqual(signed1);
    const firstKey = queryOf((created.json.signerLink as { query: string }).query).key;
    const s1 = await status(first, firstKey);
    expect(s1).toMatchObject({ stage: 'signed' });
    const [[dl]] = await run({ resource: 'sessionRecord', operation: 'signerPage', store: 'folder', folder: dir, ...{ signRef: first, linkKey: queryOf((s1.downloadUrl as string).slice(1)).key, view: 'download' }, outputBinaryPropertyName: 'data' });
    expect(binaryBuffer(dl.binary!.data)).toEqual(signed1);
    // the next-signer link again: a new session on the same signed PDF (the declined one stays declined)
    // two asks at once (a double click, two processes): one session wins, both answers name it
    const [retry, twin] = await Promise.all([next(link), next(link)]);
    expect(twin.signRef).toBe(retry.signRef);
    expect([retry.startedNow, twin.startedNow].filter(Boolean)).toHaveLength(1);
    expect((await store.get(first))!.nextSigner).toEqual({ signRef: retry.signRef });
    expect(retry.signRef).not.toBe(second);
    expect(await store.getDocument(retry.signRef as string)).toEqual(signed1);
    expect((await store.get(second))!.state.status).toBe('failed');
  }, 180_000);

  it('signer 2 runs out of time: expired by the schedule\'s step, signer 1\'s signed PDF kept; signer 1 declining leaves nothing to sign', async () => {
    const { signRef: first, created } = await firstSigner();
    const link = created.json.nextSignerLink as { query: string };
    await sign(first);
    const second = (await next(link)).signRef as string;
    // the service's deadline passed (the sandbox's is minutes away): the record as it would be by then
    const rec = (await store.get(second))!;
    expect(await store.put({ ...rec, state: { ...rec.state, expiresAt: Math.floor(Date.now() / 1000) - 600, updatedAt: Math.floor(Date.now() / 1000) - 600 }, revision: rec.revision + 1 } as SessionRecord, rec.revision)).toBe(true);
    const [[expired]] = await runDue(second, '');
    expect(expired.json).toMatchObject({ action: 'expire', status: 'expired' });
    expect(await store.getSignedDocument(first)).toBeDefined();
    expect(await store.getSignedDocument(second)).toBeUndefined();

    // signer 1 declines: the next signer's link says there is nothing to sign, and starts nothing
    const other = await firstSigner();
    await env.sb.phone.scan(other.signRef, { user: 'p256' });
    await runDue(other.signRef, (await env.next(0)).json.delivery);
    await env.sb.phone.reject(other.signRef);
    await runDue(other.signRef, (await env.next(2)).json.delivery);
    const none = await next(other.created.json.nextSignerLink as { query: string });
    expect(none).toMatchObject({ answer: 'notice', statusCode: 410, code: 'PREVIOUS_NOT_SIGNED' });
    expect(none.body).toContain('Tenant did not sign: You declined the signing in the Singpass app.');
    expect((await store.get(other.signRef))!.nextSigner).toBeUndefined();
  }, 180_000);
});
