/**
 * The signing example protected by default, in a real Node-RED (child process) against the sandbox over real HTTP,
 * with Debian's chromium as the signer: the upload page and the start route refuse anonymous callers (and everyone
 * while no sign-in is configured); a signer page opens only with its session's link (a bare sign_ref, another
 * session's link, an altered one or a download link open nothing); the page shows the QR code and challenge code,
 * follows the session read from the session store (scanned → approved → signed) and downloads the signed PDF, which
 * is the one the store keeps; a declined session says so in plain words.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { startSandbox, type Sandbox } from '../../sandbox';
import { verifyPdfSignatures } from '../../src/pades';
import { fixture } from '../fixtures/pdfs';
import { launchChromium, requireChromium } from '../helpers/chromium';
import { freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';
import { SIGN_IN, deploySigningExample, sessionDirOf, signInHeader, startSigning } from './signing-scenario';

let sb: Sandbox;
let nr: NodeRedProcess;
let browser: Browser;
let tmp: string;
let signedDir: string;
let userDir: string;

beforeAll(async () => {
  requireChromium();
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-signer.js'))) throw new Error('run `npm run build` first');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-signer-page-'));
  signedDir = path.join(tmp, 'signed');
  userDir = path.join(tmp, 'userDir');
  sb = await startSandbox({ port: 0 });
  nr = await startNodeRedProcess({ userDir, port: await freePort(), env: { SINGPASS_SIGNED_DIR: signedDir } });
  await deploySigningExample(nr, sb);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await nr?.stop();
  await sb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'artifacts', 'node-red');

test('anonymous callers start nothing: the upload page, the start route and the samples ask for the sign-in', async () => {
  const pdf = new Uint8Array(await fixture('classic'));
  const wrong = `Basic ${Buffer.from(`${SIGN_IN.user}:not-the-password-at-all`).toString('base64')}`;
  for (const headers of [{}, { authorization: wrong }, { authorization: 'Bearer x' }] as Record<string, string>[]) {
    const page = await fetch(`${nr.url}/sign`, { headers });
    expect(page.status).toBe(401);
    expect(page.headers.get('www-authenticate')).toMatch(/^Basic realm="Singpass signing"/);
    const start = await fetch(`${nr.url}/sign/start?name=x.pdf`, { method: 'POST', headers: { ...headers, 'content-type': 'application/octet-stream' }, body: pdf });
    expect(start.status).toBe(401);
    expect((await fetch(`${nr.url}/sign/samples`, { headers })).status).toBe(401);
  }
  // nothing was started: the session folder holds no record
  const dir = sessionDirOf(userDir);
  expect(fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json')) : []).toEqual([]);
});

test('a signer page opens only with its own link; status JSON holds nothing secret', async () => {
  const a = await startSigning(nr, await fixture('classic'), 'A.pdf');
  const b = await startSigning(nr, await fixture('classic'), 'B.pdf');
  const linkOf = (s: { page: string }) => new URL(s.page, `${nr.url}/`).searchParams.get('link')!;
  expect(a.page).toMatch(new RegExp(`^sign/s/${a.signRef}\\?link=\\d{10}\\.[A-Za-z0-9_-]{43}$`));
  const at = (ref: string, link?: string, tail = '') => fetch(`${nr.url}/sign/s/${encodeURIComponent(ref)}${tail}${link === undefined ? '' : `?link=${encodeURIComponent(link)}`}`);
  expect((await at(a.signRef)).status).toBe(403); // a bare sign_ref (it is in the QR code)
  expect((await at(a.signRef, linkOf(b))).status).toBe(403); // another session's link
  const altered = linkOf(a).replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
  expect((await at(a.signRef, altered)).status).toBe(403);
  expect((await at(a.signRef, linkOf(a), '/signed.pdf')).status).toBe(403); // a page link is no download link
  expect((await at(a.signRef, undefined, '/status')).status).toBe(403);
  const refused = await at(a.signRef, linkOf(b));
  expect(await refused.text()).toContain('This link is not valid for this signing session');

  const page = await at(a.signRef, linkOf(a));
  expect(page.status).toBe(200);
  expect(page.headers.get('cache-control')).toBe('no-store');
  expect(page.headers.get('referrer-policy')).toBe('no-referrer');
  const status = await at(a.signRef, linkOf(a), '/status');
  const json = (await status.json()) as Record<string, unknown>;
  expect(json).toMatchObject({ signRef: a.signRef, stage: 'waitingForScan', done: false, challengeCode: a.challengeCode, documentName: 'A.pdf' });
  expect(JSON.stringify(json)).not.toMatch(/sfn1_|clientNotificationToken|nonce/);
  // the session's record says what the page says (the store, not the flow's memory)
  expect(JSON.parse(fs.readFileSync(path.join(sessionDirOf(userDir), `${a.signRef}.json`), 'utf8')).state.challengeCode).toBe(a.challengeCode);
});

test('chromium follows the signer page from the QR code to the download of the signed PDF the store keeps', async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const input = await fixture('classic');
  const s = await startSigning(nr, input, 'Lease.pdf');
  const page = await browser.newPage({ acceptDownloads: true });
  await page.goto(new URL(s.page, `${nr.url}/`).href);
  expect(await page.locator('#qr svg').count()).toBe(1);
  expect((await page.textContent('#code'))!.trim()).toBe(s.challengeCode);
  expect(await page.getAttribute('#stage', 'data-stage')).toBe('waitingForScan');
  await page.screenshot({ path: path.join(ARTIFACTS, 'signer-page-1-qr.png'), fullPage: true });

  await sb.phone.scan(s.signRef, { user: 'p256' });
  await page.locator('#stage[data-stage="scanned"]').waitFor({ timeout: 30_000 });
  await waitFor('the hash', () => (sb.sign.session(s.signRef)?.state === 'hash_submitted' || undefined), 30_000);
  await sb.phone.approve(s.signRef);
  await page.locator('#stage[data-stage="signed"]').waitFor({ timeout: 60_000 });
  expect(await page.textContent('#headline')).toBe('Signed');
  await page.screenshot({ path: path.join(ARTIFACTS, 'signer-page-2-signed.png'), fullPage: true });
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-link')]);
  expect(download.suggestedFilename()).toBe('Lease-signed.pdf');
  const file = path.join(tmp, 'downloaded.pdf');
  await download.saveAs(file);
  const got = fs.readFileSync(file);
  // the PDF the store keeps (what any instance hands out), the same the flow wrote to its folder
  expect(got.equals(fs.readFileSync(path.join(sessionDirOf(userDir), `${s.signRef}-signed.pdf`)))).toBe(true);
  await waitFor('the flow\'s copy', () => fs.existsSync(path.join(signedDir, `${s.signRef}.pdf`)) || undefined);
  expect(got.subarray(0, input.length).equals(input)).toBe(true);
  const report = await verifyPdfSignatures(got, { trustedRoots: [sb.pki.root.certDer] });
  expect(report.valid).toBe(true);
  expect(report.level).toBe('B-LTA');

  // the report of the signed PDF, with the download link the page holds
  const href = await page.getAttribute('#download-link', 'href');
  const reportUrl = new URL(href!.replace('/signed.pdf?', '/report?'), page.url());
  const reportPage = await browser.newPage();
  await reportPage.goto(reportUrl.href);
  expect(await reportPage.textContent('body')).toContain('Valid — PAdES B-LTA');
  await reportPage.close();
  await page.close();
}, 180_000);

test('declined on the phone: the page says so in plain words, nothing to download', async () => {
  const s = await startSigning(nr, await fixture('classic'), 'Declined.pdf');
  const page = await browser.newPage();
  await page.goto(new URL(s.page, `${nr.url}/`).href);
  await sb.phone.scan(s.signRef, { user: 'p256' });
  await waitFor('the hash', () => (sb.sign.session(s.signRef)?.state === 'hash_submitted' || undefined), 30_000);
  await sb.phone.reject(s.signRef);
  await page.locator('#stage[data-stage="failed"]').waitFor({ timeout: 60_000 });
  expect(await page.textContent('#detail')).toContain('You declined the signing in the Singpass app. Nothing was signed.');
  expect(await page.locator('#download').isHidden()).toBe(true);
  await page.screenshot({ path: path.join(ARTIFACTS, 'signer-page-3-declined.png'), fullPage: true });
  await page.close();
}, 120_000);

test('no sign-in configured: the example refuses everyone (503), it never opens by default', async () => {
  const flow = (await (await fetch(`${nr.url}/flows`, { headers: { 'node-red-api-version': 'v1' } })).json()) as Record<string, unknown>[];
  const tab = flow.find((n) => n.id === 'sf-sign-tab')!;
  delete tab.env;
  const res = await fetch(`${nr.url}/flows`, { method: 'POST', headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'flows', 'node-red-api-version': 'v1' }, body: JSON.stringify(flow) });
  expect([200, 204]).toContain(res.status);
  await waitFor('the redeployed flow', async () => ((await fetch(`${nr.url}/sign`, { headers: { authorization: signInHeader() } })).status === 503 || undefined), 30_000);
  const start = await fetch(`${nr.url}/sign/start?name=x.pdf`, { method: 'POST', headers: { authorization: signInHeader(), 'content-type': 'application/octet-stream' }, body: new Uint8Array(await fixture('classic')) });
  expect(start.status).toBe(503);
  expect(await start.text()).toContain('SINGPASS_SIGN_PASSWORD');
});
