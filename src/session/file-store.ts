import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { SingpassFlowsError } from '../errors';
import { acquireLockFile, createFileExclusive, errno, removeFile, syncDir, writeFileAtomic, type HeldLock } from '../files';
import type { SigningEvent } from '../sign';
import { checkSignRef } from '../sign/validate';
import { REDACTED_CERTIFICATE_JSON, replaysStillNeeded, type DeliveryStore, type KeptDelivery } from './deliveries';
import { deliveryFromJson, deliveryToJson } from './delivery-codec';
import { DEFAULT_SCAN_EXTENSION_SECONDS, isForgetDue, isSessionEnded, nextStep } from './next-step';
import type { DueSession, SessionStore } from './store';
import type { SessionRecord, VerifiedDelivery } from './types';
import { withPhase } from './transitions';
import { SESSION_POLICY } from './policy';

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
 * Files are created mode 0600 (personal data). Names starting with `.` are the store's own (hidden from `*.json`).
 */
export class FileSessionStore implements SessionStore, DeliveryStore {
  readonly dir: string;
  private readonly lockStaleMs: number;
  private readonly lockTimeoutMs: number;
  private readonly now: () => number;
  private readonly scanExtensionSeconds: number;

  constructor(dir: string, options: FileSessionStoreOptions = {}) {
    if (typeof dir !== 'string' || dir.trim() === '') throw new SingpassFlowsError('INVALID_INPUT', 'Folder: give the folder session records are kept in', { field: 'Folder' });
    this.dir = path.resolve(dir);
    this.lockStaleMs = options.lockStaleMs ?? 10_000;
    this.lockTimeoutMs = options.lockTimeoutMs ?? 15_000;
    this.now = options.now ?? Date.now;
    this.scanExtensionSeconds = options.scanExtensionSeconds ?? DEFAULT_SCAN_EXTENSION_SECONDS;
  }

  /** `<dir>/<signRef>.json` (the signRef checked: no path tricks). */
  recordPath(signRef: string): string {
    return path.join(this.dir, `${ref(signRef)}.json`);
  }

  /** `<dir>/<signRef>.pdf`, the PDF being signed. */
  documentPath(signRef: string): string {
    return path.join(this.dir, `${ref(signRef)}.pdf`);
  }

  async get(signRef: string): Promise<SessionRecord | undefined> {
    const file = this.recordPath(signRef);
    let text: string;
    try {
      text = await fsp.readFile(file, 'utf8');
    } catch (e) {
      if (errno(e) === 'ENOENT') return undefined;
      // typed here, so a folder replaced by a file or without rights reads as STORE_FAILED, not as a passing fault
      throw fileStoreError(e, this.dir, `read the record of ${signRef}`);
    }
    return parseRecord(text, file);
  }

  /**
   * Compare-and-set: save `record` if the stored record's revision is `expectedRevision` (undefined: no record may
   * exist yet). With `document`, the PDF is saved too (atomically, before the record, under the same lock).
   */
  async save(record: SessionRecord, expectedRevision: number | undefined, options: { document?: Buffer } = {}): Promise<SaveOutcome> {
    if (!record || typeof record !== 'object' || !record.state || typeof record.revision !== 'number') {
      throw new SingpassFlowsError('STATE_INVALID', 'Session Record: pass the "record" a Singpass Sign step output', { field: 'Session Record' });
    }
    const signRef = ref(record.state.signRef);
    const lock = await this.lock(signRef); // creates the folder when missing
    let outcome: SaveOutcome;
    try {
      const current = await this.get(signRef);
      if (expectedRevision === undefined && current) return refused('exists', signRef, expectedRevision, current);
      if (expectedRevision !== undefined && !current) return { saved: false, reason: 'missing', signRef, expectedRevision };
      if (current && current.revision !== expectedRevision) return refused('conflict', signRef, expectedRevision, current);
      if (options.document) await this.writeAtomic(`${signRef}.pdf`, options.document);
      const text = JSON.stringify(withPhase(record));
      // Still ours? (a holder slower than lockStaleMs may have had its lock broken: then it must not write)
      if (!(await lock.held())) throw busy(signRef, 'the record lock was taken over while saving (a save took longer than the stale-lock timeout)');
      await this.writeAtomic(`${signRef}.json`, text);
      outcome = { saved: true, signRef, revision: record.revision, status: record.state.status };
    } finally {
      await lock.release();
    }
    // The session ended (e.g. its certificate refused): a kept certificate event keeps the certificate no longer.
    if (isSessionEnded(record)) await this.markDeliveryApplied(signRef, 'certificate');
    return outcome;
  }

