import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { removeFile, syncDir } from '../files';
import type { DeliveryStore } from './deliveries';
import { isForgetDue, isSessionEnded, nextStep } from './next-step';
import { dueRule, type DueSession, type DurableSessionStore } from './store';
import type { SessionRecord } from './types';
import { SingpassFlowsError } from '../errors';
import { TEMP_FILE_MAX_AGE_MS, exists, fileStoreError, isSignRef, mtimeAge, namesIn, retentionMsOf, type FileSessionStoreOptions } from './folder/base';
import { DELIVERIES, EVENT_TYPES, deliveryOwner } from './folder/deliveries';
import { FolderRecords, recordRefs } from './folder/records';
import { SIGNED_SUFFIX } from './folder/documents';

/**
 * A {@link SessionStore} in one folder of the local file system, for engines without a database (n8n's sample
 * workflow, the CLI, Node-RED): `<signRef>.json` is the record (the JSON a step output, as is: users and tests may
 * read it), `<signRef>.pdf` the PDF being signed. Safe across concurrent executions and processes on one host (or a
 * shared file system with atomic rename and O_EXCL):
 *
 * - every write is atomic (`writeFileAtomic` in ../files.ts): a temporary file in the same folder, written, fsynced,
 *   renamed over the target, then the folder fsynced; a reader (or a crash at any moment) sees the old file or the
 *   new one, never a part;
 * - `save` is compare-and-set on `record.revision`: under a per-record lock file (`.<signRef>.lock`, created with
 *   O_EXCL, i.e. `'wx'`) it reads the stored revision, refuses (a typed {@link SaveOutcome}, no exception) when it is
 *   not the one the caller loaded, else writes and renames. A lock older than `lockStaleMs` (its holder died) is
 *   broken, by one process at a time (a second `.break` lock file);
 * - kept webhook deliveries ({@link DeliveryStore}, the interface the PostgreSQL store has) are one file per session and
 *   event, `.deliveries/<signRef>.<type>.json`, created with `createFileExclusive` (temporary file, fsync, hard link):
 *   of processes given the same event exactly one is told it is fresh, and a process killed right after its webhook
 *   answered 200 leaves the whole delivery on disk;
 * - `cleanUp` deletes ended sessions (completed, failed, expired) and their PDFs and deliveries once older than the
 *   retention, and temporary files left by a crash.
 *
 * Split by job: folder/base.ts (the folder, atomic writes, locks, errors), folder/documents.ts, folder/deliveries.ts,
 * folder/records.ts; the due list and clean-up are here.
 *
 * Files are created mode 0600 (personal data). Names starting with `.` are the store's own (hidden from `*.json`).
 */
export class FileSessionStore extends FolderRecords implements DurableSessionStore, DeliveryStore {
  readonly kind = 'folder' as const;
  /** One host: nothing is leased; compare-and-set and O_EXCL files decide between its processes. */
  readonly shared = false;
  /** Work done once before the first call (see FileSessionStoreOptions.beforeFirstUse). */
  private readonly ready: Promise<void>;
  /**
   * The last record claimDue read per sign_ref, with its file's inode, mtime and size: every save renames a new file
   * into place, so an unchanged stamp is an unchanged record, and a sweep every few seconds over a day of ended
   * sessions costs a stat per file, not a read and parse. (A stale entry only delays a step; each saves with compare-and-set.)
   */
  private readonly seen = new Map<string, { stamp: string; record: SessionRecord }>();

  constructor(dir: string, options: FileSessionStoreOptions = {}) {
    super(dir, options);
    const first = options.beforeFirstUse;
    // the hook works on a store of its own over the same folder (this one waits for it); its failure is its to report
    this.ready = first ? first(new FileSessionStore(dir, { ...options, beforeFirstUse: undefined })).then(() => undefined, () => undefined) : Promise.resolve();
  }

  get where(): string {
    return `folder ${this.dir}`;
  }

