import * as crypto from 'node:crypto';
import type { RunningServer } from '../../../sandbox/http';
import type { SingpassProvider } from '../../../sandbox/login';
import { ath, clientAssertion, decodePart, dpopProof, makeDpopKey, openNested, pkce, postForm, randomB64, startSandboxLogin, type DpopKey, type RpKeys, type SandboxLogin } from './rp';

const clientId = 'rp-singpass-test';
const redirectUri = 'https://rp.example.sg/singpass/callback';

let server: RunningServer;
let rpJwks: RunningServer & { jwksUrl: string };
let keys: RpKeys;
let sp: SingpassProvider;

let env: SandboxLogin;
beforeAll(async () => {
  env = await startSandboxLogin(clientId, [redirectUri, 'http://127.0.0.1:9/cb', 'http://rp.example.sg/plain'], ['sp']);
  ({ server, rpJwks, keys, sp } = env);
});
afterAll(() => env.close());
afterEach(() => sp.reset());

const jwksUrl = () => `${sp.issuer}/.well-known/keys`;

interface Flow {
  dpop: DpopKey;
  state: string;
  nonce: string;
  verifier: string;
  redirectUri: string;
}

async function par(flow: Flow, extra: Record<string, string> = {}, opts: { dpopNonce?: string; noDpop?: boolean; aud?: string; expAfterIat?: number | null } = {}): Promise<Response> {
  const challenge = crypto.createHash('sha256').update(flow.verifier).digest('base64url');
  const headers: Record<string, string> = {};
  if (!opts.noDpop) headers.dpop = await dpopProof(flow.dpop, 'POST', sp.parEndpoint, { nonce: opts.dpopNonce, expAfterIat: opts.expAfterIat });
  return postForm(
    sp.parEndpoint,
    {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: flow.redirectUri,
      scope: 'openid user.identity uinfin name',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: await clientAssertion(keys, clientId, opts.aud ?? sp.issuer),
      acr_values: 'urn:singpass:authentication:loa:2',
      authentication_context_type: 'APP_AUTHENTICATION_DEFAULT',
      authentication_context_message: 'Log in to the sandbox RP',
      redirect_uri_https_type: 'standard_https',
      ...extra,
    },
    headers,
  );
}

async function newFlow(): Promise<Flow> {
  return { dpop: await makeDpopKey(), state: randomB64(16), nonce: randomB64(24), verifier: pkce().verifier, redirectUri };
}

/** PAR → /auth; returns the callback parameters. */
async function authorize(flow: Flow, query: Record<string, string> = {}): Promise<URLSearchParams> {
  const res = await par(flow);
  expect(res.status).toBe(201);
  const { request_uri, expires_in } = (await res.json()) as { request_uri: string; expires_in: number };
  expect(expires_in).toBe(60);
  const u = new URL(sp.authorizationEndpoint);
  u.searchParams.set('client_id', clientId);
  u.searchParams.set('request_uri', request_uri);
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
  const auth = await fetch(u, { redirect: 'manual' });
  expect(auth.status).toBe(302);
  return new URL(auth.headers.get('location')!).searchParams;
}

async function token(flow: Flow, code: string, opts: { key?: DpopKey; verifier?: string; dpopNonce?: string } = {}): Promise<Response> {
  return postForm(
    sp.tokenEndpoint,
    {
      grant_type: 'authorization_code',
      code,
      redirect_uri: flow.redirectUri,
      client_id: clientId,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: await clientAssertion(keys, clientId, sp.issuer),
      code_verifier: opts.verifier ?? flow.verifier,
    },
    { dpop: await dpopProof(opts.key ?? flow.dpop, 'POST', sp.tokenEndpoint, { nonce: opts.dpopNonce }) },
  );
}

async function userinfo(flow: Flow, at: string, dpopNonce?: string): Promise<Response> {
  return fetch(sp.userinfoEndpoint, { headers: { authorization: `DPoP ${at}`, dpop: await dpopProof(flow.dpop, 'GET', sp.userinfoEndpoint, { ath: ath(at), nonce: dpopNonce }) } });
}

