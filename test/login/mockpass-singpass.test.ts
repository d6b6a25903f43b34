/**
 * Singpass against MockPass 4.3.4 (`@opengovsg/mockpass`), a server nobody here wrote, started in-process on
 * 127.0.0.1 with our P-256 client keys (env `SP_RP_JWKS_ENDPOINT`).
 *
 * MockPass serves Singpass v2 (the pre-FAPI OIDC profile): no PAR, no DPoP, no PKCE, no RFC 9207 `iss`. Our Singpass
 * client is FAPI 2.0 only, so:
 *  1. pointed at MockPass it must refuse at discovery and send nothing else — it never silently downgrades;
 *  2. the parts Singpass v2 and FAPI share (private_key_jwt with aud = issuer, the ID token JWE to our P-256 key
 *     around an ES256 JWS from the provider's published key set, iss/aud/nonce/iat checks) are run against
 *     MockPass's real tokens with OUR modules (client-auth, token, id-token, nested-jwt, RemoteKeySet), driving
 *     MockPass's authorize and token endpoints by hand in place of the FAPI-only client flow.
 *
 * MockPass deviations from the FAPI profile are asserted explicitly where they show (sub format, Bearer token type,
 * no expires_in, no acr, 24 h ID-token lifetime); none of our checks is loosened for them.
 */
import { CompactEncrypt, compactDecrypt, decodeJwt, decodeProtectedHeader, importJWK } from 'jose';
import { SingpassFlowsError } from '../../src/errors';
import { httpRequest, type Fetch } from '../../src/http';
import { RemoteKeySet, type EcSigningAlg, type LoadedKey } from '../../src/keys';
import { createSingpassClient, InMemoryTransactionStore, ProviderCache } from '../../src/login';
import { clientAssertionParams } from '../../src/login/client-auth';
import { verifyIdToken } from '../../src/login/id-token';
import { decryptAndVerify } from '../../src/login/nested-jwt';
import { FORM_HEADERS, formBody, parseTokenResponse } from '../../src/login/token';
import type { LoginTransaction } from '../../src/login/transaction';
import { pkcePair } from '../../src/login/util';
import { randomToken } from '../../src/secrets';
import { SINGPASS_JWE_ENCS } from '../../src/login/wire';
import { startMockPass, type MockPassPeer } from './harness';

const CLIENT_ID = 'mockpass-sp-rp';
const REDIRECT_URI = 'http://127.0.0.1/callback';
const clock = () => Date.now();

let peer: MockPassPeer;
let issuer: string;
let signingKey: LoadedKey<EcSigningAlg>;
let encryptionKey: LoadedKey;

beforeAll(async () => {
  peer = await startMockPass('SP_RP_JWKS_ENDPOINT');
  ({ signingKey, encryptionKey } = peer);
  issuer = `${peer.baseUrl}/singpass/v2`;
});

afterAll(() => peer.close());