  /**
   * The records whose next step is due now (`nextStep` with the store's policy), oldest first; `owner` is not needed
   * (one host: nothing is leased). A file that is not a record is named in `unreadable`; a folder that cannot be read
   * fails (STORE_BUSY / STORE_FAILED).
   */
  async claimDue(options: { owner?: string; limit?: number; now?: number } = {}): Promise<{ due: DueSession[]; unreadable: string[] }> {
    const now = options.now ?? this.now();
    const rule = dueRule(this.policy);
    const due: DueSession[] = [];
    const unreadable: string[] = [];
    const refs = await this.list();
    for (const signRef of refs) {
      let record: SessionRecord | undefined;
      try {
        record = await this.sweepRead(signRef);
      } catch (e) {
        if (!(e instanceof SingpassFlowsError && e.code === 'STATE_INVALID')) throw e;
        unreadable.push(signRef);
        continue;
      }
      if (!record) continue;
      const step = nextStep(record, rule);
      if (step.action !== 'forget' && step.at <= now) due.push({ signRef, action: step.action, at: step.at, record: structuredClone(record) });
    }
    const listed = new Set(refs);
    for (const signRef of this.seen.keys()) if (!listed.has(signRef)) this.seen.delete(signRef);
    due.sort((a, b) => a.at - b.at || (a.signRef < b.signRef ? -1 : 1));
    return { due: options.limit === undefined ? due : due.slice(0, options.limit), unreadable };
  }

  /** Nothing is leased in a folder. */
  async releaseClaim(): Promise<boolean> {
    return false;
  }

  /** Nothing held open: every call opens and closes its files. */
  async close(): Promise<void> {
    return this.ready;
  }

  /** The record as claimDue sees it: read again only when its file changed; undefined when gone. */
  private async sweepRead(signRef: string): Promise<SessionRecord | undefined> {
    const st = await fsp.stat(this.recordPath(signRef)).catch((e: unknown) => {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    });
    if (!st) {
      this.seen.delete(signRef);
      return undefined;
    }
    const stamp = `${st.ino}:${st.mtimeMs}:${st.size}`;
    const cached = this.seen.get(signRef);
    if (cached?.stamp === stamp) return cached.record;
    this.seen.delete(signRef);
    const record = await this.get(signRef);
    if (record) this.seen.set(signRef, { stamp, record });
    return record;
  }

  /**
   * Records a schedule must act on now, each with its action — by THE rule every scheduler uses (`nextStep` /
   * `isDue`, src/session/next-step.ts), with `idleSeconds` as the policy's `idleMs`: how long a record in the middle
   * of a step (claimed, at the save point, signed with no failure recorded) is left to the execution working on it
   * before it is taken as interrupted. `submitHash` (at the save point: resubmit the saved hash), `finish` (signed:
   * finish again, from `lastFinishFailure.retryAt` after a temporary failure), `continueCertificate` (claimed by
   * another front end, nothing prepared), `expire` (waiting for an event past the deadline). Ended sessions are
   * never listed. Unreadable files are counted, not thrown.
   *
   * `retentionSeconds`: also delete the ended sessions past it that this walk read anyway (record, PDF and kept
   * deliveries, as cleanUp does), so a frequent schedule keeps the retention without a second pass over the folder.
   * One that cannot be deleted now (its lock held) is left for the next run.
   */
  async listDue(options: { idleSeconds: number; retentionSeconds?: number }): Promise<{ due: DueSession[]; unreadable: string[]; deleted: string[] }> {
    const idleSeconds = Number(options?.idleSeconds);
    if (!Number.isFinite(idleSeconds) || idleSeconds < 0) throw new SingpassFlowsError('INVALID_INPUT', 'idleSeconds: give a number of seconds, 0 or more', { field: 'idleSeconds' });
    const retentionMs = options.retentionSeconds === undefined ? undefined : retentionMsOf(options.retentionSeconds);
    const now = this.now();
    const policy = { idleMs: idleSeconds * 1000, scanExtensionSeconds: this.scanExtensionSeconds };
    const due: DueSession[] = [];
    const unreadable: string[] = [];
    const past: string[] = [];
    for (const signRef of await this.list()) {
      let record: SessionRecord | undefined;
      try {
        record = await this.get(signRef);
      } catch {
        unreadable.push(signRef);
        continue;
      }
      if (!record) continue;
      if (isSessionEnded(record)) {
        if (retentionMs !== undefined && isForgetDue(record, retentionMs, now)) past.push(signRef);
        continue;
      }
      const step = nextStep(record, policy);
      if (step.action !== 'forget' && step.at <= now) due.push({ signRef, action: step.action, at: step.at, record });
    }
    const deleted: string[] = [];
    for (const signRef of past) {
      // a lock another process holds (it is saving this record): the next run deletes it
      const r = await this.forgetIfPast(signRef, retentionMs!, now).catch(() => undefined);
      if (r?.outcome === 'deleted') deleted.push(signRef);
    }
    if (deleted.length) await this.syncDir();
    return { due, unreadable, deleted };
  }

