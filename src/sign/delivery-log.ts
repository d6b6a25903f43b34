import { systemClock, type Clock } from '../clock';

/**
 * Remembers webhook deliveries already handled, so a retried or doubled delivery is acknowledged but not acted on
 * twice. Pluggable: adapters with several workers back it with a shared store; `remember` must be atomic there.
 */
export interface DeliveryLog {
  /** Record `key` until `expiresAtMs`; resolve `true` the first time, `false` if it was already recorded. */
  remember(key: string, expiresAtMs: number): boolean | Promise<boolean>;
}

/**
 * In-process {@link DeliveryLog} with expiry and a size cap (oldest entries dropped first). Entries are kept in
 * insertion order, which is expiry order when every entry gets the same window (as the webhook verifier does), so
 * pruning only looks at the oldest entries: amortised O(1) per delivery instead of a scan of the whole log. An entry
 * with an earlier expiry queued behind a later one is still refused as expired by the lookup, and the cap bounds
 * what it costs until it reaches the head.
 */
export class MemoryDeliveryLog implements DeliveryLog {
  private readonly entries = new Map<string, number>();
  private readonly clock: Clock;
  private readonly maxEntries: number;

  constructor(options: { clock?: Clock; maxEntries?: number } = {}) {
    this.clock = options.clock ?? systemClock;
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  remember(key: string, expiresAtMs: number): boolean {
    const now = this.clock();
    const until = this.entries.get(key);
    if (until !== undefined && until > now) return false;
    this.entries.delete(key); // re-inserted at the tail: its new expiry is the latest
    this.entries.set(key, expiresAtMs);
    this.prune(now);
    return true;
  }

  get size(): number {
    return this.entries.size;
  }

  private prune(now: number): void {
    for (const [k, until] of this.entries) {
      if (until > now && this.entries.size <= this.maxEntries) break;
      this.entries.delete(k);
    }
  }
}
