/**
 * Interop with MockPass 4.3.4 (`@opengovsg/mockpass`), the mock most Singapore RP developers use, started
 * in-process on 127.0.0.1. MockPass serves Corppass v2 (legacy OIDC); it has no FAPI profile, so the Singpass
 * client (FAPI 2.0: PAR, DPoP) has no MockPass peer — MockPass's Singpass v2 flow is not our target.
 *
 * MockPass deviates from the Corppass spec in ways our client deliberately refuses: its discovery omits
 * `code_challenge_methods_supported` and `authorization_response_iss_parameter_supported`, and its authorization
 * response has no `iss`. The first test shows the strict client refuses it as-is; the second adapts exactly those
 * points (documented below) and runs the real MockPass token exchange, JWE decryption and ES256 ID token
 * verification. MockPass also signs its access token RS256 with a key it does not publish: harmless by default (the
 * client treats the access token as opaque, as Corppass requires), refused when verifyAccessToken is opted in.
 */
import { SingpassFlowsError } from '../../src/errors';
import type { LoadedKey, EcSigningAlg } from '../../src/keys';
import { createCorppassClient, ProviderCache, InMemoryTransactionStore, type CorppassClientOptions } from '../../src/login';
import type { Fetch } from '../../src/http';
import { startMockPass, type MockPassPeer } from './harness';

let peer: MockPassPeer;
let issuer: string;
let signingKey: LoadedKey<EcSigningAlg>;
let encryptionKey: LoadedKey;

beforeAll(async () => {
  peer = await startMockPass('CP_RP_JWKS_ENDPOINT');
  ({ signingKey, encryptionKey } = peer);
  issuer = `${peer.baseUrl}/corppass/v2`;
});

afterAll(() => peer.close());

function client(extra: Partial<CorppassClientOptions> = {}) {
  return createCorppassClient({
    issuer, clientId: 'mockpass-rp', signingKey, decryptionKeys: [encryptionKey], redirectUri: 'http://127.0.0.1/callback',
    allowInsecureLoopback: true, providerCache: new ProviderCache({ fetch: extra.fetch }), transactionStore: new InMemoryTransactionStore(), ...extra,
  });
}

it('the strict client refuses MockPass discovery as-is (no S256 / iss-parameter support advertised)', async () => {
  const e = await client().startLogin().then(() => undefined, (x: unknown) => x);
  expect(e).toBeInstanceOf(SingpassFlowsError);
  expect((e as SingpassFlowsError).code).toBe('DISCOVERY_INVALID');
});

it('Corppass login against MockPass: private_key_jwt, P-256 ECDH-ES+A256KW JWE, ES256 ID token, sub parsed', async () => {
  // Adaptation 1: advertise what real Corppass advertises (spec §4.4) on top of MockPass's document.
  const adaptingFetch: Fetch = async (url, init) => {
    const res = await fetch(url, init);
    if (!url.endsWith('/.well-known/openid-configuration')) return res;
    const doc = { ...(await res.json()), code_challenge_methods_supported: ['S256'], authorization_response_iss_parameter_supported: true };
    return new Response(JSON.stringify(doc), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  // MockPass signs the access token with an unpublished RS256 key: no adaptation needed, the client treats the
  // access token as opaque by default (Corppass: RPs must not parse it).
  const cp = client({ fetch: adaptingFetch });
  const { url, transaction } = await cp.startLogin();
  const res = await fetch(url, { redirect: 'manual', headers: { 'X-Custom-NRIC': 'M1234567K', 'X-Custom-UUID': 'c0ffee00-0000-4000-8000-000000000001', 'X-Custom-UEN': '201500001A' } });
  expect(res.status).toBe(302);
  const callback = new URL(res.headers.get('location')!);
  expect(callback.searchParams.has('iss')).toBe(false);
  // Adaptation 2: the RFC 9207 `iss` that real Corppass adds to the authorization response.
  const withoutIss = await cp.completeLogin({ transaction, callback: callback.toString() }).then(() => undefined, (x: unknown) => x);
  expect((withoutIss as SingpassFlowsError).code).toBe('LOGIN_ISSUER_MISMATCH');
  const again = await cp.startLogin();
  const res2 = await fetch(again.url, { redirect: 'manual', headers: { 'X-Custom-NRIC': 'M1234567K', 'X-Custom-UUID': 'c0ffee00-0000-4000-8000-000000000001', 'X-Custom-UEN': '201500001A' } });
  const cb2 = new URL(res2.headers.get('location')!);
  cb2.searchParams.set('iss', issuer);
  const login = await cp.completeLogin({ transaction: again.transaction, callback: cb2.toString() });
  expect(login.subject).toMatchObject({ nric: 'M1234567K', country: 'SG' });
  expect(login.idTokenClaims).toMatchObject({ iss: issuer, aud: 'mockpass-rp', nonce: again.transaction.nonce });
  expect(login.entityInfo).toMatchObject({ CPEntID: '201500001A' });
});

it('with access-token verification opted in (verifyAccessToken: true), MockPass\'s unpublished RS256 access token is refused', async () => {
  const adaptingFetch: Fetch = async (url, init) => {
    const res = await fetch(url, init);
    if (!url.endsWith('/.well-known/openid-configuration')) return res;
    const doc = { ...(await res.json()), code_challenge_methods_supported: ['S256'], authorization_response_iss_parameter_supported: true };
    return new Response(JSON.stringify(doc), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const cp = client({ fetch: adaptingFetch, verifyAccessToken: true });
  const { url, transaction } = await cp.startLogin();
  const res = await fetch(url, { redirect: 'manual' });
  const cb = new URL(res.headers.get('location')!);
  cb.searchParams.set('iss', issuer);
  const e = await cp.completeLogin({ transaction, callback: cb.toString() }).then(() => undefined, (x: unknown) => x);
  expect((e as SingpassFlowsError).code).toBe('LOGIN_RESPONSE_INVALID');
});
