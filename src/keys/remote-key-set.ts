import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { JWK, JWSHeaderParameters } from 'jose';
import { SingpassFlowsError } from '../errors';
import { DEFAULT_TIMEOUT_MS, httpRequest, parseJsonBody, requireHttpsUrl, safeUrl, type Fetch } from '../http';
import { checkNumberSetting, checkTimeoutMs } from '../settings';
import { systemClock, type Clock } from '../clock';

export interface RemoteKeySetOptions {
  fetch?: Fetch;
  clock?: Clock;
  /** Never keep the set for less than this (the services require ≥ 1 h). */
  minCacheSeconds?: number;
  /** Never keep the set longer than this, whatever Cache-Control says. */
  maxCacheSeconds?: number;
  /** Minimum time between two fetches triggered by unknown kids / failed signatures (flood protection). */
  refetchCooldownSeconds?: number;
  /**
   * How long past its cache lifetime a set may still serve while the key host cannot be reached (default 24 h; 0:
   * never). Without it, an outage of the key host longer than the cache would refuse every token, even those signed
   * by a key the set holds. Refetches are tried again at most once a minute meanwhile.
   */
  staleIfErrorSeconds?: number;
  timeoutMs?: number;
  /** Name of the setting that holds the URL, for error messages (default `keySetUrl`). */
  field?: string;
}

/** How often a key host that failed is tried again while an expired set still serves (staleIfErrorSeconds). */
const STALE_RETRY_MS = 60_000;

/** alg (from the allow-list, so never containing a space) and kid; a missing kid is not the kid "undefined". */
const importedKey = (header: JWSHeaderParameters): string => header.kid === undefined ? String(header.alg) : `${header.alg} ${header.kid}`;

const SIGNING_KTY: Record<string, { kty: string; crv?: string }> = {
  ES256: { kty: 'EC', crv: 'P-256' },
  ES384: { kty: 'EC', crv: 'P-384' },
  ES512: { kty: 'EC', crv: 'P-521' },
  RS256: { kty: 'RSA' },
  PS256: { kty: 'RSA' },
};

/**
 * A service's published key set (JWKS), cached as a whole as the services require: kept ≥ 1 h (longer when
 * Cache-Control says so), keys chosen by `kid` only, one refetch when a kid is unknown or a signature fails (key
 * rotation), concurrent callers share one fetch, and refetches are rate-limited so a flood of tokens with made-up
 * kids cannot make us hammer the service. A failed refresh keeps a still-valid cached set, and an expired one for
 * `staleIfErrorSeconds` more (RFC 5861 stale-if-error).
 */
export class RemoteKeySet {
  readonly url: string;
  private readonly opts: Required<Omit<RemoteKeySetOptions, 'fetch' | 'field'>> & { fetch?: Fetch };
  private keys: JWK[] | undefined;
  /**
   * Keys already imported, by alg and kid, for the CURRENT set only (cleared when a set is loaded): importing a JWK
   * costs more than verifying an ES256 signature, and jose caches its own conversion per KeyObject instance.
   */
  private imported = new Map<string, KeyObject>();
  private lastRefetchAt = -Infinity;
  private expiresAt = -Infinity;
  /** While serving an expired set because the key host failed: no new attempt before this time. */
  private staleRetryAt = -Infinity;
  private inflight: Promise<void> | undefined;
  /** Number of HTTP fetches made (for tests and metrics). */
  fetchCount = 0;

  /** Settings are checked here, each error naming its setting: https, or plain http on 127.0.0.1 (the sandbox). */
  constructor(url: string, options: RemoteKeySetOptions = {}) {
    const field = options.field ?? 'keySetUrl';
    requireHttpsUrl(field, url, { allowLoopbackHttp: true, example: 'https://static.staging.sign.singpass.gov.sg/.well-known/keys.json' });
    const seconds = (name: string, value: unknown) => checkNumberSetting(name, value, { min: 0, max: 7 * 24 * 3600, unit: 'seconds' });
    this.url = url;
    this.opts = {
      fetch: options.fetch,
      clock: options.clock ?? systemClock,
      minCacheSeconds: seconds('minCacheSeconds', options.minCacheSeconds) ?? 3600,
      maxCacheSeconds: seconds('maxCacheSeconds', options.maxCacheSeconds) ?? 24 * 3600,
      refetchCooldownSeconds: seconds('refetchCooldownSeconds', options.refetchCooldownSeconds) ?? 30,
      staleIfErrorSeconds: seconds('staleIfErrorSeconds', options.staleIfErrorSeconds) ?? 24 * 3600,
      timeoutMs: checkTimeoutMs('timeoutMs', options.timeoutMs) ?? DEFAULT_TIMEOUT_MS,
    };
  }

  /** The key to verify a JWS with this protected header; refetches once (rate-limited) when the kid is unknown. */
  getKey(header: JWSHeaderParameters): KeyObject | Promise<KeyObject> {
    // Every webhook delivery comes here: a fresh set and a key already imported are answered without a promise.
    const cached = this.keys && this.opts.clock() < this.expiresAt ? this.imported.get(importedKey(header)) : undefined;
    return cached ?? this.findKey(header);
  }

