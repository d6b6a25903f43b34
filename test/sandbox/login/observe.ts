/**
 * What a minimal RP observes of the sandbox login providers, summarised without random values so two runs can be
 * compared (does a misbehaviour switch show up on the wire?), and a whole FAPI login played with it.
 */
import { compactDecrypt, compactVerify, createLocalJWKSet, type JWK } from 'jose';
import { ath, clientAssertion, dpopProof, makeDpopKey, pkce, postForm, randomB64, type RpKeys } from './rp';

export interface ObserveOptions {
  /** The RP keys (its encryption key opens the JWEs). */
  keys: RpKeys;
  /** The provider key-set URL that should verify a JWS with this `iss`. */
  jwksUriFor(iss: string): string;
}

/** Record one response (step, status, random-free summary) and return its body. */
export function observe(o: ObserveOptions, step: string, res: Response, out: Observed): Promise<string> {
  return capture(o, step, res, out);
}

/** What an RP would observe in one login, with random values blanked so two runs can be compared. */
export type Observed = Array<[string, number, string]>;

async function capture(o: ObserveOptions, step: string, res: Response, out: Observed): Promise<string> {
  const text = await res.text();
  if (res.status === 500) expect(text).not.toContain('SERVER_SIDE_ERROR');
  out.push([step, res.status, await shape(o, res, text)]);
  return text;
}

/**
 * A random-free summary of what an RP would see: the headers that matter, JSON structure, and for JOSE values the
 * headers (minus epk), whether the JWE decrypts with the RP key, whether the JWS verifies against the provider key
 * set, and the claims with random strings blanked and times made relative.
 */
async function shape(o: ObserveOptions, res: Response, text: string): Promise<string> {
  const hdr = ['content-type', 'location', 'www-authenticate', 'dpop-nonce'].map((h) => {
    const v = res.headers.get(h);
    return `${h}=${v === null ? '' : h === 'location' ? summarizeLocation(v) : h === 'dpop-nonce' ? (/^[A-Za-z0-9_-]{16,}$/.test(v) ? '<rnd>' : v) : v}`;
  });
  return `${hdr.join('|')}|${await summarizeBody(o, text)}`;
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

async function summarizeBody(o: ObserveOptions, text: string): Promise<string> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return summarizeValue(o, text);
  }
  return JSON.stringify(await walk(o, v));
}

async function walk(o: ObserveOptions, v: unknown): Promise<unknown> {
  if (typeof v === 'string') return summarizeValue(o, v);
  if (Array.isArray(v)) return Promise.all(v.map((x) => walk(o, x)));
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = await walk(o, x);
    return out;
  }
  if (typeof v === 'number' && v > 1e9 && v < 1e11) return `t${Math.round((v - Date.now() / 1000) / 30)}`;
  return v;
}

async function summarizeValue(o: ObserveOptions, s: string): Promise<string> {
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
      const { plaintext } = await compactDecrypt(s, o.keys.enc.privateKey);
      return `jwe:${JSON.stringify(header)}:${await summarizeValue(o, new TextDecoder().decode(plaintext))}`;
    } catch {
      return `jwe:${JSON.stringify(header)}:undecryptable`;
    }
  }
  if (parts.length !== 3) return `jose${parts.length}:${JSON.stringify(header)}`;
  let verified = 'unverified';
  try {
    const set = (await (await fetch(o.jwksUriFor(decodeIss(parts[1]!)))).json()) as { keys: JWK[] };
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
  return `jws:${JSON.stringify(header)}:${verified}:${JSON.stringify(await walk(o, payload))}`;
}

function decodeIss(payloadSeg: string): string {
  try {
    return String((JSON.parse(Buffer.from(payloadSeg, 'base64url').toString('utf8')) as Record<string, unknown>).iss ?? '');
  } catch {
    return '';
  }
}


/** A FAPI provider as the run needs it (Singpass FAPI, Corppass FAPI). */
export interface FapiRunOptions extends ObserveOptions {
  provider: { issuer: string; jwksUri: string; parEndpoint: string; authorizationEndpoint: string; tokenEndpoint: string; userinfoEndpoint: string };
  clientId: string;
  redirectUri: string;
  scope: string;
  /** Provider-specific PAR parameters (e.g. the Corppass authentication context). */
  parParams?: Record<string, string>;
}

/** A whole FAPI login (discovery, key set, PAR, authorize, token, userinfo) with one DPoP-nonce retry per call. */
export async function fapiRun(o: FapiRunOptions): Promise<Observed> {
  const { provider: sp, clientId, redirectUri, keys } = o;
  const capture = (step: string, res: Response, out: Observed) => observe(o, step, res, out);
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
        scope: o.scope,
        state: randomB64(16),
        nonce: randomB64(24),
        code_challenge: challenge,
        code_challenge_method: 'S256',
        ...o.parParams,
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