describe('sandbox Singpass FAPI 2.0 provider', () => {
  test('discovery advertises PAR, DPoP ES256, S256 and the iss parameter', async () => {
    const meta = (await (await fetch(`${sp.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(meta).toMatchObject({
      issuer: `${server.baseUrl}/singpass/fapi`,
      pushed_authorization_request_endpoint: `${server.baseUrl}/singpass/fapi/par`,
      authorization_endpoint: `${server.baseUrl}/singpass/fapi/auth`,
      token_endpoint: `${server.baseUrl}/singpass/fapi/token`,
      userinfo_endpoint: `${server.baseUrl}/singpass/fapi/userinfo`,
      jwks_uri: jwksUrl(),
      dpop_signing_alg_values_supported: ['ES256'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      token_endpoint_auth_methods_supported: ['private_key_jwt'],
    });
  });

  test('happy path: PAR → auth → token (DPoP-bound) → encrypted ID token → encrypted userinfo', async () => {
    const flow = await newFlow();
    const cb = await authorize(flow);
    expect(cb.get('iss')).toBe(sp.issuer);
    expect(cb.get('state')).toBe(flow.state);
    const res = await token(flow, cb.get('code')!);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, string | number>;
    expect(body).toMatchObject({ token_type: 'DPoP', scope: 'openid user.identity uinfin name' });
    expect(decodePart(String(body.access_token), 1).cnf).toEqual({ jkt: flow.dpop.jkt });

    const id = await openNested(String(body.id_token), keys, jwksUrl());
    expect(id.jweHeader).toMatchObject({ alg: 'ECDH-ES+A256KW', enc: 'A256CBC-HS512', kid: 'rp-enc-1' });
    expect(id.payload).toMatchObject({
      iss: sp.issuer,
      aud: clientId,
      sub: 'b8d6a2e4-5c1f-4f3a-9e7d-2a1b3c4d5e6f',
      sub_type: 'user',
      sub_attributes: { account_type: 'standard', identity_number: 'S8979373D', identity_coi: 'SG', name: 'TAN XIAO HUI' },
      acr: 'urn:singpass:authentication:loa:2',
      amr: ['pwd', 'otp-sms'],
      nonce: flow.nonce,
    });

    const ui = await userinfo(flow, String(body.access_token));
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toBe('application/jwt');
    const info = await openNested(await ui.text(), keys, jwksUrl());
    expect(info.jweHeader.enc).toBe('A256GCM');
    expect(info.payload).toMatchObject({ iss: sp.issuer, sub: id.payload.sub, aud: clientId });
    expect(info.payload.person_info).toEqual({
      uinfin: { lastupdated: '2024-05-20', source: '1', classification: 'C', value: 'S8979373D' },
      name: { lastupdated: '2024-05-20', source: '1', classification: 'C', value: 'TAN XIAO HUI' },
    });

    const log = sp.requests();
    const parRec = log.find((r) => r.endpoint === 'par')!;
    expect(parRec.dpopJkt).toBe(flow.dpop.jkt);
    expect(parRec.form).toContainEqual(['authentication_context_type', 'APP_AUTHENTICATION_DEFAULT']);
    expect(log.find((r) => r.endpoint === 'userinfo')!.dpop![0]!.payload.ath).toBe(ath(String(body.access_token)));
  });

  test('a foreign user gets old amr values and no NRIC', async () => {
    const flow = await newFlow();
    const cb = await authorize(flow, { sandbox_user: 'foreign' });
    const body = (await (await token(flow, cb.get('code')!)).json()) as Record<string, string>;
    const { payload } = await openNested(body.id_token!, keys, jwksUrl());
    expect(payload.amr).toEqual(['pwd', 'sms']);
    expect(payload.sub_attributes).toMatchObject({ account_type: 'foreign', identity_number: 'X98765432', identity_coi: 'US' });
  });

  test('the authorization endpoint accepts only client_id and request_uri', async () => {
    const flow = await newFlow();
    const res = await par(flow);
    const { request_uri } = (await res.json()) as { request_uri: string };
    const u = new URL(sp.authorizationEndpoint);
    u.search = new URLSearchParams({ client_id: clientId, request_uri, scope: 'openid' }).toString();
    const auth = await fetch(u, { redirect: 'manual' });
    expect(auth.status).toBe(400);
    expect(await auth.json()).toMatchObject({ error: 'invalid_request' });
  });

  test('PAR without a DPoP proof is refused; a non-https redirect_uri is refused', async () => {
    const flow = await newFlow();
    const noDpop = await par(flow, {}, { noDpop: true });
    expect(noDpop.status).toBe(400);
    expect(await noDpop.json()).toMatchObject({ error: 'invalid_dpop_proof' });
    const plain = await par({ ...flow, redirectUri: 'http://rp.example.sg/plain' });
    expect(plain.status).toBe(400);
    expect(((await plain.json()) as { error_description: string }).error_description).toMatch(/https/);
    const loopback = await par({ ...flow, redirectUri: 'http://127.0.0.1:9/cb' });
    expect(loopback.status).toBe(201);
  });

  test('DPoP proofs must carry exp at most 120 s after iat (Singpass rule)', async () => {
    const noExp = await par(await newFlow(), {}, { expAfterIat: null });
    expect(noExp.status).toBe(400);
    expect(await noExp.json()).toMatchObject({ error: 'invalid_dpop_proof', error_description: expect.stringMatching(/exp is required/) });
    const tooLong = await par(await newFlow(), {}, { expAfterIat: 121 });
    expect(tooLong.status).toBe(400);
    expect(await tooLong.json()).toMatchObject({ error: 'invalid_dpop_proof', error_description: expect.stringMatching(/at most 120 s after iat/) });
    expect((await par(await newFlow(), {}, { expAfterIat: 120 })).status).toBe(201);
  });

  test('a client assertion whose aud is the token URL is refused at PAR', async () => {
    const res = await par(await newFlow(), {}, { aud: sp.tokenEndpoint });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'invalid_client' });
  });

  test('a DPoP proof from another key at the token endpoint is refused', async () => {
    const flow = await newFlow();
    const cb = await authorize(flow);
    const res = await token(flow, cb.get('code')!, { key: await makeDpopKey() });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_dpop_proof' });
  });

  test('wrong PKCE verifier and code replay → invalid_grant', async () => {
    const flow = await newFlow();
    const cb = await authorize(flow);
    const wrong = await token(flow, cb.get('code')!, { verifier: pkce().verifier });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' });
    const flow2 = await newFlow();
    const cb2 = await authorize(flow2);
    expect((await token(flow2, cb2.get('code')!)).status).toBe(200);
    const replay = await token(flow2, cb2.get('code')!);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
  });

  test('sandbox_action=cancel redirects with an error, iss and state', async () => {
    const flow = await newFlow();
    const cb = await authorize(flow, { sandbox_action: 'cancel' });
    expect(cb.get('error')).toBe('access_denied');
    expect(cb.get('iss')).toBe(sp.issuer);
    expect(cb.get('state')).toBe(flow.state);
    expect(cb.has('code')).toBe(false);
  });

  describe('misbehaviour switches', () => {
    test('dpopNonce require: each endpoint challenges once, then accepts the nonce', async () => {
      sp.misbehave({ dpopNonce: 'require' });
      const flow = await newFlow();
      const first = await par(flow);
      expect(first.status).toBe(400);
      expect(await first.json()).toMatchObject({ error: 'use_dpop_nonce' });
      const nonce = first.headers.get('dpop-nonce')!;
      expect(nonce).toMatch(/^[A-Za-z0-9_-]+$/);
      const retry = await par(flow, {}, { dpopNonce: nonce });
      expect(retry.status).toBe(201);
      const { request_uri } = (await retry.json()) as { request_uri: string };
      const auth = await fetch(`${sp.authorizationEndpoint}?client_id=${clientId}&request_uri=${encodeURIComponent(request_uri)}`, { redirect: 'manual' });
      const code = new URL(auth.headers.get('location')!).searchParams.get('code')!;
      // The old nonce is stale after the 200 (OIDF behaviour): a new challenge, which the retry satisfies.
      const t1 = await token(flow, code, { dpopNonce: nonce });
      expect(t1.status).toBe(400);
      const t2 = await token(flow, code, { dpopNonce: t1.headers.get('dpop-nonce')! });
      expect(t2.status).toBe(200);
      const at = String(((await t2.json()) as Record<string, unknown>).access_token);
      const u1 = await userinfo(flow, at);
      expect(u1.status).toBe(401);
      expect(u1.headers.get('www-authenticate')).toMatch(/^DPoP error="use_dpop_nonce"/);
      const u2 = await userinfo(flow, at, u1.headers.get('dpop-nonce')!);
      expect(u2.status).toBe(200);
    });

    test('dpopNonce stable: one challenge; the same nonce then works at PAR, token and userinfo, and for the next login', async () => {
      sp.misbehave({ dpopNonce: 'stable' });
      const flow = await newFlow();
      const first = await par(flow);
      expect(first.status).toBe(400);
      const nonce = first.headers.get('dpop-nonce')!;
      const retry = await par(flow, {}, { dpopNonce: nonce });
      expect(retry.status).toBe(201);
      expect(retry.headers.has('dpop-nonce')).toBe(false);
      const { request_uri } = (await retry.json()) as { request_uri: string };
      const auth = await fetch(`${sp.authorizationEndpoint}?client_id=${clientId}&request_uri=${encodeURIComponent(request_uri)}`, { redirect: 'manual' });
      const t = await token(flow, new URL(auth.headers.get('location')!).searchParams.get('code')!, { dpopNonce: nonce });
      expect(t.status).toBe(200);
      expect((await userinfo(flow, String(((await t.json()) as Record<string, unknown>).access_token), nonce)).status).toBe(200);
      expect((await par(await newFlow(), {}, { dpopNonce: nonce })).status).toBe(201);
    });

    test('dpopNonce twoHeaders / badSyntax / missingHeader', async () => {
      sp.misbehave({ dpopNonce: 'twoHeaders' });
      const two = await par(await newFlow());
      expect(two.headers.get('dpop-nonce')!.split(', ')).toHaveLength(2);
      sp.misbehave({ dpopNonce: 'badSyntax' });
      expect((await par(await newFlow())).headers.get('dpop-nonce')).toBe('bad nonce "x"');
      sp.misbehave({ dpopNonce: 'missingHeader' });
      const missing = await par(await newFlow());
      expect(missing.status).toBe(400);
      expect(missing.headers.has('dpop-nonce')).toBe(false);
    });

    test('tokenTypeBearer and idTokenJose innerAlg RS256 (key published in the JWKS)', async () => {
      sp.misbehave({ tokenTypeBearer: true, idTokenJose: { innerAlg: 'RS256' } });
      const flow = await newFlow();
      const cb = await authorize(flow);
      const body = (await (await token(flow, cb.get('code')!)).json()) as Record<string, string>;
      expect(body.token_type).toBe('Bearer');
      const { compactDecrypt } = await import('jose');
      const inner = new TextDecoder().decode((await compactDecrypt(body.id_token!, keys.enc.privateKey)).plaintext);
      expect(decodePart(inner, 0)).toMatchObject({ alg: 'RS256', kid: 'rsa-alt' });
      const set = (await (await fetch(jwksUrl())).json()) as { keys: Array<{ kid: string; kty: string }> };
      expect(set.keys).toContainEqual(expect.objectContaining({ kid: 'rsa-alt', kty: 'RSA' }));
    });

    test('userinfo downgrades and sub mismatch', async () => {
      const flow = await newFlow();
      const cb = await authorize(flow);
      const at = String(((await (await token(flow, cb.get('code')!)).json()) as Record<string, unknown>).access_token);
      sp.misbehave({ userinfoPlainJson: true, userinfo: { sub: 'someone-else' } });
      const plain = await userinfo(flow, at);
      expect(plain.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await plain.json()).toMatchObject({ sub: 'someone-else' });
      sp.reset();
      sp.misbehave({ userinfoSignedOnly: true });
      const signed = await (await userinfo(flow, at)).text();
      expect(signed.split('.')).toHaveLength(3);
    });

    test('parFields and parStatus', async () => {
      sp.misbehave({ parStatus: 200, parFields: { request_uri: null, expires_in: '60' } });
      const res = await par(await newFlow());
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ expires_in: '60' });
    });

    test('rotateKeysBeforeNextIdToken: the ID token is signed by a kid published only now', async () => {
      const before = sp.currentKid();
      sp.misbehave({ rotateKeysBeforeNextIdToken: true });
      const flow = await newFlow();
      const cb = await authorize(flow);
      const body = (await (await token(flow, cb.get('code')!)).json()) as Record<string, string>;
      const { jwsHeader } = await openNested(body.id_token!, keys, jwksUrl());
      expect(jwsHeader.kid).not.toBe(before);
      expect(jwsHeader.kid).toBe(sp.currentKid());
    });
  });
});
