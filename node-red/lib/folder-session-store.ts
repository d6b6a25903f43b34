/**
 * The Node-RED signing nodes' default store (one Node-RED): the core's {@link FileSessionStore} in a folder of the
 * user directory (`<userDir>/singpass-sessions` unless the client config names another). Every record, PDF and kept
 * webhook delivery is written through (temporary file, fsync, rename) before the call returns, so a Node-RED killed
 * right after its webhook answered 200 loses nothing — whatever settings.js says about context storage.
 * Compare-and-set and "is this delivery fresh?" hold across processes on the host (lock files, hard links).
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { SingpassFlowsError } from '../../src/errors';
import { FileSessionStore, fileStoreError, nextStep, type KeptDelivery, type NextStepPolicy, type SessionAction, type SessionRecord, type VerifiedDelivery } from '../../src/session';
import type { SigningEvent } from '../../src/sign';
import { DEFAULT_IDLE_MS, type SignSessionStore } from './session-store';

const CLEAN_UP_EVERY_MS = 3600 * 1000;
/** How the core's folder store names a session's signed PDF (`putSignedDocument`). */
const SIGNED_SUFFIX = '-signed.pdf';

export class FolderNodeRedStore implements SignSessionStore {
  readonly shared = false;
  readonly idleMs = DEFAULT_IDLE_MS;
  readonly files: FileSessionStore;
  private readonly retentionMs: number;
  /** Work that must end before the first use (the one-time import of sessions an older version kept in context). */
  private readonly ready: Promise<void>;
  private lastCleanUp = 0;
  /**
   * The last record the sweep read per sign_ref, with its file's inode, mtime and size: every save renames a new file
   * into place, so an unchanged stamp is an unchanged record, and a sweep every 5 s over a day of ended sessions costs
   * a stat per file, not a read and parse. (A stale entry only delays a sweep action; each one saves with compare-and-set.)
   */
  private readonly seen = new Map<string, { stamp: string; record: SessionRecord }>();

  constructor(dir: string, options: { retentionMs: number; prepare?: (files: FileSessionStore) => Promise<void> }) {
    this.files = new FileSessionStore(dir);
    this.retentionMs = options.retentionMs;
    this.ready = (options.prepare?.(this.files) ?? Promise.resolve()).catch(() => undefined); // a failed import says so itself
  }

  get dir(): string {
    return this.files.dir;
  }

  get(signRef: string): Promise<SessionRecord | undefined> {
    return this.run('read a session record', () => this.files.get(signRef));
  }

  put(record: SessionRecord, expectedRevision: number | undefined): Promise<boolean> {
    return this.run('save a session record', () => this.files.put(record, expectedRevision));
  }

  delete(signRef: string): Promise<void> {
    return this.run('delete a session record', () => this.files.delete(signRef));
  }

  list(): Promise<string[]> {
    return this.run('list the sessions', () => this.files.list());
  }

  getDocument(signRef: string): Promise<Buffer | undefined> {
    return this.run('read a PDF being signed', () => this.files.getDocument(signRef));
  }

  putDocument(signRef: string, pdf: Buffer): Promise<void> {
    return this.run('save a PDF being signed', () => this.files.putDocument(signRef, pdf));
  }

  deleteDocument(signRef: string): Promise<void> {
    return this.run('delete a PDF being signed', () => this.files.deleteDocument(signRef));
  }

  putSignedDocument(signRef: string, pdf: Buffer): Promise<void> {
    return this.run('save a signed PDF', () => this.files.putSignedDocument(signRef, pdf));
  }

  getSignedDocument(signRef: string): Promise<Buffer | undefined> {
    return this.run('read a signed PDF', () => this.files.getSignedDocument(signRef));
  }

  rememberDelivery(delivery: VerifiedDelivery): Promise<boolean> {
    return this.run('keep a webhook delivery', () => this.files.rememberDelivery(delivery));
  }

  getDelivery(signRef: string, type: SigningEvent['type']): Promise<KeptDelivery | undefined> {
    return this.run('read a webhook delivery', () => this.files.getDelivery(signRef, type));
  }