  async put(record: SessionRecord, expectedRevision: number | undefined): Promise<boolean> {
    return (await this.save(record, expectedRevision)).saved;
  }

  /** Delete the record (under its lock); the PDF stays (see deleteDocument). */
  async delete(signRef: string): Promise<void> {
    const r = ref(signRef);
    const lock = await this.lock(r);
    try {
      await removeFile(this.recordPath(r));
      await this.syncDir();
    } finally {
      await lock.release();
    }
  }

  /** Every stored signRef (the `<signRef>.json` files). */
  async list(): Promise<string[]> {
    return recordRefs(await this.names());
  }

  async getDocument(signRef: string): Promise<Buffer | undefined> {
    try {
      return await fsp.readFile(this.documentPath(signRef));
    } catch (e) {
      if (errno(e) === 'ENOENT') return undefined;
      throw e;
    }
  }

  async putDocument(signRef: string, pdf: Buffer): Promise<void> {
    await this.ensureDir();
    await this.writeAtomic(`${ref(signRef)}.pdf`, pdf);
  }

  async deleteDocument(signRef: string): Promise<void> {
    await removeFile(this.documentPath(signRef));
  }

  /** The signed PDF as `<signRef>-signed.pdf` (atomic; kept by cleanUp: it is the product, not the session's state). */
  async putSignedDocument(signRef: string, pdf: Buffer): Promise<void> {
    await this.ensureDir();
    await this.writeAtomic(`${ref(signRef)}-signed.pdf`, pdf);
  }

  async getSignedDocument(signRef: string): Promise<Buffer | undefined> {
    try {
      return await fsp.readFile(path.join(this.dir, `${ref(signRef)}-signed.pdf`));
    } catch (e) {
      if (errno(e) === 'ENOENT') return undefined;
      throw e;
    }
  }

  // -- kept webhook deliveries ----------------------------------------------------------------------------------

  /** `<dir>/.deliveries/<signRef>.<type>.json` (the type is one of three fixed words, so names never collide). */
  deliveryPath(signRef: string, type: SigningEvent['type']): string {
    return path.join(this.dir, DELIVERIES, `${ref(signRef)}.${eventType(type)}.json`);
  }

  /**
   * Keep a verified delivery until a step applies it; false when this event (sign_ref + type) was kept already. The
   * file appears whole or not at all (hard link of an fsynced temporary file), and only one caller can create it.
   */
  async rememberDelivery(delivery: VerifiedDelivery): Promise<boolean> {
    const json = deliveryToJson(deliveryFromJson(delivery, 'delivery'));
    const { signRef, type } = delivery.event;
    const file = this.deliveryPath(signRef, type);
    await fsp.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const kept: KeptDeliveryFile = { type, applied: false, receivedAt: Math.floor(this.now()), delivery: json };
    return createFileExclusive(file, JSON.stringify(kept));
  }

  /** The kept delivery of `type` for `signRef` (the certificate bytes restored), or undefined. */
  async getDelivery(signRef: string, type: SigningEvent['type']): Promise<KeptDelivery | undefined> {
    const kept = await this.readDelivery(this.deliveryPath(signRef, type));
    return kept && { type: kept.type, applied: kept.applied, receivedAt: kept.receivedAt, delivery: deliveryFromJson(kept.delivery, 'kept webhook delivery') };
  }

  /**
   * The event was applied: a later copy is a duplicate; the user's certificate is not kept beyond that. Under the
   * record's lock, so it cannot bring back a delivery `forgetDeliveries` just removed.
   */
  async markDeliveryApplied(signRef: string, type: SigningEvent['type']): Promise<void> {
    const file = this.deliveryPath(signRef, type);
    const lock = await this.lock(ref(signRef));
    try {
      const kept = await this.readDelivery(file);
      if (!kept || kept.applied) return;
      const event = kept.delivery.event as Record<string, unknown>;
      const delivery = event.type === 'certificate' ? { ...kept.delivery, event: { ...event, certificate: { ...REDACTED_CERTIFICATE_JSON } } } : kept.delivery;
      await writeFileAtomic(file, JSON.stringify({ ...kept, applied: true, delivery }));
    } finally {
      await lock.release();
    }
  }