  /**
   * Delete ended sessions (completed, failed, expired) whose last change is `retentionSeconds` old or more: the
   * record and the saved PDF `<signRef>.pdf` (the PDF first, so a crash in between leaves the record to retry).
   * Also deletes a `<signRef>.pdf` with no record that old (a crash before the first record save) and the store's
   * temporary files older than an hour. Live sessions and other files (e.g. `<signRef>-signed.pdf`) are kept.
   */
  async cleanUp(options: { retentionSeconds?: number } = {}): Promise<CleanUpResult> {
    const nowMs = this.now();
    const retentionMs = options?.retentionSeconds === undefined ? this.policy.retentionMs : retentionMsOf(options.retentionSeconds);
    const result: CleanUpResult = { deleted: [], documents: 0, orphanDocuments: 0, tempFiles: 0, kept: 0, unreadable: [] };
    const names = await this.names();
    const records = recordRefs(names);
    for (const signRef of records) {
      const r = await this.forgetIfPast(signRef, retentionMs, nowMs);
      if (r.outcome === 'unreadable') result.unreadable.push(signRef);
      else if (r.outcome === 'kept') result.kept++;
      else if (r.outcome === 'deleted') {
        result.deleted.push(signRef);
        if (r.document) result.documents++;
        if (r.signed) result.signedDocuments = (result.signedDocuments ?? 0) + 1;
      }
    }
    const recorded = new Set(records);
    for (const n of names) {
      const file = path.join(this.dir, n);
      if (n.endsWith('.pdf') && !n.endsWith('-signed.pdf') && isSignRef(n.slice(0, -4)) && !recorded.has(n.slice(0, -4))) {
        const age = await mtimeAge(file, nowMs);
        if (age !== undefined && age >= retentionMs && !(await exists(this.recordPath(n.slice(0, -4))))) {
          if (await removeFile(file)) result.orphanDocuments++;
        }
      } else if (this.signedDocuments === 'forget' && n.endsWith(SIGNED_SUFFIX) && isSignRef(n.slice(0, -SIGNED_SUFFIX.length)) && !recorded.has(n.slice(0, -SIGNED_SUFFIX.length))) {
        // a signed copy whose record went before it (a crash in between, or an older version's clean-up)
        const age = await mtimeAge(file, nowMs);
        if (age !== undefined && age >= retentionMs && !(await exists(this.recordPath(n.slice(0, -SIGNED_SUFFIX.length)))) && (await removeFile(file))) {
          result.signedDocuments = (result.signedDocuments ?? 0) + 1;
        }
      } else if (n.startsWith('.') && n.endsWith('.tmp')) {
        const age = await mtimeAge(file, nowMs);
        if (age !== undefined && age >= TEMP_FILE_MAX_AGE_MS && (await removeFile(file))) result.tempFiles++;
      }
    }
    // deliveries whose session is gone (a crash between the record's removal and theirs), and a crash's temporary files
    const deliveriesDir = path.join(this.dir, DELIVERIES);
    let deliveryChanges = 0;
    for (const n of await namesIn(deliveriesDir)) {
      const file = path.join(deliveriesDir, n);
      const age = await mtimeAge(file, nowMs);
      if (age === undefined) continue;
      if (n.startsWith('.') && n.endsWith('.tmp')) {
        if (age >= TEMP_FILE_MAX_AGE_MS && (await removeFile(file))) result.tempFiles++;
        continue;
      }
      const owner = deliveryOwner(n);
      if (owner !== undefined && age >= retentionMs && !(await exists(this.recordPath(owner))) && (await removeFile(file))) deliveryChanges++;
    }
    if (result.deleted.length || result.orphanDocuments || result.tempFiles || deliveryChanges) await this.syncDir();
    if (deliveryChanges) await syncDir(deliveriesDir);
    return result;
  }