  markDeliveryApplied(signRef: string, type: SigningEvent['type']): Promise<void> {
    return this.run('mark a webhook delivery applied', () => this.files.markDeliveryApplied(signRef, type));
  }

  pendingDeliveries(): Promise<Array<{ signRef: string; type: SigningEvent['type'] }>> {
    return this.run('list pending webhook deliveries', () => this.files.pendingDeliveries());
  }

  forgetDeliveries(signRef: string): Promise<void> {
    return this.run('forget webhook deliveries', () => this.files.forgetDeliveries(signRef));
  }

  /** Every record whose next step is due (the sweep runs every few seconds; one Node-RED reads the folder). */
  dueSessions(policy: NextStepPolicy): Promise<Array<{ record: SessionRecord; action: SessionAction }>> {
    return this.run('list due sessions', async () => {
      await this.housekeeping();
      const now = Date.now();
      const out: Array<{ record: SessionRecord; action: SessionAction }> = [];
      const refs = await this.files.list();
      for (const signRef of refs) {
        const record = await this.sweepRead(signRef);
        if (!record) continue;
        const due = nextStep(record, policy);
        if (due.at <= now) out.push({ record: structuredClone(record), action: due.action });
      }
      const listed = new Set(refs);
      for (const signRef of this.seen.keys()) if (!listed.has(signRef)) this.seen.delete(signRef);
      return out;
    });
  }

  /** The record as the sweep sees it: read again only when its file changed; undefined when gone or unreadable. */
  private async sweepRead(signRef: string): Promise<SessionRecord | undefined> {
    const st = await fsp.stat(this.files.recordPath(signRef)).catch((e: unknown) => {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    });
    if (!st) return undefined;
    const stamp = `${st.ino}:${st.mtimeMs}:${st.size}`;
    const cached = this.seen.get(signRef);
    if (cached?.stamp === stamp) return cached.record;
    // one unreadable file must not stop every other session's sweep (cleanUp leaves it for an admin too)
    const record = await this.files.get(signRef).catch((e: unknown) => {
      if (e instanceof SingpassFlowsError && e.code === 'STATE_INVALID') return undefined;
      throw e;
    });
    if (record) this.seen.set(signRef, { stamp, record });
    else this.seen.delete(signRef);
    return record;
  }

  async close(): Promise<void> {
    // nothing held open: every call opens and closes its files
  }

  /** At most hourly: a crash's temporary files, PDFs and deliveries whose record is gone (nextStep's `forget` cannot see them). */
  private async housekeeping(): Promise<void> {
    if (Date.now() - this.lastCleanUp < CLEAN_UP_EVERY_MS) return;
    this.lastCleanUp = Date.now();
    await this.files.cleanUp({ retentionSeconds: this.retentionMs / 1000 });
    await this.forgetSignedDocuments();
  }

  /**
   * Signed PDFs kept for the signer page leave with the retention, as PostgreSQL's cleanUp does: written that long
   * ago and their record gone (the sweep forgets ended records after the same time). The folder store itself keeps
   * them as the product; here they are a copy the flow has already handed on.
   */
  private async forgetSignedDocuments(): Promise<void> {
    const cutoff = Date.now() - this.retentionMs;
    const names = await fsp.readdir(this.files.dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.endsWith(SIGNED_SUFFIX)) continue;
      const file = path.join(this.files.dir, name);
      const st = await fsp.stat(file).catch(() => undefined);
      if (!st || st.mtimeMs > cutoff) continue;
      const recorded = await fsp.stat(this.files.recordPath(name.slice(0, -SIGNED_SUFFIX.length))).then(() => true, () => false);
      if (!recorded) await fsp.rm(file, { force: true });
    }
  }

  /** A file-system failure as STORE_BUSY / STORE_FAILED: the webhook answers 503 and the sweep reports it once. */
  private async run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    await this.ready;
    try {
      return await fn();
    } catch (e) {
      throw fileStoreError(e, this.files.dir, what);
    }
  }
}
