/**
 * The Corppass and Singpass login examples (examples/*.json) in a real, embedded Node-RED 4 with this package
 * installed, against the sandbox's login providers over real HTTP on 127.0.0.1. The test plays the browser: it
 * follows the example's redirect (keeping its cookie), logs in at the provider as a sandbox user, and brings the
 * callback back to Node-RED. The providers fetch the client's keys from the examples' own key-set nodes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { deploy, freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';

const EXAMPLES = path.resolve(__dirname, '..', '..', 'examples');

let sb: Sandbox;
let tmp: string;
let nr: NodeRedProcess;

beforeAll(async () => {
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-login.js'))) throw new Error('run `npm run build` first (npm test does)');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-login-'));
  sb = await startSandbox({ port: 0 });
  const port = await freePort();
  nr = await startNodeRedProcess({ userDir: path.join(tmp, 'userDir'), port });
  const keys = await generateClientKeys();
  const credentials = { signingKey: JSON.stringify(keys.signing), encryptionKey: JSON.stringify(keys.encryption), transactionSecret: 'node-red-login-e2e-transaction-secret-0123456789' };
  // Both examples as a user deploys them: this run's URLs, and the secrets pasted into the client config nodes.
  const flow = ['corppass-login-with-roles.json', 'singpass-login.json'].flatMap((f) => JSON.parse(fs.readFileSync(path.join(EXAMPLES, f), 'utf8')) as Record<string, unknown>[])
    .map((n) => (n.type === 'corppass-client' || n.type === 'singpass-login-client'
      ? { ...n, sandboxUrl: sb.baseUrl, redirectUri: String(n.redirectUri).replace('http://127.0.0.1:1880', nr.url), credentials }
      : n));
  await deploy(nr.url, flow);
  for (const [provider, base] of [[sb.corppass, '/corppass'], [sb.singpass, '/singpass-login']] as const) {
    await waitFor(`${base}/jwks`, async () => ((await fetch(`${nr.url}${base}/jwks`)).status === 200 ? true : undefined));
    provider.registerClient({ clientId: 'node-red-rp', jwksUrl: `${nr.url}${base}/jwks`, redirectUris: [`${nr.url}${base}/callback`] });
  }
}, 120_000);

afterAll(async () => {
  await nr?.stop();
  await sb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** What a browser does: GET the example's login URL, follow it to the provider as `user`, return the callback URL + cookie. */
async function loginAs(base: string, user: string): Promise<{ callback: string; cookie: string }> {
  const start = await fetch(`${nr.url}${base}/login`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const setCookie = start.headers.get('set-cookie') ?? '';
  expect(setCookie).toMatch(/^singpass_flows_login=[^;]+;.*HttpOnly/i);
  expect(setCookie).toMatch(/SameSite=Lax/i);
  const authorize = new URL(start.headers.get('location')!);
  expect(authorize.origin).toBe(new URL(sb.baseUrl).origin);
  authorize.searchParams.set('sandbox_user', user);
  const back = await fetch(authorize, { redirect: 'manual' });
  expect([302, 303]).toContain(back.status);
  const callback = back.headers.get('location')!;
  expect(callback.startsWith(`${nr.url}${base}/callback?`)).toBe(true);
  return { callback, cookie: setCookie.split(';')[0]! };
}

test('Corppass example: the verified user, entity and the roles active today; a replayed callback is refused', async () => {
  const { callback, cookie } = await loginAs('/corppass', 'cp-admin');
  const page = await fetch(callback, { headers: { cookie } });
  const html = await page.text();
  expect(page.status).toBe(200);
  expect(html).toContain('TAN AH KOW');
  expect(html).toContain('201500001A');
  const rows = [...html.matchAll(/<tr><td>(\w+)<\/td><td>([\w-]+)<\/td><td>(\w+)<\/td>/g)].map((m) => `${m[1]}:${m[2]}:${m[3]}`).sort();
  expect(rows).toEqual(['AuthInfo:SD-CPF2FA:CPF2FAR1', 'AuthInfo:SD-GSTFILE:Preparer', 'AuthInfo:SD-PERMITS:Viewer', 'TPAuthInfo:SD-GSTFILE:Preparer', 'TPAuthInfo:SD-GSTFILE:Preparer']);
  expect(page.headers.get('set-cookie')).toMatch(/^singpass_flows_login=;/); // the one-time cookie is cleared

  const replay = await fetch(callback, { headers: { cookie } });
  expect(replay.status).toBe(400);
  expect(await replay.text()).toContain('LOGIN_STATE_INVALID');
}, 120_000);

test('Corppass example: a callback without the browser\'s cookie is refused with a clear error page', async () => {
  const { callback } = await loginAs('/corppass', 'cp-admin');
  const page = await fetch(callback);
  expect(page.status).toBe(400);
  expect(await page.text()).toMatch(/INVALID_INPUT[\s\S]*Transaction/);
}, 120_000);

test('Singpass example: the verified person from the encrypted ID token and userinfo (FAPI 2.0 with DPoP)', async () => {
  const { callback, cookie } = await loginAs('/singpass-login', 'citizen');
  const page = await fetch(callback, { headers: { cookie } });
  const html = await page.text();
  expect(page.status).toBe(200);
  expect(html).toContain('Welcome, <b>TAN XIAO HUI</b> (S8979373D)');
  expect(html).toContain('b8d6a2e4-5c1f-4f3a-9e7d-2a1b3c4d5e6f');
  expect(html).toContain('urn:singpass:authentication:loa:2');
}, 120_000);
