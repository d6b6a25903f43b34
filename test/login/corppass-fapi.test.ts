/**
 * Corppass FAPI 2.0 logins against the sandbox Corppass FAPI provider over real HTTP on 127.0.0.1: a Login app and a
 * Myinfo Business app, the same authorization output as the legacy profile, what goes on the wire (PAR, DPoP, `ath`,
 * client assertions), local refusal of bad authentication contexts, and the request count with warm caches.
 */
import { createHash } from 'node:crypto';
import { SingpassFlowsError } from '../../src/errors';
import { activeRoles, createCorppassClient, InMemoryTransactionStore, ProviderCache } from '../../src/login';
import { authorize, CLIENT_ID, corppassClient, corppassFapiClient, endpointsSince, lastSeq, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => { h = await startHarness(); });
afterAll(async () => { await h.close(); });
afterEach(() => { h.corppassFapi.reset(); h.corppass.reset(); });

async function rejection(p: Promise<unknown>): Promise<SingpassFlowsError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  if (!(e instanceof SingpassFlowsError)) throw new Error(`expected a SingpassFlowsError, got ${e === undefined ? 'success' : String(e)}`);
  return e;
}

const ALL_LOGIN_SCOPES = 'openid authinfo tpauthinfo entity.identity entity.basic_profile.name entity.basic_profile.uen_status user.identity user.name';

