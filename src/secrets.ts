import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Constant-time string equality for secrets and protocol values (Bearer tokens, state, nonce, iss). Compares
 * SHA-256 digests, so neither the content nor the length of the expected value leaks through timing.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  // one-shot crypto.hash: half the cost of createHash().update().digest() on the webhook's hot path
  const da = hash('sha256', a, 'buffer');
  const db = hash('sha256', b, 'buffer');
  return timingSafeEqual(da, db);
}

/**
 * 256 bits from the CSPRNG as base64url (43 characters): notification tokens, state, nonce, PKCE verifiers, DPoP
 * `jti`s — ≥ 30 characters as Singpass asks for nonces, ≤ 64 as FAPI limits them.
 */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}
