/**
 * The sandbox Corppass FAPI 2.0 provider, driven by a minimal RP written with jose (not our client) over real HTTP:
 * it behaves like the real service (PAR only, DPoP with one key from PAR to userinfo, `ath`, 60 s single-use codes,
 * authentication-context rules per app type, scopes releasing the right claims, no `iss` by default), and every
 * CORPPASS_FAPI_CASES switch set changes what it sends.
 */
import { listen, mount, type Handler } from '../../../sandbox/http';
import { CORPPASS_FAPI_CASES, createCorppassFapiProvider, type CorppassFapiProvider, type ProviderOptions } from '../../../sandbox/login';
import { ath, clientAssertion, decodePart, dpopProof, makeDpopKey, openNested, pkce, postForm, randomB64, startSandboxLogin, verifySigned, type DpopKey, type RpKeys, type SandboxLogin } from './rp';
import { fapiRun, type Observed } from './observe';

const clientId = 'rp-cpf-login';
const mibClientId = 'rp-cpf-mib';
const redirectUri = 'https://rp.example.sg/cb';
let env: SandboxLogin;
let cpf: CorppassFapiProvider;
let keys: RpKeys;
let offset = 0;

/** A second Corppass FAPI provider (own options) on its own 127.0.0.1 server, with the Login app registered. */
async function withProvider(opts: Omit<ProviderOptions, 'baseUrl'>, fn: (p: CorppassFapiProvider) => Promise<void>): Promise<void> {
  let handler: Handler = () => undefined;
  const server = await listen((req, res, url) => handler(req, res, url));
  const p = createCorppassFapiProvider({ ...opts, baseUrl: server.baseUrl });
  handler = mount([p]);
  p.registerClient({ clientId, jwksUrl: env.rpJwks.jwksUrl, redirectUris: [redirectUri] });
  try {
    await fn(p);
  } finally {
    offset = 0;
    await server.close();
  }
}

beforeAll(async () => {
  env = await startSandboxLogin(clientId, [redirectUri], ['cpf']);
  ({ cpf, keys } = env);
  cpf.registerClient({ clientId: mibClientId, jwksUrl: env.rpJwks.jwksUrl, redirectUris: [redirectUri], appType: 'myinfo-business' });
});
afterAll(() => env.close());
afterEach(() => cpf.reset());

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

interface Pushed { requestUri: string; state: string; nonce: string; verifier: string; dpop: DpopKey }

/** POST /request with the given parameters over the defaults (undefined removes one); `dpop: null` sends no proof. */
async function par(o: { params?: Record<string, string | undefined>; client?: string; dpop?: DpopKey | null; provider?: CorppassFapiProvider } = {}): Promise<{ res: Response; pushed?: Pushed }> {
  const pv = o.provider ?? cpf;
  const dpop = o.dpop === undefined ? await makeDpopKey() : o.dpop;
  const { verifier, challenge } = pkce();
  const state = randomB64(16);
  const nonce = randomB64(24);
  const id = o.client ?? clientId;
  const form: Record<string, string | undefined> = {
    response_type: 'code', client_id: id, redirect_uri: redirectUri, scope: 'openid authinfo', state, nonce,
    code_challenge: challenge, code_challenge_method: 'S256', authentication_context_type: id === clientId ? 'APP_AUTHENTICATION_DEFAULT' : undefined,
    client_assertion_type: ASSERTION_TYPE, client_assertion: await clientAssertion(keys, id, pv.issuer), ...o.params,
  };
  const body = Object.fromEntries(Object.entries(form).filter((e): e is [string, string] => e[1] !== undefined));
  const res = await postForm(pv.parEndpoint, body, dpop ? { dpop: await dpopProof(dpop, 'POST', pv.parEndpoint) } : {});
  if (res.status !== 201) return { res };
  const json = (await res.clone().json()) as { request_uri: string };
  return { res, pushed: { requestUri: json.request_uri, state, nonce, verifier, dpop: dpop! } };
}

