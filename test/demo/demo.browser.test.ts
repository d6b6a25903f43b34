/**
 * The demo's story in a real browser (Debian's chromium driven by playwright-core): `singpass-flows demo` (the built
 * CLI, free ports), the signing page served by the Node-RED example flow, the sandbox phone page. Approve path: the
 * challenge codes match, the signed PDF downloads and pdfsig calls it valid and trusted (this run's root in an NSS
 * database), the report page is readable. Reject path: the page says the session ended without a signature.
 * Screenshots go to artifacts/demo/ (gitignored); docs/demo-*.png are copies of some of them.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, requireChromium } from '../helpers/chromium';
import { ARTIFACTS, ROOT, pdfsigTrusting, requireBuild, startInteractiveDemo, type InteractiveDemo } from './helpers';

const work = mkdtempSync(path.join(tmpdir(), 'demo-browser-'));
const signedDir = path.join(work, 'signed');
let demo: InteractiveDemo;
let browser: Browser;

beforeAll(async () => {
  requireBuild();
  requireChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
  demo = await startInteractiveDemo(signedDir);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  const t0 = Date.now();
  await browser?.close();
  console.log(`browser closed in ${Date.now() - t0} ms`);
  if (demo) {
    const end = await demo.interrupt();
    // Ctrl-C stops everything the demo started and it says so
    expect(end.code).toBe(0);
    expect(end.stdout).toContain('Demo stopped.');
    for (const url of [demo.signingPage, demo.phone]) expect(await refused(url)).toBe(true); // nothing listens any more
  }
  rmSync(work, { recursive: true, force: true });
}, 60_000);

/** True when nothing accepts connections at the URL's port any more. */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
  });
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

/** Open the signing page, pick a sample (or upload a file), start: returns the page, the session and the code it shows. */
async function startSigning(doc: { sample: string } | { upload: string }, name: string, o: { fakeClock?: boolean } = {}): Promise<{ page: Page; signRef: string; code: string }> {
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 }, acceptDownloads: true });
  if (o.fakeClock) await page.clock.install();
  await page.goto(demo.signingPage);
  if ('sample' in doc) await page.locator(`input[name=sample][value="${doc.sample}"]`).check();
  else await page.setInputFiles('#file', doc.upload);
  await shot(page, `${name}-1-choose`);
  await page.click('#start');
  await page.locator('#challenge-code').filter({ hasText: /^\d{4}$/ }).waitFor();
  const code = (await page.textContent('#challenge-code'))!.trim();
  const signRef = (await page.textContent('#sign-ref'))!.trim();
  expect(await page.locator('#qr').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(50); // the QR image loaded
  await page.locator('#steps li[data-step="created"].done').waitFor();
  await shot(page, `${name}-2-qr`);
  return { page, signRef, code };
}

/** On the phone page: scan the session, wait until it asks for the signature; returns the phone and its card. */
async function scanOnPhone(signRef: string, name: string) {
  const phone = await browser.newPage({ viewport: { width: 420, height: 760 } });
  await phone.goto(demo.phone);
  const card = phone.locator(`.card[data-sign-ref="${signRef}"]`);
  await card.locator('button.scan').click();
  // the page reloads itself when the session changes: certificate delivered, hash submitted by the flow
  await phone.locator(`.card[data-sign-ref="${signRef}"][data-state="hash_submitted"]`).waitFor({ timeout: 60_000 });
  await shot(phone, `${name}-3-phone`);
  return { phone, card: phone.locator(`.card[data-sign-ref="${signRef}"]`) };
}

