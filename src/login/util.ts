import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { invalidInput } from '../errors';

/** 256 bits from the CSPRNG, base64url (43 characters: ≥ 30 as Singpass asks for nonces, ≤ 64 as FAPI limits them). */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

export function sha256b64url(value: string): string {
  return createHash('sha256').update(value, 'ascii').digest('base64url');
}

/** PKCE S256 (the only method offered: `plain` cannot be configured). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomToken();
  return { verifier, challenge: sha256b64url(verifier) };
}

/** Constant-time string equality (compares SHA-256 digests, so lengths may differ). */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db) && a.length === b.length;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Check a configured URL: https only, except http on a loopback host when `allowInsecureLoopback` is set (the local
 * sandbox demo). Custom schemes are refused (Singpass no longer accepts them).
 */
export function checkUrl(field: string, value: unknown, allowInsecureLoopback = false): URL {
  if (typeof value !== 'string' || !value) throw invalidInput(field, 'a URL is required');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidInput(field, `"${value}" is not a valid URL`);
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && allowInsecureLoopback && LOOPBACK.has(url.hostname)) return url;
  throw invalidInput(field, url.protocol === 'http:'
    ? 'must use https (http is allowed only for 127.0.0.1/localhost with allowInsecureLoopback, for the local sandbox)'
    : `must be an https URL (custom schemes like "${url.protocol}" are not accepted)`);
}

/** Space-separated scopes, validated (RFC 6749 scope-token characters), deduplicated, with `openid` always included. */
export function normaliseScope(scope: string | undefined): string {
  if (scope !== undefined && typeof scope !== 'string') throw invalidInput('scope', 'a space-separated list of scopes');
  const parts = (scope ?? 'openid').split(/\s+/).filter(Boolean);
  if (parts.some((p) => !/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(p))) throw invalidInput('scope', 'contains characters not allowed in a scope');
  if (!parts.includes('openid')) parts.unshift('openid');
  return [...new Set(parts)].join(' ');
}
