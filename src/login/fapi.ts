import { SingpassFlowsError } from '../errors';
import { httpRequest, safeUrl, type HttpResponse } from '../http';
import { randomToken } from '../secrets';
import { validateCallback, type CallbackInput } from './callback';
import { clientAssertionParams } from './client-auth';
import { takeTransaction, type ResolvedConfig } from './config';
import type { ProviderIo } from './util';
import type { ProviderMetadata } from './discovery';
import { dpopProof, generateDpopKey, importDpopKey, isAsNonceChallenge, isRsNonceChallenge, withDpopNonceRetry, type DpopKey, type DpopNonces } from './dpop';
import { FORM_HEADERS, formBody, oauthError, parseTokenResponse, type TokenResponse } from './token';
import type { LoginTransaction } from './transaction';
import { pkcePair } from './util';
import { PAR_REQUEST_URI_MAX_SECONDS } from './wire';

/**
 * The FAPI 2.0 login steps Singpass FAPI and Corppass FAPI share, each rule in one place: PAR with PKCE S256, a fresh
 * DPoP key per login and a fresh client assertion per attempt; the PAR-only redirect; the DPoP-bound code exchange
 * (same key as PAR); DPoP-protected resource calls (`Authorization: DPoP`, `ath`). Every call retries a DPoP nonce
 * challenge exactly once.
 */
export interface FapiContext {
  c: ResolvedConfig;
  /** DPoP nonces per origin (shared by the clients of a process). */
  nonces: DpopNonces;
  io: ProviderIo;
}

function send(f: FapiContext, url: string, init: RequestInit): Promise<HttpResponse> {
  return httpRequest(url, init, { fetch: f.c.fetch, timeoutMs: f.c.timeoutMs });
}

/** What a FAPI 2.0 `startLogin` returns. */
export interface FapiLoginStart {
  /** Where to send the browser: only `client_id` and `request_uri`. */
  url: string;
  /** Keep until the callback (sealed, server-side). */
  transaction: LoginTransaction;
  /**
   * ms since epoch after which `url` no longer works: the provider's `request_uri` lifetime (`expires_in`, 60 s at
   * Singpass and Corppass), counted from before the push, and never later than the transaction's `expiresAt`.
   */
  urlExpiresAt: number;
}

/**
 * Push the authorization request (provider-specific `params` added to the standard ones) and return the URL to
 * send the browser to, how long it works, and the transaction to keep.
 */
export async function pushAuthorizationRequest(
  f: FapiContext,
  md: ProviderMetadata,
  o: { provider: LoginTransaction['provider']; scope: string; params: Record<string, string | undefined>; transaction?: Partial<LoginTransaction> },
): Promise<FapiLoginStart> {
  const c = f.c;
  const par = md.parEndpoint;
  if (!par) throw new SingpassFlowsError('DISCOVERY_INVALID', `Provider configuration of ${c.issuer}: "pushed_authorization_request_endpoint" is missing`);
  const { verifier, challenge } = pkcePair();
  const dpopJwk = generateDpopKey();
  const dpop = importDpopKey(dpopJwk);
  const now = c.clock();
  const tx: LoginTransaction = {
    v: 1, provider: o.provider, id: randomToken(), issuer: c.issuer, clientId: c.clientId, redirectUri: c.redirectUri,
    state: randomToken(), nonce: randomToken(), codeVerifier: verifier, scope: o.scope, dpopKey: dpopJwk, ...o.transaction,
    issRequired: md.responseIssRequired, createdAt: now, expiresAt: now + c.transactionTtlSeconds * 1000,
  };
  const res = await withDpopNonceRetry(par, f.nonces, 'pushed authorization endpoint', async (nonce) => send(f, par, {
    method: 'POST',
    headers: { ...FORM_HEADERS, dpop: await dpopProof(dpop, 'POST', par, c.clock, { nonce }) },
    // A fresh client assertion per attempt: its jti must never repeat, not even on the nonce retry.
    body: formBody({
      response_type: 'code', client_id: c.clientId, redirect_uri: c.redirectUri, scope: o.scope, state: tx.state, nonce: tx.nonce,
      code_challenge: challenge, code_challenge_method: 'S256', ...o.params,
      ...(await clientAssertionParams(c.signingKey, c.clientId, c.issuer, c.clock)),
    }),
  }), isAsNonceChallenge);
  const { requestUri, expiresIn } = parseParResponse(res, par);
  const url = new URL(md.authorizationEndpoint);
  url.search = '';
  url.searchParams.set('client_id', c.clientId);
  url.searchParams.set('request_uri', requestUri);
  await c.transactionStore.put(tx.id, tx.expiresAt);
  return { url: url.toString(), transaction: tx, urlExpiresAt: Math.min(now + expiresIn * 1000, tx.expiresAt) };
}

/**
 * Check the callback against the transaction (already checked to be ours), spend the transaction, and exchange the
 * code with a DPoP proof from the login's key. A Bearer answer is a downgrade and is refused.
 */