/** A fetch that records every request the client makes (method + URL) and can patch the discovery document. */
function recordingFetch(patch?: Record<string, unknown>): { fetch: Fetch; calls: string[] } {
  const calls: string[] = [];
  const f: Fetch = async (url, init) => {
    calls.push(`${init?.method ?? 'GET'} ${url}`);
    const res = await fetch(url, init);
    if (!patch || !url.endsWith('/.well-known/openid-configuration')) return res;
    const doc = { ...(await res.json()), ...patch };
    return new Response(JSON.stringify(doc), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { fetch: f, calls };
}

function fapiClient(fetchImpl: Fetch) {
  return createSingpassClient({
    issuer, clientId: CLIENT_ID, signingKey, decryptionKeys: [encryptionKey], redirectUri: REDIRECT_URI, allowInsecureLoopback: true,
    fetch: fetchImpl, providerCache: new ProviderCache({ fetch: fetchImpl }), transactionStore: new InMemoryTransactionStore(),
  });
}

async function refusal(p: Promise<unknown>): Promise<SingpassFlowsError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  expect(e).toBeInstanceOf(SingpassFlowsError);
  return e as SingpassFlowsError;
}

describe('our FAPI 2.0 Singpass client never downgrades to MockPass\'s Singpass v2', () => {
  it('refuses MockPass discovery as-is and sends nothing but the discovery GET', async () => {
    const { fetch: f, calls } = recordingFetch();
    const e = await refusal(fapiClient(f).startLogin({ scope: 'openid' }));
    expect(e.code).toBe('DISCOVERY_INVALID');
    expect(calls).toEqual([`GET ${issuer}/.well-known/openid-configuration`]);
  });

  it('still refuses when PKCE S256 and the iss parameter are advertised: no pushed_authorization_request_endpoint', async () => {
    // Patch away the first two refusal reasons so the PAR rule itself is what this real document trips.
    const { fetch: f, calls } = recordingFetch({ code_challenge_methods_supported: ['S256'], authorization_response_iss_parameter_supported: true });
    const e = await refusal(fapiClient(f).startLogin({ scope: 'openid' }));
    expect(e.code).toBe('DISCOVERY_INVALID');
    expect(e.message).toContain('pushed_authorization_request_endpoint');
    expect(calls.every((c) => c.startsWith('GET ') && c.endsWith('/.well-known/openid-configuration'))).toBe(true);
  });

  it('still refuses with a PAR and userinfo endpoint added: no DPoP (dpop_signing_alg_values_supported) — and makes no PAR or token call', async () => {
    const { fetch: f, calls } = recordingFetch({
      code_challenge_methods_supported: ['S256'], authorization_response_iss_parameter_supported: true,
      pushed_authorization_request_endpoint: `${issuer}/par`, userinfo_endpoint: `${issuer}/userinfo`,
    });
    const e = await refusal(fapiClient(f).startLogin({ scope: 'openid' }));
    expect(e.code).toBe('DISCOVERY_INVALID');
    expect(e.message).toContain('dpop_signing_alg_values_supported');
    expect(calls.some((c) => c.startsWith('POST ') || c.includes('/par') || c.includes('/token'))).toBe(false);
  });
});

describe('shared Singpass v2 / FAPI parts interoperate with MockPass\'s real tokens', () => {
  interface Discovery { issuer: string; authorization_endpoint: string; token_endpoint: string; jwks_uri: string; id_token_encryption_enc_values_supported: string[] }
  let md: Discovery;
  let keySet: RemoteKeySet;

  beforeAll(async () => {
    const res = await httpRequest(`${issuer}/.well-known/openid-configuration`, {}, {});
    md = JSON.parse(res.body.toString('utf8')) as Discovery;
    keySet = new RemoteKeySet(md.jwks_uri);
  });

  /** Headless MockPass login: authorize with redirects off (the user picked by headers), then our token request. */
  async function login(user: { nric: string; uuid: string }, opts: { assertionAudience?: string } = {}) {
    const tx: LoginTransaction = {
      v: 1, provider: 'singpass', id: randomToken(), issuer, clientId: CLIENT_ID, redirectUri: REDIRECT_URI, state: randomToken(), nonce: randomToken(),
      codeVerifier: pkcePair().verifier, scope: 'openid', createdAt: clock(), expiresAt: clock() + 600_000,
    };
    const authorize = new URL(md.authorization_endpoint);
    // MockPass v2 accepts exactly scope=openid; PKCE parameters would be ignored by it, so none are sent.
    for (const [k, v] of Object.entries({ scope: 'openid', response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, state: tx.state, nonce: tx.nonce })) authorize.searchParams.set(k, v);
    const auth = await fetch(authorize, { redirect: 'manual', headers: { 'X-Custom-NRIC': user.nric, 'X-Custom-UUID': user.uuid } });
    expect(auth.status).toBe(302);
    const callback = new URL(auth.headers.get('location')!);
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
    expect(callback.searchParams.get('state')).toBe(tx.state);
    const code = callback.searchParams.get('code');
    expect(code).toBeTruthy();
    const res = await httpRequest(md.token_endpoint, {
      method: 'POST', headers: FORM_HEADERS,
      body: formBody({
        grant_type: 'authorization_code', code: code!, redirect_uri: REDIRECT_URI, client_id: CLIENT_ID,
        ...(await clientAssertionParams(signingKey, CLIENT_ID, opts.assertionAudience ?? issuer, clock)),
      }),
    }, {});
    return { tx, callback, res };
  }

  const user = { nric: 'S8979373D', uuid: 'a9865837-7bd7-46ac-bef4-42a76a946424' };

  it('MockPass discovery names the issuer we talk to and an enc we accept for Singpass', () => {
    expect(md.issuer).toBe(issuer);
    expect(md.id_token_encryption_enc_values_supported.every((e) => (SINGPASS_JWE_ENCS as readonly string[]).includes(e))).toBe(true);
  });

  it('full exchange: our private_key_jwt is accepted, our nested-JWT + ID-token checks verify MockPass\'s ID token', async () => {
    const { tx, callback, res } = await login(user);
    // Deviation (pre-FAPI v2): no RFC 9207 `iss` in the authorization response, which our FAPI callback check requires.
    expect(callback.searchParams.has('iss')).toBe(false);
    // Deviation: a Bearer token (FAPI: DPoP) with neither expires_in nor scope. Our parser accepts it only when Bearer
    // was what we asked for; a DPoP-bound request receiving it is a downgrade and is refused.
    const tokens = parseTokenResponse(res, md.token_endpoint, 'Bearer', 'openid');
    expect(tokens.expiresIn).toBeUndefined();
    expect(() => parseTokenResponse(res, md.token_endpoint, 'DPoP', 'openid')).toThrow(/downgrade/);

    // The outer JWE: ECDH-ES+A256KW to OUR P-256 enc key (by kid), A256CBC-HS512. MockPass also sets typ/cty "JWT".
    const jweHeader = decodeProtectedHeader(tokens.idToken);
    expect(jweHeader).toMatchObject({ alg: 'ECDH-ES+A256KW', enc: 'A256CBC-HS512', kid: encryptionKey.kid, cty: 'JWT', typ: 'JWT' });
    expect(jweHeader.epk).toMatchObject({ kty: 'EC', crv: 'P-256' });

    // Our ID-token verification end to end: decrypt, ES256 signature against MockPass's published key set
    // (RemoteKeySet over HTTP), iss, aud exactly our client id, exp, iat ≤ 10 min old, sub, nonce.
    const claims = await verifyIdToken(tokens.idToken, { tx, clientId: CLIENT_ID, issuer, decryptionKeys: [encryptionKey], encs: SINGPASS_JWE_ENCS, keySet, clock, accessToken: tokens.accessToken });
    expect(claims).toMatchObject({ iss: issuer, aud: CLIENT_ID, nonce: tx.nonce, amr: ['pwd'] });
    // Deviation: Singpass v2 `sub` is key=value pairs `s=<NRIC>,u=<UUID>`; under FAPI it is the UUID alone (spec §2.1),
    // with the NRIC in sub_attributes.identity_number. MockPass sends no acr, no sub_type, no sub_attributes.
    expect(claims.sub).toBe(`s=${user.nric},u=${user.uuid}`);
    expect(claims.sub).toMatch(/^s=[STFGM]\d{7}[A-Z],u=[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(claims.acr).toBeUndefined();
    expect(claims.sub_attributes).toBeUndefined();
    // Deviation: a 24 h ID-token lifetime (exp − iat); our age check keys on iat, so this does not weaken it.
    expect(Number(claims.exp) - Number(claims.iat)).toBe(24 * 3600);
    expect(keySet.fetchCount).toBe(1);

    // The inner JWS as our nested-JWT layer sees it: ES256 with MockPass's P-256 key `ndi_mock_01`, typ JWT.
    const { jwsHeader } = await decryptAndVerify(tokens.idToken, {
      decryptionKeys: [encryptionKey], encs: SINGPASS_JWE_ENCS, keySet, issuer, audience: CLIENT_ID, clock, errorCode: 'ID_TOKEN_INVALID', what: 'ID token',
    });
    expect(jwsHeader).toEqual({ alg: 'ES256', typ: 'JWT', kid: 'ndi_mock_01' });
  });

  it('a foreign-account (SFA) user gets the v2 sub with fid and coi', async () => {
    const sfa = { nric: 'Y4581892I', uuid: 'acf8edda-bfdf-45fc-b140-a6ec6955d857' };
    const { tx, res } = await login(sfa);
    const tokens = parseTokenResponse(res, md.token_endpoint, 'Bearer', 'openid');
    const claims = await verifyIdToken(tokens.idToken, { tx, clientId: CLIENT_ID, issuer, decryptionKeys: [encryptionKey], encs: SINGPASS_JWE_ENCS, keySet, clock, accessToken: tokens.accessToken });
    expect(claims.sub).toBe(`s=${sfa.nric},fid=G730Z-H5P96,coi=DE,u=${sfa.uuid}`);
  });

  it('the same real ID token is refused for another nonce, another client id, another issuer spelling, or a tampered ciphertext', async () => {
    const { tx, res } = await login(user);
    const { idToken, accessToken } = parseTokenResponse(res, md.token_endpoint, 'Bearer', 'openid');
    const ok = { tx, clientId: CLIENT_ID, issuer, decryptionKeys: [encryptionKey], encs: SINGPASS_JWE_ENCS, keySet, clock, accessToken };
    // Sanity: it verifies as-is, so each refusal below is caused by the one thing changed.
    await expect(verifyIdToken(idToken, ok)).resolves.toMatchObject({ nonce: tx.nonce });

    const otherNonce = await refusal(verifyIdToken(idToken, { ...ok, tx: { ...tx, nonce: randomToken() } }));
    expect(otherNonce.code).toBe('ID_TOKEN_INVALID');
    expect(otherNonce.message).toContain('nonce');
    expect((await refusal(verifyIdToken(idToken, { ...ok, clientId: 'another-rp' }))).code).toBe('ID_TOKEN_INVALID');
    // The Host-header quirk in reverse: the same server under `localhost` is a different issuer identifier.
    const localhostIssuer = issuer.replace('127.0.0.1', 'localhost');
    expect((await refusal(verifyIdToken(idToken, { ...ok, issuer: localhostIssuer }))).code).toBe('ID_TOKEN_INVALID');

    const parts = idToken.split('.');
    const ct = Buffer.from(parts[3], 'base64url');
    ct[0] ^= 1;
    parts[3] = ct.toString('base64url');
    const tampered = await refusal(verifyIdToken(parts.join('.'), ok));
    expect(tampered.code).toBe('ID_TOKEN_INVALID');
    expect(tampered.message).toContain('cannot be decrypted');
  });

  it('a signature our key set does not vouch for is refused even though the JWE decrypts', async () => {
    // Re-wrap MockPass's inner JWS with a flipped signature byte into a fresh JWE to our key: decryption succeeds,
    // the ES256 check against MockPass's published key must not.
    const { tx, res } = await login(user);
    const { idToken, accessToken } = parseTokenResponse(res, md.token_endpoint, 'Bearer', 'openid');
    const { plaintext } = await compactDecrypt(idToken, encryptionKey.privateKey);
    const jws = new TextDecoder().decode(plaintext).split('.');
    expect(decodeJwt(jws.join('.')).nonce).toBe(tx.nonce);
    const sig = Buffer.from(jws[2], 'base64url');
    sig[5] ^= 1;
    jws[2] = sig.toString('base64url');
    const forged = await new CompactEncrypt(new TextEncoder().encode(jws.join('.')))
      .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256CBC-HS512', kid: encryptionKey.kid, cty: 'JWT' })
      .encrypt(await importJWK(encryptionKey.publicJwk, 'ECDH-ES+A256KW'));
    const e = await refusal(verifyIdToken(forged, { tx, clientId: CLIENT_ID, issuer, decryptionKeys: [encryptionKey], encs: SINGPASS_JWE_ENCS, keySet: new RemoteKeySet(md.jwks_uri), clock, accessToken }));
    expect(e.code).toBe('ID_TOKEN_INVALID');
  });

  it('MockPass refuses our assertion when aud is the token endpoint instead of the issuer (why our builder uses the issuer)', async () => {
    const { res } = await login(user, { assertionAudience: md.token_endpoint });
    expect(res.status).toBe(401);
    const e = (() => { try { parseTokenResponse(res, md.token_endpoint, 'Bearer', 'openid'); } catch (x) { return x as SingpassFlowsError; } return undefined; })();
    expect(e?.code).toBe('TOKEN_REQUEST_FAILED');
    expect(e?.details.serviceCode).toBe('invalid_client');
  });
});