  /** Every delivery kept and not applied yet, oldest first. Unreadable files are skipped (cleanUp leaves them too). */
  async pendingDeliveries(): Promise<Array<{ signRef: string; type: SigningEvent['type'] }>> {
    const out: Array<{ signRef: string; type: SigningEvent['type']; receivedAt: number }> = [];
    for (const name of await this.deliveryNames()) {
      const kept = await this.readDelivery(path.join(this.dir, DELIVERIES, name)).catch(() => undefined);
      const signRef = (kept?.delivery.event as { signRef?: unknown } | undefined)?.signRef;
      if (kept && !kept.applied && typeof signRef === 'string') out.push({ signRef, type: kept.type, receivedAt: kept.receivedAt ?? 0 });
    }
    out.sort((a, b) => a.receivedAt - b.receivedAt || (a.signRef < b.signRef ? -1 : a.signRef > b.signRef ? 1 : a.type < b.type ? -1 : 1));
    return out.map(({ signRef, type }) => ({ signRef, type }));
  }

  /**
   * The deliveries to replay now (the PostgreSQL store's rule, for one host): kept at least `idleMs` ago (default the
   * policy's take-over time) and never applied, each with its session's record, for those the record still needs
   * (`isDeliveryStillNeeded`); the others are marked applied here. No lease: two processes of one host may both
   * replay one event, and the record's compare-and-set lets one go on.
   */
  async claimDeliveriesToReplay(options: { idleMs?: number; now?: number } = {}): Promise<Array<{ kept: KeptDelivery; record: SessionRecord }>> {
    const idleMs = options.idleMs ?? SESSION_POLICY.takeOverIdleMs;
    const now = options.now ?? this.now();
    const stale: KeptDelivery[] = [];
    for (const { signRef, type } of await this.pendingDeliveries()) {
      const kept = await this.getDelivery(signRef, type).catch(() => undefined);
      if (kept && !kept.applied && now - (kept.receivedAt ?? 0) >= idleMs) stale.push(kept);
    }
    return replaysStillNeeded(this, stale);
  }

  /** Forget every delivery kept for `signRef` (its session ended). */
  async forgetDeliveries(signRef: string): Promise<void> {
    const r = ref(signRef);
    const lock = await this.lock(r);
    try {
      let removed = false;
      for (const type of EVENT_TYPES) removed = (await removeFile(this.deliveryPath(r, type))) || removed;
      if (removed) await syncDir(path.join(this.dir, DELIVERIES));
    } finally {
      await lock.release();
    }
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
  async cleanUp(options: { retentionSeconds: number }): Promise<CleanUpResult> {
    const nowMs = this.now();
    const result: CleanUpResult = { deleted: [], documents: 0, orphanDocuments: 0, tempFiles: 0, kept: 0, unreadable: [] };
    const names = await this.names();
    const records = recordRefs(names);
    for (const signRef of records) {
      const r = await this.forgetIfPast(signRef, options.retentionSeconds * 1000, nowMs);
      if (r.outcome === 'unreadable') result.unreadable.push(signRef);
      else if (r.outcome === 'kept') result.kept++;
      else if (r.outcome === 'deleted') {
        result.deleted.push(signRef);
        if (r.document) result.documents++;
      }
    }
    const recorded = new Set(records);
    for (const n of names) {
      const file = path.join(this.dir, n);
      if (n.endsWith('.pdf') && !n.endsWith('-signed.pdf') && isSignRef(n.slice(0, -4)) && !recorded.has(n.slice(0, -4))) {
        const age = await mtimeAge(file, nowMs);
        if (age !== undefined && age >= options.retentionSeconds * 1000 && !(await exists(this.recordPath(n.slice(0, -4))))) {
          if (await removeFile(file)) result.orphanDocuments++;
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
      if (owner !== undefined && age >= options.retentionSeconds * 1000 && !(await exists(this.recordPath(owner))) && (await removeFile(file))) deliveryChanges++;
    }
    if (result.deleted.length || result.orphanDocuments || result.tempFiles || deliveryChanges) await this.syncDir();
    if (deliveryChanges) await syncDir(deliveriesDir);
    return result;
  }

  // -- internals ------------------------------------------------------------------------------------------------

  /**
   * Under the record's lock, read it again and, if it is an ended session past the retention, delete its saved PDF
   * (first: a crash in between leaves the record to retry), its kept deliveries and the record. The caller syncs the folder.
   */
  private async forgetIfPast(signRef: string, retentionMs: number, nowMs: number): Promise<{ outcome: 'deleted' | 'kept' | 'unreadable' | 'gone'; document?: boolean }> {
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
      for (const type of EVENT_TYPES) await removeFile(this.deliveryPath(signRef, type));
      await removeFile(this.recordPath(signRef));
      return { outcome: 'deleted', document };
    } finally {
      await lock.release();
    }
  }

  private names(): Promise<string[]> {
    return namesIn(this.dir);
  }

  /** The delivery files (`<signRef>.<type>.json`), not the temporary ones. */
  private async deliveryNames(): Promise<string[]> {
    return (await namesIn(path.join(this.dir, DELIVERIES))).filter((n) => !n.startsWith('.') && deliveryOwner(n) !== undefined);
  }

  private async readDelivery(file: string): Promise<KeptDeliveryFile | undefined> {
    let text: string;
    try {
      text = await fsp.readFile(file, 'utf8');
    } catch (e) {
      if (errno(e) === 'ENOENT') return undefined;
      throw e;
    }
    let kept: Partial<KeptDeliveryFile> | undefined;
    try {
      kept = JSON.parse(text) as Partial<KeptDeliveryFile>;
    } catch {
      kept = undefined;
    }
    if (!kept || typeof kept !== 'object' || !EVENT_TYPES.includes(kept.type as SigningEvent['type']) || typeof kept.applied !== 'boolean' || !kept.delivery || typeof kept.delivery !== 'object') {
      throw new SingpassFlowsError('STATE_INVALID', `${path.basename(file)} is not a kept webhook delivery`, { field: 'delivery' });
    }
    return kept as KeptDeliveryFile;
  }

  private async ensureDir(): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 });
  }

  private writeAtomic(name: string, data: string | Buffer): Promise<void> {
    return writeFileAtomic(path.join(this.dir, name), data);
  }

  private syncDir(): Promise<void> {
    return syncDir(this.dir);
  }

  /** The per-record lock: `.<signRef>.lock` (see acquireLockFile); waits up to lockTimeoutMs, breaks a stale one. */
  private async lock(signRef: string): Promise<HeldLock> {
    await this.ensureDir();
    return acquireLockFile(path.join(this.dir, `.${signRef}.lock`), {
      staleMs: this.lockStaleMs,
      timeoutMs: this.lockTimeoutMs,
      onTimeout: () => busy(signRef, `another save has held the lock for over ${this.lockTimeoutMs} ms`),
    });
  }
}

