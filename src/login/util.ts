import { createHash } from 'node:crypto';
import { randomToken } from '../secrets';
import { invalidInput } from '../errors';
import type { Fetch, HttpResponse } from '../http';
import type { Clock } from '../clock';

/** The HTTP function, clock and timeout of the client making a call (shared caches use the caller's). */
export interface ProviderIo {
  fetch?: Fetch;
  clock?: Clock;
  timeoutMs?: number;
}

/** How long to keep a provider document: Cache-Control max-age, but at least `minSeconds` and at most a day. */
export function cacheLifetimeSeconds(res: HttpResponse, minSeconds: number): number {
  const maxAge = /(?:^|,)\s*max-age\s*=\s*(\d+)/i.exec(res.headers.get('cache-control') ?? '');
  return Math.min(Math.max(maxAge ? Number(maxAge[1]) : 0, minSeconds), 24 * 3600);
}


export function sha256b64url(value: string): string {
  return createHash('sha256').update(value, 'ascii').digest('base64url');
}

/** PKCE S256 (the only method offered: `plain` cannot be configured). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomToken();
  return { verifier, challenge: sha256b64url(verifier) };
}

/** Space-separated scopes, validated (RFC 6749 scope-token characters), deduplicated, with `openid` always included. */
export function normaliseScope(scope: string | undefined): string {
  if (scope !== undefined && typeof scope !== 'string') throw invalidInput('scope', 'a space-separated list of scopes');
  const parts = (scope ?? 'openid').split(/\s+/).filter(Boolean);
  if (parts.some((p) => !/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(p))) throw invalidInput('scope', 'contains characters not allowed in a scope');
  if (!parts.includes('openid')) parts.unshift('openid');
  return [...new Set(parts)].join(' ');
}
