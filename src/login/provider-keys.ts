import type { KeyObject } from 'node:crypto';
import type { JWSHeaderParameters } from 'jose';
import { SingpassFlowsError, isSingpassFlowsError } from '../errors';
import { httpRequest, safeUrl, type HttpResponse } from '../http';
import { systemClock } from '../clock';
import { RemoteKeySet, type KeySource } from '../keys';
import { cacheLifetimeSeconds, type ProviderIo } from './util';

export interface ProviderKeySetOptions {
  /** Keep a loaded set at least this long (the services require ≥ 1 h; longer when Cache-Control says so). */
  minCacheSeconds?: number;
  /** A kid already missing from the current set is looked up again only after this long (default 30 s). */
  missingKidCooldownSeconds?: number;
  /** At most one on-demand refetch per this many ms, whatever arrives (default 2000): the bound under a flood. */
  refetchSpacingMs?: number;
}

/** How many missing kids are remembered between two fetches (a flood beyond it only meets the spacing bound). */
const MAX_REMEMBERED_MISSES = 1000;

/**
 * A provider's signing keys (JWKS), shared by every client of the process whatever HTTP function each passes:
 * the fetch of the caller that needs a load performs it. The set is kept ≥ 1 h; when a token names a kid the set
 * does not have, the set is refetched so a key rotation never fails a login:
 *
 * - a kid not looked up since the last fetch (a rotation, or the first sight of a bogus kid) → refetch now;
 * - a kid already missing from the current set → refetch only once the cooldown has passed since that fetch;
 * - whatever the mix, at most one on-demand refetch per `refetchSpacingMs`: a lookup that arrives sooner waits
 *   for the next slot (all waiters share one fetch) instead of failing. So a flood of made-up kids costs the
 *   provider one request per spacing, and a genuine rotation during the flood waits at most that long — never the
 *   cooldown-long blackout a plain "one refetch per 30 s" limit causes.
 *
 * A failed refetch keeps the cached set for tokens it can verify, and reports the provider fault itself
 * (KEY_SET_FETCH_FAILED / KEY_SET_INVALID) to the lookup that needed it: the same broken answer gives the same code
 * with a cold or a warm cache. Parsing and key selection are RemoteKeySet's (one rule, one place): each fetched
 * document is held in a RemoteKeySet that never goes to the network.
 */
export class ProviderKeySet {
  readonly url: string;
  private snapshot: RemoteKeySet | undefined;
  /** When the fetch that produced `snapshot` started (a kid is "missing" only from a set fetched after it was asked for). */
  private snapshotFetchStartedAt = -Infinity;
  private expiresAt = -Infinity;
  private lastFetchAt = -Infinity;
  private lastOnDemandAt = -Infinity;
  private missing = new Set<string>();
  private inflight: Promise<void> | undefined;
  private inflightStartedAt = -Infinity;
  private scheduled: Promise<void> | undefined;
  private readonly minCacheSeconds: number;
  private readonly cooldownMs: number;
  private readonly spacingMs: number;
  /** HTTP fetches made (tests and metrics). */
  fetchCount = 0;

  constructor(url: string, options: ProviderKeySetOptions = {}) {
    this.url = url;
    this.minCacheSeconds = options.minCacheSeconds ?? 3600;
    this.cooldownMs = (options.missingKidCooldownSeconds ?? 30) * 1000;
    this.spacingMs = options.refetchSpacingMs ?? 2000;
  }

  /** The calls `verifyJwsWithKeySet` makes, bound to one caller's HTTP function and clock. */
  view(io: ProviderIo): KeySource {
    return { getKey: (header) => this.getKey(header, io), refreshIfAllowed: () => this.refreshAfterBadSignature(io) };
  }

  async getKey(header: JWSHeaderParameters, io: ProviderIo): Promise<KeyObject> {
    const clock = io.clock ?? systemClock;
    if (!this.snapshot || clock() >= this.expiresAt) await this.load(io, false);
    const kid = header.kid ?? '';
    const askedAt = clock();
    try {
      return await this.snapshot!.getKey(header);
    } catch (e) {
      if (!isSingpassFlowsError(e) || e.code !== 'KEY_NOT_FOUND') throw e;
      if (!(await this.refetchForUnknownKid(kid, io, askedAt))) throw e;
    }
    const snapshot = this.snapshot!;
    const fetchedAfterAsking = this.snapshotFetchStartedAt >= askedAt;
    try {
      return await snapshot.getKey(header);
    } catch (e) {
      // Remember the kid as missing only if the set it was checked against was fetched after it was asked for (a
      // fetch already under way when a rotation happened may predate it) and is still the current one.
      if (isSingpassFlowsError(e) && e.code === 'KEY_NOT_FOUND' && fetchedAfterAsking && snapshot === this.snapshot && this.missing.size < MAX_REMEMBERED_MISSES) this.missing.add(kid);
      throw e;
    }
  }

