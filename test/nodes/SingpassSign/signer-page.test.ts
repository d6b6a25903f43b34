/**
 * The Singpass Sign node's Signer Page, Save Signed PDF and Create Session's page link, against the sandbox over real
 * HTTP with a folder store: the link checked before anything is read, the page and its status JSON from the stored
 * record through a whole session (scan, approve, finish by Run Due Step), the signed PDF through a short-lived
 * download link, and what a caller without a valid link gets — each answer also as the binary (content type) with
 * the status and headers one Respond to Webhook node sends.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { INodeExecutionData } from 'n8n-workflow';
import { SingpassSign } from '../../../nodes/SingpassSign/SingpassSign.node';
import { issueSignerLink, SIGNER_PAGE_HEADERS } from '../../../src/session';
import { fixture } from '../../fixtures/pdfs';
import { binaryBuffer, executeContext, pdfItem } from '../context';
import { startSignSandbox, type SignSandbox } from '../sign-harness';

describe('Singpass Sign node: Signer Page', () => {
  let env: SignSandbox;
  let dir: string;
  beforeAll(async () => {
    env = await startSignSandbox();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-signer-page-'));
    env.triggerParams.recordFolder = dir;
  }, 120_000);
  afterAll(async () => {
    await env?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const run = (params: Record<string, unknown>, items: INodeExecutionData[] = [{ json: {} }]) =>
    new SingpassSign().execute.call(executeContext({ params, items, credentials: env.credentials }));
  const page = async (query: Record<string, string | undefined>) => {
    const [[out]] = await run({ resource: 'sessionRecord', operation: 'signerPage', store: 'folder', folder: dir, signRef: query.ref, linkKey: query.key, view: query.view, title: 'Sign with Singpass', outputBinaryPropertyName: 'data' });
    return out;
  };
  const queryOf = (relative: string) => Object.fromEntries(new URLSearchParams(relative.replace(/^\?/, '')));
  /** What the sample's one Respond to Webhook node (binary, status and headers from the item) sends for an answer. */
  const sent = (out: INodeExecutionData) => ({
    status: out.json.statusCode, type: out.binary?.data?.mimeType, headers: out.json.headers as Record<string, string>, body: binaryBuffer(out.binary?.data),
  });
  const secret = () => String(env.credentials.singpassNotificationTokenApi.secret);

  it('from the page link to the signed PDF: QR and code, then scanned, signed with a download link; the signer\'s place and company on the page', async () => {
    const pdf = await fixture('classic');
    const onBehalfOf = { uen: '201500001A', role: 'Preparer', eserviceId: 'SD-GSTFILE' };
    const [[created]] = await run({
      resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'Lease.pdf', level: 'B-T',
      options: { onBehalfOf: JSON.stringify(onBehalfOf), signer: { position: 1, of: 2, label: 'Tenant' } },
    }, [pdfItem(pdf)]);
    const signRef = created.json.signRef as string;
    // the entity and role are in the name the app shows
    expect(created.json.documentName).toBe('Lease.pdf — for 201500001A as Preparer');
    const link = created.json.signerLink as { key: string; expiresAt: string; query: string };
    expect(queryOf(link.query)).toEqual({ ref: signRef, key: link.key });
    expect(Date.parse(link.expiresAt) - Date.now()).toBeGreaterThan(23 * 3600_000);
    await run({ resource: 'sessionRecord', operation: 'saveRecord', store: 'folder', folder: dir, record: created.json.record, saveAs: 'new', pdfBinaryField: 'data' }, [pdfItem(pdf)]);

    const first = await page(queryOf(link.query));
    expect(first.json).toMatchObject({ answer: 'page', statusCode: 200, stage: 'waitingForScan', contentType: 'text/html; charset=utf-8', headers: { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } });
    const html = first.json.body as string;
    // the same answer as binary, for the one Respond to Webhook node: the core's headers, shown in place
    expect(sent(first)).toEqual({ status: 200, type: 'text/html; charset=utf-8', headers: { ...SIGNER_PAGE_HEADERS, 'content-disposition': 'inline' }, body: Buffer.from(html) });
    expect(html).toContain('<svg');
    expect(html).toContain(`id="code">${created.json.challengeCode}<`);
    expect(html).toContain('for 201500001A as Preparer · signer 1 of 2 (Tenant)');
    // the page polls its status relative to where it is served, with the same key
    const statusUrl = /var statusUrl = "([^"]+)"/.exec(html)![1];
    expect(queryOf(statusUrl)).toEqual({ ref: signRef, key: link.key, view: 'status' });

    await env.sb.phone.scan(signRef, { user: 'p256' });
    const cert = await env.next(0);
    await run({ resource: 'sessionRecord', operation: 'runDueStep', store: 'folder', folder: dir, signRef, delivery: cert.json.delivery, idleSeconds: 45, outputBinaryPropertyName: 'data' });
    const poll = await page(queryOf(statusUrl));
    expect(sent(poll)).toMatchObject({ status: 200, type: 'application/json; charset=utf-8', headers: { 'content-disposition': 'inline', 'cache-control': 'no-store' } });
    const scanned = JSON.parse(sent(poll).body.toString());
    expect(scanned).toEqual(JSON.parse(poll.json.body as string));
    expect(scanned).toMatchObject({ stage: 'scanned', done: false, challengeCode: created.json.challengeCode });
    expect(scanned.qrPayload).toBeUndefined();
    expect(JSON.stringify(scanned)).not.toMatch(/certificate"|nonce|sfn1_|documentHash/);

    await env.sb.phone.approve(signRef);
    const sig = await env.next(1);
    const [[finished]] = await run({ resource: 'sessionRecord', operation: 'runDueStep', store: 'folder', folder: dir, signRef, delivery: sig.json.delivery, idleSeconds: 45, outputBinaryPropertyName: 'data' });
    expect(finished.json).toMatchObject({ status: 'completed' });
    const signed = JSON.parse((await page(queryOf(statusUrl))).json.body as string);
    expect(signed).toMatchObject({ stage: 'signed', done: true, headline: 'Signed', downloadUrl: expect.stringMatching(/^\?ref=/) });
    const download = queryOf(signed.downloadUrl);
    expect(download).toMatchObject({ ref: signRef, view: 'download' });
    expect(download.key).not.toBe(link.key);

    const got = await page(download);
    expect(got.json).toMatchObject({ answer: 'download', statusCode: 200, contentType: 'application/pdf', fileName: 'Lease-signed.pdf' });
    expect(sent(got)).toEqual({ status: 200, type: 'application/pdf', headers: { ...SIGNER_PAGE_HEADERS, 'content-disposition': 'attachment; filename="Lease-signed.pdf"' }, body: binaryBuffer(finished.binary!.data) });

    // Save Signed PDF puts the workflow's later version (e.g. B-LTA) where the download reads
    const later = Buffer.concat([binaryBuffer(finished.binary!.data), Buffer.from('\n% a later incremental update\n')]);
    await run({ resource: 'sessionRecord', operation: 'saveSignedPdf', store: 'folder', folder: dir, signRef, binaryPropertyName: 'data' }, [pdfItem(later)]);
    expect(binaryBuffer((await page(download)).binary!.data)).toEqual(later);

    // the page link does not download, a download link does not open the page
    const refused = await page({ ...download, view: 'download', key: link.key });
    expect(refused.json).toMatchObject({ answer: 'notice', statusCode: 403, code: 'LINK_INVALID' });
    // a refused download is a page in place, never an attachment
    expect(sent(refused)).toMatchObject({ status: 403, type: 'text/html; charset=utf-8', headers: { 'content-disposition': 'inline' } });
    expect((await page({ ...download, view: undefined })).json).toMatchObject({ answer: 'notice', statusCode: 403 });
  }, 120_000);

  it('refuses callers without a valid link before reading anything, and answers an expired one with 410', async () => {
    const pdf = await fixture('classic');
    const [[created]] = await run({ resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'X.pdf', level: 'B-T', options: {} }, [pdfItem(pdf)]);
    const signRef = created.json.signRef as string;
    await run({ resource: 'sessionRecord', operation: 'saveRecord', store: 'folder', folder: dir, record: created.json.record, saveAs: 'new', pdfBinaryField: 'data' }, [pdfItem(pdf)]);
    const key = (created.json.signerLink as { key: string }).key;
    for (const q of [{ ref: signRef }, { ref: signRef, key: 'garbage' }, { ref: signRef, key: key.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')) }, { ref: 'another-ref', key }]) {
      const out = await page(q);
      expect(out.json).toMatchObject({ answer: 'notice', statusCode: 403, code: 'LINK_INVALID' });
      expect(sent(out)).toEqual({ status: 403, type: 'text/html; charset=utf-8', headers: { ...SIGNER_PAGE_HEADERS, 'content-disposition': 'inline' }, body: Buffer.from(out.json.body as string) });
      expect(out.json.body).not.toContain(created.json.challengeCode as string);
      expect(JSON.stringify(out.json)).not.toContain(signRef === q.ref ? 'qr' : '<svg');
    }
    // the page's poll gets JSON, not a page
    const poll = await page({ ref: signRef, key: 'garbage', view: 'status' });
    expect(poll.json).toMatchObject({ answer: 'status', statusCode: 403 });
    expect(JSON.parse(poll.json.body as string)).toEqual({ error: { code: 'LINK_INVALID', message: expect.any(String) } });
    expect(sent(poll)).toMatchObject({ status: 403, type: 'application/json; charset=utf-8', body: Buffer.from(poll.json.body as string) });
    const expired = issueSignerLink({ secret: secret(), signRef, purpose: 'page', ttlSeconds: 1, now: Date.now() - 10_000 }).token;
    expect((await page({ ref: signRef, key: expired })).json).toMatchObject({ answer: 'notice', statusCode: 410, code: 'LINK_EXPIRED' });
    // a valid link to a session the store no longer has
    const gone = issueSignerLink({ secret: secret(), signRef: 'no-such-session-0001', purpose: 'page' }).token;
    expect((await page({ ref: 'no-such-session-0001', key: gone })).json).toMatchObject({ answer: 'notice', statusCode: 404 });
    // not completed yet: nothing to download
    const dl = issueSignerLink({ secret: secret(), signRef, purpose: 'download' }).token;
    expect((await page({ ref: signRef, key: dl, view: 'download' })).json).toMatchObject({ answer: 'notice', statusCode: 404, code: 'STATE_INVALID' });
    // a credential whose secret is no secret is the workflow's fault, not the caller's: an error, not a 403
    const weak = { ...env.credentials, singpassNotificationTokenApi: { secret: 'short' } };
    await expect(new SingpassSign().execute.call(executeContext({ params: { resource: 'sessionRecord', operation: 'signerPage', store: 'folder', folder: dir, signRef, linkKey: key, view: '' }, credentials: weak })))
      .rejects.toMatchObject({ context: { code: 'INVALID_INPUT' } });
    await expect(run({ resource: 'sessionRecord', operation: 'saveSignedPdf', store: 'folder', folder: dir, signRef, binaryPropertyName: 'data' }, [pdfItem(pdf)])).rejects.toMatchObject({ context: { code: 'STATE_INVALID' } });
  }, 60_000);
});
