/** Unit tests of the login building blocks (one function each; no network). */
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { CompactEncrypt, SignJWT, type JWK } from 'jose';
import { SingpassFlowsError } from '../../src/errors';
import { generateClientKeys, loadEncryptionKey, loadSigningKey, RemoteKeySet } from '../../src/keys';
import { activeRoles, flattenPersonInfo, InMemoryTransactionStore, keySetResponse, parseAuthorizationInfo, parseCorppassSubject, ProviderCache, singaporeDate, type LoginTransaction } from '../../src/login';
import { validateCallback } from '../../src/login/callback';
import { decryptAndVerify, hasDuplicateMembers } from '../../src/login/nested-jwt';
import { DpopNonces, challengeNonce } from '../../src/login/dpop';
import type { HttpResponse } from '../../src/http';
import { FAPI_AUTH_INFO_MEMBERS } from '../../src/login/wire';

const ISS = 'https://id.example.sg/fapi';
const tx: LoginTransaction = {
  v: 1, provider: 'singpass', id: 'tx1', issuer: ISS, clientId: 'c', redirectUri: 'https://rp.example/cb', state: 'S'.repeat(43), nonce: 'N'.repeat(43),
  codeVerifier: 'V'.repeat(43), scope: 'openid', createdAt: 0, expiresAt: Date.now() + 60_000,
};
const code = (e: unknown) => (e as SingpassFlowsError).code;
const thrown = (f: () => unknown) => { try { f(); } catch (e) { return e as SingpassFlowsError; } throw new Error('did not throw'); };

describe('validateCallback', () => {
  it('reads the code from a URL query, a fragment, URLSearchParams or a plain object', () => {
    const q = `iss=${encodeURIComponent(ISS)}&state=${tx.state}&code=abc`;
    expect(validateCallback(`https://rp.example/cb?${q}`, tx)).toBe('abc');
    expect(validateCallback(`https://rp.example/cb?tenant=1#${q}`, { ...tx, responseMode: 'fragment' })).toBe('abc');
    expect(validateCallback(new URLSearchParams(q), tx)).toBe('abc');
    expect(validateCallback({ iss: ISS, state: tx.state, code: 'abc' }, tx)).toBe('abc');
  });
  it('checks iss before the error: an error from an unverified issuer does not surface its description (item 15)', () => {
    const e = thrown(() => validateCallback({ error: 'access_denied', error_description: 'click here http://evil', state: tx.state }, tx));
    expect(e.code).toBe('LOGIN_ISSUER_MISMATCH');
    expect(e.message).not.toContain('evil');
  });
  it('refuses a repeated parameter given as an array (item 18)', () => {
    expect(code(thrown(() => validateCallback({ iss: ISS, state: tx.state, code: ['a', 'b'] }, tx)))).toBe('LOGIN_RESPONSE_INVALID');
  });
});

