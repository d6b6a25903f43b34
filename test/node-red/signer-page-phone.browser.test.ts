/**
 * The signer page of the Node-RED signing example on a phone and a desktop, in a real Node-RED (child process)
 * against the sandbox, with Debian's chromium: on a 390 × 844 touch screen the "Open in Singpass" link leads with the
 * session's QR payload as its target; on a desktop the QR code leads; the page catches up when the browser comes back
 * from the app. The checks are the engines' common ones (test/session/phone-page.ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { startSandbox, type Sandbox } from '../../sandbox';
import { fixture } from '../fixtures/pdfs';
import { launchChromium, requireChromium } from '../helpers/chromium';
import { expectCatchesUpOnReturn, expectDesktopPage, expectPhonePage } from '../session/phone-page';
import { freePort, startNodeRedProcess, type NodeRedProcess } from './embedded';
import { deploySigningExample, startSigning, storedRecord } from './signing-scenario';

let sb: Sandbox;
let nr: NodeRedProcess;
let browser: Browser;
let tmp: string;
let userDir: string;

beforeAll(async () => {
  requireChromium();
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-signer.js'))) throw new Error('run `npm run build` first');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-phone-page-'));
  userDir = path.join(tmp, 'userDir');
  sb = await startSandbox({ port: 0 });
  nr = await startNodeRedProcess({ userDir, port: await freePort(), env: { SINGPASS_SIGNED_DIR: path.join(tmp, 'signed') } });
  await deploySigningExample(nr, sb);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await nr?.stop();
  await sb?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

async function started(name: string) {
  const s = await startSigning(nr, await fixture('classic'), name);
  const pageUrl = new URL(s.page, `${nr.url}/`);
  const statusUrl = new URL(pageUrl.href);
  statusUrl.pathname += '/status';
  return { ...s, pageUrl: pageUrl.href, statusUrl: statusUrl.href, qrPayload: storedRecord(userDir, s.signRef)!.state.qrPayload! };
}

test('on a phone the "Open in Singpass" link leads, on screen, with the session\'s QR payload as its target', async () => {
  const s = await started('Phone.pdf');
  expect(s.qrPayload).toBe(`https://singpassmobile.sg/docsign?sign_ref=${encodeURIComponent(s.signRef)}`);
  await expectPhonePage(browser, s.pageUrl, s);
}, 60_000);

test('on a desktop the QR code leads and the link is still there', async () => {
  const s = await started('Desktop.pdf');
  await expectDesktopPage(browser, s.pageUrl, s);
}, 60_000);

test('back from the app, the page shows where the session is at once (visibilitychange, pageshow)', async () => {
  const s = await started('Return.pdf');
  await expectCatchesUpOnReturn(browser, s.pageUrl, {
    statusUrl: s.statusUrl,
    scan: () => sb.phone.scan(s.signRef, { user: 'p256' }),
    approve: async () => {
      // the phone approves once the hash is there, as a person would after the challenge code appears
      const until = Date.now() + 30_000;
      while (sb.sign.session(s.signRef)?.state !== 'hash_submitted' && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      return sb.phone.approve(s.signRef);
    },
  });
}, 180_000);