test('approve: same challenge code on both pages, live progress, signed PDF valid in pdfsig, readable report', async () => {
  const { page, signRef, code } = await startSigning({ sample: 'tenancy-agreement.pdf' }, 'approve');
  const { phone, card } = await scanOnPhone(signRef, 'approve');
  expect((await card.locator('.challenge-code').textContent())!.trim()).toBe(code);
  expect(await card.locator('.doc-name').textContent()).toBe('tenancy-agreement.pdf');
  expect(await card.locator('.domain-name').textContent()).toBeTruthy();
  // the signing page followed: scanned, hash submitted
  await page.locator('#steps li[data-step="submitted"].done').waitFor();
  expect(await page.locator('#steps li[data-step="approved"]').getAttribute('class')).toBe('todo');

  await card.locator('button.approve').click();
  await page.locator('#outcome.ok').waitFor({ timeout: 60_000 });
  expect(await page.textContent('#outcome')).toContain('Signed: PAdES B-LTA');
  for (const step of ['scanned', 'submitted', 'approved', 'timestamped', 'validation', 'archived', 'verified']) {
    expect(await page.locator(`#steps li[data-step="${step}"]`).getAttribute('class')).toBe('done');
  }
  expect(await page.textContent('#steps li[data-step="validation"] small')).toMatch(/\d+ certificates, \d+ OCSP responses/);
  // each step carries the time the flow recorded it: in order, and the finishing steps came before the result (live)
  const STEPS = ['created', 'scanned', 'submitted', 'approved', 'timestamped', 'validation', 'archived', 'verified'];
  const times = await Promise.all(STEPS.map(async (step) => Date.parse((await page.getAttribute(`#steps li[data-step="${step}"] time`, 'datetime'))!)));
  times.forEach((t, i) => expect(t).toBeGreaterThanOrEqual(times[Math.max(0, i - 1)]!));
  expect(times[STEPS.indexOf('validation')]!).toBeLessThan(times[STEPS.indexOf('verified')]!);
  await shot(page, 'approve-4-signed');
  await phone.reload();
  expect(await phone.locator(`.card[data-sign-ref="${signRef}"]`).getAttribute('data-state')).toBe('signed');

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  expect(download.suggestedFilename()).toBe('tenancy-agreement-signed.pdf');
  const file = path.join(ARTIFACTS, 'approve-signed.pdf');
  await download.saveAs(file);
  expect(readFileSync(file).equals(readFileSync(path.join(signedDir, `${signRef}.pdf`)))).toBe(true);
  // pdfsig, trusting this run's sandbox root (NSS fetches the intermediate from the sandbox's AIA URL)
  const report = await pdfsigTrusting(file, readFileSync(path.join(signedDir, 'sandbox-root-ca.pem'), 'utf8'));
  const ours = report.split(/^Signature #2:$/m)[0]!;
  expect(ours).toContain('Signature Validation: Signature is Valid.');
  expect(ours).toContain('Certificate Validation: Certificate is Trusted.');

  const [reportPage] = await Promise.all([page.context().waitForEvent('page'), page.click('#report')]);
  await reportPage.waitForLoadState();
  const text = (await reportPage.textContent('body'))!;
  expect(text).toContain('Valid — PAdES B-LTA');
  expect(text).toContain('TAN AH KOW');
  expect(text).toContain('Document timestamp');
  expect(text).toMatch(/Revocation data\s*embedded: an OCSP answer for every certificate/);
  expect(text).toMatch(/\d+ certificates,\s*\d+ OCSP responses/);
  // what B-LT/B-LTA appended after the signature is a note in plain words, not a problem
  expect(text).not.toContain('Problems');
  expect(text).toContain('This is what B-LTA means; it does not change what was signed.');
  expect(await reportPage.locator('.signer').first().textContent()).toContain('TAN AH KOW');
  await shot(reportPage, 'approve-5-report');
}, 240_000);

test('reject (an uploaded PDF): the phone declines, the signing page says the session ended without a signature', async () => {
  const upload = path.join(work, 'my-lease.pdf');
  copyFileSync(path.join(ROOT, 'assets', 'samples', 'consent-form.pdf'), upload);
  const { page, signRef, code } = await startSigning({ upload }, 'reject');
  expect(await page.textContent('#doc-name')).toBe('my-lease.pdf');
  const { card } = await scanOnPhone(signRef, 'reject');
  expect((await card.locator('.challenge-code').textContent())!.trim()).toBe(code);
  expect(await card.locator('.doc-name').textContent()).toBe('my-lease.pdf');
  await card.locator('button.reject').click();
  await page.locator('#outcome.bad').waitFor({ timeout: 60_000 });
  expect(await page.textContent('#outcome')).toMatch(/^Not signed: /);
  expect(await page.locator('#links').isVisible()).toBe(false);
  expect(await page.locator('#steps li[data-step="approved"]').getAttribute('class')).toBe('failed');
  expect(await page.getAttribute('#qr', 'class')).toBe('over');
  await shot(page, 'reject-4-ended');
  expect(existsSync(path.join(signedDir, `${signRef}.pdf`))).toBe(false);
  expect(readFileSync(path.join(signedDir, 'errors.jsonl'), 'utf8')).toContain(signRef);
}, 240_000);

test('a session nobody scans: after its deadline the signing page says it expired instead of waiting forever', async () => {
  const { page } = await startSigning({ sample: 'consent-form.pdf' }, 'expired', { fakeClock: true });
  // the page's clock jumps past the session's 300 s lifetime (the flow and the sandbox keep their own time)
  await page.clock.fastForward('06:00');
  await page.locator('#outcome.bad').waitFor({ timeout: 60_000 });
  expect(await page.textContent('#outcome')).toMatch(/^Not signed: the session expired at .+ before it was approved$/);
  expect(await page.locator('#steps li[data-step="scanned"]').getAttribute('class')).toBe('failed');
  expect(await page.getAttribute('#qr', 'class')).toBe('over');
}, 180_000);

test('the Node-RED editor shows the signing example flow the pages run on', async () => {
  const editor = await browser.newPage({ viewport: { width: 1920, height: 1000 } });
  await editor.goto(demo.editor);
  // the example's nodes, drawn on the workspace (the signing page's http-in route among them)
  await editor.locator('.red-ui-flow-node-group').first().waitFor({ timeout: 120_000 });
  expect(await editor.locator('.red-ui-flow-node-group').count()).toBeGreaterThan(20);
  expect(await editor.locator('.red-ui-tab-label', { hasText: 'Singpass document signing' }).count()).toBe(1);
  await shot(editor, 'editor-flow');
}, 180_000);