export interface FileSessionStoreOptions {
  /** A lock file older than this is its dead holder's and is broken (default 10 000 ms; a save takes milliseconds). */
  lockStaleMs?: number;
  /** How long a save waits for another save of the same record (default 15 000 ms), then fails with STORE_BUSY. */
  lockTimeoutMs?: number;
  /** Clock (ms) for listDue and cleanUp. */
  now?: () => number;
  /** The engine's scan extension (default: the engine's, DEFAULT_SCAN_EXTENSION_SECONDS), for the deadline in listDue. */
  scanExtensionSeconds?: number;
}

/** What a compare-and-set save did. A refusal is a normal outcome: another execution changed the record first. */
export type SaveOutcome =
  | { saved: true; signRef: string; revision: number; status: string }
  | {
    saved: false;
    /** `conflict`: the stored revision is not the expected one; `exists`: a new record's signRef is taken; `missing`: nothing stored to update. */
    reason: 'conflict' | 'exists' | 'missing';
    signRef: string;
    expectedRevision: number | undefined;
    storedRevision?: number;
    storedStatus?: string;
  };

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

const TEMP_FILE_MAX_AGE_MS = 3_600_000;
/** The folder of kept deliveries (a name starting with `.`: the store's own). */
const DELIVERIES = '.deliveries';
const EVENT_TYPES: SigningEvent['type'][] = ['certificate', 'signature', 'error'];

/** A kept delivery as its file holds it: the delivery in the core codec's JSON form (the certificate as base64). */
interface KeptDeliveryFile {
  type: SigningEvent['type'];
  applied: boolean;
  receivedAt?: number;
  delivery: Record<string, unknown>;
}

function eventType(type: unknown): SigningEvent['type'] {
  if (!EVENT_TYPES.includes(type as SigningEvent['type'])) throw new SingpassFlowsError('INVALID_INPUT', `type: "${String(type)}" is not a signing event type (certificate, signature, error)`, { field: 'type' });
  return type as SigningEvent['type'];
}

