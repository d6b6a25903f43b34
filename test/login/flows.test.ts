/** Login flows against the sandbox providers over real HTTP on 127.0.0.1: happy paths and attacks on the flow. */
import { generateKeyPairSync } from 'node:crypto';
import type { JWK } from 'jose';
import { SingpassFlowsError } from '../../src/errors';
import { generateClientKeys, loadEncryptionKey, loadSigningKey } from '../../src/keys';
import { activeRoles, openTransaction, sealTransaction, type TransactionStore } from '../../src/login';
import { authorize, corppassClient, endpointsSince, lastSeq, singpassClient, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => { h = await startHarness(); });
afterAll(async () => { await h.close(); });
afterEach(() => { for (const p of [h.corppass, h.singpass]) { p.reset(); p.retireOldKeys(); } });

async function rejection(p: Promise<unknown>): Promise<SingpassFlowsError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  if (!(e instanceof SingpassFlowsError)) throw new Error(`expected a SingpassFlowsError, got ${e === undefined ? 'success' : String(e)}`);
  return e;
}

/** A store that never refuses: lets a test get past the client's own replay guard to reach the provider's. */
const leakyStore: TransactionStore = { put: () => undefined, take: () => true };

describe('Corppass', () => {
  it('logs in (cp-admin): subject parsed as key=value, userInfo/entityInfo, and roles active today', async () => {
    const cp = corppassClient(h);
    const { url, transaction } = await cp.startLogin();
    const q = new URL(url).searchParams;
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('redirect_uri')).toBe(h.redirectUri);
    const login = await cp.completeLogin({ transaction, callback: await authorize(url, { user: 'cp-admin' }) });
    expect(login.subject).toEqual({ raw: 's=S1234567A,uuid=3f1c2a7e-9b4d-4c1e-8a2f-5d6e7f809a1b,u=CP192,c=SG', nric: 'S1234567A', uuid: '3f1c2a7e-9b4d-4c1e-8a2f-5d6e7f809a1b', userId: 'CP192', country: 'SG', attributes: { s: 'S1234567A', uuid: '3f1c2a7e-9b4d-4c1e-8a2f-5d6e7f809a1b', u: 'CP192', c: 'SG' } });
    expect(login.userInfo).toMatchObject({ CPAccType: 'Admin', CPUID_FullName: 'TAN AH KOW' });
    expect(login.entityInfo).toMatchObject({ CPEntID: '201500001A', CPEnt_TYPE: 'UEN' });
    expect(login.expiresAt).toBeGreaterThan(Date.now());
    const info = await cp.getAuthorizationInfo({ accessToken: login.accessToken, expectedSub: login.subject.raw });
    const roles = activeRoles(info, '2026-06-01');
    expect(roles.map((r) => `${r.source}:${r.eserviceId}:${r.role}:${r.clientId ?? ''}`).sort()).toEqual([
      'AuthInfo:SD-CPF2FA:CPF2FAR1:', 'AuthInfo:SD-GSTFILE:Preparer:', 'AuthInfo:SD-PERMITS:Viewer:',
      'TPAuthInfo:SD-GSTFILE:Preparer:199912345K', 'TPAuthInfo:SD-GSTFILE:Preparer:F-MY-0042731',
    ]);
    expect(roles.find((r) => r.role === 'Preparer' && r.source === 'AuthInfo')?.parameters).toEqual({ 'Tax Type': 'GST', Branch: 'Main' });
    expect(roles.find((r) => r.clientId === 'F-MY-0042731')?.clientEntityType).toBe('NON-UEN');
  });

  it('M-series FIN and foreign users are parsed without guessing from the NRIC shape', async () => {
    const cp = corppassClient(h);
    let s = await cp.startLogin();
    const fin = await cp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url, { user: 'cp-fin' }) });
    expect(fin.subject.nric).toBe('M1234567K');
    s = await cp.startLogin();
    const foreign = await cp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url, { user: 'cp-foreign' }) });
    expect(foreign.subject).toMatchObject({ uuid: 'c0ffee00-1234-4abc-8def-0123456789ab', country: 'MY' });
    expect(foreign.subject).not.toHaveProperty('nric');
  });

  it.each(['form_post', 'fragment'] as const)('response_mode %s works', async (responseMode) => {
    const cp = corppassClient(h);
    const { url, transaction } = await cp.startLogin({ responseMode });
    const callback = await authorize(url);
    expect(typeof callback === 'string' ? new URL(callback).hash : 'form').not.toBe('');
    const login = await cp.completeLogin({ transaction, callback });
    expect(login.subject.raw).toContain('uuid=');
  });

  it('a second login uses cached discovery and keys: only authorize + token reach the provider', async () => {
    const cp = corppassClient(h);
    let s = await cp.startLogin();
    await cp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) });
    const from = lastSeq(h.corppass);
    s = await cp.startLogin();
    await cp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) });
    expect(endpointsSince(h.corppass, from)).toEqual(['authorize', 'token']);
  });

  it('client assertion: typ JWT, kid, iss = sub = client id, aud = issuer string, short-lived (items 5, 6)', async () => {
    const cp = corppassClient(h);
    const from = lastSeq(h.corppass);
    const { url, transaction } = await cp.startLogin();
    await cp.completeLogin({ transaction, callback: await authorize(url) });
    const token = h.corppass.requests().find((r) => r.seq > from && r.endpoint === 'token')!;
    const a = token.clientAssertion!;
    expect(a.header).toMatchObject({ typ: 'JWT', alg: 'ES256', kid: h.signingKey.kid });
    expect(a.payload).toMatchObject({ iss: 'rp-test-client', sub: 'rp-test-client', aud: h.corppass.issuer });
    expect((a.payload.exp as number) - (a.payload.iat as number)).toBeLessThanOrEqual(120);
    expect(token.form!.filter(([k]) => k === 'code_verifier')).toHaveLength(1);
  });

  it('error redirect with the right iss → LOGIN_PROVIDER_ERROR access_denied, no token call', async () => {
    const cp = corppassClient(h);
    const { url, transaction } = await cp.startLogin();
    const from = lastSeq(h.corppass);
    const e = await rejection(cp.completeLogin({ transaction, callback: await authorize(url, { action: 'deny' }) }));
    expect(e.code).toBe('LOGIN_PROVIDER_ERROR');
    expect(e.details.serviceCode).toBe('access_denied');
    expect(endpointsSince(h.corppass, from)).toEqual(['authorize']);
  });

  it('wrong state: the callback of another login is refused (item 16)', async () => {
    const cp = corppassClient(h);
    const a = await cp.startLogin();
    const b = await cp.startLogin();
    const e = await rejection(cp.completeLogin({ transaction: a.transaction, callback: await authorize(b.url) }));
    expect(e.code).toBe('LOGIN_STATE_MISMATCH');
  });

  it('replayed callback: the transaction is single-use, no second token call (item 20)', async () => {
    const cp = corppassClient(h);
    const { url, transaction } = await cp.startLogin();
    const callback = await authorize(url);
    await cp.completeLogin({ transaction, callback });
    const from = lastSeq(h.corppass);
    const e = await rejection(cp.completeLogin({ transaction, callback }));
    expect(e.code).toBe('LOGIN_STATE_INVALID');
    expect(endpointsSince(h.corppass, from)).toEqual([]);
  });

  it('replayed code past the client guard: the provider answers invalid_grant → TOKEN_REQUEST_FAILED', async () => {
    const cp = corppassClient(h, { transactionStore: leakyStore });
    const { url, transaction } = await cp.startLogin();
    const callback = await authorize(url);
    await cp.completeLogin({ transaction, callback });
    const e = await rejection(cp.completeLogin({ transaction, callback }));
    expect(e).toMatchObject({ code: 'TOKEN_REQUEST_FAILED', details: { serviceCode: 'invalid_grant', status: 400 } });
  });

  it('wrong PKCE verifier → invalid_grant', async () => {
    const cp = corppassClient(h);
    const { url, transaction } = await cp.startLogin();
    const callback = await authorize(url);
    const e = await rejection(cp.completeLogin({ transaction: { ...transaction, codeVerifier: 'x'.repeat(43) }, callback }));
    expect(e).toMatchObject({ code: 'TOKEN_REQUEST_FAILED', details: { serviceCode: 'invalid_grant' } });
  });

  it('an expired login (past the transaction TTL) is refused before any token call (item 20)', async () => {
    let now = Date.now();
    const cp = corppassClient(h, { clock: () => now, transactionTtlSeconds: 60 });
    const { url, transaction } = await cp.startLogin();
    const callback = await authorize(url);
    now += 61_000;
    const from = lastSeq(h.corppass);
    expect((await rejection(cp.completeLogin({ transaction, callback }))).code).toBe('LOGIN_STATE_INVALID');
    expect(endpointsSince(h.corppass, from)).toEqual([]);
  });

  it('provider key rotation between logins: one key-set refetch, login succeeds (item 70)', async () => {
    let now = Date.now();
    const cp = corppassClient(h, { clock: () => now });
    let s = await cp.startLogin();
    await cp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) });
    await h.corppass.rotateKeys();
    now += 5_000; // past the "loaded under a second ago" guard of the key-set cache
    const from = lastSeq(h.corppass);
    s = await cp.startLogin();
    const login = await cp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) });
    expect(endpointsSince(h.corppass, from)).toEqual(['authorize', 'token', 'jwks']);
    const info = await cp.getAuthorizationInfo({ accessToken: login.accessToken, expectedSub: login.subject.raw });
    expect(info.sub).toBe(login.subject.raw);
  });

  it('forged ID token kid floods cost at most one refetch (item 71)', async () => {
    let now = Date.now();
    const cp = corppassClient(h, { clock: () => now });
    let s = await cp.startLogin();
    await cp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) });
    now += 5_000;
    h.corppass.misbehave({ idTokenJose: { kid: 'made-up' } });
    const from = lastSeq(h.corppass);
    for (let i = 0; i < 3; i++) {
      s = await cp.startLogin();
      expect((await rejection(cp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) }))).code).toBe('ID_TOKEN_INVALID');
    }
    expect(endpointsSince(h.corppass, from).filter((e) => e === 'jwks')).toHaveLength(1);
  });

  it('a sealed transaction survives the round trip; tampering or another secret is refused', async () => {
    const secret = 'an-example-secret-of-at-least-32-bytes!!';
    const cp = corppassClient(h);
    const { url, transaction } = await cp.startLogin();
    const sealed = sealTransaction(transaction, secret);
    expect(sealed).not.toContain(transaction.codeVerifier);
    const bad = sealed.slice(0, -3) + (sealed.endsWith('A') ? 'BBB' : 'AAA');
    expect(() => openTransaction(bad, secret)).toThrow(expect.objectContaining({ code: 'LOGIN_STATE_INVALID' }));
    expect(() => openTransaction(sealed, 'another-secret-of-at-least-32-bytes!!!!')).toThrow(expect.objectContaining({ code: 'LOGIN_STATE_INVALID' }));
    expect(() => openTransaction(sealed, secret, { clock: () => transaction.expiresAt })).toThrow(expect.objectContaining({ code: 'LOGIN_STATE_INVALID' }));
    const login = await cp.completeLogin({ transaction: openTransaction(sealed, secret), callback: await authorize(url) });
    expect(login.subject.uuid).toBeDefined();
  });

  it('back-channel redirects are never followed (item 28): token endpoint 307 → no request at the sink', async () => {
    const cp = corppassClient(h);
    h.corppass.misbehave({ redirectBackChannel: 'token' });
    const { url, transaction } = await cp.startLogin();
    const e = await rejection(cp.completeLogin({ transaction, callback: await authorize(url) }));
    expect(e.code).toBe('HTTP_REDIRECT_REFUSED');
    expect(h.corppass.requests().some((r) => r.endpoint === 'redirectSink')).toBe(false);
  });
});

