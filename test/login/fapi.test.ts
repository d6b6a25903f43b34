/** The pushed authorization request's answer: the request_uri lifetime is bounded and handed to the caller. */
import { generateClientKeys, loadEncryptionKey, loadSigningKey } from '../../src/keys';
import { createCorppassFapiClient, createSingpassClient, InMemoryTransactionStore, ProviderCache } from '../../src/login';

const ISS = 'https://id.example.sg/fapi';
const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const metadata = {
  issuer: ISS, authorization_endpoint: `${ISS}/auth`, token_endpoint: `${ISS}/token`, jwks_uri: `${ISS}/jwks`, pushed_authorization_request_endpoint: `${ISS}/par`,
  userinfo_endpoint: `${ISS}/userinfo`, code_challenge_methods_supported: ['S256'], dpop_signing_alg_values_supported: ['ES256'], authorization_response_iss_parameter_supported: true,
};

async function client(parBody: Record<string, unknown>, o: { transactionTtlSeconds?: number; corppass?: boolean } = {}) {
  const gen = await generateClientKeys();
  const fetch = async (url: string) => url.endsWith('/par')
    ? new Response(JSON.stringify({ request_uri: 'urn:ietf:params:oauth:request_uri:x', ...parBody }), { status: 201, headers: { 'content-type': 'application/json' } })
    : new Response(JSON.stringify(metadata), { status: 200, headers: { 'content-type': 'application/json' } });
  const options = {
    issuer: ISS, clientId: 'client', signingKey: await loadSigningKey({ key: gen.signing }), decryptionKeys: [await loadEncryptionKey({ key: gen.encryption })],
    redirectUri: 'https://rp.example/cb', fetch: fetch as never, clock: () => NOW, providerCache: new ProviderCache(), transactionStore: new InMemoryTransactionStore(() => NOW),
    transactionTtlSeconds: o.transactionTtlSeconds,
  };
  return o.corppass ? createCorppassFapiClient({ ...options, appType: 'myinfo-business' }) : createSingpassClient(options);
}

describe('PAR expires_in', () => {
  it('is returned as urlExpiresAt, counted from the push (Singpass and Corppass FAPI)', async () => {
    const sp = await (await client({ expires_in: 60 })).startLogin();
    expect(sp.urlExpiresAt).toBe(NOW + 60_000);
    expect(sp.transaction.expiresAt).toBe(NOW + 600_000);
    const cp = await (await client({ expires_in: 90 }, { corppass: true })).startLogin();
    expect(cp.urlExpiresAt).toBe(NOW + 90_000);
  });

  it('never later than the transaction: the URL is of no use once the login has expired', async () => {
    const start = await (await client({ expires_in: 599 }, { transactionTtlSeconds: 30 })).startLogin();
    expect(start.urlExpiresAt).toBe(start.transaction.expiresAt);
  });

  // (0, negative and non-number values were refused before: conformance items par-no-expires-in / par-expires-in-string)
  it.each([86400, 600, 60.5])('%p is refused (FAPI 2.0: a positive whole number under 600 s) as PAR_FAILED', async (expiresIn) => {
    const e = await (await client({ expires_in: expiresIn })).startLogin().catch((x) => x);
    expect(e).toMatchObject({ code: 'PAR_FAILED', details: { field: 'expires_in' } });
  });
});
