/**
 * The signer page across two Node-RED instances (child processes, the signing example with the PostgreSQL session
 * store) on one real PostgreSQL behind Debian's nginx, against the sandbox over real HTTP, with Debian's chromium as
 * the signer: the session is started through nginx, the service's webhook reaches instance B only (B checks the
 * certificate, submits the hash and finishes the signed PDF), and the signer page, its status polls and the download
 * are all served by instance A — state and signed PDF come from the store, not from the instance's memory.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { startSandbox, type Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { verifyPdfSignatures } from '../../src/pades';
import { PgSessionStore } from '../../src/session';
import { fixture } from '../fixtures/pdfs';
import { launchChromium, requireChromium } from '../helpers/chromium';
import { startNginx, type RunningNginx } from '../helpers/nginx';
import { postgresDatabase, type Postgres } from '../helpers/postgres';
import { deploy, freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';
import { exampleFlow, startSigning } from './signing-scenario';

let sb: Sandbox;
let pg: Postgres;
let nginx: RunningNginx;
let store: PgSessionStore;
let browser: Browser;
let tmp: string;
const nodeReds: Record<'A' | 'B', NodeRedProcess> = {} as never;

beforeAll(async () => {
  requireChromium();
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-signer.js'))) throw new Error('run `npm run build` first');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-two-signer-'));
  pg = await postgresDatabase();
  store = new PgSessionStore(pg.url);
  sb = await startSandbox({ port: 0, webhookRetryDelayMs: 300 });
  const { signing } = await generateClientKeys();
  for (const name of ['A', 'B'] as const) {
    nodeReds[name] = await startNodeRedProcess({ userDir: path.join(tmp, `userDir-${name}`), port: await freePort(), env: { NODE_RED_LOG_LEVEL: 'info', SINGPASS_SIGNED_DIR: path.join(tmp, `signed-${name}`) } });
    // the same flow, keys and secret on both, as an ops team deploys; sessions in PostgreSQL
    await deploy(nodeReds[name].url, exampleFlow(sb, signing).map((n) => (n.type === 'singpass-sign-client'
      ? { ...n, sessionStore: 'postgres', pgHost: '127.0.0.1', pgPort: String(pg.port), pgDatabase: pg.database, pgUser: pg.user, credentials: { ...(n.credentials as Record<string, unknown>), pgPassword: pg.password } }
      : n)));
    await waitFor(`instance ${name}'s key set`, async () => ((await fetch(`${nodeReds[name].url}/singpass/jwks`)).status === 200) || undefined);
  }
  nginx = await startNginx([nodeReds.A.url, nodeReds.B.url].map((u) => u.replace('http://', '')));
  // every webhook delivery goes to B: B runs the certificate step and finishes the session
  sb.sign.registerClient({ clientId: 'node-red-dsap', jwksUrl: `${nginx.url}/singpass/jwks`, notificationUrl: `${nodeReds.B.url}/singpass/sign/webhook` });
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  for (const nr of Object.values(nodeReds)) await nr.stop();
  await nginx?.stop();
  await store?.close();
  await sb?.close();
  await pg?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

test('page, status and download served by instance A for a session instance B finished', async () => {
  const input = await fixture('classic');
  const s = await startSigning(nginx, input, 'Board resolution.pdf');
  const pageUrl = new URL(s.page, `${nodeReds.A.url}/`).href; // A, not nginx: every request of the page goes to A
  const page = await browser.newPage({ acceptDownloads: true });
  await page.goto(pageUrl);
  expect((await page.textContent('#code'))!.trim()).toBe(s.challengeCode);
  expect(await page.locator('#qr svg').count()).toBe(1);

  await sb.phone.scan(s.signRef, { user: 'p256' });
  await page.locator('#stage[data-stage="scanned"]').waitFor({ timeout: 30_000 });
  await waitFor('the hash', () => (sb.sign.session(s.signRef)?.state === 'hash_submitted' || undefined), 30_000);
  await sb.phone.approve(s.signRef);
  await page.locator('#stage[data-stage="signed"]').waitFor({ timeout: 60_000 });
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-link')]);
  const file = path.join(tmp, 'downloaded.pdf');
  await download.saveAs(file);
  const got = fs.readFileSync(file);

  // B took the events and finished; A only answered the signer (its page, polls and the download)
  for (const type of ['certificate', 'signature']) {
    expect(nodeReds.B.output()).toContain(`signing webhook: ${type} event for session ${s.signRef}`);
    expect(nodeReds.A.output()).not.toContain(`event for session ${s.signRef}`);
  }
  expect(fs.existsSync(path.join(tmp, 'signed-A', `${s.signRef}.pdf`))).toBe(false);
  await waitFor('B\'s copy', () => fs.existsSync(path.join(tmp, 'signed-B', `${s.signRef}.pdf`)) || undefined);
  // what A handed out is the PDF in PostgreSQL, the one B wrote
  expect(got.equals((await store.getSignedDocument(s.signRef))!)).toBe(true);
  expect(got.equals(fs.readFileSync(path.join(tmp, 'signed-B', `${s.signRef}.pdf`)))).toBe(true);
  expect(got.subarray(0, input.length).equals(input)).toBe(true);
  const report = await verifyPdfSignatures(got, { trustedRoots: [sb.pki.root.certDer] });
  expect(report.valid).toBe(true);
  expect(report.level).toBe('B-LTA');

  // the same answer from either instance and through nginx
  const link = new URL(s.page, `${nodeReds.A.url}/`).searchParams.get('link')!;
  for (const base of [nodeReds.A.url, nodeReds.B.url, nginx.url]) {
    const status = (await (await fetch(`${base}/sign/s/${s.signRef}/status?link=${encodeURIComponent(link)}`)).json()) as Record<string, unknown>;
    expect(status).toMatchObject({ stage: 'signed', done: true, result: { level: 'B-LTA' } });
  }
  await page.close();
}, 180_000);
