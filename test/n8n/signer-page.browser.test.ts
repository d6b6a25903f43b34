/**
 * The signer's page of the n8n samples in a REAL n8n 2.41 and a real headless Chromium: the packed package installed
 * as n8n installs community packages, the samples imported and published with n8n's CLI, `singpass-flows sandbox`
 * in its own process with the phone driven by hand over its HTTP routes. The upload (Header Auth) answers 303 to the
 * page link; the page shows the QR and challenge code, then follows the session from the store (scanned, signed)
 * and offers the signed PDF, which the browser downloads and pdfsig checks. Callers without the upload key or a
 * valid link are refused. On a 390 × 844 touch screen the "Open in Singpass" link leads; on a desktop the QR code;
 * back from the app the page catches up at once. Every session runs on the Sign API credential's Assertion Audience.
 * Needs `bash scripts/install-n8n.sh` (skipped locally without it, failing in CI).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { generateClientKeys } from '../../src/keys';
import { SIGNER_PAGE_HEADERS, type SessionRecord } from '../../src/session';
import { startSandbox, type Sandbox } from '../../sandbox';
import { fixture } from '../fixtures/pdfs';
import { CHROMIUM, launchChromium } from '../helpers/chromium';
import { expectCatchesUpOnReturn, expectDesktopPage, expectPhonePage } from '../session/phone-page';
import {
  createN8n, freePort, importSamples, installCommunityPackage, n8nInstallDir, releasePackage, sessionStoreCredential, signedAtBlta, startCliSandbox, uploadHeaders, uploadKeyCredential, waitFor,
  type CliSandbox, type N8n,
} from './real-n8n';

const installDir = n8nInstallDir();
if (!installDir && process.env.CI) throw new Error('n8n is not installed: run scripts/install-n8n.sh before the tests');
if (!fs.existsSync(CHROMIUM) && process.env.CI) throw new Error(`no Chromium at ${CHROMIUM}`);
const describeN8n = installDir && fs.existsSync(CHROMIUM) ? describe : describe.skip;

/**
 * What the service told this DSAP to put in its assertions' `aud` (not the default, the API's origin): every session
 * here runs on the Sign API credential's Assertion Audience.
 */
const AUDIENCE = 'https://sign-audience.example.sg';

