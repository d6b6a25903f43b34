/**
 * The officer example (examples/corppass-officer-signing.json) in a real Node-RED (child process) against the
 * sandbox's Corppass — FAPI 2.0 and legacy — and signing service over real HTTP on 127.0.0.1. The test plays the
 * browser: login at Corppass as a sandbox user, back to the callback with the login cookie. A user holding the
 * configured role for the entity lands on the signer page of a session whose record names the entity and the role,
 * whose document name in the app says so, and which signs through to a valid PDF; a user without the role gets a
 * refusal page and no session is started.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { verifyPdfSignatures } from '../../src/pades';
import type { SessionRecord } from '../../src/session';
import { deploy, freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';
import { sessionDirOf } from './signing-scenario';

const EXAMPLE = path.resolve(__dirname, '..', '..', 'examples', 'corppass-officer-signing.json');
const DOCUMENT = path.resolve(__dirname, '..', '..', 'assets', 'samples', 'consent-form.pdf');

let sb: Sandbox;
let nr: NodeRedProcess;
let tmp: string;
let userDir: string;

beforeAll(async () => {
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-signer.js'))) throw new Error('run `npm run build` first');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-officer-'));
  userDir = path.join(tmp, 'userDir');
  sb = await startSandbox({ port: 0 });
  nr = await startNodeRedProcess({ userDir, port: await freePort(), env: { SINGPASS_SIGNED_DIR: path.join(tmp, 'signed'), SINGPASS_OFFICER_DOCUMENT: DOCUMENT } });
}, 120_000);

afterAll(async () => {
  await nr?.stop();
  await sb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The example as a user deploys it with the given Corppass profile (legacy: scope openid, roles fetched by complete). */
async function deployExample(profile: 'fapi' | 'legacy'): Promise<void> {
  const login = await generateClientKeys();
  const sign = await generateClientKeys();
  const flow = (JSON.parse(fs.readFileSync(EXAMPLE, 'utf8')) as Record<string, unknown>[]).map((n) => {
    if (n.type === 'corppass-client') {
      return { ...n, profile, sandboxUrl: sb.baseUrl, redirectUri: `${nr.url}/officer/callback`,
        credentials: { signingKey: JSON.stringify(login.signing), encryptionKey: JSON.stringify(login.encryption), transactionSecret: 'officer-e2e-transaction-secret-0123456789' } };
    }
    if (n.type === 'singpass-sign-client') return { ...n, sandboxUrl: sb.baseUrl, credentials: { signingKey: JSON.stringify(sign.signing) } };
    if (n.type === 'singpass-notification-secret') return { ...n, credentials: { secret: 'officer-e2e-notification-secret-0123456789' } };
    if (n.id === 'of-start-login' && profile === 'legacy') return { ...n, scope: 'openid authinfo' };
    return n;
  });
  await deploy(nr.url, flow);
  await waitFor('the key set', async () => ((await fetch(`${nr.url}/officer/jwks`)).status === 200) || undefined);
  for (const p of [sb.corppass, sb.corppassFapi]) p.registerClient({ clientId: 'node-red-rp', jwksUrl: `${nr.url}/officer/jwks`, redirectUris: [`${nr.url}/officer/callback`] });
  sb.sign.registerClient({ clientId: 'node-red-dsap', jwksUrl: `${nr.url}/officer/jwks`, notificationUrl: `${nr.url}/officer/sign/webhook` });
}

/** A browser's login as `user`: the example's redirect, Corppass, back to the callback with the cookie. */
async function loginAs(user: string, profile: 'fapi' | 'legacy'): Promise<Response> {
  const start = await fetch(`${nr.url}/officer/login`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0]!;
  const authorize = new URL(start.headers.get('location')!);
  // FAPI 2.0 pushes the request first (PAR): the browser only carries its request_uri
  expect(`${authorize.origin}${authorize.pathname}`.startsWith(`${profile === 'fapi' ? sb.urls.corppassFapi : sb.urls.corppass}/`)).toBe(true);
  expect(authorize.searchParams.has('request_uri')).toBe(profile === 'fapi');
  authorize.searchParams.set('sandbox_user', user);
  const back = await fetch(authorize, { redirect: 'manual' });
  expect([302, 303]).toContain(back.status);
  const callback = back.headers.get('location')!;
  expect(callback.startsWith(`${nr.url}/officer/callback?`)).toBe(true);
  return fetch(callback, { headers: { cookie }, redirect: 'manual' });
}

const records = (): string[] => (fs.existsSync(sessionDirOf(userDir)) ? fs.readdirSync(sessionDirOf(userDir)).filter((f) => f.endsWith('.json')) : []);

describe.each(['fapi', 'legacy'] as const)('Corppass %s', (profile) => {
  beforeAll(() => deployExample(profile), 60_000);

  test('an officer with the role signs for the company: entity and role in the record and the document name', async () => {
    const answer = await loginAs('cp-admin', profile);
    expect(answer.status).toBe(303);
    const location = answer.headers.get('location')!;
    expect(location).toMatch(/^s\/[^?]+\?link=\d{10}\.[A-Za-z0-9_-]{43}$/);
    const pageUrl = new URL(location, `${nr.url}/officer/callback`);
    const signRef = decodeURIComponent(pageUrl.pathname.split('/').pop()!);

    const record = JSON.parse(fs.readFileSync(path.join(sessionDirOf(userDir), `${signRef}.json`), 'utf8')) as SessionRecord;
    expect(record.request.onBehalfOf).toEqual({ uen: '201500001A', role: 'CPF2FAR1', eserviceId: 'SD-CPF2FA' });
    expect(record.request.documentName).toBe('consent-form.pdf — for 201500001A as CPF2FAR1');

    const page = await (await fetch(pageUrl)).text();
    expect(page).toContain('for 201500001A as CPF2FAR1');
    await sb.phone.scan(signRef, { user: 'p256' });
    const view = await waitFor('the hash', () => (sb.sign.session(signRef)?.state === 'hash_submitted' ? sb.sign.session(signRef) : undefined), 30_000);
    expect(view.docName).toBe('consent-form.pdf — for 201500001A as CPF2FAR1'); // what the app shows
    await sb.phone.approve(signRef);

    const statusUrl = new URL(`${encodeURIComponent(signRef)}/status${pageUrl.search}`, pageUrl);
    const status = await waitFor('signed', async () => {
      const s = (await (await fetch(statusUrl)).json()) as { stage: string; downloadUrl?: string; onBehalfOf?: unknown };
      return s.stage === 'signed' ? s : undefined;
    }, 60_000);
    expect(status.onBehalfOf).toEqual({ uen: '201500001A', role: 'CPF2FAR1', eserviceId: 'SD-CPF2FA' });
    const download = await fetch(new URL(status.downloadUrl!, pageUrl));
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="consent-form-signed.pdf"');
    const pdf = Buffer.from(await download.arrayBuffer());
    const report = await verifyPdfSignatures(pdf, { trustedRoots: [sb.pki.root.certDer] });
    expect(report.valid).toBe(true);
    expect(report.level).toBe('B-LTA');
  }, 120_000);

  test('a user without the role is refused with a page saying which role is needed; nothing is started', async () => {
    const before = records();
    const answer = await loginAs('cp-foreign', profile); // SD-PERMITS Applicant for a non-UEN entity: not a signing officer
    expect(answer.status).toBe(403);
    const html = await answer.text();
    expect(html).toContain('You cannot sign for this company');
    expect(html).toContain('needs the Corppass role CPF2FAR1 for SD-CPF2FA; your Corppass administrator can assign it.');
    expect(records()).toEqual(before);
  }, 60_000);
});
