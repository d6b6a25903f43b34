/**
 * The document-signing sample's signer page on a phone and a desktop, in a REAL n8n 2.41 and Debian's chromium: on a
 * 390 × 844 touch screen the "Open in Singpass" link leads with the session's QR payload as its target; on a desktop
 * the QR code leads; back from the app the page catches up at once (test/session/phone-page.ts, the checks every
 * engine's page passes). The Sign API credential sets the Assertion Audience the sandbox was told this DSAP uses, so
 * the whole session also runs on a non-default audience. Needs `bash scripts/install-n8n.sh` (skipped without it
 * locally, failing in CI).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { generateClientKeys } from '../../src/keys';
import type { SessionRecord } from '../../src/session';
import { fixture } from '../fixtures/pdfs';
import { CHROMIUM, launchChromium } from '../helpers/chromium';
import { expectCatchesUpOnReturn, expectDesktopPage, expectPhonePage } from '../session/phone-page';
import {
  createN8n, freePort, importSamples, installCommunityPackage, n8nInstallDir, packTarball, sessionStoreCredential, startCliSandbox, uploadHeaders, uploadKeyCredential,
  type CliSandbox, type N8n,
} from './real-n8n';

const installDir = n8nInstallDir();
if (!installDir && process.env.CI) throw new Error('n8n is not installed: run scripts/install-n8n.sh before the tests');
if (!fs.existsSync(CHROMIUM) && process.env.CI) throw new Error(`no Chromium at ${CHROMIUM}`);
const describeN8n = installDir && fs.existsSync(CHROMIUM) ? describe : describe.skip;

/** What the service told this DSAP to put in its assertions' `aud` (not the default, the API's origin). */
const AUDIENCE = 'https://sign-audience.example.sg';

describeN8n('the signer\'s page of the n8n sample on a phone and a desktop', () => {
  let signing: CliSandbox;
  let n8n: N8n;
  let signingDir: string;
  let browser: Browser;
  let pdf: Buffer;

  beforeAll(async () => {
    const [tarball, port, signingPort] = await Promise.all([packTarball(), freePort(), freePort()]);
    signingDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-phone-sandbox-'));
    n8n = await createN8n(installDir!, port);
    const installed = await installCommunityPackage(n8n, tarball);
    signing = await startCliSandbox(installed, signingPort, signingDir, ['--client-id', 'n8n-dsap', '--jwks-url', `${n8n.baseUrl}/webhook/singpass-sign/jwks`,
      '--webhook-url', `${n8n.baseUrl}/webhook/singpass-sign/webhook`, '--webhook-retry-delay-ms', '1000', '--audience', AUDIENCE]);
    const dsap = await generateClientKeys();
    await importSamples(n8n, ['document-signing.json', 'key-set-endpoint.json'], [
      {
        id: 'spflSignApi00001', name: 'Singpass Sign API (sandbox)', type: 'singpassSignApi',
        data: { environment: 'sandbox', sandboxUrl: signing.baseUrl, clientId: 'n8n-dsap', signingKey: JSON.stringify(dsap.signing), tenantId: 'acme', domainName: 'sign.example.sg', audience: AUDIENCE, tsaUrl: '', trustedRoots: '' },
      },
      { id: 'spflTokenSec0001', name: 'Singpass notification token secret', type: 'singpassNotificationTokenApi', data: { secret: 'e2e-notification-secret-0123456789abcdef' } },
      uploadKeyCredential(),
      sessionStoreCredential(),
    ]);
    await n8n.start();
    pdf = await fixture('classic');
    browser = await launchChromium();
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    await n8n?.stop();
    await signing?.stop();
    if (signingDir) fs.rmSync(signingDir, { recursive: true, force: true });
    fs.rmSync(path.dirname(await packTarball()), { recursive: true, force: true });
    if (n8n && !process.env.SINGPASS_FLOWS_KEEP_N8N) fs.rmSync(n8n.userFolder, { recursive: true, force: true });
  }, 60_000);

  /** An upload as the sample takes it: the page link (303), the session's stored QR payload and challenge code. */
  async function started() {
    const res = await fetch(`${n8n.baseUrl}/webhook/singpass-sign/document`, { method: 'POST', headers: uploadHeaders(), redirect: 'manual', body: new Uint8Array(pdf) });
    expect(res.status).toBe(303);
    const signRef = res.headers.get('x-sign-ref')!;
    const pageUrl = new URL(res.headers.get('location')!, `${n8n.baseUrl}/webhook/singpass-sign/document`).href;
    const record = JSON.parse(fs.readFileSync(path.join(n8n.filesDir, `${signRef}.json`), 'utf8')) as SessionRecord;
    return { signRef, pageUrl, statusUrl: `${pageUrl}&view=status`, qrPayload: record.state.qrPayload!, challengeCode: res.headers.get('x-challenge-code')! };
  }

  it('on a phone the "Open in Singpass" link leads, on screen, with the session\'s QR payload as its target', async () => {
    const s = await started();
    expect(s.qrPayload).toBe(`https://singpassmobile.sg/docsign?sign_ref=${encodeURIComponent(s.signRef)}`);
    await expectPhonePage(browser, s.pageUrl, s);
  }, 120_000);

  it('on a desktop the QR code leads and the link is still there', async () => {
    const s = await started();
    await expectDesktopPage(browser, s.pageUrl, s);
  }, 120_000);

  it('back from the app the page shows where the session is at once; the session signs with the credential\'s audience', async () => {
    const s = await started();
    await expectCatchesUpOnReturn(browser, s.pageUrl, {
      statusUrl: s.statusUrl,
      scan: () => signing.phone('scan', { sign_ref: s.signRef, user: 'p256' }),
      approve: async () => {
        // once the hash is there, as a person approves after the challenge code appears in the app
        const until = Date.now() + 60_000;
        while (!(await signing.hashes(s.signRef)).some((h) => h.status < 300) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
        return signing.phone('approve', { sign_ref: s.signRef });
      },
    });
    const record = JSON.parse(fs.readFileSync(path.join(n8n.filesDir, `${s.signRef}.json`), 'utf8')) as SessionRecord;
    expect(record.state.status).toBe('completed');
  }, 400_000);
});