describe('Singpass FAPI 2.0', () => {
  it('logs in: PAR + DPoP + PKCE, ID token and userinfo decrypted and verified', async () => {
    const sp = singpassClient(h);
    const from = lastSeq(h.singpass);
    const { url, transaction } = await sp.startLogin({ scope: 'openid user.identity name uinfin', acrValues: ['urn:singpass:authentication:loa:2'], authenticationContextType: 'APP_AUTHENTICATION_DEFAULT', authenticationContextMessage: 'Log in to Example Services' });
    expect([...new URL(url).searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    const login = await sp.completeLogin({ transaction, callback: await authorize(url, { user: 'citizen' }) });
    expect(login).toMatchObject({
      sub: 'b8d6a2e4-5c1f-4f3a-9e7d-2a1b3c4d5e6f', subType: 'user', acr: 'urn:singpass:authentication:loa:2', amr: ['pwd', 'otp-sms'],
      subAttributes: { account_type: 'standard', identity_number: 'S8979373D', identity_coi: 'SG' },
    });
    expect(login.person).toMatchObject({ uinfin: 'S8979373D', name: 'TAN XIAO HUI' });
    expect(login.personInfo.uinfin).toMatchObject({ value: 'S8979373D', source: expect.anything() });
    const reqs = h.singpass.requests().filter((r) => r.seq > from);
    expect(reqs.map((r) => r.endpoint)).toEqual(['discovery', 'par', 'authorize', 'token', 'jwks', 'userinfo']);
    const [par, , token, , userinfo] = reqs.slice(1);
    // Items 3, 4: PKCE S256 in the PAR body, redirect_uri identical in PAR and token request; nonce length 30..64.
    const form = (r: typeof par, k: string) => r.form!.filter(([n]) => n === k).map(([, v]) => v);
    expect(form(par, 'code_challenge_method')).toEqual(['S256']);
    expect(form(par, 'nonce')[0].length).toBeGreaterThanOrEqual(30);
    expect(form(par, 'nonce')[0].length).toBeLessThanOrEqual(64);
    expect(form(token, 'redirect_uri')).toEqual(form(par, 'redirect_uri'));
    expect(form(par, 'acr_values')).toEqual(['urn:singpass:authentication:loa:2']);
    // Items 67, 68, 69: one DPoP key for the whole login; htm/htu; ath only on userinfo; DPoP scheme.
    expect(new Set([par.dpopJkt, token.dpopJkt, userinfo.dpopJkt]).size).toBe(1);
    expect(par.dpop![0].payload).toMatchObject({ htm: 'POST', htu: `${h.singpass.issuer}/par` });
    expect(par.dpop![0].payload.ath).toBeUndefined();
    expect(token.dpop![0].payload.ath).toBeUndefined();
    expect(userinfo.dpop![0].payload).toMatchObject({ htm: 'GET', ath: expect.any(String) });
    expect(userinfo.dpop![0].header.jwk).not.toHaveProperty('d');
    expect(String(userinfo.headers.authorization)).toMatch(/^DPoP /);
    // Item 6: a fresh jti for every assertion and proof.
    const jtis = [par.clientAssertion!, token.clientAssertion!].map((a) => a.payload.jti).concat([par, token, userinfo].map((r) => r.dpop![0].payload.jti));
    expect(new Set(jtis).size).toBe(5);
    expect(par.clientAssertion!.payload.aud).toBe(h.singpass.issuer);
  });

  it('a second login makes only the protocol calls: par, authorize, token, userinfo (cached discovery and keys)', async () => {
    const sp = singpassClient(h);
    let s = await sp.startLogin({ scope: 'openid uinfin' });
    await sp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) });
    const from = lastSeq(h.singpass);
    s = await sp.startLogin({ scope: 'openid uinfin' });
    await sp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) });
    expect(endpointsSince(h.singpass, from)).toEqual(['par', 'authorize', 'token', 'userinfo']);
  });

  it('after a token error the code is never sent again (item 29)', async () => {
    const sp = singpassClient(h);
    const { url, transaction } = await sp.startLogin({ scope: 'openid' });
    const callback = await authorize(url);
    h.singpass.misbehave({ tokenError: { error: 'invalid_grant' } });
    expect((await rejection(sp.completeLogin({ transaction, callback }))).code).toBe('TOKEN_REQUEST_FAILED');
    h.singpass.reset();
    const from = lastSeq(h.singpass);
    expect((await rejection(sp.completeLogin({ transaction, callback }))).code).toBe('LOGIN_STATE_INVALID');
    expect(endpointsSince(h.singpass, from)).toEqual([]);
  });

  it('each login gets a fresh DPoP key (item 68)', async () => {
    const sp = singpassClient(h);
    const a = await sp.startLogin({ scope: 'openid' });
    const b = await sp.startLogin({ scope: 'openid' });
    expect(a.transaction.dpopKey!.x).not.toBe(b.transaction.dpopKey!.x);
  });

  it('maps old amr values (fv → face, sms → otp-sms); foreign accounts have no uinfin', async () => {
    const sp = singpassClient(h);
    let s = await sp.startLogin({ scope: 'openid user.identity name' });
    const legacy = await sp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url, { user: 'legacy-face' }) });
    expect(legacy.amr).toEqual(['swk', 'face']);
    s = await sp.startLogin({ scope: 'openid user.identity name' });
    const foreign = await sp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url, { user: 'foreign' }) });
    expect(foreign.amr).toEqual(['pwd', 'otp-sms']);
    expect(foreign.subAttributes).toMatchObject({ account_type: 'foreign', identity_number: 'X98765432', identity_coi: 'US' });
    expect(foreign.person.uinfin).toBeUndefined();
  });

  it('requiredAcr: a loa 2 login is refused when loa 3 is required (item 54); loa 3 user passes', async () => {
    const sp = singpassClient(h, { requiredAcr: 'urn:singpass:authentication:loa:3' });
    let s = await sp.startLogin({ scope: 'openid' });
    const from = lastSeq(h.singpass);
    const e = await rejection(sp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url, { user: 'citizen' }) }));
    expect(e.code).toBe('ASSURANCE_INSUFFICIENT');
    expect(endpointsSince(h.singpass, from)).not.toContain('userinfo');
    s = await sp.startLogin({ scope: 'openid' });
    expect((await sp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url, { user: 'fin-m' }) })).acr).toBe('urn:singpass:authentication:loa:3');
  });

  it.each([['cancel', 'access_denied'], ['login_required', 'login_required']])('error redirect (%s) → LOGIN_PROVIDER_ERROR %s', async (action, error) => {
    const sp = singpassClient(h);
    const { url, transaction } = await sp.startLogin({ scope: 'openid' });
    const e = await rejection(sp.completeLogin({ transaction, callback: await authorize(url, { action }) }));
    expect(e).toMatchObject({ code: 'LOGIN_PROVIDER_ERROR', details: { serviceCode: error } });
  });

  it('DPoP proof from another key at the token endpoint is refused by the provider', async () => {
    const sp = singpassClient(h);
    const { url, transaction } = await sp.startLogin({ scope: 'openid' });
    const callback = await authorize(url);
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }) as JWK;
    const e = await rejection(sp.completeLogin({ transaction: { ...transaction, dpopKey: { kty: 'EC', crv: 'P-256', x: other.x, y: other.y, d: other.d } }, callback }));
    expect(e.code).toBe('TOKEN_REQUEST_FAILED');
    expect(['invalid_grant', 'invalid_dpop_proof']).toContain(e.details.serviceCode);
  });

  it('mix-up: a Corppass transaction cannot be completed by the Singpass client (item 14)', async () => {
    const cp = corppassClient(h);
    const sp = singpassClient(h);
    const { url, transaction } = await cp.startLogin();
    const e = await rejection(sp.completeLogin({ transaction, callback: await authorize(url) }));
    expect(e.code).toBe('LOGIN_STATE_INVALID');
  });

  it('https-only configuration: http redirect URIs and custom-scheme app links are refused', async () => {
    expect(() => singpassClient(h, { allowInsecureLoopback: false })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', details: expect.objectContaining({ field: 'issuer' }) }));
    const sp = singpassClient(h);
    await expect(sp.startLogin({ scope: 'openid', appLaunchUrl: 'myapp://callback' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'appLaunchUrl' } });
    await expect(sp.startLogin({ scope: 'openid', authenticationContextMessage: 'x'.repeat(101) })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(sp.startLogin({ scope: 'openid', acrValues: ['loa2'] })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('RP decryption-key rotation: old and new keys both decrypt during overlap; once retired, the old is refused (item 78)', async () => {
    const next = await loadEncryptionKey({ key: (await generateClientKeys()).encryption });
    const saved = h.rpKeys.keys;
    h.rpKeys.keys = [h.signingKey, h.encryptionKey, next];
    try {
      const both = singpassClient(h, { decryptionKeys: [next, h.encryptionKey] });
      for (const kid of [h.encryptionKey.kid, next.kid]) {
        h.singpass.misbehave({ idTokenJose: { jweEncryptToKid: kid }, userinfoJose: { jweEncryptToKid: kid } });
        const s = await both.startLogin({ scope: 'openid' });
        expect((await both.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) })).sub).toBeDefined();
      }
      const onlyNew = singpassClient(h, { decryptionKeys: [next] });
      h.singpass.misbehave({ idTokenJose: { jweEncryptToKid: h.encryptionKey.kid } });
      const s = await onlyNew.startLogin({ scope: 'openid' });
      expect((await rejection(onlyNew.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) }))).code).toBe('ID_TOKEN_INVALID');
    } finally {
      h.rpKeys.keys = saved;
    }
  });

  it('RP signing-key rotation: assertions carry the new kid once it is published (item 79)', async () => {
    const newSig = await loadSigningKey({ key: (await generateClientKeys()).signing });
    const saved = h.rpKeys.keys;
    h.rpKeys.keys = [h.signingKey, newSig, h.encryptionKey];
    try {
      const sp = singpassClient(h, { signingKey: newSig });
      const from = lastSeq(h.singpass);
      const s = await sp.startLogin({ scope: 'openid' });
      await sp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) });
      const kids = h.singpass.requests().filter((r) => r.seq > from && r.clientAssertion).map((r) => r.clientAssertion!.header.kid);
      expect(kids).toEqual([newSig.kid, newSig.kid]);
    } finally {
      h.rpKeys.keys = saved;
    }
  });

  it('DPoP nonce required everywhere: exactly one retry per endpoint with a fresh jti (items 60–62)', async () => {
    const sp = singpassClient(h);
    h.singpass.misbehave({ dpopNonce: 'require' });
    const from = lastSeq(h.singpass);
    const { url, transaction } = await sp.startLogin({ scope: 'openid uinfin' });
    await sp.completeLogin({ transaction, callback: await authorize(url) });
    const reqs = h.singpass.requests().filter((r) => r.seq > from && ['par', 'token', 'userinfo'].includes(r.endpoint));
    expect(reqs.map((r) => `${r.endpoint}:${r.status}`)).toEqual(['par:400', 'par:201', 'token:400', 'token:200', 'userinfo:401', 'userinfo:200']);
    expect(reqs[1].dpop![0].payload.nonce).toEqual(expect.any(String));
    expect(reqs[0].dpop![0].payload.jti).not.toBe(reqs[1].dpop![0].payload.jti);
    expect(reqs[0].clientAssertion!.payload.jti).not.toBe(reqs[1].clientAssertion!.payload.jti);
    expect(reqs[5].dpop![0].payload.ath).toEqual(expect.any(String));
  });

  it('ID token claims are returned as verified, and the result carries no secret of the login', async () => {
    const sp = singpassClient(h);
    const { url, transaction } = await sp.startLogin({ scope: 'openid' });
    const login = await sp.completeLogin({ transaction, callback: await authorize(url) });
    expect(login.idTokenClaims).toMatchObject({ iss: h.singpass.issuer, aud: 'rp-test-client', nonce: transaction.nonce });
    expect(JSON.stringify(login)).not.toContain(transaction.codeVerifier);
  });
});