async function authorizeCode(p: Pushed, client = clientId, user?: string, pv = cpf): Promise<URL> {
  const q = new URLSearchParams({ client_id: client, request_uri: p.requestUri, ...(user ? { sandbox_user: user } : {}) });
  const res = await fetch(`${pv.authorizationEndpoint}?${q}`, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location')!);
}

async function token(p: Pushed, code: string, o: { dpop?: DpopKey; client?: string; provider?: CorppassFapiProvider } = {}): Promise<Response> {
  const id = o.client ?? clientId;
  const pv = o.provider ?? cpf;
  return postForm(pv.tokenEndpoint, {
    grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: id, code_verifier: p.verifier,
    client_assertion_type: ASSERTION_TYPE, client_assertion: await clientAssertion(keys, id, pv.issuer),
  }, { dpop: await dpopProof(o.dpop ?? p.dpop, 'POST', pv.tokenEndpoint) });
}

async function userinfo(at: string, dpop: DpopKey, o: { scheme?: string; withAth?: boolean; method?: string } = {}): Promise<Response> {
  const method = o.method ?? 'GET';
  return fetch(cpf.userinfoEndpoint, { method, redirect: 'manual', headers: { authorization: `${o.scheme ?? 'DPoP'} ${at}`, dpop: await dpopProof(dpop, method, cpf.userinfoEndpoint, o.withAth === false ? {} : { ath: ath(at) }) } });
}

/** PAR → authorize → token for the Login app (or `client`), with `scope`. */
async function loggedIn(scope: string, user?: string, client = clientId): Promise<{ p: Pushed; tokens: Record<string, unknown>; location: URL }> {
  const { pushed } = await par({ params: { scope }, client });
  const location = await authorizeCode(pushed!, client, user);
  const res = await token(pushed!, location.searchParams.get('code')!, { client });
  expect(res.status).toBe(200);
  return { p: pushed!, tokens: (await res.json()) as Record<string, unknown>, location };
}

describe('Corppass FAPI sandbox provider', () => {
  it('publishes PAR at /request, DPoP ES256, S256, and the iss flag false like the real Corppass', async () => {
    const md = (await (await fetch(`${cpf.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(md).toMatchObject({
      issuer: cpf.issuer, pushed_authorization_request_endpoint: `${cpf.issuer}/request`, require_pushed_authorization_requests: true,
      authorization_endpoint: `${cpf.issuer}/mga/sps/oauth/oauth20/authorize`, token_endpoint: `${cpf.issuer}/mga/sps/oauth/oauth20/token`,
      userinfo_endpoint: `${cpf.issuer}/userinfo`, dpop_signing_alg_values_supported: ['ES256'], code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: false,
    });
  });

  it('a Login app logs in: 60 s request_uri, no iss on the redirect, DPoP token without refresh token, sub = entity and act = user', async () => {
    const { res, pushed } = await par({ params: { scope: 'openid authinfo entity.identity entity.basic_profile.name user.identity user.name' } });
    expect(await res.json()).toMatchObject({ expires_in: 60 });
    const location = await authorizeCode(pushed!, clientId, 'cp-admin');
    expect(location.searchParams.get('state')).toBe(pushed!.state);
    expect(location.searchParams.has('iss')).toBe(false);
    const tr = await token(pushed!, location.searchParams.get('code')!);
    const tokens = (await tr.json()) as Record<string, unknown>;
    expect(tokens).toMatchObject({ token_type: 'DPoP', expires_in: 600 });
    expect(tokens).not.toHaveProperty('refresh_token');
    const { payload, jweHeader } = await openNested(tokens.id_token as string, keys, cpf.jwksUri);
    expect(jweHeader).toMatchObject({ enc: 'A256GCM', kid: keys.enc.kid });
    expect(payload).toMatchObject({
      iss: cpf.issuer, aud: clientId, nonce: pushed!.nonce, sub: '201500001A', sub_type: 'entity',
      sub_attributes: { entity_type: 'UEN', entity_reg_number: '201500001A', entity_coi: 'SG', entity_name: 'ACME WIDGETS PTE. LTD.' },
      act: { sub: '3f1c2a7e-9b4d-4c1e-8a2f-5d6e7f809a1b', sub_type: 'user', sub_attributes: { account_type: 'standard', identity_number: 'S1234567A', identity_coi: 'SG', name: 'TAN AH KOW' } },
    });
    expect(payload.sub_attributes).not.toHaveProperty('entity_uen_status'); // that scope was not asked for
    const ui = await userinfo(tokens.access_token as string, pushed!.dpop);
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toMatch(/^application\/jwt/);
    const jws = await ui.text();
    expect(jws.split('.')).toHaveLength(3);
    const claims = (await verifySigned(jws, cpf.jwksUri)).payload;
    expect(claims).toMatchObject({ iss: cpf.issuer, aud: clientId, auth_info: { Result_Set: { ESrvc_Row_Count: 3 } } });
    expect(claims).not.toHaveProperty('tp_auth_info'); // scope tpauthinfo not asked for
  });

  it('openid alone releases the entity and the acting user only; tpauthinfo only for a user holding third-party grants', async () => {
    let { tokens, p } = await loggedIn('openid');
    let id = (await openNested(tokens.id_token as string, keys, cpf.jwksUri)).payload;
    expect(id).not.toHaveProperty('sub_attributes');
    expect(id.act).toEqual({ sub: '3f1c2a7e-9b4d-4c1e-8a2f-5d6e7f809a1b', sub_type: 'user' });
    ({ tokens, p } = await loggedIn('openid authinfo tpauthinfo', 'cp-fin'));
    let claims = (await verifySigned(await (await userinfo(tokens.access_token as string, p.dpop)).text(), cpf.jwksUri)).payload;
    expect(claims).toHaveProperty('auth_info');
    expect(claims).not.toHaveProperty('tp_auth_info');
    ({ tokens, p } = await loggedIn('openid tpauthinfo', 'cp-admin'));
    claims = (await verifySigned(await (await userinfo(tokens.access_token as string, p.dpop)).text(), cpf.jwksUri)).payload;
    expect(claims).toHaveProperty('tp_auth_info');
    expect(claims).not.toHaveProperty('auth_info');
    id = (await openNested(tokens.id_token as string, keys, cpf.jwksUri)).payload;
    expect(id.sub).toBe('201500001A');
  });

  it('a Myinfo Business app gets entity_info / person_info / corppass_info, and userinfo as a JWE with the switch', async () => {
    cpf.misbehave({ userinfoEncrypted: true });
    const { tokens, p } = await loggedIn('openid entity.basic_profile user.email corppass.email', 'cp-fin', mibClientId);
    const ui = await (await userinfo(tokens.access_token as string, p.dpop)).text();
    expect(ui.split('.')).toHaveLength(5);
    const { payload } = await openNested(ui, keys, cpf.jwksUri);
    expect(payload).toMatchObject({ aud: mibClientId, corppass_info: { email: 'cp-fin@example.sg', email_verified: true }, person_info: { email: { value: 'cp-fin@example.sg' } }, entity_info: { basic_profile: { uen: { value: '201500001A' } } } });
  });

  describe('refuses what the real service refuses', () => {
    it.each([
      ['no authentication_context_type from a Login app', { params: { authentication_context_type: undefined } }, 'invalid_request', /required for Corppass Login apps/],
      ['an authentication_context_type not allowed for the client', { params: { authentication_context_type: 'APP_AUTHENTICATION_STEP_UP' } }, 'invalid_request', /not allowed/],
      ['a message with punctuation', { params: { authentication_context_message: 'Pay now!' } }, 'invalid_request', /letters, digits and spaces/],
      ['a message over 100 characters', { params: { authentication_context_message: 'a'.repeat(101) } }, 'invalid_request', /1 to 100/],
      ['an authentication context from a Myinfo Business app', { client: mibClientId, params: { authentication_context_type: 'APP_AUTHENTICATION_DEFAULT' } }, 'invalid_request', /Myinfo Business/],
      ['a message from a Myinfo Business app', { client: mibClientId, params: { authentication_context_message: 'Hello' } }, 'invalid_request', /Myinfo Business/],
      ['a scope not enabled for the client', { params: { scope: 'openid corppass.email' } }, 'invalid_scope', /not enabled/],
      ['no state', { params: { state: undefined } }, 'invalid_request', /state/],
      ['no nonce', { params: { nonce: undefined } }, 'invalid_request', /nonce/],
      ['PKCE plain', { params: { code_challenge_method: 'plain' } }, 'invalid_request', /S256/],
      ['no DPoP proof and no dpop_jkt', { dpop: null }, 'invalid_dpop_proof', /DPoP header is required/],
    ] as const)('PAR with %s', async (_name, o, error, reason) => {
      const { res } = await par(o as Parameters<typeof par>[0]);
      expect(res.status).toBeGreaterThanOrEqual(400);
      const body = (await res.json()) as { error: string; error_description: string };
      expect(body.error).toBe(error);
      expect(body.error_description).toMatch(reason);
    });

    it('a front-channel authorization request without PAR', async () => {
      const q = new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: redirectUri, scope: 'openid', state: 's', nonce: 'n', code_challenge: pkce().challenge, code_challenge_method: 'S256' });
      const res = await fetch(`${cpf.authorizationEndpoint}?${q}`, { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error_description: string }).error_description).toMatch(/only client_id and request_uri/);
    });

    it('PAR naming its key by dpop_jkt alone binds the code to that key: another key at the token endpoint is refused', async () => {
      const key = await makeDpopKey();
      const { pushed } = await par({ dpop: null, params: { dpop_jkt: key.jkt } });
      expect(pushed).toBeDefined();
      const location = await authorizeCode({ ...pushed!, dpop: key });
      const bad = await token({ ...pushed!, dpop: key }, location.searchParams.get('code')!, { dpop: await makeDpopKey() });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toBe('invalid_dpop_proof');
    });

    it('a code is single use', async () => {
      const { pushed } = await par();
      const code = (await authorizeCode(pushed!)).searchParams.get('code')!;
      expect((await token(pushed!, code)).status).toBe(200);
      const again = await token(pushed!, code);
      expect(((await again.json()) as { error_description: string }).error_description).toMatch(/already used/);
    });

    it('a code used more than 60 s after it was issued is refused', async () => {
      await withProvider({ clock: () => Date.now() + offset }, async (p) => {
        const { pushed } = await par({ provider: p });
        const code = (await authorizeCode(pushed!, clientId, undefined, p)).searchParams.get('code')!;
        offset = 61_000;
        const late = await token(pushed!, code, { provider: p });
        expect(late.status).toBe(400);
        expect(await late.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/expired \(lifetime 60 s\)/) });
      });
    });

    it('userinfo: Bearer scheme, a proof without ath, or another DPoP key are refused; POST is allowed', async () => {
      const { tokens, p } = await loggedIn('openid authinfo');
      const at = tokens.access_token as string;
      const bearer = await userinfo(at, p.dpop, { scheme: 'Bearer' });
      expect(bearer.status).toBe(401);
      expect(bearer.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token"/);
      const noAth = await userinfo(at, p.dpop, { withAth: false });
      expect(((await noAth.json()) as { error_description: string }).error_description).toMatch(/ath must be/);
      const otherKey = await userinfo(at, await makeDpopKey());
      expect(((await otherKey.json()) as { error_description: string }).error_description).toMatch(/not the one the access token is bound to/);
      expect((await userinfo(at, p.dpop, { method: 'POST' })).status).toBe(200);
    });
  });

  it('with issParameter on, sends iss and advertises it (the day Corppass turns it on)', async () => {
    await withProvider({ issParameter: true }, async (p) => {
      const md = (await (await fetch(`${p.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      expect(md.authorization_response_iss_parameter_supported).toBe(true);
      const { pushed } = await par({ provider: p });
      expect((await authorizeCode(pushed!, clientId, undefined, p)).searchParams.get('iss')).toBe(p.issuer);
    });
  });
});

describe('CORPPASS_FAPI_CASES against the sandbox Corppass FAPI provider', () => {
  const run = () => fapiRun({
    keys, jwksUriFor: () => cpf.jwksUri, provider: cpf, clientId, redirectUri, scope: 'openid authinfo tpauthinfo user.identity',
    parParams: { authentication_context_type: 'APP_AUTHENTICATION_DEFAULT' },
  });
  let baseline: Observed;
  beforeAll(async () => { baseline = await run(); });

  test('case names are unique; a clean run completes every step', () => {
    expect(new Set(CORPPASS_FAPI_CASES.map((c) => c.name)).size).toBe(CORPPASS_FAPI_CASES.length);
    expect(baseline.map(([s, st]) => `${s}:${st}`)).toEqual(['discovery:200', 'jwks:200', 'par:201', 'authorize:302', 'token:200', 'userinfo:200']);
  });

  /** Cases that are the clean behaviour itself (the provider sends no `iss` and needs no nonce by default). */
  const SAME_AS_CLEAN = new Set(['dpop-no-nonce', 'key-rotation-just-before-signing', 'fapi-auth-iss-missing-not-advertised']);

  test.each(CORPPASS_FAPI_CASES.map((c) => [`#${c.item} ${c.name}`, c] as const))('%s shows on the wire', async (_name, c) => {
    cpf.reset();
    cpf.misbehave(c.misbehaviour);
    try {
      const observed = await run();
      if (SAME_AS_CLEAN.has(c.name)) expect(observed.map(([s, st]) => `${s}:${st}`)).toEqual(baseline.map(([s, st]) => `${s}:${st}`));
      else expect(observed).not.toEqual(baseline);
      for (const [, status, shape] of observed) if (status === 500) expect(shape).not.toContain('SERVER_SIDE_ERROR');
    } finally {
      cpf.reset();
      cpf.retireOldKeys();
    }
  });
});