describeN8n('the signer\'s page in a real n8n and Chromium', () => {
  let signing: CliSandbox;
  let sb: Sandbox; // in process: the Corppass providers, legacy and FAPI 2.0 (their clients registered in code)
  let n8n: N8n;
  let signingDir: string;
  let browser: Browser;
  const downloads = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-downloads-'));

  beforeAll(async () => {
    const [port, signingPort] = await Promise.all([freePort(), freePort()]);
    signingDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-sandbox-'));
    n8n = await createN8n(installDir!, port);
    const installed = await installCommunityPackage(n8n);
    signing = await startCliSandbox(installed, signingPort, signingDir, ['--client-id', 'n8n-dsap', '--jwks-url', `${n8n.baseUrl}/webhook/singpass-sign/jwks`,
      '--webhook-url', `${n8n.baseUrl}/webhook/singpass-sign/webhook`, '--webhook-retry-delay-ms', '1000', '--audience', AUDIENCE]);
    const dsap = await generateClientKeys();
    sb = await startSandbox();
    const rp = await generateClientKeys();
    // the company-signing sample as is (legacy Corppass), and a copy on its own paths with a FAPI 2.0 credential
    const fapiVariant = path.join(downloads, 'company-signing-fapi.json');
    fs.writeFileSync(fapiVariant, fs.readFileSync(path.join(__dirname, '../../flows/n8n/company-signing.json'), 'utf8')
      .split('company-sign/').join('company-sign-fapi/').split('spflCompanySign1').join('spflCompanySign2').split('spflCorppassOff1').join('spflCorppassOff2')
      .replace(/"webhookId": "([0-9a-f]{8})/g, (_m, h: string) => `"webhookId": "${h.split('').reverse().join('')}`));
    const corppass = (id: string, prefix: string, profile: 'legacy' | 'fapi') => ({
      id, name: `Corppass (company signing, ${profile})`, type: 'corppassApi',
      data: {
        environment: 'sandbox', sandboxUrl: sb.baseUrl, clientId: `n8n-${prefix}`, signingKey: JSON.stringify(rp.signing), encryptionKey: JSON.stringify(rp.encryption),
        redirectUri: `${n8n.baseUrl}/webhook/${prefix}/callback`, transactionSecret: 'e2e-transaction-secret-0123456789abcdef', profile, ...(profile === 'fapi' ? { appType: 'login' } : {}),
      },
    });
    await importSamples(n8n, ['document-signing.json', 'key-set-endpoint.json', 'company-signing.json', fapiVariant, 'two-signers.json'], [
      corppass('spflCorppassOff1', 'company-sign', 'legacy'), corppass('spflCorppassOff2', 'company-sign-fapi', 'fapi'),
      { id: 'spflSignApi00001', name: 'Singpass Sign API (sandbox)', type: 'singpassSignApi', data: { environment: 'sandbox', sandboxUrl: signing.baseUrl, clientId: 'n8n-dsap', signingKey: JSON.stringify(dsap.signing), tenantId: 'acme', domainName: 'sign.example.sg', audience: AUDIENCE, tsaUrl: '', trustedRoots: '' } },
      { id: 'spflTokenSec0001', name: 'Singpass notification token secret', type: 'singpassNotificationTokenApi', data: { secret: 'e2e-notification-secret-0123456789abcdef' } },
      uploadKeyCredential(),
      // the samples' one session store (its folder: the sample's file area)
      sessionStoreCredential(),
    ]);
    await n8n.start();
    sb.corppass.registerClient({ clientId: 'n8n-company-sign', jwksUrl: `${n8n.baseUrl}/webhook/company-sign/jwks`, redirectUris: [`${n8n.baseUrl}/webhook/company-sign/callback`] });
    sb.corppassFapi.registerClient({ clientId: 'n8n-company-sign-fapi', jwksUrl: `${n8n.baseUrl}/webhook/company-sign-fapi/jwks`, redirectUris: [`${n8n.baseUrl}/webhook/company-sign-fapi/callback`] });
    // the company's document the sample signs (its Read Document to Sign)
    fs.mkdirSync(path.join(n8n.filesDir, 'company'));
    fs.writeFileSync(path.join(n8n.filesDir, 'company', 'agreement.pdf'), await fixture('classic'));
    browser = await launchChromium();
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    await n8n?.stop();
    await signing?.stop();
    await sb?.close();
    if (signingDir) fs.rmSync(signingDir, { recursive: true, force: true });
    fs.rmSync(downloads, { recursive: true, force: true });
    releasePackage();
    if (n8n && !process.env.SINGPASS_FLOWS_KEEP_N8N) fs.rmSync(n8n.userFolder, { recursive: true, force: true });
  }, 60_000);

  /** The headers the signer page sets (the core's, Content-Disposition and the type), as the response carries them. */
  const privateHeaders = (res: Response) => Object.fromEntries([...Object.keys(SIGNER_PAGE_HEADERS), 'content-disposition', 'content-type'].map((h) => [h, res.headers.get(h)]));
  const upload = (headers: Record<string, string>) => fetch(`${n8n.baseUrl}/webhook/singpass-sign/document`, { method: 'POST', headers, redirect: 'manual', body: new Uint8Array(fs.readFileSync(fixturePath)) });
  let fixturePath: string;
  beforeAll(async () => {
    fixturePath = path.join(downloads, 'contract.pdf');
    fs.writeFileSync(fixturePath, await fixture('classic'));
  });

  it('refuses an upload without the upload key, and a page request without a valid link, reading nothing', async () => {
    const { 'x-upload-key': _key, ...anonymous } = uploadHeaders();
    const refused = await upload(anonymous);
    expect([401, 403]).toContain(refused.status);
    expect((await upload({ ...anonymous, 'x-upload-key': 'not-the-key' })).status).toBe(403);
    expect(fs.readdirSync(n8n.filesDir).filter((f) => f.endsWith('.json'))).toEqual([]);
    for (const query of ['', '?ref=abc', '?ref=abc&key=1999999999.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '?ref=abc&key=x&view=download']) {
      const res = await fetch(`${n8n.baseUrl}/webhook/singpass-sign/page${query}`);
      expect(res.status).toBe(403);
      // the one Respond to Webhook node: the core's headers, the binary's content type, shown in place
      expect(privateHeaders(res)).toEqual({ ...SIGNER_PAGE_HEADERS, 'content-disposition': 'inline', 'content-type': 'text/html; charset=utf-8' });
      expect(await res.text()).toContain('This link is not valid for this signing session');
    }
  }, 120_000);

  it('upload → 303 to the page → QR and challenge code → scanned → signed → the signed PDF downloaded (B-LTA, pdfsig valid)', async () => {
    const res = await upload(uploadHeaders());
    expect(res.status).toBe(303);
    const signRef = res.headers.get('x-sign-ref')!;
    const challengeCode = res.headers.get('x-challenge-code')!;
    const location = res.headers.get('location')!;
    // a link keyed for this session, never a bare sign_ref
    expect(location).toMatch(new RegExp(`^page\\?ref=${signRef}&key=\\d{10}\\.[A-Za-z0-9_-]{43}$`));
    const pageUrl = new URL(location, `${n8n.baseUrl}/webhook/singpass-sign/document`).href;
    expect(pageUrl.startsWith(`${n8n.baseUrl}/webhook/singpass-sign/page?`)).toBe(true);

    const served = await fetch(pageUrl);
    expect([served.status, privateHeaders(served)]).toEqual([200, { ...SIGNER_PAGE_HEADERS, 'content-disposition': 'inline', 'content-type': 'text/html; charset=utf-8' }]);
    const poll = await fetch(`${pageUrl}&view=status`);
    expect([poll.status, privateHeaders(poll)]).toEqual([200, { ...SIGNER_PAGE_HEADERS, 'content-disposition': 'inline', 'content-type': 'application/json; charset=utf-8' }]);
    expect(await poll.json()).toMatchObject({ stage: 'waitingForScan', done: false });

    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    try {
      await page.goto(pageUrl);
      await page.locator('#qr svg').waitFor();
      expect(await page.locator('#code').textContent()).toBe(challengeCode);
      expect(await page.locator('#stage').getAttribute('data-stage')).toBe('waitingForScan');

      await signing.phone('scan', { sign_ref: signRef, user: 'p256' });
      await page.locator('#stage[data-stage="scanned"]').waitFor({ timeout: 60_000 });
      expect(await page.locator('#qr svg').count()).toBe(0);
      expect(await page.locator('#headline').textContent()).toMatch(/Scanned/);

      await signing.phone('approve', { sign_ref: signRef });
      await page.locator('#stage[data-stage="signed"]').waitFor({ timeout: 90_000 });
      await page.locator('#download-link').waitFor({ state: 'visible' });
      // the sample takes the PDF on to B-LTA after the record says completed; wait for that before downloading
      await waitFor('the B-LTA signed PDF', n8n, () => (signedAtBlta(path.join(n8n.filesDir, `${signRef}-signed.pdf`)) ? true : undefined), 120_000);
      // a page reloaded after the signing shows the download at once (state from the store, not the page's memory)
      await page.reload();
      await page.locator('#stage[data-stage="signed"]').waitFor();
      const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download-link').click()]);
      const file = path.join(downloads, `${signRef}.pdf`);
      await download.saveAs(file);
      expect(fs.readFileSync(file)).toEqual(fs.readFileSync(path.join(n8n.filesDir, `${signRef}-signed.pdf`)));
      execFileSync('qpdf', ['--check', file]);
      const pdfsig = execFileSync('pdfsig', [file]).toString();
      expect(pdfsig).toMatch(/Signature Validation: Signature is Valid/);
      expect(pdfsig.split(/^Signature #\d+:$/m).length - 1).toBe(2); // the user's signature and the document timestamp

      // the download link is its own short-lived key: it does not open the page, the page key does not download
      const href = await page.locator('#download-link').getAttribute('href');
      const dl = new URL(href!, pageUrl);
      expect(dl.searchParams.get('view')).toBe('download');
      expect(dl.searchParams.get('key')).not.toBe(new URL(pageUrl).searchParams.get('key'));
      const pdf = await fetch(dl);
      expect([pdf.status, privateHeaders(pdf)]).toEqual([200, { ...SIGNER_PAGE_HEADERS, 'content-disposition': 'attachment; filename="contract-signed.pdf"', 'content-type': 'application/pdf' }]);
      expect(Buffer.from(await pdf.arrayBuffer())).toEqual(fs.readFileSync(file));
      dl.searchParams.delete('view');
      expect((await fetch(dl)).status).toBe(403);
    } catch (err) {
      await page.screenshot({ path: path.join(n8n.userFolder, 'signer-page-failure.png') }).catch(() => undefined);
      throw err;
    } finally {
      await context.close();
    }
  }, 600_000);

  /** A Corppass login through the sample as a browser makes it (the button's POST, the provider, the callback with the cookie). */
  async function companyLogin(prefix: string, user: string): Promise<Response> {
    const start = await fetch(`${n8n.baseUrl}/webhook/${prefix}/login`, { method: 'POST', redirect: 'manual' });
    expect(start.status).toBe(303);
    const cookie = start.headers.get('set-cookie')!.split(';')[0];
    const authorize = new URL(start.headers.get('location')!);
    authorize.searchParams.set('sandbox_user', user);
    const back = await fetch(authorize, { redirect: 'manual' });
    const callback = back.headers.get('location')!;
    expect(callback.startsWith(`${n8n.baseUrl}/webhook/${prefix}/callback`)).toBe(true);
    return fetch(callback, { headers: { cookie }, redirect: 'manual' });
  }

  describe.each([['legacy', 'company-sign'], ['FAPI 2.0', 'company-sign-fapi']])('an officer signs for the company (Corppass %s)', (_profile, prefix) => {
    it('a user without the role gets a refusal page, and no session starts', async () => {
      const before = fs.readdirSync(n8n.filesDir).filter((f) => f.endsWith('.json')).length;
      const res = await companyLogin(prefix, 'cp-fin');
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await res.text();
      expect(html).toContain('Not allowed to sign for this company');
      expect(html).toContain('needs the Corppass role Preparer for SD-GSTFILE');
      expect(fs.readdirSync(n8n.filesDir).filter((f) => f.endsWith('.json')).length).toBe(before);
    }, 120_000);

    it('a user holding the role signs: the entity and role in the record, the name the app shows and the page; signed in Chromium', async () => {
      const res = await companyLogin(prefix, 'cp-admin');
      expect(res.status).toBe(303);
      const location = res.headers.get('location')!;
      expect(location).toMatch(/^\.\.\/singpass-sign\/page\?ref=[^&]+&key=\d{10}\.[A-Za-z0-9_-]{43}$/);
      const pageUrl = new URL(location, `${n8n.baseUrl}/webhook/${prefix}/callback`).href;
      const signRef = new URL(pageUrl).searchParams.get('ref')!;
      const record = JSON.parse(fs.readFileSync(path.join(n8n.filesDir, `${signRef}.json`), 'utf8')) as { request: { documentName: string; onBehalfOf: unknown } };
      expect(record.request.onBehalfOf).toEqual({ uen: '201500001A', role: 'Preparer', eserviceId: 'SD-GSTFILE' });
      expect(record.request.documentName).toBe('Agreement.pdf — for 201500001A as Preparer');
      const page = await browser.newPage();
      try {
        await page.goto(pageUrl);
        await page.locator('#qr svg').waitFor();
        expect(await page.locator('#who').textContent()).toBe('for 201500001A as Preparer');
        await signing.phone('scan', { sign_ref: signRef, user: 'p256' });
        await page.locator('#stage[data-stage="scanned"]').waitFor({ timeout: 60_000 });
        expect(await page.locator('#detail').textContent()).toContain('Agreement.pdf — for 201500001A as Preparer');
        await signing.phone('approve', { sign_ref: signRef });
        await page.locator('#stage[data-stage="signed"]').waitFor({ timeout: 90_000 });
        await page.locator('#download-link').waitFor({ state: 'visible' });
      } catch (err) {
        await page.screenshot({ path: path.join(n8n.userFolder, `company-${prefix}-failure.png`) }).catch(() => undefined);
        throw err;
      } finally {
        await page.close();
      }
      // document-signing.json's trigger and Outcome branch took it on: B-LTA, valid
      await waitFor('the B-LTA signed PDF', n8n, () => (signedAtBlta(path.join(n8n.filesDir, `${signRef}-signed.pdf`)) ? true : undefined), 120_000);
      expect(execFileSync('pdfsig', [path.join(n8n.filesDir, `${signRef}-signed.pdf`)]).toString()).toMatch(/Signature Validation: Signature is Valid/);
    }, 300_000);
  });

  describe('two signers in order (two-signers.json)', () => {
    const uploadTwo = async () => {
      const res = await fetch(`${n8n.baseUrl}/webhook/two-signers/document`, { method: 'POST', headers: uploadHeaders('lease.pdf'), redirect: 'manual', body: new Uint8Array(fs.readFileSync(fixturePath)) });
      expect(res.status).toBe(303);
      const base = `${n8n.baseUrl}/webhook/two-signers/document`;
      return { signRef: res.headers.get('x-sign-ref')!, page: new URL(res.headers.get('location')!, base).href, next: new URL(res.headers.get('x-next-signer-link')!, base).href };
    };
    /** Follow a signer's page in Chromium through scan and approval (or a decline) to its end. */
    async function signOnPage(pageUrl: string, user: string, decline = false): Promise<string> {
      const signRef = new URL(pageUrl).searchParams.get('ref')!;
      const page = await browser.newPage();
      try {
        await page.goto(pageUrl);
        await page.locator('#qr svg').waitFor();
        await signing.phone('scan', { sign_ref: signRef, user });
        await page.locator('#stage[data-stage="scanned"]').waitFor({ timeout: 60_000 });
        if (decline) {
          await signing.phone('reject', { sign_ref: signRef });
          await page.locator('#stage[data-stage="failed"]').waitFor({ timeout: 60_000 });
          return (await page.locator('#detail').textContent())!;
        }
        await signing.phone('approve', { sign_ref: signRef });
        await page.locator('#stage[data-stage="signed"]').waitFor({ timeout: 90_000 });
        return (await page.locator('#who').textContent())!;
      } catch (err) {
        await page.screenshot({ path: path.join(n8n.userFolder, `signer-${signRef}-failure.png`) }).catch(() => undefined);
        throw err;
      } finally {
        await page.close();
      }
    }

    it('signer 1 then signer 2, each on their own page; the final PDF carries both signatures, valid, at B-LTA', async () => {
      const { signRef: first, page, next } = await uploadTwo();
      // the second signer's link before the first signed: not yet
      const early = await fetch(next, { redirect: 'manual' });
      expect(early.status).toBe(200);
      expect(await early.text()).toContain('First signer has not signed yet');
      expect(await signOnPage(page, 'p256')).toBe('signer 1 of 2 (First signer)');
      const opened = await fetch(next, { redirect: 'manual' });
      expect(opened.status).toBe(303);
      const secondPage = new URL(opened.headers.get('location')!, next).href;
      const second = new URL(secondPage).searchParams.get('ref')!;
      expect(second).not.toBe(first);
      // a second click on the link: the same session
      expect(new URL((await fetch(next, { redirect: 'manual' })).headers.get('location')!, next).searchParams.get('ref')).toBe(second);
      expect(await signOnPage(secondPage, 'p384')).toBe('signer 2 of 2 (Second signer)');
      await waitFor('the final signed PDF', n8n, () => (signedAtBlta(path.join(n8n.filesDir, `${second}-signed.pdf`)) ? true : undefined), 120_000);
      const file = path.join(n8n.filesDir, `${second}-signed.pdf`);
      execFileSync('qpdf', ['--check', file]);
      const parts = execFileSync('pdfsig', [file]).toString().split(/^Signature #\d+:$/m).slice(1);
      const users = parts.filter((p) => /ETSI\.CAdES\.detached/.test(p));
      expect(users).toHaveLength(2);
      for (const u of users) expect(u).toMatch(/Signature Validation: Signature is Valid/);
      const record = JSON.parse(fs.readFileSync(path.join(n8n.filesDir, `${second}.json`), 'utf8')) as { request: { level: string; signer: unknown }; result: { level: string } };
      expect(record.request).toMatchObject({ level: 'B-LTA', signer: { position: 2, of: 2, label: 'Second signer', previousSignRef: first } });
      expect(record.result.level).toBe('B-LTA');
    }, 600_000);

    it('signer 2 declines: their page says so, signer 1\'s signed PDF stays and is downloadable from signer 1\'s page', async () => {
      const { signRef: first, page, next } = await uploadTwo();
      await signOnPage(page, 'p256');
      const secondPage = new URL((await fetch(next, { redirect: 'manual' })).headers.get('location')!, next).href;
      expect(await signOnPage(secondPage, 'p256', true)).toBe('You declined the signing in the Singpass app. Nothing was signed.');
      const status = (await (await fetch(`${page}&view=status`)).json()) as { stage: string; downloadUrl: string };
      expect(status.stage).toBe('signed');
      const pdf = Buffer.from(await (await fetch(new URL(status.downloadUrl, page))).arrayBuffer());
      expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
      const kept = path.join(downloads, `${first}-kept.pdf`);
      fs.writeFileSync(kept, pdf);
      expect(execFileSync('pdfsig', [kept]).toString()).toMatch(/Signature is Valid/);
      expect(fs.existsSync(path.join(n8n.filesDir, `${first}-signed.pdf`))).toBe(true);
    }, 600_000);
  });

  // the same page on a phone and a desktop (test/session/phone-page.ts: the checks every engine's page passes)
  describe('on a phone and a desktop', () => {
    /** An upload as the sample takes it: the page link (303), the session's stored QR payload and challenge code. */
    async function started() {
      const res = await upload(uploadHeaders());
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
});