describe('Corppass FAPI 2.0, Login app', () => {
  it('logs in: entity from sub, acting user from act (keyed on its UUID), roles from userinfo', async () => {
    const cp = corppassFapiClient(h);
    const { url, transaction } = await cp.startLogin({ scope: ALL_LOGIN_SCOPES, authenticationContextMessage: 'Submit GST return 2026' });
    const login = await cp.completeLogin({ transaction, callback: await authorize(url, { user: 'cp-admin' }) });
    expect(login.user).toEqual({
      uuid: '3f1c2a7e-9b4d-4c1e-8a2f-5d6e7f809a1b', accountType: 'standard', identityNumber: 'S1234567A', identityCoi: 'SG', name: 'TAN AH KOW',
      attributes: { account_type: 'standard', identity_number: 'S1234567A', identity_coi: 'SG', name: 'TAN AH KOW' },
    });
    expect(login.entity).toMatchObject({ id: '201500001A', type: 'UEN', registrationNumber: '201500001A', countryOfIncorporation: 'SG', name: 'ACME WIDGETS PTE. LTD.', uenStatus: 'Registered' });
    expect(login.idTokenClaims).toMatchObject({ sub: '201500001A', sub_type: 'entity', act: { sub: login.user.uuid } });
    expect(login.authorizationInfo?.sub).toBe(login.user.uuid);
    expect(login.roles.map((r) => `${r.source}:${r.eserviceId}:${r.role}`).sort()).toEqual(
      activeRoles(login.authorizationInfo!).map((r) => `${r.source}:${r.eserviceId}:${r.role}`).sort(),
    );
    expect(login.scope).toBe(ALL_LOGIN_SCOPES);
    expect(login).not.toHaveProperty('refreshToken');
  });

  it('gives the same authorization info and active roles as the legacy profile for the same user', async () => {
    const fapi = corppassFapiClient(h);
    let s = await fapi.startLogin({ scope: 'openid authinfo tpauthinfo' });
    const viaFapi = await fapi.completeLogin({ transaction: s.transaction, callback: await authorize(s.url, { user: 'cp-admin' }) });
    const legacy = corppassClient(h);
    const l = await legacy.startLogin();
    const legacyLogin = await legacy.completeLogin({ transaction: l.transaction, callback: await authorize(l.url, { user: 'cp-admin' }) });
    const legacyInfo = await legacy.getAuthorizationInfo({ accessToken: legacyLogin.accessToken, expectedSub: legacyLogin.subject.raw });
    expect(viaFapi.authorizationInfo!.authInfo).toEqual(legacyInfo.authInfo);
    expect(viaFapi.authorizationInfo!.tpAuthInfo).toEqual(legacyInfo.tpAuthInfo);
    expect(activeRoles(viaFapi.authorizationInfo!, '2026-06-01')).toEqual(activeRoles(legacyInfo, '2026-06-01'));
    // The user is the same person: legacy names it in `sub`, FAPI in `act.sub`.
    expect(viaFapi.user.uuid).toBe(legacyLogin.subject.uuid);
    s = await fapi.startLogin({ scope: 'openid authinfo tpauthinfo' });
    const foreign = await fapi.completeLogin({ transaction: s.transaction, callback: await authorize(s.url, { user: 'cp-foreign' }) });
    expect(foreign.authorizationInfo!.tpAuthInfo.Result_Set.ESrvc_Result).toEqual([]);
    expect(foreign.entity.id).toBe('F-MY-0042731');
  });

  it('sends PAR with PKCE S256, the authentication context, and DPoP from one per-login key on PAR, token and userinfo (ath at userinfo, item 59)', async () => {
    const cp = corppassFapiClient(h);
    const from = lastSeq(h.corppassFapi);
    const { url, transaction } = await cp.startLogin({ scope: 'openid authinfo', authenticationContextMessage: 'Approve payroll run 42' });
    const u = new URL(url);
    expect([...u.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    expect(u.pathname).toBe(new URL(h.corppassFapi.authorizationEndpoint).pathname);
    const login = await cp.completeLogin({ transaction, callback: await authorize(url) });
    const reqs = h.corppassFapi.requests().filter((r) => r.seq > from);
    const par = reqs.find((r) => r.endpoint === 'par')!;
    const token = reqs.find((r) => r.endpoint === 'token')!;
    const userinfo = reqs.find((r) => r.endpoint === 'userinfo')!;
    expect(par.url).toBe(new URL(h.corppassFapi.parEndpoint).pathname);
    const form = Object.fromEntries(par.form!);
    expect(form).toMatchObject({ response_type: 'code', code_challenge_method: 'S256', authentication_context_type: 'APP_AUTHENTICATION_DEFAULT', authentication_context_message: 'Approve payroll run 42', scope: 'openid authinfo' });
    expect(form.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const r of [par, token, userinfo]) expect(r.status).toBeLessThan(300);
    expect(new Set([par.dpopJkt, token.dpopJkt, userinfo.dpopJkt]).size).toBe(1);
    expect(par.dpop![0]!.payload.ath).toBeUndefined();
    expect(token.dpop![0]!.payload.ath).toBeUndefined();
    expect(userinfo.headers.authorization).toMatch(/^DPoP /);
    const at = String(userinfo.headers.authorization).slice('DPoP '.length);
    expect(userinfo.dpop![0]!.payload.ath).toBe(createHash('sha256').update(at).digest('base64url'));
    // Client assertions: aud = issuer string, lifetime ≤ 120 s, a fresh jti per request.
    for (const r of [par, token]) {
      const a = r.clientAssertion!;
      expect(a.payload).toMatchObject({ iss: CLIENT_ID, sub: CLIENT_ID, aud: h.corppassFapi.issuer });
      expect((a.payload.exp as number) - (a.payload.iat as number)).toBeLessThanOrEqual(120);
    }
    expect(par.clientAssertion!.payload.jti).not.toBe(token.clientAssertion!.payload.jti);
    // A second login gets another DPoP key.
    const again = await cp.startLogin({ scope: 'openid' });
    expect(again.transaction.dpopKey!.x).not.toBe(transaction.dpopKey!.x);
    expect(login.roles.length).toBeGreaterThan(0);
  });

  it('with warm caches a login costs exactly PAR, token and userinfo (plus the browser at authorize); openid alone skips userinfo', async () => {
    const cp = corppassFapiClient(h);
    let s = await cp.startLogin({ scope: 'openid authinfo' });
    await cp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) });
    let from = lastSeq(h.corppassFapi);
    s = await cp.startLogin({ scope: 'openid authinfo' });
    await cp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) });
    expect(endpointsSince(h.corppassFapi, from)).toEqual(['par', 'authorize', 'token', 'userinfo']);
    from = lastSeq(h.corppassFapi);
    s = await cp.startLogin({ scope: 'openid user.name entity.identity' });
    const login = await cp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) });
    expect(endpointsSince(h.corppassFapi, from)).toEqual(['par', 'authorize', 'token']);
    expect(login.authorizationInfo).toBeUndefined();
    expect(login.roles).toEqual([]);
    expect(login.user.name).toBe('TAN AH KOW');
  });

  it.each([
    ['a character outside letters, digits and spaces', { authenticationContextMessage: 'Pay $100 now!' }, /authenticationContextMessage: only letters, digits and spaces are allowed \(remove "\$" "!"\)/],
    ['more than 100 characters', { authenticationContextMessage: 'a'.repeat(101) }, /authenticationContextMessage: at most 100 characters \(this one has 101\)/],
    ['an empty message', { authenticationContextMessage: '' }, /authenticationContextMessage/],
    ['a malformed context type', { authenticationContextType: 'default' }, /authenticationContextType: an upper-case identifier/],
  ])('refuses %s locally, before any call', async (_name, opts, message) => {
    const cp = corppassFapiClient(h);
    await cp.metadata();
    const from = lastSeq(h.corppassFapi);
    const e = await rejection(cp.startLogin({ scope: 'openid', ...opts }));
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.message).toMatch(message);
    expect(endpointsSince(h.corppassFapi, from)).toEqual([]);
  });

  it('a 100-character message of letters, digits and spaces is accepted by the client and the provider', async () => {
    const cp = corppassFapiClient(h);
    const { url, transaction } = await cp.startLogin({ scope: 'openid', authenticationContextMessage: 'A1 '.repeat(33) + 'Z' });
    await expect(cp.completeLogin({ transaction, callback: await authorize(url) })).resolves.toMatchObject({ entity: { id: '201500001A' } });
  });

  it('a replayed callback is refused without a second token call (item 20); a refused code is never sent again (item 29)', async () => {
    const cp = corppassFapiClient(h);
    let s = await cp.startLogin();
    const callback = await authorize(s.url);
    await cp.completeLogin({ transaction: s.transaction, callback });
    let from = lastSeq(h.corppassFapi);
    expect((await rejection(cp.completeLogin({ transaction: s.transaction, callback }))).code).toBe('LOGIN_STATE_INVALID');
    expect(endpointsSince(h.corppassFapi, from)).toEqual([]);
    h.corppassFapi.misbehave({ tokenError: { error: 'invalid_grant' } });
    s = await cp.startLogin();
    from = lastSeq(h.corppassFapi);
    expect((await rejection(cp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) }))).code).toBe('TOKEN_REQUEST_FAILED');
    expect(endpointsSince(h.corppassFapi, from)).toEqual(['authorize', 'token']);
  });

  it('a scope not enabled for the app is refused by Corppass at PAR (PAR_FAILED invalid_scope), before any redirect', async () => {
    const cp = corppassFapiClient(h);
    const e = await rejection(cp.startLogin({ scope: 'openid corppass.email' }));
    expect(e.code).toBe('PAR_FAILED');
    expect(e.details.serviceCode).toBe('invalid_scope');
  });
});