describe('decryptAndVerify (nested JWT)', () => {
  it('refuses direct ECDH-ES key agreement even though it decrypts (item 32)', async () => {
    const enc = await loadEncryptionKey({ key: (await generateClientKeys()).encryption });
    const jwe = await new CompactEncrypt(new TextEncoder().encode('a.b.c')).setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256GCM', kid: enc.kid }).encrypt(createPublicKey(enc.privateKey));
    const e = await decryptAndVerify(jwe, { decryptionKeys: [enc], encs: ['A256GCM'], keySet: new RemoteKeySet('https://unused.example/jwks'), issuer: ISS, audience: 'c', clock: Date.now, errorCode: 'ID_TOKEN_INVALID', what: 'ID token' }).catch((x) => x);
    expect(e).toMatchObject({ code: 'ID_TOKEN_INVALID' });
    expect((e as Error).message).toContain('"ECDH-ES"');
  });
  it('never decrypts with a key loaded for signing (item 75)', async () => {
    const keys = await generateClientKeys();
    const sig = await loadSigningKey({ key: keys.signing });
    const jwe = await new CompactEncrypt(new TextEncoder().encode('a.b.c')).setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', kid: sig.kid }).encrypt(createPublicKey(sig.privateKey));
    const e = await decryptAndVerify(jwe, { decryptionKeys: [sig], encs: ['A256GCM'], keySet: new RemoteKeySet('https://unused.example/jwks'), issuer: ISS, audience: 'c', clock: Date.now, errorCode: 'USERINFO_INVALID', what: 'userinfo' }).catch((x) => x);
    expect(e).toMatchObject({ code: 'USERINFO_INVALID' });
  });
  it('refuses a plain JWS (downgrade, item 31) without fetching any key', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jws = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'ES256' }).sign(privateKey);
    const keySet = new RemoteKeySet('https://unused.example/jwks');
    const enc = await loadEncryptionKey({ key: (await generateClientKeys()).encryption });
    await expect(decryptAndVerify(jws, { decryptionKeys: [enc], encs: ['A256GCM'], keySet, issuer: ISS, audience: 'c', clock: Date.now, errorCode: 'ID_TOKEN_INVALID', what: 'ID token' })).rejects.toMatchObject({ code: 'ID_TOKEN_INVALID' });
    expect(keySet.fetchCount).toBe(0);
  });
});

describe('Corppass subject and authorization info', () => {
  it('parses sub as key=value pairs, whatever the NRIC/FIN shape, keeping unknown keys', () => {
    expect(parseCorppassSubject('s=M1234567K,uuid=u-1,u=CP9,c=SG,x=1')).toEqual({ raw: 's=M1234567K,uuid=u-1,u=CP9,c=SG,x=1', nric: 'M1234567K', uuid: 'u-1', userId: 'CP9', country: 'SG', attributes: { s: 'M1234567K', uuid: 'u-1', u: 'CP9', c: 'SG', x: '1' } });
    expect(parseCorppassSubject('uuid=u-2,u=CP1,c=MY')).not.toHaveProperty('nric');
  });

  const row = (role: string, StartDate: string, EndDate: string) => ({ CPEntID_SUB: '', CPRole: role, StartDate, EndDate, Parameter: [{ name: 'k', value: 'v' }] });
  const payload = {
    AuthInfo: JSON.stringify({ Result_Set: { ESrvc_Row_Count: 1, ESrvc_Result: [{ CPESrvcID: 'E1', Auth_Result_Set: { Row_Count: 3, Row: [row('past', '2020-01-01', '2021-01-01'), row('edge', '2026-06-01', '2026-06-01'), row('open', '2020-01-01', '9999-12-31')] } }] } }),
    TPAuthInfo: { Result_Set: { ESrvc_Row_Count: 1, ESrvc_Result: [{ CPESrvcID: 'E2', Auth_Set: { ENT_ROW_COUNT: 1, TP_Auth: [{ CP_Clnt_ID: '199912345K', CP_ClntEnt_TYPE: 'UEN', Auth_Result_Set: { Row_Count: 1, Row: [{ CP_ClntEnt_SUB: 'B1', CPRole: 'tp', StartDate: '2026-07-01', EndDate: '9999-12-31', Parameter: [] }] } }] } }] } },
  };

  it('accepts AuthInfo as a JSON string and TPAuthInfo as an object; activeRoles is inclusive of both dates', () => {
    const info = parseAuthorizationInfo(payload);
    expect(activeRoles(info, '2026-06-01').map((r) => r.role)).toEqual(['edge', 'open']);
    expect(activeRoles(info, '2026-07-01')).toEqual([
      { source: 'AuthInfo', eserviceId: 'E1', role: 'open', entitySub: '', startDate: '2020-01-01', endDate: '9999-12-31', parameters: { k: 'v' } },
      { source: 'TPAuthInfo', eserviceId: 'E2', role: 'tp', entitySub: 'B1', clientId: '199912345K', clientEntityType: 'UEN', startDate: '2026-07-01', endDate: '9999-12-31', parameters: {} },
    ]);
  });
  it('Corppass\'s ERROR_MISSING_VALUE in a sub-entity member means no sub-entity, not an id (FAPI auth_info and tp_auth_info)', () => {
    const r = { CPRole: 'R', StartDate: '2020-01-01', EndDate: '9999-12-31', Parameter: [] };
    const info = parseAuthorizationInfo({
      auth_info: { Result_Set: { ESrvc_Result: [{ CPESrvcID: 'A', Auth_Result_Set: { Row: [{ ...r, CPEntID_SUB: 'ERROR_MISSING_VALUE' }] } }] } },
      tp_auth_info: { Result_Set: { ESrvc_Result: [{ CPESrvcID: 'B', Auth_Set: { TP_Auth: [{ CP_Clnt_ID: '53123456X', CP_ClntEnt_TYPE: 'UEN', Auth_Result_Set: { Row: [{ ...r, CP_ClntEnt_SUB: 'ERROR_MISSING_VALUE' }] } }] } }] } },
    }, FAPI_AUTH_INFO_MEMBERS);
    expect(info.authInfo.Result_Set.ESrvc_Result[0].Auth_Result_Set.Row[0].CPEntID_SUB).toBe('');
    expect(activeRoles(info, '2026-06-01').map((x) => [x.source, x.entitySub])).toEqual([['AuthInfo', ''], ['TPAuthInfo', '']]);
  });
  it('refuses malformed dates and non-JSON strings', () => {
    expect(code(thrown(() => parseAuthorizationInfo({ AuthInfo: '{not json' })))).toBe('AUTHORIZATION_INFO_INVALID');
    const bad = { AuthInfo: { Result_Set: { ESrvc_Result: [{ CPESrvcID: 'E', Auth_Result_Set: { Row: [row('r', '01/01/2020', '9999-12-31')] } }] } } };
    expect(code(thrown(() => parseAuthorizationInfo(bad)))).toBe('AUTHORIZATION_INFO_INVALID');
  });
  it('"today" is the Singapore calendar date (UTC+8)', () => {
    expect(singaporeDate(Date.UTC(2026, 0, 1, 15, 59))).toBe('2026-01-01');
    expect(singaporeDate(Date.UTC(2026, 0, 1, 16, 0))).toBe('2026-01-02');
  });
});

