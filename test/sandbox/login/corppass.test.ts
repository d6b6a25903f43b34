import * as crypto from 'node:crypto';
import { compactDecrypt } from 'jose';
import { listen, mount, type Handler, type RunningServer } from '../../../sandbox/http';
import { createCorppassProvider, type CorppassProvider } from '../../../sandbox/login';
import { clientAssertion, decodePart, openNested, pkce, postForm, randomB64, startSandboxLogin, verifySigned, type RpKeys, type SandboxLogin } from './rp';

const clientId = 'rp-corppass-test';
const redirectUri = 'https://rp.example.sg/callback';

let server: RunningServer;
let rpJwks: RunningServer & { jwksUrl: string };
let keys: RpKeys;
let cp: CorppassProvider;

let env: SandboxLogin;
beforeAll(async () => {
  env = await startSandboxLogin(clientId, [redirectUri], ['cp']);
  ({ server, rpJwks, keys, cp } = env);
});
afterAll(() => env.close());
afterEach(() => cp.reset());

interface Started {
  params: URLSearchParams;
  state: string;
  nonce: string;
  verifier: string;
  response: Response;
}

async function authorize(extra: Record<string, string> = {}, drop: string[] = []): Promise<Started> {
  const { verifier, challenge } = pkce();
  const state = randomB64(16);
  const nonce = randomB64(24);
  const u = new URL(cp.authorizationEndpoint);
  const q: Record<string, string> = { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'openid', state, nonce, code_challenge: challenge, code_challenge_method: 'S256', ...extra };
  for (const [k, v] of Object.entries(q)) if (!drop.includes(k)) u.searchParams.set(k, v);
  const response = await fetch(u, { redirect: 'manual' });
  const loc = response.headers.get('location');
  const params = loc ? new URL(loc).searchParams : new URLSearchParams();
  return { params, state, nonce, verifier, response };
}

async function exchange(code: string, verifier: string, aud = cp.issuer): Promise<Response> {
  return postForm(cp.tokenEndpoint, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    client_id: clientId,
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    client_assertion: await clientAssertion(keys, clientId, aud),
    code_verifier: verifier,
  });
}

async function login(extra: Record<string, string> = {}): Promise<{ started: Started; body: Record<string, unknown> }> {
  const started = await authorize(extra);
  const res = await exchange(started.params.get('code')!, started.verifier);
  expect(res.status).toBe(200);
  return { started, body: (await res.json()) as Record<string, unknown> };
}

