/**
 * The signer's page in a REAL n8n 2.41 in QUEUE MODE (main, one webhook process, two workers; Redis; PostgreSQL as
 * n8n's database and as the session store) and a real headless Chromium: the signing sample as a queue-mode user sets
 * it up (tests' queue-workflow.ts: every Session Record node — Signer Page too — on the PostgreSQL store). Every page,
 * poll and download is a webhook execution on whichever worker takes it, so what the page shows comes from the store,
 * never from a process's memory; the signed PDF is served from the store's signed-documents table.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { SIGNER_PAGE_HEADERS } from '../../src/session';
import { fixture } from '../fixtures/pdfs';
import { CHROMIUM, launchChromium } from '../helpers/chromium';
import { installedPackageDir, type N8nQueue } from '../helpers/n8n-queue';
import { hasPostgres } from '../helpers/postgres';
import { hasRedis } from '../helpers/redis';
import { startDeliveryRelay, type DeliveryRelay } from './delivery-relay';
import { startQueueSample } from './queue-workflow';
import { freePort, n8nInstallDir, releasePackage, startCliSandbox, uploadHeaders, type CliSandbox } from './real-n8n';

const installDir = n8nInstallDir();
const ready = !!installDir && hasPostgres() && hasRedis() && fs.existsSync(CHROMIUM);
if (!ready && process.env.CI) throw new Error('needs n8n (scripts/install-n8n.sh), postgresql, redis-server and chromium');
const describeQueue = ready ? describe : describe.skip;

describeQueue('the signer\'s page in n8n queue mode (webhook process + 2 workers, PostgreSQL store) and Chromium', () => {
  let q: N8nQueue;
  let signing: CliSandbox;
  let signingDir: string;
  let relay: DeliveryRelay;
  let browser: Browser;

  beforeAll(async () => {
    ({ q } = await startQueueSample({
      queue: { workers: 2 }, resumeEverySeconds: 5, idleSeconds: 10,
      async services(n8n) {
        relay = await startDeliveryRelay({ webhookUrl: () => n8n.webhookUrl, mainUrl: () => n8n.mainUrl });
        signingDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-sandbox-'));
        signing = await startCliSandbox(installedPackageDir(n8n.userFolder('main')), await freePort(), signingDir, [
          '--client-id', 'n8n-dsap', '--jwks-url', `${n8n.webhookUrl}/webhook/singpass-sign/jwks`, '--webhook-url', `${relay.baseUrl}/hook`, '--webhook-retry-delay-ms', '1000',
        ]);
        return { signingUrl: signing.baseUrl, signedPdfUrl: `${relay.baseUrl}/signed` };
      },
    }));
    browser = await launchChromium();
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    await signing?.stop();
    await relay?.close();
    await q?.stop();
    if (signingDir) fs.rmSync(signingDir, { recursive: true, force: true });
    releasePackage();
  }, 120_000);

  it('upload → 303 → the page on any worker: QR and code, scanned, signed; the signed PDF downloaded from the store', async () => {
    const upload = `${q.webhookUrl}/webhook/singpass-sign/document`;
    const res = await fetch(upload, { method: 'POST', headers: uploadHeaders(), redirect: 'manual', body: new Uint8Array(await fixture('classic')) });
    expect(res.status).toBe(303);
    const signRef = res.headers.get('x-sign-ref')!;
    const pageUrl = new URL(res.headers.get('location')!, upload).href;
    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    try {
      const served = await fetch(pageUrl);
      expect([served.status, served.headers.get('content-type'), served.headers.get('x-frame-options'), served.headers.get('content-disposition')]).toEqual([200, 'text/html; charset=utf-8', 'DENY', 'inline']);
      await page.goto(pageUrl);
      await page.locator('#qr svg').waitFor();
      expect(await page.locator('#code').textContent()).toBe(res.headers.get('x-challenge-code'));
      await signing.phone('scan', { sign_ref: signRef, user: 'p256' });
      await page.locator('#stage[data-stage="scanned"]').waitFor({ timeout: 90_000 });
      await signing.phone('approve', { sign_ref: signRef });
      await page.locator('#stage[data-stage="signed"]').waitFor({ timeout: 120_000 });
      const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download-link').click()]);
      const file = path.join(q.userFolder('main'), `${signRef}-downloaded.pdf`);
      await download.saveAs(file);
      // through the webhook process from a worker's one Respond to Webhook node: the type, the name, the core's headers
      const dl = await fetch(new URL((await page.locator('#download-link').getAttribute('href'))!, pageUrl));
      expect([dl.status, dl.headers.get('content-type'), dl.headers.get('content-disposition'), dl.headers.get('cache-control'), dl.headers.get('referrer-policy')])
        .toEqual([200, 'application/pdf', 'attachment; filename="contract-signed.pdf"', SIGNER_PAGE_HEADERS['cache-control'], SIGNER_PAGE_HEADERS['referrer-policy']]);
      expect(Buffer.from(await dl.arrayBuffer())).toEqual(fs.readFileSync(file));
      execFileSync('qpdf', ['--check', file]);
      const pdfsig = execFileSync('pdfsig', [file]).toString();
      expect(pdfsig).toMatch(/Signature Validation: Signature is Valid/);
      expect(pdfsig).toMatch(/Signer full Distinguished Name: serialNumber=S1234567D,/);
    } catch (err) {
      await page.screenshot({ path: path.join(os.tmpdir(), `spfl-queue-signer-page-${signRef}.png`) }).catch(() => undefined);
      throw err;
    } finally {
      await context.close();
    }
    // the pages, polls and the download ran as executions on the workers (the webhook process only takes requests)
    expect(q.log('worker0') + q.log('worker1')).not.toMatch(/Error loading package|Unrecognized node type/);
  }, 600_000);
});
