import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT, type JWK } from 'jose';
import { SingpassFlowsError } from '../errors';
import type { HttpResponse } from '../http';
import { epochSeconds } from '../clock';
import { sha256b64url } from './util';
import { randomToken } from '../secrets';

/** A per-login DPoP key (P-256, ES256). Serialised into the transaction as a private JWK. */
export function generateDpopKey(): JWK {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' }) as JWK;
  return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, d: jwk.d };
}

export interface DpopKey { privateKey: KeyObject; publicJwk: JWK }

export function importDpopKey(jwk: JWK | undefined): DpopKey {
  if (!jwk || jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.d !== 'string') {
    throw new SingpassFlowsError('LOGIN_STATE_INVALID', 'The login transaction has no usable DPoP key; start the login again');
  }
  const privateKey = createPrivateKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
  const pub = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  return { privateKey, publicJwk: { kty: 'EC', crv: 'P-256', x: pub.x, y: pub.y } };
}

/** RFC 9449 §4 proof: htu without query/fragment, fresh jti, `ath` only for resource calls, nonce when known. */
export async function dpopProof(key: DpopKey, method: string, url: string, clock: () => number, opts: { nonce?: string; accessToken?: string } = {}): Promise<string> {
  const u = new URL(url);
  const claims: Record<string, unknown> = { htm: method, htu: `${u.origin}${u.pathname}`, jti: randomToken() };
  if (opts.nonce) claims.nonce = opts.nonce;
  if (opts.accessToken) claims.ath = sha256b64url(opts.accessToken);
  return new SignJWT(claims).setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.publicJwk }).setIssuedAt(epochSeconds(clock)).sign(key.privateKey);
}

/** DPoP nonces per origin (RFC 9449 §8/§9): an AS nonce is never sent to another origin. */
export class DpopNonces {
  private readonly byOrigin = new Map<string, string>();
  get(url: string): string | undefined {
    return this.byOrigin.get(new URL(url).origin);
  }
  /** Remember a nonce a server sent on any response; a malformed one is ignored here (rejected on challenges). */
  remember(url: string, res: HttpResponse): void {
    const value = res.headers.get('dpop-nonce');
    if (value !== null && NQCHAR.test(value)) this.byOrigin.set(new URL(url).origin, value);
  }
}

const NQCHAR = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** Read the nonce a `use_dpop_nonce` challenge carries; a missing, doubled or malformed header is a hard failure. */
export function challengeNonce(res: HttpResponse, where: string): string {
  const value = res.headers.get('dpop-nonce');
  if (value === null) throw new SingpassFlowsError('DPOP_FAILED', `The ${where} asked for a DPoP nonce but sent none`, { status: res.status });
  // Two DPoP-Nonce headers are joined by fetch as "a, b": the space is outside NQCHAR, so this also catches them.
  if (!NQCHAR.test(value)) throw new SingpassFlowsError('DPOP_FAILED', `The ${where} sent a malformed DPoP nonce`, { status: res.status });
  return value;
}

/** True for an AS nonce challenge (400 `use_dpop_nonce`, RFC 9449 §8). */
export function isAsNonceChallenge(res: HttpResponse): boolean {
  if (res.status !== 400) return false;
  try {
    return (JSON.parse(res.body.toString('utf8')) as { error?: unknown })?.error === 'use_dpop_nonce';
  } catch {
    return false;
  }
}

/** True for a resource-server nonce challenge (401 + `WWW-Authenticate: DPoP error="use_dpop_nonce"`, scheme any case). */
export function isRsNonceChallenge(res: HttpResponse): boolean {
  if (res.status !== 401) return false;
  const challenge = res.headers.get('www-authenticate') ?? '';
  return /(^|,)\s*dpop\b/i.test(challenge) && /error\s*=\s*"?use_dpop_nonce"?/i.test(challenge);
}

/**
 * Send a DPoP-protected request; on a nonce challenge retry exactly once with the new nonce and a fresh proof
 * (and, via `build`, fresh client assertion). A second challenge is a typed failure, never a loop.
 */
export async function withDpopNonceRetry(
  url: string,
  nonces: DpopNonces,
  where: string,
  send: (nonce: string | undefined) => Promise<HttpResponse>,
  isChallenge: (res: HttpResponse) => boolean,
): Promise<HttpResponse> {
  let res = await send(nonces.get(url));
  if (isChallenge(res)) {
    const nonce = challengeNonce(res, where);
    res = await send(nonce);
    if (isChallenge(res)) throw new SingpassFlowsError('DPOP_FAILED', `The ${where} asked for a new DPoP nonce again after a retry; giving up`, { status: res.status });
  }
  nonces.remember(url, res);
  return res;
}

