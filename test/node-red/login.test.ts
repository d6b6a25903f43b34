/**
 * Login and key-set nodes with node-red-node-test-helper: bad keys in the login client, a callback without the
 * browser's cookie, an altered transaction, a wrong action, no access token — each a clear error with the core's code
 * on the Catch node, never a crash or an unhandled rejection. (The happy paths run against the sandbox providers in
 * login.e2e.test.ts.)
 */
import { caught, catchNode, configNodes, getNode, helper, keys, nextError, positioned } from './helper';

/* eslint-disable @typescript-eslint/no-require-imports */
const loginNodes = require('../../node-red/singpass-login');
/* eslint-enable @typescript-eslint/no-require-imports */

const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);
beforeAll(() => process.on('unhandledRejection', onUnhandled));
afterAll(() => process.off('unhandledRejection', onUnhandled));
afterEach(async () => {
  await helper.unload();
  expect(unhandled).toEqual([]);
});

const SECRET = 'a-transaction-secret-of-more-than-32-characters';

async function load(o: { signingKey?: string; encryptionKey?: string; transactionSecret?: string; cp?: Record<string, unknown>; sp?: Record<string, unknown> } = {}) {
  const k = keys();
  const creds = { signingKey: o.signingKey ?? k.jwk, encryptionKey: o.encryptionKey ?? k.pem, transactionSecret: o.transactionSecret ?? SECRET };
  const client = { environment: 'custom', issuer: 'http://127.0.0.1:9/corppass', clientId: 'rp', redirectUri: 'http://127.0.0.1:1880/callback' };
  await helper.load([configNodes, loginNodes, catchNode], positioned([
    { id: 'cpClient', type: 'corppass-client', ...client },
    { id: 'spClient', type: 'singpass-login-client', ...client, issuer: 'http://127.0.0.1:9/singpass' },
    { id: 'f1', type: 'tab' },
    { id: 'cp', z: 'f1', type: 'corppass-login', client: 'cpClient', action: 'complete', fetchRoles: true, wires: [['out']], ...o.cp },
    { id: 'sp', z: 'f1', type: 'singpass-login', client: 'spClient', action: 'start', wires: [['out']], ...o.sp },
    { id: 'catch', z: 'f1', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'out', z: 'f1', type: 'helper' },
    { id: 'caught', z: 'f1', type: 'helper' },
  ]), { cpClient: creds, spClient: creds });
}

describe('login client config nodes', () => {
  test('an RSA signing key is refused on deploy and when a login node uses it, naming the field', async () => {
    await load({ signingKey: keys().rsaPem });
    const err = (await nextError(getNode('cpClient'))) as { code: string; message: string };
    expect(err.code).toBe('KEY_UNSUPPORTED');
    expect(err.message).toMatch(/^Corppass client "cpClient", field "Signing key"/);
    expect(err.message).not.toMatch(/Credential/);
    const m = await caught('cp', { payload: {}, transaction: 'x' });
    expect(m.error.code).toBe('KEY_UNSUPPORTED');
    expect(getNode('cp').status.args.at(-1)![0]).toMatchObject({ fill: 'red' });
  });

  test('a malformed encryption key (PEM) and a short transaction secret are named', async () => {
    await load({ encryptionKey: '-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----' });
    expect(((await caught('cp', { transaction: 'x', payload: { code: 'c' } })).error as { message: string }).message).toMatch(/field "Encryption key"/);
    await helper.unload();
    await load({ transactionSecret: 'short' });
    const m = await caught('sp', {});
    expect(m.error.code).toBe('INVALID_INPUT');
    expect(m.error.message).toMatch(/field "Transaction secret": use at least 32 characters/);
  });
});

describe('login nodes refuse bad input', () => {
  test('complete login: a callback without the login cookie says what is missing', async () => {
    await load();
    const m = await caught('cp', { payload: { code: 'abc', state: 'xyz' }, req: { query: { code: 'abc', state: 'xyz' }, cookies: {}, headers: {} } });
    expect(m.error.code).toBe('INVALID_INPUT');
    expect(m.error.message).toMatch(/Transaction.*singpass_flows_login/);
  });

  test('complete login: an altered sealed transaction is LOGIN_STATE_INVALID', async () => {
    await load();
    const m = await caught('cp', { transaction: 'sftx1.AAAAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBB', payload: { code: 'abc', state: 'xyz' } });
    expect(m.error.code).toBe('LOGIN_STATE_INVALID');
  });

  test('get roles: no access token, and an action the provider does not have', async () => {
    await load({ cp: { action: 'roles' }, sp: { action: 'roles' } });
    const m = await caught('cp', { payload: {} });
    expect(m.error.message).toMatch(/msg.accessToken/);
    const s = await caught('sp', {});
    expect(s.error.message).toMatch(/action "roles" is not one of start, complete/);
  });

  test('a login node without its config node says which one to choose', async () => {
    await load({ sp: { client: '' } });
    const m = await caught('sp', {});
    expect(m.error.message).toMatch(/choose a "Singpass login client" config node/);
  });
});
