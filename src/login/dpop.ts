import { createECDH, createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT, type JWK } from 'jose';
import { SingpassFlowsError } from '../errors';
import type { HttpResponse } from '../http';
import { epochSeconds } from '../clock';
import { sha256b64url } from './util';
import { randomToken } from '../secrets';
import { DPOP_PROOF_LIFETIME_SECONDS } from './wire';

/** A per-login DPoP key (P-256, ES256). Serialised into the transaction as a private JWK. */
export function generateDpopKey(): JWK {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' }) as JWK;
  return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, d: jwk.d };
}

export interface DpopKey { privateKey: KeyObject; publicJwk: JWK }

/** The transaction's DPoP key as keys; anything else than a P-256 private JWK is `LOGIN_STATE_INVALID`. */
export function importDpopKey(jwk: unknown): DpopKey {
  const unusable = () => new SingpassFlowsError('LOGIN_STATE_INVALID', 'The login transaction has no usable DPoP key; start the login again');
  const k = jwk as JWK | null | undefined;
  if (!k || typeof k !== 'object' || k.kty !== 'EC' || k.crv !== 'P-256' || typeof k.d !== 'string' || typeof k.x !== 'string' || typeof k.y !== 'string') throw unusable();
  let privateKey: KeyObject;
  try {
    // node:crypto takes x/y as given: derive them from d, or a mismatch shows only as proofs the provider refuses.
    const d = Buffer.from(k.d, 'base64url');
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(d);
    const point = ecdh.getPublicKey();
    if (d.length !== 32 || point.subarray(1, 33).toString('base64url') !== k.x || point.subarray(33).toString('base64url') !== k.y) throw unusable();
    privateKey = createPrivateKey({ key: { kty: 'EC', crv: 'P-256', x: k.x, y: k.y, d: k.d }, format: 'jwk' });
  } catch {
    throw unusable();
  }
  return { privateKey, publicJwk: { kty: 'EC', crv: 'P-256', x: k.x, y: k.y } };
}

/**
 * RFC 9449 §4 proof: htu without query/fragment, fresh jti, `iat` and `exp` (Singpass: exp ≤ iat + 120 s), `ath`
 * only for resource calls, nonce when known.
 */
export async function dpopProof(key: DpopKey, method: string, url: string, clock: () => number, opts: { nonce?: string; accessToken?: string } = {}): Promise<string> {
  const u = new URL(url);
  const iat = epochSeconds(clock);
  const claims: Record<string, unknown> = { htm: method, htu: `${u.origin}${u.pathname}`, jti: randomToken(), iat, exp: iat + DPOP_PROOF_LIFETIME_SECONDS };
  if (opts.nonce) claims.nonce = opts.nonce;
  if (opts.accessToken) claims.ath = sha256b64url(opts.accessToken);
  return new SignJWT(claims).setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.publicJwk }).sign(key.privateKey);
}

/**
 * DPoP nonces per origin (RFC 9449 §8/§9): an AS nonce is never sent to another origin, and the last nonce a server
 * gave (on a challenge or on any response) is sent on the next request there, so a server that keeps its nonces
 * valid is challenged once, not on every call. Bounded: the least recently used origin is forgotten first.
 */
export class DpopNonces {
  private readonly byOrigin = new Map<string, string>();
  constructor(private readonly maxOrigins = 100) {}
  get(url: string): string | undefined {
    const origin = new URL(url).origin;
    const value = this.byOrigin.get(origin);
    if (value !== undefined) {
      this.byOrigin.delete(origin);
      this.byOrigin.set(origin, value);
    }
    return value;
  }
  set(url: string, value: string): void {
    const origin = new URL(url).origin;
    this.byOrigin.delete(origin);
    this.byOrigin.set(origin, value);
    if (this.byOrigin.size > this.maxOrigins) this.byOrigin.delete(this.byOrigin.keys().next().value!);
  }
  /** Remember a nonce a server sent on any response; a malformed one is ignored here (rejected on challenges). */
  remember(url: string, res: HttpResponse): void {
    const value = res.headers.get('dpop-nonce');
    if (value !== null && NQCHAR.test(value)) this.set(url, value);
  }
}

/**
 * Shared by every client of the process (like the discovery and key-set caches): workflow engines build a client
 * per execution, and a nonce learnt by one execution saves the next one a round trip. Nonces are not secrets.
 */
export const sharedDpopNonces = new DpopNonces();

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
    // Kept for later requests to this origin even if the answer below carries no new one.
    nonces.set(url, nonce);
    res = await send(nonce);
    if (isChallenge(res)) throw new SingpassFlowsError('DPOP_FAILED', `The ${where} asked for a new DPoP nonce again after a retry; giving up`, { status: res.status });
  }
  nonces.remember(url, res);
  return res;
}