describe('sandbox Corppass provider', () => {
  test('discovery has the spec §4.4 shape, including the literal authorization-info_endpoint', async () => {
    const res = await fetch(`${cp.issuer}/.well-known/openid-configuration`);
    const meta = (await res.json()) as Record<string, unknown>;
    expect(meta.issuer).toBe(`${server.baseUrl}/corppass`);
    expect(meta['authorization-info_endpoint']).toBe(`${server.baseUrl}/corppass/authorization-info`);
    expect(meta.authorization_endpoint).toBe(`${server.baseUrl}/corppass/mga/sps/oauth/oauth20/authorize`);
    expect(meta.token_endpoint).toBe(`${server.baseUrl}/corppass/mga/sps/oauth/oauth20/token`);
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
    // Like the real Corppass today: no `iss` on redirects, and discovery says so.
    expect(meta.authorization_response_iss_parameter_supported).toBe(false);
    const jwks = await fetch(String(meta.jwks_uri));
    expect(jwks.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    const set = (await jwks.json()) as { keys: Array<Record<string, unknown>> };
    expect(set.keys).toHaveLength(1);
    expect(set.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'sig', alg: 'ES256', kid: cp.currentKid() });
    expect(set.keys[0]).not.toHaveProperty('d');
    // spec §2.3: x5c/x5t/x5t#S256 of a certificate for the same public key
    const cert = new crypto.X509Certificate(Buffer.from(String((set.keys[0]!.x5c as string[])[0]), 'base64'));
    expect(cert.publicKey.export({ format: 'jwk' })).toMatchObject({ x: set.keys[0]!.x, y: set.keys[0]!.y });
    expect(set.keys[0]!['x5t#S256']).toBe(crypto.createHash('sha256').update(cert.raw).digest('base64url'));
  });

  test('happy path: code (no iss, like the real Corppass) → token → encrypted ID token → authorization info', async () => {
    const { started, body } = await login();
    expect(started.response.status).toBe(302);
    expect(started.params.has('iss')).toBe(false);
    expect(started.params.get('state')).toBe(started.state);
    expect(body).toMatchObject({ token_type: 'Bearer', scope: 'openid', expires_in: 600 });

    const idToken = String(body.id_token);
    expect(idToken.split('.')).toHaveLength(5);
    const opened = await openNested(idToken, keys, `${cp.issuer}/.well-known/keys`);
    expect(opened.jweHeader).toMatchObject({ alg: 'ECDH-ES+A256KW', enc: 'A256CBC-HS512', kid: 'rp-enc-1' });
    expect(opened.jwsHeader).toMatchObject({ alg: 'ES256', kid: cp.currentKid() });
    const c = opened.payload;
    expect(c).toMatchObject({ iss: cp.issuer, aud: clientId, nonce: started.nonce, sub: 's=S1234567A,uuid=3f1c2a7e-9b4d-4c1e-8a2f-5d6e7f809a1b,u=CP192,c=SG' });
    expect(c.userInfo).toEqual({ CPAccType: 'Admin', CPUID_FullName: 'TAN AH KOW', ISSPHOLDER: 'YES' });
    expect(c.entityInfo).toMatchObject({ CPEntID: '201500001A', CPEnt_TYPE: 'UEN' });
    expect(Number(c.exp)).toBeGreaterThan(Number(c.iat));

    const at = String(body.access_token);
    expect(decodePart(at, 1).aud).toBe(cp.authorizationInfoEndpoint);

    const info = await fetch(cp.authorizationInfoEndpoint, { method: 'POST', headers: { authorization: `Bearer ${at}` } });
    expect(info.status).toBe(200);
    expect(info.headers.get('content-type')).toBe('application/jwt');
    const { payload } = await verifySigned(await info.text(), `${cp.issuer}/.well-known/keys`);
    expect(payload).toMatchObject({ iss: cp.issuer, aud: clientId, sub: c.sub });
    expect(Number(payload.exp) - Number(payload.iat)).toBe(600);
    const authInfo = payload.AuthInfo as { Result_Set: { ESrvc_Row_Count: number; ESrvc_Result: Array<{ CPESrvcID: string; Auth_Result_Set: { Row_Count: number; Row: unknown[] } }> } };
    expect(authInfo.Result_Set.ESrvc_Row_Count).toBe(authInfo.Result_Set.ESrvc_Result.length);
    const cpf = authInfo.Result_Set.ESrvc_Result.find((e) => e.CPESrvcID === 'SD-CPF2FA')!;
    expect(cpf.Auth_Result_Set.Row).toContainEqual({ CPEntID_SUB: '', CPRole: 'CPF2FAR1', StartDate: '2023-01-01', EndDate: '9999-12-31', Parameter: [] });
    const tp = payload.TPAuthInfo as { Result_Set: { ESrvc_Result: Array<{ Auth_Set: { TP_Auth: Array<{ CP_ClntEnt_TYPE: string }> } }> } };
    expect(tp.Result_Set.ESrvc_Result[0]!.Auth_Set.TP_Auth.map((t) => t.CP_ClntEnt_TYPE)).toEqual(['UEN', 'NON-UEN']);
  });

  test('the user is chosen headlessly; a foreign user has no s= in sub', async () => {
    const { body } = await login({ sandbox_user: 'cp-foreign' });
    const { payload } = await openNested(String(body.id_token), keys, `${cp.issuer}/.well-known/keys`);
    expect(payload.sub).toBe('uuid=c0ffee00-1234-4abc-8def-0123456789ab,u=CP194,c=MY');
    expect(payload.entityInfo).toMatchObject({ CPEnt_TYPE: 'NON-UEN', CPNonUEN_Country: 'MY' });
  });

  test('a replayed code is refused with invalid_grant', async () => {
    const started = await authorize();
    const code = started.params.get('code')!;
    expect((await exchange(code, started.verifier)).status).toBe(200);
    const again = await exchange(code, started.verifier);
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: 'invalid_grant' });
  });

  test('a wrong PKCE verifier is refused with invalid_grant', async () => {
    const started = await authorize();
    const res = await exchange(started.params.get('code')!, pkce().verifier);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_grant' });
  });

  test('a client assertion whose aud is the token URL is refused', async () => {
    const started = await authorize();
    const res = await exchange(started.params.get('code')!, started.verifier, cp.tokenEndpoint);
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_client');
    expect(body.error_description).toMatch(/aud must be the issuer/);
    expect(cp.requests().at(-1)!.clientAssertion!.payload.aud).toBe(cp.tokenEndpoint);
  });

  test('PKCE is required at the authorization endpoint (error redirect, no iss)', async () => {
    const started = await authorize({}, ['code_challenge']);
    expect(started.params.get('error')).toBe('invalid_request');
    expect(started.params.has('iss')).toBe(false);
    expect(started.params.get('code')).toBeNull();
  });

  test('sandbox_action=deny redirects with access_denied and state', async () => {
    const started = await authorize({ sandbox_action: 'deny' });
    expect(started.params.get('error')).toBe('access_denied');
    expect(started.params.has('iss')).toBe(false);
    expect(started.params.get('state')).toBe(started.state);
  });

  test('response_mode=form_post answers with an auto-posting form', async () => {
    const started = await authorize({ response_mode: 'form_post' });
    expect(started.response.status).toBe(200);
    const html = await started.response.text();
    expect(html).toContain(`action="${redirectUri}"`);
    expect(html).toMatch(/name="code" value="[A-Za-z0-9_-]{43}"/);
    expect(html).not.toContain('name="iss"');
  });

  test('issParameter: true (the day Corppass adds iss) advertises the flag and sends iss on success and error', async () => {
    const withIss = createCorppassProvider({ baseUrl: server.baseUrl, prefix: '/corppass', issParameter: true });
    withIss.registerClient({ clientId, jwksUrl: rpJwks.jwksUrl, redirectUris: [redirectUri] });
    const own = await listen(mount([withIss]));
    try {
      const base = own.baseUrl;
      const meta = (await (await fetch(`${base}/corppass/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      expect(meta.authorization_response_iss_parameter_supported).toBe(true);
      const { challenge } = pkce();
      const q = { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'openid', state: 's1', code_challenge: challenge, code_challenge_method: 'S256' };
      const go = async (extra: Record<string, string> = {}) => new URL((await fetch(`${base}/corppass/mga/sps/oauth/oauth20/authorize?${new URLSearchParams({ ...q, ...extra })}`, { redirect: 'manual' })).headers.get('location')!).searchParams;
      expect((await go()).get('iss')).toBe(withIss.issuer);
      expect((await go({ sandbox_action: 'deny' })).get('iss')).toBe(withIss.issuer);
      withIss.misbehave({ authIss: 'missing' });
      expect((await go()).has('iss')).toBe(false);
    } finally {
      await own.close();
    }
  });

  test('key rotation: the new kid signs, the old one stays published until retired', async () => {
    const oldKid = cp.currentKid();
    await cp.rotateKeys();
    const kids = async () => ((await (await fetch(`${cp.issuer}/.well-known/keys`)).json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);
    expect(await kids()).toEqual([oldKid, cp.currentKid()]);
    const { body } = await login();
    const { jwsHeader } = await openNested(String(body.id_token), keys, `${cp.issuer}/.well-known/keys`);
    expect(jwsHeader.kid).toBe(cp.currentKid());
    cp.retireOldKeys();
    expect(await kids()).toEqual([cp.currentKid()]);
  });

  describe('misbehaviour switches', () => {
    test.each([
      ['wrong', (iss: string) => iss + '1'],
      ['trailingSlash', (iss: string) => iss + '/'],
      ['upperHost', (iss: string) => iss.replace('http://127.0.0.1', 'HTTP://127.0.0.1')],
      ['port443', (iss: string) => iss.replace(/:(\d+)\//, ':0$1/')],
      ['extraPath', (iss: string) => iss + '/x'],
      ['otherProvider', () => `${server.baseUrl}/singpass/fapi`],
    ] as const)('authIss %s', async (variant, expected) => {
      cp.misbehave({ authIss: variant });
      const { params } = await authorize();
      expect(params.get('iss')).toBe(expected(cp.issuer));
      expect(params.get('code')).toBeTruthy();
    });

    test('authIss missing and doubleEncoded', async () => {
      cp.misbehave({ authIss: 'missing' });
      expect((await authorize()).params.has('iss')).toBe(false);
      cp.misbehave({ authIss: 'doubleEncoded' });
      expect((await authorize()).params.get('iss')).toBe(encodeURIComponent(cp.issuer));
    });

    test('authDuplicateParam and authState', async () => {
      cp.misbehave({ authDuplicateParam: 'code', authState: 'missing' });
      const { params } = await authorize();
      expect(params.getAll('code')).toHaveLength(2);
      expect(params.has('state')).toBe(false);
    });

    test('idToken claim overrides: removal, relative time and aud array', async () => {
      cp.misbehave({ idToken: { nonce: null, exp: { $secondsFromNow: -360 }, aud: { $clientIdPlus: ['untrusted'] } } });
      const { body } = await login();
      const { payload } = await openNested(String(body.id_token), keys, `${cp.issuer}/.well-known/keys`);
      expect(payload).not.toHaveProperty('nonce');
      expect(payload.aud).toEqual([clientId, 'untrusted']);
      expect(Number(payload.exp)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) - 359);
    });

    test('idTokenJose innerAlg none → an unsecured JWT inside a valid JWE', async () => {
      cp.misbehave({ idTokenJose: { innerAlg: 'none' } });
      const { body } = await login();
      const { plaintext } = await compactDecrypt(String(body.id_token), keys.enc.privateKey);
      const inner = new TextDecoder().decode(plaintext);
      expect(decodePart(inner, 0).alg).toBe('none');
      expect(inner.endsWith('.')).toBe(true);
    });

    test('idTokenJose jweAlg RSA1_5 / zip / tamper produce what they claim', async () => {
      cp.misbehave({ idTokenJose: { jweAlg: 'RSA1_5' } });
      expect(decodePart(String((await login()).body.id_token), 0)).toMatchObject({ alg: 'RSA1_5', enc: 'A256CBC-HS512' });
      cp.reset();
      cp.misbehave({ idTokenJose: { zip: true } });
      expect(decodePart(String((await login()).body.id_token), 0).zip).toBe('DEF');
      cp.reset();
      cp.misbehave({ idTokenJose: { tamper: 'tag' } });
      await expect(compactDecrypt(String((await login()).body.id_token), keys.enc.privateKey)).rejects.toThrow();
    });

    test('idTokenJose unencrypted → a plain, valid JWS', async () => {
      cp.misbehave({ idTokenJose: { unencrypted: true } });
      const idToken = String((await login()).body.id_token);
      expect(idToken.split('.')).toHaveLength(3);
      await expect(verifySigned(idToken, `${cp.issuer}/.well-known/keys`)).resolves.toBeDefined();
    });

    test('decoyKeys: same kid with other key types listed first', async () => {
      cp.misbehave({ decoyKeys: true });
      const set = (await (await fetch(`${cp.issuer}/.well-known/keys`)).json()) as { keys: Array<Record<string, unknown>> };
      expect(set.keys.map((k) => k.kid)).toEqual(Array(4).fill(cp.currentKid()));
      expect(set.keys.map((k) => k.alg)).toEqual(['EdDSA', 'PS256', 'ES384', 'ES256']);
    });

    test('authInfoStringified and authInfo overrides', async () => {
      cp.misbehave({ authInfoStringified: true, authInfo: { aud: 'someone-else' } });
      const { body } = await login();
      const info = await fetch(cp.authorizationInfoEndpoint, { method: 'POST', headers: { authorization: `Bearer ${String(body.access_token)}` } });
      const { payload } = await verifySigned(await info.text(), `${cp.issuer}/.well-known/keys`);
      expect(typeof payload.AuthInfo).toBe('string');
      expect(JSON.parse(String(payload.AuthInfo)).Result_Set.ESrvc_Row_Count).toBe(3);
      expect(payload.aud).toBe('someone-else');
    });

    test('redirectBackChannel token → 307 to the recording sink', async () => {
      cp.misbehave({ redirectBackChannel: 'token' });
      const started = await authorize();
      const res = await exchange(started.params.get('code')!, started.verifier);
      expect(res.status).toBe(307);
      expect(res.headers.get('location')).toBe(`${server.baseUrl}/corppass/sandbox/redirect-sink`);
      const before = cp.requests().filter((r) => r.endpoint === 'redirectSink').length;
      await fetch(res.headers.get('location')!, { method: 'POST' });
      expect(cp.requests().filter((r) => r.endpoint === 'redirectSink').length).toBe(before + 1);
    });

    test('token response switches', async () => {
      cp.misbehave({ tokenTypeCase: 'mixed', tokenNoExpiresIn: true, tokenFields: { scope: 7 } });
      const { body } = await login();
      expect(body.token_type).toBe('bEaReR');
      expect(body).not.toHaveProperty('expires_in');
      expect(body.scope).toBe(7);
    });
  });
});

describe('sandbox Corppass provider with an injected clock', () => {
  test('an authorization code expires after 60 s (invalid_grant), a fresh one still works', async () => {
    let now = Date.now();
    let handler: Handler = () => undefined;
    const srv = await listen((req, res, url) => handler(req, res, url));
    try {
      const p = createCorppassProvider({ baseUrl: srv.baseUrl, clock: () => now, prefix: '/cp-clock' });
      handler = mount([p]);
      p.registerClient({ clientId, jwksUrl: rpJwks.jwksUrl, redirectUris: [redirectUri] });
      expect(p.issuer).toBe(`${srv.baseUrl}/cp-clock`);
      const run = async (advanceMs: number) => {
        const { verifier, challenge } = pkce();
        const u = new URL(p.authorizationEndpoint);
        u.search = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'openid', state: randomB64(), code_challenge: challenge, code_challenge_method: 'S256' }).toString();
        const code = new URL((await fetch(u, { redirect: 'manual' })).headers.get('location')!).searchParams.get('code')!;
        now += advanceMs;
        return postForm(p.tokenEndpoint, {
          grant_type: 'authorization_code',
          code,
          redirect_uri: redirectUri,
          client_id: clientId,
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: await clientAssertion(keys, clientId, p.issuer, { iat: Math.floor(now / 1000), exp: Math.floor(now / 1000) + 60 }),
          code_verifier: verifier,
        });
      };
      const late = await run(61_000);
      expect(late.status).toBe(400);
      expect(await late.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/expired/) });
      expect((await run(59_000)).status).toBe(200);
    } finally {
      await srv.close();
    }
  });
});
