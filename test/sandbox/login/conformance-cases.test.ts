/**
 * Every ready-made CONFORMANCE_CASES entry runs through a whole login against its provider(s) without crashing the
 * sandbox (a crash shows up as 500 SERVER_SIDE_ERROR from the HTTP plumbing; deliberate 500s say `server_error`),
 * and each case changes what the provider sends compared with a clean run.
 */
import { compactDecrypt, compactVerify, createLocalJWKSet, type JWK } from 'jose';
import type { RunningServer } from '../../../sandbox/http';
import { CONFORMANCE_CASES, type CorppassProvider, type SingpassProvider, type ConformanceCase } from '../../../sandbox/login';
import { ath, clientAssertion, dpopProof, makeDpopKey, pkce, postForm, randomB64, startSandboxLogin, type RpKeys, type SandboxLogin } from './rp';

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

/** What an RP would observe in one login, with random values blanked so two runs can be compared. */
type Observed = Array<[string, number, string]>;

async function capture(step: string, res: Response, out: Observed): Promise<string> {
  const text = await res.text();
  if (res.status === 500) expect(text).not.toContain('SERVER_SIDE_ERROR');
  out.push([step, res.status, await shape(res, text)]);
  return text;
}

/**
 * A random-free summary of what an RP would see: the headers that matter, JSON structure, and for JOSE values the
 * headers (minus epk), whether the JWE decrypts with the RP key, whether the JWS verifies against the provider key
 * set, and the claims with random strings blanked and times made relative.
 */
async function shape(res: Response, text: string): Promise<string> {
  const hdr = ['content-type', 'location', 'www-authenticate', 'dpop-nonce'].map((h) => {
    const v = res.headers.get(h);
    return `${h}=${v === null ? '' : h === 'location' ? summarizeLocation(v) : h === 'dpop-nonce' ? (/^[A-Za-z0-9_-]{16,}$/.test(v) ? '<rnd>' : v) : v}`;
  });
  return `${hdr.join('|')}|${await summarizeBody(text)}`;
}

function blank(v: string, state?: string): string {
  return /^[A-Za-z0-9_-]{20,}$/.test(v) ? (v.endsWith('x') && state === 'x' ? '<rnd>x' : '<rnd>') : v;
}

function summarizeLocation(loc: string): string {
  try {
    const u = new URL(loc);
    // state values are 22 chars of base64url; the "wrong" variant appends x — keep that visible.
    return [...u.searchParams.entries()].map(([k, v]) => `${k}:${k === 'state' && /x$/.test(v) && v.length === 23 ? '<rnd>x' : blank(v)}`).join(',') + (u.hash ? '#' : '');
  } catch {
    return loc.replace(/[A-Za-z0-9_-]{16,}/g, '<rnd>');
  }
}

async function summarizeBody(text: string): Promise<string> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return summarizeValue(text);
  }
  return JSON.stringify(await walk(v));
}

async function walk(v: unknown): Promise<unknown> {
  if (typeof v === 'string') return summarizeValue(v);
  if (Array.isArray(v)) return Promise.all(v.map(walk));
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = await walk(x);
    return out;
  }
  if (typeof v === 'number' && v > 1e9 && v < 1e11) return `t${Math.round((v - Date.now() / 1000) / 30)}`;
  return v;
}

async function summarizeValue(s: string): Promise<string> {
  const parts = s.split('.');
  if (!(parts.length >= 3 && parts.length <= 6 && /^eyJ/.test(s))) return s.replace(/[A-Za-z0-9_-]{24,}/g, '<rnd>').replace(/:\d{2,5}\//g, ':PORT/');
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return `jose${parts.length}:bad-header`;
  }
  delete header.epk;
  if (parts.length === 5) {
    try {
      const { plaintext } = await compactDecrypt(s, keys.enc.privateKey);
      return `jwe:${JSON.stringify(header)}:${await summarizeValue(new TextDecoder().decode(plaintext))}`;
    } catch {
      return `jwe:${JSON.stringify(header)}:undecryptable`;
    }
  }
  if (parts.length !== 3) return `jose${parts.length}:${JSON.stringify(header)}`;
  let verified = 'unverified';
  try {
    const set = (await (await fetch(decodeIss(parts[1]!).includes('/corppass') ? cp.jwksUri : sp.jwksUri)).json()) as { keys: JWK[] };
    await compactVerify(s, createLocalJWKSet(set), { algorithms: ['ES256'] });
    verified = 'verified';
  } catch {
    /* stays unverified */
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
  } catch {
    payload = 'unparsable';
  }
  return `jws:${JSON.stringify(header)}:${verified}:${JSON.stringify(await walk(payload))}`;
}

function decodeIss(payloadSeg: string): string {
  try {
    return String((JSON.parse(Buffer.from(payloadSeg, 'base64url').toString('utf8')) as Record<string, unknown>).iss ?? '');
  } catch {
    return '';
  }
}

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

async function singpassRun(): Promise<Observed> {
  const out: Observed = [];
  await capture('discovery', await fetch(`${sp.issuer}/.well-known/openid-configuration`, { redirect: 'manual' }), out);
  await capture('jwks', await fetch(sp.jwksUri, { redirect: 'manual' }), out);
  const dpop = await makeDpopKey();
  const { verifier, challenge } = pkce();
  /** One call with the single DPoP-nonce retry an RP makes. */
  const withRetry = async (step: string, call: (nonce?: string) => Promise<Response>): Promise<string> => {
    let res = await call();
    if ((res.status === 400 || res.status === 401) && res.headers.get('dpop-nonce')) {
      await capture(`${step}-challenge`, res, out);
      res = await call(res.headers.get('dpop-nonce')!);
    }
    return capture(step, res, out);
  };
  const parText = await withRetry('par', async (nonce) =>
    postForm(
      sp.parEndpoint,
      {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirectUri,
        scope: 'openid user.identity name',
        state: randomB64(16),
        nonce: randomB64(24),
        code_challenge: challenge,
        code_challenge_method: 'S256',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: await clientAssertion(keys, clientId, sp.issuer),
      },
      { dpop: await dpopProof(dpop, 'POST', sp.parEndpoint, { nonce }) },
    ),
  );
  let requestUri: unknown;
  try {
    requestUri = (JSON.parse(parText) as Record<string, unknown>).request_uri;
  } catch {
    return out;
  }
  if (typeof requestUri !== 'string') return out;
  const auth = await fetch(`${sp.authorizationEndpoint}?${new URLSearchParams({ client_id: clientId, request_uri: requestUri })}`, { redirect: 'manual' });
  await capture('authorize', auth, out);
  const code = auth.headers.get('location') ? new URL(auth.headers.get('location')!).searchParams.get('code') : null;
  if (!code) return out;
  const tokText = await withRetry('token', async (nonce) =>
    postForm(
      sp.tokenEndpoint,
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        client_id: clientId,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: await clientAssertion(keys, clientId, sp.issuer),
        code_verifier: verifier,
      },
      { dpop: await dpopProof(dpop, 'POST', sp.tokenEndpoint, { nonce }) },
    ),
  );
  let at: unknown;
  try {
    at = (JSON.parse(tokText) as Record<string, unknown>).access_token;
  } catch {
    return out;
  }
  if (typeof at !== 'string') return out;
  await withRetry('userinfo', async (nonce) =>
    fetch(sp.userinfoEndpoint, { redirect: 'manual', headers: { authorization: `DPoP ${at}`, dpop: await dpopProof(dpop, 'GET', sp.userinfoEndpoint, { ath: ath(at as string), nonce }) } }),
  );
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