  // -- internals ------------------------------------------------------------------------------------------------

  /**
   * Under the record's lock, read it again and, if it is an ended session past the retention, delete its saved PDF
   * (first: a crash in between leaves the record to retry), its signed copy when the store forgets those, its kept
   * deliveries and the record. The caller syncs the folder.
   */
  private async forgetIfPast(signRef: string, retentionMs: number, nowMs: number): Promise<{ outcome: 'deleted' | 'kept' | 'unreadable' | 'gone'; document?: boolean; signed?: boolean }> {
    const lock = await this.lock(signRef);
    try {
      let record: SessionRecord | undefined;
      try {
        record = await this.get(signRef);
      } catch {
        return { outcome: 'unreadable' };
      }
      if (!record) return { outcome: 'gone' };
      if (!isForgetDue(record, retentionMs, nowMs)) return { outcome: 'kept' };
      const document = await removeFile(this.documentPath(signRef));
      const signed = this.signedDocuments === 'forget' && (await removeFile(this.signedDocumentPath(signRef)));
      for (const type of EVENT_TYPES) await removeFile(this.deliveryPath(signRef, type));
      await removeFile(this.recordPath(signRef));
      return { outcome: 'deleted', document, signed };
    } finally {
      await lock.release();
    }
  }
}

export { fileStoreError } from './folder/base';

/**
 * Every call that touches the folder, with what it does in words: waits for `beforeFirstUse`, and a file-system
 * failure comes out typed (`fileStoreError`: STORE_BUSY / STORE_FAILED, which front ends answer 503 on).
 */
const FOLDER_CALLS: Record<string, string> = {
  get: 'read a session record', save: 'save a session record', put: 'save a session record', delete: 'delete a session record', list: 'list the sessions',
  getDocument: 'read a PDF being signed', putDocument: 'save a PDF being signed', deleteDocument: 'delete a PDF being signed',
  putSignedDocument: 'save a signed PDF', getSignedDocument: 'read a signed PDF', rememberDelivery: 'keep a webhook delivery',
  getDelivery: 'read a webhook delivery', markDeliveryApplied: 'mark a webhook delivery applied', pendingDeliveries: 'list pending webhook deliveries',
  claimDeliveriesToReplay: 'list webhook deliveries to replay', forgetDeliveries: 'forget webhook deliveries', claimDue: 'list due sessions',
  listDue: 'list due sessions', cleanUp: 'clean up ended sessions',
};
for (const [name, what] of Object.entries(FOLDER_CALLS)) {
  const proto = FileSessionStore.prototype as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const call = proto[name];
  proto[name] = async function (this: unknown, ...a: unknown[]): Promise<unknown> {
    const store = this as { ready: Promise<void>; dir: string };
    await store.ready;
    try {
      return await call.apply(this, a);
    } catch (e) {
      throw fileStoreError(e, store.dir, what);
    }
  };
}
export type { FileSessionStoreOptions } from './folder/base';
export type { SaveOutcome } from './folder/records';


export interface CleanUpResult {
  /** signRefs whose record (and PDF) were deleted. */
  deleted: string[];
  /** `<signRef>.pdf` files deleted with their record. */
  documents: number;
  /** Signed PDFs deleted with their record (stores that keep them with the record; the folder store keeps them). */
  signedDocuments?: number;
  /** `<signRef>.pdf` files with no record, older than the retention. */
  orphanDocuments: number;
  /** Temporary files a crash left (older than an hour). */
  tempFiles: number;
  /** Records kept (live, or ended within the retention). */
  kept: number;
  /** Record files that are not a readable record (left alone). */
  unreadable: string[];
}
