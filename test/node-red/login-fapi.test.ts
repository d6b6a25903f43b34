/**
 * The Corppass login node with a Corppass client on Profile "FAPI 2.0", in node-red-node-test-helper, against the
 * sandbox's Corppass FAPI 2.0 provider (startSandbox) over real HTTP on 127.0.0.1. The provider fetches the client's
 * public keys from a key-set endpoint this test serves. A client saved without the Profile setting stays legacy.
 */
import { inspect } from 'node:util';
import { listen, type RunningServer } from '../../sandbox/http';
import { startSandbox, type Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { keySetResponse } from '../../src/login';
import { authorizeAs } from '../nodes/login-harness';
import { catchNode, configNodes, getNode, helper, nextMessage, positioned } from './helper';

/* eslint-disable @typescript-eslint/no-require-imports */
const loginNodes = require('../../node-red/singpass-login');
/* eslint-enable @typescript-eslint/no-require-imports */

const UUID = '3f1c2a7e-9b4d-4c1e-8a2f-5d6e7f809a1b';
const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);
let sb: Sandbox;
let rp: RunningServer;
let creds: Record<string, string>;

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  const keys = await generateClientKeys();
  creds = { signingKey: JSON.stringify(keys.signing), encryptionKey: JSON.stringify(keys.encryption), transactionSecret: 'node-red-fapi-transaction-secret-0123456789' };
  const jwks = keySetResponse({ keys: keys.publicKeySet.keys });
  rp = await listen((_req, res) => { res.writeHead(jwks.status, jwks.headers).end(jwks.body); });
  sb = await startSandbox({ port: 0, loginClients: [{ clientId: 'nr-fapi-rp', jwksUrl: `${rp.baseUrl}/jwks`, redirectUris: [`${rp.baseUrl}/callback`] }] });
});
afterAll(async () => {
  await sb?.close();
  await rp?.close();
  process.off('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  await helper.unload();
  expect(unhandled).toEqual([]);
});

async function load(client: Record<string, unknown>, start: Record<string, unknown> = {}) {
  await helper.load([configNodes, loginNodes, catchNode], positioned([
    { id: 'cpClient', type: 'corppass-client', environment: 'sandbox', sandboxUrl: sb.baseUrl, clientId: 'nr-fapi-rp', redirectUri: `${rp.baseUrl}/callback`, ...client },
    { id: 'f1', type: 'tab' },
    { id: 'start', z: 'f1', type: 'corppass-login', client: 'cpClient', action: 'start', scope: 'openid authinfo tpauthinfo', authenticationContextMessage: 'Submit GST return', wires: [['out']], ...start },
    { id: 'complete', z: 'f1', type: 'corppass-login', client: 'cpClient', action: 'complete', fetchRoles: true, wires: [['out']] },
    { id: 'roles', z: 'f1', type: 'corppass-login', client: 'cpClient', action: 'roles', wires: [['out']] },
    { id: 'catch', z: 'f1', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'out', z: 'f1', type: 'helper' },
    { id: 'caught', z: 'f1', type: 'helper' },
  ]), { cpClient: creds });
}

async function send(nodeId: string, msg: Record<string, unknown>, to: 'out' | 'caught' = 'out') {
  const m = nextMessage(getNode(to));
  getNode(nodeId).receive(msg);
  return m;
}

test('Profile FAPI 2.0: start (PAR) → authorize → complete gives the entity, the user uuid and the roles active today', async () => {
  await load({ profile: 'fapi', appType: 'login' });
  const started = await send('start', {});
  expect(started.statusCode).toBe(302);
  expect(started.loginUrl).toContain(sb.urls.corppassFapi);
  expect(Date.parse(started.payload.loginUrlExpiresAt) - Date.now()).toBeLessThanOrEqual(60_000);
  expect(Date.parse(started.payload.expiresAt)).toBeGreaterThan(Date.parse(started.payload.loginUrlExpiresAt));
  const callbackUrl = await authorizeAs(started.loginUrl, 'cp-admin');
  const done = await send('complete', { transaction: started.transaction, callbackUrl });
  expect(done.payload.entity).toMatchObject({ id: '201500001A' });
  expect(done.payload.user).toMatchObject({ uuid: UUID });
  expect((done.payload.roles as Array<Record<string, string>>).map((r) => `${r.source}:${r.eserviceId}:${r.role}`).sort()).toEqual([
    'AuthInfo:SD-CPF2FA:CPF2FAR1', 'AuthInfo:SD-GSTFILE:Preparer', 'AuthInfo:SD-PERMITS:Viewer',
    'TPAuthInfo:SD-GSTFILE:Preparer', 'TPAuthInfo:SD-GSTFILE:Preparer',
  ]);
  expect(done.payload.authorizationInfo).toMatchObject({ sub: UUID });
  expect(done.cookies).toEqual({ singpass_flows_login: null });
});

test('an expired ID token reaches the Catch node as ID_TOKEN_INVALID "expired", with none of its claims (NRIC) in msg.error', async () => {
  await load({ profile: 'fapi', appType: 'login' });
  sb.corppassFapi.misbehave({ idToken: { exp: { $secondsFromNow: -360 }, act: { sub: UUID, sub_type: 'user', sub_attributes: { identity_number: 'S1234567D', name: 'TAN AH KOW' } } } });
  try {
    const started = await send('start', {});
    const callbackUrl = await authorizeAs(started.loginUrl, 'cp-admin');
    const m = await send('complete', { transaction: started.transaction, callbackUrl }, 'caught');
    expect(m.error.code).toBe('ID_TOKEN_INVALID');
    expect(m.error.message).toMatch(/expired/);
    for (const shown of [JSON.stringify(m), inspect(m, { depth: 10 })]) {
      expect(shown).not.toContain('S1234567D');
      expect(shown).not.toContain('TAN AH KOW');
    }
  } finally {
    sb.corppassFapi.reset();
  }
});

test('Profile FAPI 2.0: the "roles" action is a clear INVALID_INPUT (roles come with "complete")', async () => {
  await load({ profile: 'fapi' });
  const m = await send('roles', { accessToken: 'x', subject: 'y' }, 'caught');
  expect(m.error.code).toBe('INVALID_INPUT');
  expect(m.error.message).toMatch(/FAPI 2\.0 the roles come with "complete" login.*authinfo/);
});

test('a client saved without Profile stays legacy (no context under legacy); an unknown profile is refused naming the field', async () => {
  await load({}, { scope: 'openid', authenticationContextMessage: '' });
  expect((await send('start', {})).loginUrl).toContain(`${sb.urls.corppass}/`);
  await helper.unload();
  // the authentication context exists only under FAPI 2.0: refused (not dropped) for a legacy client
  await load({ profile: 'legacy' });
  expect((await send('start', {}, 'caught')).error.message).toMatch(/Authentication Context Message.*FAPI 2\.0/);
  await helper.unload();
  await load({ profile: 'fapi2' });
  const m = await send('start', {}, 'caught');
  expect(m.error.code).toBe('INVALID_INPUT');
  expect(m.error.message).toMatch(/field "Profile".*"legacy".*"fapi"/);
});