describe('Corppass FAPI 2.0, Myinfo Business app', () => {
  it('logs in without an authentication context and returns the Myinfo Business data from userinfo', async () => {
    const cp = corppassFapiClient(h, { appType: 'myinfo-business' });
    const from = lastSeq(h.corppassFapi);
    const { url, transaction } = await cp.startLogin({ scope: 'openid entity.basic_profile user.email corppass.email authinfo' });
    const login = await cp.completeLogin({ transaction, callback: await authorize(url, { user: 'cp-fin' }) });
    const par = h.corppassFapi.requests().find((r) => r.seq > from && r.endpoint === 'par')!;
    expect(par.form!.map(([k]) => k)).not.toEqual(expect.arrayContaining(['authentication_context_type']));
    expect(par.form!.map(([k]) => k)).not.toContain('authentication_context_message');
    expect(login.user.uuid).toBe('8a4b2c6d-1e3f-4a5b-9c7d-0e1f2a3b4c5d');
    expect(login.myinfo).toMatchObject({
      entity: { basic_profile: { uen: '201500001A', entity_name: 'ACME WIDGETS PTE. LTD.', entity_type: 'UEN', entity_status: 'Registered' } },
      person: { email: 'cp-fin@example.sg' },
      email: 'cp-fin@example.sg',
      emailVerified: true,
    });
    expect(login.roles.map((r) => r.role)).toEqual(['CPF2FAR1']);
  });

  it.each([
    [{ authenticationContextType: 'APP_AUTHENTICATION_DEFAULT' }, 'authenticationContextType'],
    [{ authenticationContextMessage: 'Hello' }, 'authenticationContextMessage'],
  ])('refuses an authentication context locally (%o), naming the field, before any call', async (opts, field) => {
    const cp = corppassFapiClient(h, { appType: 'myinfo-business' });
    await cp.metadata();
    const from = lastSeq(h.corppassFapi);
    const e = await rejection(cp.startLogin({ scope: 'openid', ...opts }));
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.details.field).toBe(field);
    expect(e.message).toContain('Myinfo Business');
    expect(endpointsSince(h.corppassFapi, from)).toEqual([]);
  });
});

describe('Corppass profile as configuration', () => {
  it('createCorppassClient({ profile: "fapi" }) is the FAPI client; the default stays legacy', async () => {
    const common = { clientId: CLIENT_ID, signingKey: h.signingKey, decryptionKeys: [h.encryptionKey], redirectUri: h.redirectUri, allowInsecureLoopback: true, providerCache: new ProviderCache(), transactionStore: new InMemoryTransactionStore() };
    const fapi = createCorppassClient({ ...common, issuer: h.corppassFapi.issuer, profile: 'fapi' });
    expect(fapi.profile).toBe('fapi');
    const { url, transaction } = await fapi.startLogin({ scope: 'openid authinfo' });
    const login = await fapi.completeLogin({ transaction, callback: await authorize(url) });
    expect(login.user.uuid).toBe('3f1c2a7e-9b4d-4c1e-8a2f-5d6e7f809a1b');
    expect(createCorppassClient({ ...common, issuer: h.corppass.issuer }).profile).toBe('legacy');
    const e = (() => { try { createCorppassClient({ ...common, issuer: h.corppass.issuer, profile: 'fapi2' as 'fapi' }); } catch (x) { return x as SingpassFlowsError; } })();
    expect(e?.code).toBe('INVALID_INPUT');
    expect(e?.details.field).toBe('profile');
  });

  it('a legacy transaction is not completed by the FAPI client (and vice versa)', async () => {
    const legacy = corppassClient(h);
    const fapi = corppassFapiClient(h);
    const l = await legacy.startLogin();
    const f = await fapi.startLogin();
    expect((await rejection(fapi.completeLogin({ transaction: l.transaction, callback: await authorize(l.url) }))).code).toBe('LOGIN_STATE_INVALID');
    expect((await rejection(legacy.completeLogin({ transaction: f.transaction, callback: await authorize(f.url) }))).code).toBe('LOGIN_STATE_INVALID');
  });
});