  private async findKey(header: JWSHeaderParameters): Promise<KeyObject> {
    await this.ensureFresh();
    const cacheKey = importedKey(header);
    const cached = this.imported.get(cacheKey);
    if (cached) return cached;
    let jwk = this.select(header);
    if (!jwk && (await this.refreshIfAllowed())) jwk = this.select(header);
    if (!jwk) {
      throw new SingpassFlowsError('KEY_NOT_FOUND', header.kid === undefined
        ? `The token names no key (kid) and the key set at ${safeUrl(this.url)} has no single matching key`
        : `No key with kid ${JSON.stringify(String(header.kid).slice(0, 80))} for ${header.alg} in the key set at ${safeUrl(this.url)}`, { kid: header.kid });
    }
    let key: KeyObject;
    try {
      key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
    } catch (e) {
      throw new SingpassFlowsError('KEY_SET_INVALID', `Key "${jwk.kid}" in ${safeUrl(this.url)} cannot be read`, {}, { cause: e });
    }
    this.imported.set(cacheKey, key); // no await since select(): this.keys is the set the key came from
    return key;
  }

  /**
   * Refetch now unless one happened within the cooldown; returns whether a fresh set was loaded. Used after a
   * signature failure (the service may have rotated and reused nothing but the kid).
   */
  async refreshIfAllowed(): Promise<boolean> {
    if (this.inflight) {
      await this.inflight;
      return true;
    }
    // The cooldown counts from the last on-demand refetch, not from the routine load: a rotation right after the
    // set was loaded (e.g. between the two webhooks of one session, milliseconds apart) still gets its one
    // refetch — refusing it would lose the signature notification — while a flood of unknown kids costs at most
    // the routine load + one refetch per cooldown.
    const now = this.opts.clock();
    if (now - this.lastRefetchAt < this.opts.refetchCooldownSeconds * 1000) return false;
    this.lastRefetchAt = now;
    try {
      await this.load();
      return true;
    } catch (e) {
      if (this.keys && this.opts.clock() < this.expiresAt) return false; // keep the valid cached set
      throw e;
    }
  }

  /**
   * Load the set now unless a fresh one is cached (a routine load: it does not use the refetch budget). Webhook
   * receivers call it at start-up so the first delivery is answered within the service's short timeout.
   */
  async prefetch(): Promise<void> {
    await this.ensureFresh();
  }

  private async ensureFresh(): Promise<void> {
    const now = this.opts.clock();
    if (this.keys && now < this.expiresAt) return;
    if (this.keys && now < this.staleRetryAt) return; // the key host failed moments ago: the stale set serves meanwhile
    try {
      await this.load();
    } catch (e) {
      if (!this.keys || now >= this.expiresAt + this.opts.staleIfErrorSeconds * 1000) throw e;
      this.staleRetryAt = now + STALE_RETRY_MS;
    }
  }

  private load(): Promise<void> {
    if (!this.inflight) {
      this.inflight = this.fetchSet().finally(() => {
        this.inflight = undefined;
      });
    }
    return this.inflight;
  }

  private async fetchSet(): Promise<void> {
    this.fetchCount++;
    const now = this.opts.clock();
    const res = await httpRequest(this.url, { method: 'GET', headers: { accept: 'application/jwk-set+json, application/json' } }, { fetch: this.opts.fetch, timeoutMs: this.opts.timeoutMs });
    if (res.status !== 200) {
      throw new SingpassFlowsError('KEY_SET_FETCH_FAILED', `The key set at ${safeUrl(this.url)} answered HTTP ${res.status}`, { status: res.status, retryable: res.status >= 500 });
    }
    const body = parseJsonBody(res, `The key set at ${safeUrl(this.url)}`) as { keys?: unknown };
    if (!body || typeof body !== 'object' || !Array.isArray(body.keys)) {
      throw new SingpassFlowsError('KEY_SET_INVALID', `The key set at ${safeUrl(this.url)} has no "keys" array`);
    }
    const keys = body.keys.filter((k): k is JWK => !!k && typeof k === 'object');
    if (keys.some((k) => 'd' in k || 'p' in k || 'k' in k)) {
      // A published private key means the publisher is broken or hostile; trust nothing from it.
      throw new SingpassFlowsError('KEY_SET_INVALID', `The key set at ${safeUrl(this.url)} contains private key material; refusing it`);
    }
    this.keys = keys;
    this.imported = new Map();
    this.expiresAt = now + this.cacheSeconds(res.headers.get('cache-control')) * 1000;
  }

  private cacheSeconds(cacheControl: string | null): number {
    const maxAge = /(?:^|,)\s*max-age\s*=\s*(\d+)/i.exec(cacheControl ?? '');
    const advertised = maxAge ? Number(maxAge[1]) : 0;
    return Math.min(Math.max(advertised, this.opts.minCacheSeconds), this.opts.maxCacheSeconds);
  }

  /**
   * Choose by kid (never by position). Keys for encryption or without `verify` in key_ops are never used; among
   * keys sharing a kid only one matching the header's alg (kty/crv) qualifies. No kid: exactly one candidate.
   */
  private select(header: JWSHeaderParameters): JWK | undefined {
    const want = SIGNING_KTY[header.alg ?? ''];
    if (!want || !this.keys) return undefined;
    const candidates = this.keys.filter((k) =>
      k.kty === want.kty &&
      (want.crv === undefined || k.crv === want.crv) &&
      (k.use === undefined || k.use === 'sig') &&
      (k.key_ops === undefined || k.key_ops.includes('verify')) &&
      (k.alg === undefined || k.alg === header.alg) &&
      (header.kid === undefined || k.kid === header.kid));
    return candidates.length === 1 ? candidates[0] : undefined;
  }
}
