/**
 * RFC 9207 `iss` per provider, following discovery: Singpass FAPI requires it; Corppass publishes the flag
 * false and sends no `iss` today, so a missing one is accepted while a wrong one is still refused and the
 * transaction stays bound to its issuer. Real HTTP against the sandbox providers on 127.0.0.1.
 */
import { SingpassFlowsError } from '../../src/errors';
import { checkResponseIss } from '../../src/login/response-iss';
import { authorize, corppassClient, endpointsSince, lastSeq, singpassClient, startHarness, type Harness } from './harness';

async function rejection(p: Promise<unknown>): Promise<SingpassFlowsError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  if (!(e instanceof SingpassFlowsError)) throw new Error(`expected a SingpassFlowsError, got ${e === undefined ? 'success' : String(e)}`);
  return e;
}

describe('Corppass as it behaves today (flag false, no iss on redirects)', () => {
  let h: Harness;
  beforeAll(async () => { h = await startHarness(); });
  afterAll(async () => { await h.close(); });
  afterEach(() => { h.corppass.reset(); h.singpass.reset(); });

  it('discovery with the flag false is accepted and a callback without iss logs in', async () => {
    const cp = corppassClient(h);
    const md = await cp.metadata();
    expect(md.raw.authorization_response_iss_parameter_supported).toBe(false);
    expect(md.responseIssRequired).toBe(false);
    const { url, transaction } = await cp.startLogin();
    expect(transaction).toMatchObject({ issuer: h.corppass.issuer, issRequired: false });
    const callback = await authorize(url);
    expect(new URL(callback as string).searchParams.has('iss')).toBe(false);
    const login = await cp.completeLogin({ transaction, callback });
    expect(login.subject.raw).toMatch(/^s=/);
  });

  it('discovery without the member is accepted too; a non-boolean flag is DISCOVERY_INVALID', async () => {
    h.corppass.misbehave({ discoveryNoIssParam: 'missing' });
    expect((await corppassClient(h).metadata()).responseIssRequired).toBe(false);
    h.corppass.misbehave({ discoveryOverride: { authorization_response_iss_parameter_supported: 'false' } });
    const e = await rejection(corppassClient(h).metadata());
    expect(e.code).toBe('DISCOVERY_INVALID');
    expect(e.message).toMatch(/"false", expected true or false/);
  });

  it.each(['wrong', 'trailingSlash', 'otherProvider'] as const)('a present but wrong iss (%s) is still refused before the token call', async (variant) => {
    const cp = corppassClient(h);
    const { url, transaction } = await cp.startLogin();
    h.corppass.misbehave({ authIss: variant });
    const callback = await authorize(url);
    const from = lastSeq(h.corppass);
    const e = await rejection(cp.completeLogin({ transaction, callback }));
    expect(e.code).toBe('LOGIN_ISSUER_MISMATCH');
    expect(e.message).toMatch(/"iss" differs/);
    expect(endpointsSince(h.corppass, from)).toEqual([]);
  });

  it('the transaction stays bound to its issuer: a Singpass callback (with its own iss) cannot complete a Corppass login', async () => {
    const cp = corppassClient(h);
    const sp = singpassClient(h);
    const { transaction } = await cp.startLogin();
    const spStart = await sp.startLogin({ scope: 'openid' });
    const spCallback = new URL(await authorize(spStart.url) as string);
    spCallback.searchParams.set('state', transaction.state); // even with the Corppass state
    const from = lastSeq(h.corppass);
    const e = await rejection(cp.completeLogin({ transaction, callback: spCallback.toString() }));
    expect(e.code).toBe('LOGIN_ISSUER_MISMATCH');
    expect(endpointsSince(h.corppass, from)).toEqual([]);
  });

  it('an error redirect without iss is trusted once state matches (the provider never sends iss)', async () => {
    const cp = corppassClient(h);
    const { url, transaction } = await cp.startLogin();
    const e = await rejection(cp.completeLogin({ transaction, callback: await authorize(url, { action: 'deny' }) }));
    expect(e.code).toBe('LOGIN_PROVIDER_ERROR');
    expect(e.details.serviceCode).toBe('access_denied');
  });
});

describe('Corppass the day it turns iss on (sandbox issParameter: true)', () => {
  let h: Harness;
  beforeAll(async () => { h = await startHarness({ corppass: { issParameter: true } }); });
  afterAll(async () => { await h.close(); });
  afterEach(() => { h.corppass.reset(); });

  it('follows discovery: iss is then required, with no configuration change', async () => {
    const cp = corppassClient(h);
    expect((await cp.metadata()).responseIssRequired).toBe(true);
    const ok = await cp.startLogin();
    expect(ok.transaction.issRequired).toBe(true);
    const callback = await authorize(ok.url);
    expect(new URL(callback as string).searchParams.get('iss')).toBe(h.corppass.issuer);
    await expect(cp.completeLogin({ transaction: ok.transaction, callback })).resolves.toMatchObject({ subject: expect.any(Object) });

    const { url, transaction } = await cp.startLogin();
    h.corppass.misbehave({ authIss: 'missing' });
    const stripped = await authorize(url);
    const from = lastSeq(h.corppass);
    const e = await rejection(cp.completeLogin({ transaction, callback: stripped }));
    expect(e.code).toBe('LOGIN_ISSUER_MISMATCH');
    expect(e.message).toMatch(/no "iss"/);
    expect(endpointsSince(h.corppass, from)).toEqual([]);
  });
});

describe('Singpass FAPI (the profile requires iss)', () => {
  let h: Harness;
  beforeAll(async () => { h = await startHarness(); });
  afterAll(async () => { await h.close(); });
  afterEach(() => { h.singpass.reset(); });

  it.each(['false', 'missing'] as const)('discovery with the flag %s is DISCOVERY_INVALID, before any PAR', async (mode) => {
    h.singpass.misbehave({ discoveryNoIssParam: mode });
    const from = lastSeq(h.singpass);
    const e = await rejection(singpassClient(h).startLogin({ scope: 'openid' }));
    expect(e.code).toBe('DISCOVERY_INVALID');
    expect(e.message).toMatch(/must send "iss"/);
    expect(endpointsSince(h.singpass, from)).toEqual(['discovery']);
  });

  it('a callback without iss is refused before the token call', async () => {
    const sp = singpassClient(h);
    const { url, transaction } = await sp.startLogin({ scope: 'openid' });
    expect(transaction.issRequired).toBe(true);
    h.singpass.misbehave({ authIss: 'missing' });
    const callback = await authorize(url);
    const from = lastSeq(h.singpass);
    const e = await rejection(sp.completeLogin({ transaction, callback }));
    expect(e.code).toBe('LOGIN_ISSUER_MISMATCH');
    expect(endpointsSince(h.singpass, from)).toEqual([]);
  });
});

describe('checkResponseIss', () => {
  const issuer = 'https://id.example.sg';
  it('a transaction without the flag (sealed before this rule) keeps requiring iss', () => {
    expect(() => checkResponseIss(undefined, { issuer })).toThrow(expect.objectContaining({ code: 'LOGIN_ISSUER_MISMATCH' }));
    expect(() => checkResponseIss(undefined, { issuer, issRequired: false })).not.toThrow();
    expect(() => checkResponseIss(issuer, { issuer, issRequired: false })).not.toThrow();
    expect(() => checkResponseIss(`${issuer}/`, { issuer, issRequired: false })).toThrow(expect.objectContaining({ code: 'LOGIN_ISSUER_MISMATCH' }));
  });
});