export async function exchangeCode(
  f: FapiContext, metadata: () => Promise<ProviderMetadata>, tx: LoginTransaction, callback: CallbackInput,
): Promise<{ md: ProviderMetadata; tokens: TokenResponse; dpop: DpopKey }> {
  const c = f.c;
  const dpop = importDpopKey(tx.dpopKey);
  const code = validateCallback(callback, tx);
  await takeTransaction(tx, c);
  const md = await metadata();
  const tokenUrl = md.tokenEndpoint;
  const res = await withDpopNonceRetry(tokenUrl, f.nonces, 'token endpoint', async (nonce) => send(f, tokenUrl, {
    method: 'POST',
    headers: { ...FORM_HEADERS, dpop: await dpopProof(dpop, 'POST', tokenUrl, c.clock, { nonce }) },
    body: formBody({
      grant_type: 'authorization_code', code, redirect_uri: tx.redirectUri, client_id: c.clientId, code_verifier: tx.codeVerifier,
      ...(await clientAssertionParams(c.signingKey, c.clientId, c.issuer, c.clock)),
    }),
  }), isAsNonceChallenge);
  return { md, tokens: parseTokenResponse(res, tokenUrl, 'DPoP', tx.scope), dpop };
}

/**
 * GET a protected resource (userinfo) with the DPoP-bound access token: `Authorization: DPoP <token>` (never
 * Bearer, never in the URL) and a proof carrying `ath`. A non-200 answer becomes a typed `USERINFO_INVALID` error
 * naming the service's `WWW-Authenticate` error code.
 */
export async function getWithDpop(f: FapiContext, url: string, accessToken: string, dpop: DpopKey): Promise<HttpResponse> {
  const res = await withDpopNonceRetry(url, f.nonces, 'userinfo endpoint', async (nonce) => send(f, url, {
    method: 'GET',
    headers: { authorization: `DPoP ${accessToken}`, dpop: await dpopProof(dpop, 'GET', url, f.c.clock, { nonce, accessToken }), accept: 'application/jwt' },
  }), isRsNonceChallenge);
  if (res.status !== 200) {
    const e = oauthError(res, 'USERINFO_INVALID', `userinfo endpoint (${safeUrl(url)})`);
    const challenge = /error\s*=\s*"?([a-z_]+)"?/i.exec(res.headers.get('www-authenticate') ?? '');
    if (challenge) e.details.serviceCode = challenge[1];
    throw e;
  }
  return res;
}

/** The body of a userinfo answer that must be a JWT (`application/jwt`); plain JSON is refused. */
export function userinfoJwt(res: HttpResponse, expected: string): string {
  const type = (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/jwt') throw new SingpassFlowsError('USERINFO_INVALID', `The userinfo answer is "${type || 'untyped'}", expected ${expected} (application/jwt); refusing it`, { status: res.status });
  return res.body.toString('utf8').trim();
}

/**
 * The `request_uri` and its lifetime. `expires_in` must be a positive whole number of seconds (RFC 9126 §2.2) under
 * {@link PAR_REQUEST_URI_MAX_SECONDS} (an authorization-server duty of the FAPI 2.0 Security Profile). Anything else
 * is refused, not clamped: it is the provider's own word on when the URL stops working, and a provider that breaks
 * the profile there cannot be trusted for it.
 */
function parseParResponse(res: HttpResponse, url: string): { requestUri: string; expiresIn: number } {
  if (res.status !== 201) {
    if (res.status >= 200 && res.status < 300) throw new SingpassFlowsError('PAR_FAILED', `The pushed authorization endpoint answered HTTP ${res.status}, expected 201`, { status: res.status });
    throw oauthError(res, 'PAR_FAILED', `pushed authorization endpoint (${safeUrl(url)})`);
  }
  let body: unknown;
  try {
    body = JSON.parse(res.body.toString('utf8'));
  } catch {
    throw new SingpassFlowsError('PAR_FAILED', 'The pushed authorization response is not JSON', { status: res.status });
  }
  const b = body as { request_uri?: unknown; expires_in?: unknown } | null;
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw new SingpassFlowsError('PAR_FAILED', 'The pushed authorization response is not a JSON object', { status: res.status });
  if (typeof b.request_uri !== 'string' || !b.request_uri) throw new SingpassFlowsError('PAR_FAILED', 'The pushed authorization response has no request_uri', { status: res.status });
  if (typeof b.expires_in !== 'number' || !Number.isInteger(b.expires_in) || b.expires_in <= 0) throw new SingpassFlowsError('PAR_FAILED', 'The pushed authorization response has no valid expires_in (a positive whole number of seconds)', { status: res.status, field: 'expires_in' });
  if (b.expires_in >= PAR_REQUEST_URI_MAX_SECONDS) {
    throw new SingpassFlowsError('PAR_FAILED', `The pushed authorization response says its request_uri lives ${b.expires_in} s; FAPI 2.0 requires less than ${PAR_REQUEST_URI_MAX_SECONDS} s, so the provider is misconfigured`, { status: res.status, field: 'expires_in' });
  }
  return { requestUri: b.request_uri, expiresIn: b.expires_in };
}
