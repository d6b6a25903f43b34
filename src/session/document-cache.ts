/**
 * PDFs this process wrote or read lately, each with the version the store gave it (PostgreSQL: the row's
 * `written_at`), so that a later step asks the store only whether the version is still the same instead of reading
 * the whole PDF back. The store stays the truth: an entry whose version the store no longer has is never served, and
 * every step still checks the PDF it is handed against its record. Bounded in bytes and in age.
 */
export interface DocumentCacheOptions {
  /** Bytes of PDFs kept at most (oldest use out first); 0 turns the cache off. */
  maxBytes?: number;
  /** An entry unused this long is dropped (ms): a session's PDF is not kept in memory long after its steps. */
  maxIdleMs?: number;
  now?: () => number;
}

export const DOCUMENT_CACHE_DEFAULTS = { maxBytes: 64 * 1024 * 1024, maxIdleMs: 15 * 60_000 } as const;

interface Entry {
  pdf: Buffer;
  version: string;
  usedAt: number;
}

export class DocumentCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private readonly maxBytes: number;
  private readonly maxIdleMs: number;
  private readonly now: () => number;

  constructor(options: DocumentCacheOptions = {}) {
    this.maxBytes = options.maxBytes ?? DOCUMENT_CACHE_DEFAULTS.maxBytes;
    this.maxIdleMs = options.maxIdleMs ?? DOCUMENT_CACHE_DEFAULTS.maxIdleMs;
    this.now = options.now ?? Date.now;
  }

  /** The kept PDF of `key` when it is at `version`; an entry at another version is dropped. */
  get(key: string, version: string): Buffer | undefined {
    this.dropIdle();
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.drop(key, e);
    if (e.version !== version) return undefined;
    e.usedAt = this.now();
    this.entries.set(key, e); // most recently used last
    this.bytes += e.pdf.length;
    return e.pdf;
  }

  /** The version kept for `key`, if any (what to ask the store about). */
  versionOf(key: string): string | undefined {
    this.dropIdle();
    return this.entries.get(key)?.version;
  }

  set(key: string, version: string, pdf: Buffer): void {
    this.delete(key);
    if (pdf.length > this.maxBytes) return;
    this.entries.set(key, { pdf, version, usedAt: this.now() });
    this.bytes += pdf.length;
    for (const [k, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(k, e);
    }
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (e) this.drop(key, e);
  }

  /** Bytes held now (tests, diagnostics). */
  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  private dropIdle(): void {
    const cutoff = this.now() - this.maxIdleMs;
    for (const [k, e] of this.entries) {
      if (e.usedAt > cutoff) break; // in order of last use
      this.drop(k, e);
    }
  }

  private drop(key: string, e: Entry): void {
    this.entries.delete(key);
    this.bytes -= e.pdf.length;
  }
}