  /** Reload now (the public refresh); a failure keeps the cached set and is reported. */
  async reload(io: ProviderIo): Promise<void> {
    await this.load(io, false, true);
  }

  /** Returns whether a refetch was made (or joined); a failed one throws the provider fault. */
  private async refetchForUnknownKid(kid: string, io: ProviderIo, askedAt: number): Promise<boolean> {
    if (this.inflight) {
      const joinedStartedAt = this.inflightStartedAt;
      await this.inflight;
      // A fetch that started before the kid was asked for may predate a rotation: then take a slot of our own.
      if (joinedStartedAt >= askedAt) return true;
      // (read again: TS keeps the narrowing across the await, but another call may have cleared or replaced it)
      if (this.inflight !== undefined) {
        await this.inflight;
        return true;
      }
    }
    const now = (io.clock ?? systemClock)();
    if (this.missing.has(kid) && now - this.lastFetchAt < this.cooldownMs) return false;
    const wait = this.lastOnDemandAt + this.spacingMs - now;
    if (wait > 0) {
      this.scheduled ??= new Promise<void>((resolve) => setTimeout(resolve, wait))
        .then(() => this.load(io, true))
        .finally(() => { this.scheduled = undefined; });
      await this.scheduled;
      return true;
    }
    await this.load(io, true);
    return true;
  }

  /**
   * After a signature failure with a key we have (the provider may have replaced a key under the same kid): one
   * refetch per cooldown. A failed refetch is reported like any other.
   */
  private async refreshAfterBadSignature(io: ProviderIo): Promise<boolean> {
    if (this.inflight) {
      await this.inflight;
      return true;
    }
    if ((io.clock ?? systemClock)() - this.lastOnDemandAt < this.cooldownMs) return false;
    await this.load(io, true);
    return true;
  }

  private load(io: ProviderIo, onDemand: boolean, force = false): Promise<void> {
    if (onDemand) this.lastOnDemandAt = (io.clock ?? systemClock)();
    if (this.inflight && !force) return this.inflight;
    this.inflightStartedAt = (io.clock ?? systemClock)();
    const run = this.fetchSet(io).finally(() => {
      if (this.inflight === run) this.inflight = undefined;
    });
    this.inflight = run;
    return run;
  }

  private async fetchSet(io: ProviderIo): Promise<void> {
    const clock = io.clock ?? systemClock;
    this.fetchCount++;
    const started = clock();
    let res: HttpResponse;
    try {
      res = await httpRequest(this.url, { method: 'GET', headers: { accept: 'application/jwk-set+json, application/json' } }, { fetch: io.fetch, timeoutMs: io.timeoutMs });
    } catch (e) {
      // Transport faults (network, timeout, a redirect) are key-set fetch failures, like an HTTP error status.
      throw new SingpassFlowsError('KEY_SET_FETCH_FAILED', `Cannot read the provider key set: ${(e as Error).message}`, { url: safeUrl(this.url), retryable: true }, { cause: e });
    } finally {
      this.lastFetchAt = clock();
    }
    if (res.status !== 200) {
      throw new SingpassFlowsError('KEY_SET_FETCH_FAILED', `The key set at ${safeUrl(this.url)} answered HTTP ${res.status}`, { status: res.status, retryable: res.status >= 500 });
    }
    // Parse and check the document now, so a broken answer never replaces a good cached set.
    const body = res.body;
    const snapshot = new RemoteKeySet(this.url, {
      fetch: async () => new Response(new Uint8Array(body), { status: res.status, headers: res.headers }),
      clock: () => 0, // a snapshot never expires; freshness is decided here
    });
    try {
      await snapshot.prefetch();
    } catch (e) {
      if (isSingpassFlowsError(e) && e.code === 'HTTP_UNEXPECTED_RESPONSE') {
        throw new SingpassFlowsError('KEY_SET_INVALID', `The key set at ${safeUrl(this.url)} is not JSON (HTTP ${res.status})`, { status: res.status }, { cause: e });
      }
      throw e;
    }
    this.snapshot = snapshot;
    this.snapshotFetchStartedAt = started;
    this.missing = new Set();
    this.expiresAt = started + cacheLifetimeSeconds(res, this.minCacheSeconds) * 1000;
  }
}
