/**
 * Login errors say what happened: each provider fault below is produced by the sandbox over real HTTP, and
 * the message a workflow shows must name the actual problem (a week-old ID token is "issued too long ago", not
 * "expired"). Codes stay as before; only the words are checked here.
 */
import { SingpassFlowsError } from '../../src/errors';
import type { Misbehaviour } from '../../sandbox/login';
import { authorize, corppassClient, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => { h = await startHarness(); });
afterAll(async () => { await h.close(); });
afterEach(() => { h.corppass.reset(); });

async function failedLogin(m: Misbehaviour, opts: { clock?: () => number; action?: string } = {}): Promise<SingpassFlowsError> {
  const cp = corppassClient(h, opts.clock ? { clock: opts.clock } : {});
  const { url, transaction } = await cp.startLogin();
  h.corppass.misbehave(m);
  const callback = await authorize(url, { action: opts.action });
  const e = await cp.completeLogin({ transaction, callback }).then(() => undefined, (x: unknown) => x);
  if (!(e instanceof SingpassFlowsError)) throw new Error(`expected a SingpassFlowsError, got ${String(e)}`);
  return e;
}

it.each<[string, Misbehaviour, RegExp]>([
  ['a week-old iat', { idToken: { iat: { $secondsFromNow: -7 * 86400 } } }, /^The ID token was issued too long ago \("iat" is more than 600 s in the past\)/],
  ['an expired exp', { idToken: { exp: { $secondsFromNow: -360 } } }, /^The ID token has expired$/],
  ['an iat in the future', { idToken: { iat: { $secondsFromNow: 600 } } }, /^The ID token was issued in the future \(check the clock\)$/],
  ['an nbf in the future', { idToken: { nbf: { $secondsFromNow: 3600 } } }, /^The ID token is not valid yet/],
  ['another issuer', { idToken: { iss: 'https://evil.example' } }, /^The ID token was issued by someone else \("iss" is not http:\/\/127\.0\.0\.1:\d+\/corppass\)$/],
  ['another audience', { idToken: { aud: 'someone-else' } }, /^The ID token is addressed to someone else \("aud" does not name rp-test-client\)$/],
  ['no sub', { idToken: { sub: null } }, /^The ID token has no "sub" claim$/],
  ['exp as a string', { idToken: { exp: '9999999999' } }, /^The ID token has an "exp" claim that is not a number of seconds$/],
])('ID token with %s', async (_name, m, message) => {
  const e = await failedLogin(m);
  expect(e.code).toBe('ID_TOKEN_INVALID');
  expect(e.message).toMatch(message);
  expect(e.message).not.toMatch(/check_failed|invalid "|\(missing\)/);
});

it('an expired login and a replayed callback are told apart', async () => {
  let now = Date.now();
  const cp = corppassClient(h, { clock: () => now });
  const late = await cp.startLogin();
  const lateCallback = await authorize(late.url);
  now += 601_000;
  const expired = await cp.completeLogin({ transaction: late.transaction, callback: lateCallback }).catch((x: SingpassFlowsError) => x);
  expect(expired).toMatchObject({ code: 'LOGIN_STATE_INVALID', message: expect.stringMatching(/^This login expired: it must be completed within 600 s/) });

  const cp2 = corppassClient(h);
  const { url, transaction } = await cp2.startLogin();
  const callback = await authorize(url);
  await cp2.completeLogin({ transaction, callback });
  const replay = await cp2.completeLogin({ transaction, callback }).catch((x: SingpassFlowsError) => x);
  expect(replay).toMatchObject({ code: 'LOGIN_STATE_INVALID', message: expect.stringMatching(/^This login was already completed/) });
});

it('a provider error redirect says what it means for the user', async () => {
  const e = await failedLogin({}, { action: 'deny' });
  expect(e.code).toBe('LOGIN_PROVIDER_ERROR');
  expect(e.message).toMatch(/^The provider ended the login with "access_denied" \(the user cancelled or refused the login\)/);
});