it('flattenPersonInfo keeps values only (nested and code/desc attributes too)', () => {
  expect(flattenPersonInfo({
    uinfin: { lastupdated: '2024-01-01', source: '1', classification: 'C', value: 'S1234567A' },
    sex: { code: 'F', desc: 'FEMALE', source: '1', classification: 'C', lastupdated: '2024-01-01' },
    mobileno: { prefix: { value: '+' }, areacode: { value: '65' }, nbr: { value: '97399245' }, source: '1', classification: 'C', lastupdated: '2024-01-01' },
  })).toEqual({ uinfin: 'S1234567A', sex: { code: 'F', desc: 'FEMALE' }, mobileno: { prefix: '+', areacode: '65', nbr: '97399245' } });
});

it('keySetResponse publishes public members only and refuses duplicate kids (item 7)', async () => {
  const keys = await generateClientKeys();
  const sig = await loadSigningKey({ key: keys.signing });
  const enc = await loadEncryptionKey({ key: keys.encryption });
  const r = keySetResponse([sig, enc]);
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toMatch(/^application\/jwk-set\+json/);
  const body = JSON.parse(r.body) as { keys: JWK[] };
  expect(body.keys.map((k) => [k.kid, k.use, 'd' in k])).toEqual([[sig.kid, 'sig', false], [enc.kid, 'enc', false]]);
  const twin = await loadEncryptionKey({ key: keys.encryption, kid: sig.kid });
  expect(() => keySetResponse([sig, twin])).toThrow(expect.objectContaining({ code: 'KEY_INVALID' }));
});

