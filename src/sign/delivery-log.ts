import { systemClock, type Clock } from '../clock';

/**
 * Remembers webhook deliveries already handled, so a retried or doubled delivery is acknowledged but not acted on
 * twice. Pluggable: adapters with several workers back it with a shared store; `remember` must be atomic there.
 */
export interface DeliveryLog {
  /** Record `key` until `expiresAtMs`; resolve `true` the first time, `false` if it was already recorded. */
  remember(key: string, expiresAtMs: number): boolean | Promise<boolean>;
}

/** In-process {@link DeliveryLog} with expiry and a size cap (oldest entries dropped first). */
export class MemoryDeliveryLog implements DeliveryLog {
  private readonly entries = new Map<string, number>();

  constructor(private readonly options: { clock?: Clock; maxEntries?: number } = {}) {}

  remember(key: string, expiresAtMs: number): boolean {
    const now = (this.options.clock ?? systemClock)();
    const until = this.entries.get(key);
    if (until !== undefined && until > now) return false;
    this.entries.delete(key);
    this.entries.set(key, expiresAtMs);
    this.prune(now);
    return true;
  }

  get size(): number {
    return this.entries.size;
  }

  private prune(now: number): void {
    for (const [k, until] of this.entries) if (until <= now) this.entries.delete(k);
    const max = this.options.maxEntries ?? 10_000;
    for (const k of this.entries.keys()) {
      if (this.entries.size <= max) break;
      this.entries.delete(k);
    }
  }
}
