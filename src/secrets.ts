import { hash, randomBytes } from 'node:crypto';

/**
 * Constant-time string equality for secrets and protocol values (Bearer tokens, state, nonce, iss). Compares
 * SHA-256 digests, so neither the content nor the length of the expected value leaks through timing.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  // one-shot crypto.hash to strings, compared without an early exit: a third of the cost of hashing to Buffers for
  // timingSafeEqual (this runs on every webhook delivery); both digests always have the same length
  const da = hash('sha256', a, 'base64');
  const db = hash('sha256', b, 'base64');
  let diff = 0;
  for (let i = 0; i < da.length; i++) diff |= da.charCodeAt(i) ^ db.charCodeAt(i);
  return diff === 0;
}

/**
 * 256 bits from the CSPRNG as base64url (43 characters): notification tokens, state, nonce, PKCE verifiers, DPoP
 * `jti`s — ≥ 30 characters as Singpass asks for nonces, ≤ 64 as FAPI limits them.
 */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}
