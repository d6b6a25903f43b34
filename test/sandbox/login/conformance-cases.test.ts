/**
 * Every ready-made CONFORMANCE_CASES entry runs through a whole login against its provider(s) without crashing the
 * sandbox (a crash shows up as 500 SERVER_SIDE_ERROR from the HTTP plumbing; deliberate 500s say `server_error`),
 * and each case changes what the provider sends compared with a clean run.
 */
import type { RunningServer } from '../../../sandbox/http';
import { CONFORMANCE_CASES, type CorppassProvider, type SingpassProvider, type ConformanceCase } from '../../../sandbox/login';
import { clientAssertion, pkce, postForm, randomB64, startSandboxLogin, type RpKeys, type SandboxLogin } from './rp';
import { fapiRun, observe, type ObserveOptions, type Observed } from './observe';

const clientId = 'rp-cases';
const redirectUri = 'https://rp.example.sg/cb';
let server: RunningServer;
let rpJwks: RunningServer & { jwksUrl: string };
let keys: RpKeys;
let cp: CorppassProvider;
let sp: SingpassProvider;

let env: SandboxLogin;
beforeAll(async () => {
  env = await startSandboxLogin(clientId, [redirectUri], ['cp', 'sp']);
  ({ server, rpJwks, keys, cp, sp } = env);
});
afterAll(() => env.close());

const seen = (): ObserveOptions => ({ keys, jwksUriFor: (iss) => (iss.includes('/corppass') ? cp.jwksUri : sp.jwksUri) });
const capture = (step: string, res: Response, out: Observed) => observe(seen(), step, res, out);
const singpassRun = () => fapiRun({ ...seen(), provider: sp, clientId, redirectUri, scope: 'openid user.identity name' });

async function corppassRun(): Promise<Observed> {
  const out: Observed = [];
  await capture('discovery', await fetch(`${cp.issuer}/.well-known/openid-configuration`, { redirect: 'manual' }), out);
  await capture('jwks', await fetch(cp.jwksUri, { redirect: 'manual' }), out);
  const { verifier, challenge } = pkce();
  const u = new URL(cp.authorizationEndpoint);
  u.search = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'openid', state: randomB64(16), nonce: randomB64(24), code_challenge: challenge, code_challenge_method: 'S256' }).toString();
  const auth = await fetch(u, { redirect: 'manual' });
  await capture('authorize', auth, out);
  const code = auth.headers.get('location') ? new URL(auth.headers.get('location')!).searchParams.get('code') : null;
  if (!code) return out;
  const tok = await postForm(cp.tokenEndpoint, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    client_id: clientId,
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    client_assertion: await clientAssertion(keys, clientId, cp.issuer),
    code_verifier: verifier,
  });
  const text = await capture('token', tok, out);
  let at: unknown;
  try {
    at = (JSON.parse(text) as Record<string, unknown>).access_token;
  } catch {
    return out;
  }
  if (typeof at !== 'string') return out;
  await capture('authorizationInfo', await fetch(cp.authorizationInfoEndpoint, { method: 'POST', redirect: 'manual', headers: { authorization: `Bearer ${at}` } }), out);
  return out;
}

const runs: Array<[string, ConformanceCase, 'corppass' | 'singpass']> = CONFORMANCE_CASES.flatMap((c) =>
  (c.provider === 'both' ? (['corppass', 'singpass'] as const) : [c.provider]).map((p) => [`#${c.item} ${c.name} @${p}`, c, p] as [string, ConformanceCase, 'corppass' | 'singpass']),
);

describe('CONFORMANCE_CASES against the sandbox providers', () => {
  test('case names are unique and every case names a checklist item', () => {
    expect(new Set(CONFORMANCE_CASES.map((c) => c.name)).size).toBe(CONFORMANCE_CASES.length);
    for (const c of CONFORMANCE_CASES) expect(c.item).toBeGreaterThanOrEqual(1);
  });

  let baseline: Record<'corppass' | 'singpass', Observed>;
  beforeAll(async () => {
    baseline = { corppass: await corppassRun(), singpass: await singpassRun() };
  });

  test('a clean run completes every step', () => {
    expect(baseline.corppass.map(([s, st]) => `${s}:${st}`)).toEqual(['discovery:200', 'jwks:200', 'authorize:302', 'token:200', 'authorizationInfo:200']);
    expect(baseline.singpass.map(([s, st]) => `${s}:${st}`)).toEqual(['discovery:200', 'jwks:200', 'par:201', 'authorize:302', 'token:200', 'userinfo:200']);
  });

  test.each(runs)('%s', async (_name, c, provider) => {
    const p = provider === 'corppass' ? cp : sp;
    p.reset();
    p.misbehave(c.misbehaviour);
    try {
      const observed = provider === 'corppass' ? await corppassRun() : await singpassRun();
      // [64] "no nonce" is the clean behaviour itself; every other case must show up on the wire.
      if (c.name !== 'dpop-no-nonce' && c.name !== 'key-rotation-just-before-signing') expect(observed).not.toEqual(baseline[provider]);
    } finally {
      p.reset();
    }
  });
});