/** The signRef of a delivery file name `<signRef>.<type>.json`, or undefined for any other name. */
function deliveryOwner(name: string): string | undefined {
  for (const type of EVENT_TYPES) {
    const suffix = `.${type}.json`;
    if (name.endsWith(suffix) && isSignRef(name.slice(0, -suffix.length))) return name.slice(0, -suffix.length);
  }
  return undefined;
}

async function namesIn(dir: string): Promise<string[]> {
  try {
    return (await fsp.readdir(dir)).sort();
  } catch (e) {
    if (errno(e) === 'ENOENT') return [];
    throw e;
  }
}

function ref(signRef: string): string {
  const s = checkSignRef(signRef);
  // also no path separators or names the store keeps for itself
  if (s.includes('/') || s.includes('\\') || s.startsWith('.')) throw new SingpassFlowsError('INVALID_INPUT', 'signRef: contains characters a sign_ref never has; pass the value from createSession', { field: 'signRef' });
  return s;
}

/** The signRefs of the record files (`<signRef>.json`) among a folder's names. */
function recordRefs(names: string[]): string[] {
  return names.filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -'.json'.length)).filter(isSignRef);
}

function isSignRef(s: string): boolean {
  try {
    ref(s);
    return true;
  } catch {
    return false;
  }
}

function parseRecord(text: string, file: string): SessionRecord {
  let r: Partial<SessionRecord> | undefined;
  try {
    r = JSON.parse(text) as Partial<SessionRecord>;
  } catch {
    r = undefined;
  }
  if (!r || typeof r !== 'object' || r.format !== 'singpass-flows/signing-session@1' || !r.state || typeof r.revision !== 'number') {
    throw new SingpassFlowsError('STATE_INVALID', `${path.basename(file)} is not a session record (${text.length === 0 ? 'empty' : 'not the JSON a Singpass Sign step output'})`, { field: 'Session Record' });
  }
  // A record written before phases were stored is read with the phase its fields describe.
  return withPhase(r as SessionRecord);
}

/** errno codes of a file system that may recover by itself (space freed, descriptors released, a device back). */
const TRANSIENT_FS_ERRNO = new Set(['ENOSPC', 'EDQUOT', 'EMFILE', 'ENFILE', 'EAGAIN', 'EBUSY', 'EIO', 'ETIMEDOUT', 'EINTR']);

/**
 * A failure of the folder store as a typed error a front end answers 503 on (the service retries): `STORE_BUSY`
 * (retryable) for what may pass by itself (disk full, out of file descriptors, an I/O error), `STORE_FAILED` for
 * what an admin must fix (rights, a read-only or missing mount, a file where the folder should be). Typed errors
 * (the store's own STORE_BUSY, a record that is not one) pass through unchanged.
 */
export function fileStoreError(e: unknown, dir: string, what: string): SingpassFlowsError {
  if (e instanceof SingpassFlowsError) return e;
  const code = errno(e);
  const message = `Session store (folder ${dir}) could not ${what}: ${(e as Error)?.message ?? String(e)}`;
  if (code && TRANSIENT_FS_ERRNO.has(code)) return new SingpassFlowsError('STORE_BUSY', `${message}. Nothing was lost; retry`, { errno: code, retryable: true }, { cause: e });
  return new SingpassFlowsError('STORE_FAILED', `${message}. Check that the folder exists and Node-RED / the process may write to it`, { ...(code ? { errno: code } : {}), retryable: false }, { cause: e });
}

function refused(reason: 'conflict' | 'exists', signRef: string, expectedRevision: number | undefined, current: SessionRecord): SaveOutcome {
  return { saved: false, reason, signRef, expectedRevision, storedRevision: current.revision, storedStatus: current.state.status };
}

function busy(signRef: string, why: string): SingpassFlowsError {
  return new SingpassFlowsError('STORE_BUSY', `Session record ${signRef} could not be saved: ${why}; nothing was written, retry`, { retryable: true });
}

function retentionMsOf(retentionSeconds: unknown): number {
  if (typeof retentionSeconds !== 'number' || !Number.isFinite(retentionSeconds) || retentionSeconds < 0) throw new SingpassFlowsError('INVALID_INPUT', 'retentionSeconds: a number of seconds ≥ 0', { field: 'retentionSeconds' });
  return retentionSeconds * 1000;
}

async function exists(file: string): Promise<boolean> {
  return fsp.stat(file).then(() => true, () => false);
}

async function mtimeAge(file: string, nowMs: number): Promise<number | undefined> {
  const st = await fsp.stat(file).catch(() => undefined);
  return st ? nowMs - st.mtimeMs : undefined;
}