describe('ProviderCache', () => {
  const doc = {
    issuer: ISS, authorization_endpoint: `${ISS}/auth`, token_endpoint: `${ISS}/token`, jwks_uri: `${ISS}/jwks`, pushed_authorization_request_endpoint: `${ISS}/par`,
    userinfo_endpoint: `${ISS}/userinfo`, code_challenge_methods_supported: ['S256'], authorization_response_iss_parameter_supported: true, dpop_signing_alg_values_supported: ['ES256'],
  };
  it('keeps discovery for at least an hour, then refreshes', async () => {
    let now = 0;
    let calls = 0;
    const fetch = async () => { calls++; return new Response(JSON.stringify(doc), { status: 200, headers: { 'cache-control': 'max-age=60' } }); };
    const cache = new ProviderCache({ fetch, clock: () => now });
    await cache.metadata(ISS, 'singpass-fapi', false);
    now = 3599_000;
    await cache.metadata(ISS, 'singpass-fapi', false);
    expect(calls).toBe(1);
    now = 3601_000;
    await cache.metadata(ISS, 'singpass-fapi', false);
    expect(calls).toBe(2);
  });
  it('concurrent first uses share one fetch', async () => {
    let calls = 0;
    const fetch = async () => { calls++; await new Promise((r) => setTimeout(r, 20)); return new Response(JSON.stringify(doc), { status: 200 }); };
    const cache = new ProviderCache({ fetch });
    await Promise.all([1, 2, 3].map(() => cache.metadata(ISS, 'singpass-fapi', false)));
    expect(calls).toBe(1);
  });
  it('refuses http endpoints in production mode (item 2)', async () => {
    const fetch = async () => new Response(JSON.stringify({ ...doc, token_endpoint: 'http://id.example.sg/fapi/token' }), { status: 200 });
    await expect(new ProviderCache({ fetch }).metadata(ISS, 'singpass-fapi', false)).rejects.toMatchObject({ code: 'DISCOVERY_INVALID' });
  });
});

describe('DPoP nonces', () => {
  const res = (nonce: string | null): HttpResponse => ({ status: 400, headers: new Headers(nonce === null ? {} : { 'dpop-nonce': nonce }), body: Buffer.from('{"error":"use_dpop_nonce"}') });
  it('are kept per origin: a nonce of one server is never sent to another (item 66)', () => {
    const n = new DpopNonces();
    n.remember('https://id.singpass.gov.sg/fapi/token', { ...res('abc'), status: 200 });
    expect(n.get('https://id.singpass.gov.sg/fapi/userinfo')).toBe('abc');
    expect(n.get('https://corppass.example/token')).toBeUndefined();
  });
  it('a missing or non-NQCHAR nonce is a typed failure (item 65)', () => {
    expect(code(thrown(() => challengeNonce(res(null), 'token endpoint')))).toBe('DPOP_FAILED');
    expect(code(thrown(() => challengeNonce(res('a, b'), 'token endpoint')))).toBe('DPOP_FAILED');
    expect(challengeNonce(res('eyJ7S_zG.eyJH0-Z.HX4w-7v'), 'token endpoint')).toBe('eyJ7S_zG.eyJH0-Z.HX4w-7v');
  });
});

it('InMemoryTransactionStore: take succeeds once, and never after expiry', () => {
  let now = 0;
  const s = new InMemoryTransactionStore(() => now);
  s.put('a', 1000);
  s.put('b', 1000);
  expect(s.take('a')).toBe(true);
  expect(s.take('a')).toBe(false);
  now = 1000;
  expect(s.take('b')).toBe(false);
  expect(s.take('never')).toBe(false);
});

it('hasDuplicateMembers finds repeated names at any depth, not in arrays or string values', () => {
  expect(hasDuplicateMembers('{"iss":"a","sub":"x","iss":"b"}')).toBe(true);
  expect(hasDuplicateMembers('{"a":{"k":1,"k":2}}')).toBe(true);
  expect(hasDuplicateMembers('{"a":["k","k"],"b":"\\"k\\":1,\\"k\\":2","c":[{"k":1},{"k":2}]}')).toBe(false);
  expect(hasDuplicateMembers('{"\\u0069ss":"a","iss":"b"}')).toBe(true);
});
