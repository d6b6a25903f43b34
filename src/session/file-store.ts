import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { SingpassFlowsError } from '../errors';
import { acquireLockFile, errno, removeFile, syncDir, writeFileAtomic, type HeldLock } from '../files';
import { checkSignRef } from '../sign/validate';
import { DEFAULT_SCAN_EXTENSION_SECONDS, isSessionEnded, nextStep, type SessionAction } from './next-step';
import type { SessionStore } from './store';
import type { SessionRecord } from './types';
import { withPhase } from './transitions';

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
 * - `cleanUp` deletes ended sessions (completed, failed, expired) and their PDFs once older than the retention, and
 *   temporary files left by a crash.
 *
 * Files are created mode 0600 (personal data). Names starting with `.` are the store's own (hidden from `*.json`).
 */
export class FileSessionStore implements SessionStore {
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
      throw e;
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
      return { saved: true, signRef, revision: record.revision, status: record.state.status };
    } finally {
      await lock.release();
    }
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

  /**
   * Records a schedule must act on now, each with its action — by THE rule every scheduler uses (`nextStep` /
   * `isDue`, src/session/next-step.ts), with `idleSeconds` as the policy's `idleMs`: how long a record in the middle
   * of a step (claimed, at the save point, signed with no failure recorded) is left to the execution working on it
   * before it is taken as interrupted. `submitHash` (at the save point: resubmit the saved hash), `finish` (signed:
   * finish again, from `lastFinishFailure.retryAt` after a temporary failure), `continueCertificate` (claimed by
   * another front end, nothing prepared), `expire` (waiting for an event past the deadline). Ended sessions are
   * never listed (`forget` is cleanUp's business). Unreadable files are counted, not thrown.
   */
  async listDue(options: { idleSeconds: number }): Promise<{ due: DueRecord[]; unreadable: string[] }> {
    const idleSeconds = Number(options?.idleSeconds);
    if (!Number.isFinite(idleSeconds) || idleSeconds < 0) throw new SingpassFlowsError('INVALID_INPUT', 'idleSeconds: give a number of seconds, 0 or more', { field: 'idleSeconds' });
    const now = this.now();
    const policy = { idleMs: idleSeconds * 1000, scanExtensionSeconds: this.scanExtensionSeconds };
    const due: DueRecord[] = [];
    const unreadable: string[] = [];
    for (const signRef of await this.list()) {
      let record: SessionRecord | undefined;
      try {
        record = await this.get(signRef);
      } catch {
        unreadable.push(signRef);
        continue;
      }
      if (!record || isSessionEnded(record)) continue;
      const step = nextStep(record, policy);
      if (step.action !== 'forget' && step.at <= now) due.push({ signRef, action: step.action, dueSince: step.at, record });
    }
    return { due, unreadable };
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
      const lock = await this.lock(signRef);
      try {
        let record: SessionRecord | undefined;
        try {
          record = await this.get(signRef);
        } catch {
          result.unreadable.push(signRef);
          continue;
        }
        if (!record) continue;
        // the one rule (nextStep): an ended record's `forget` step is due once the retention passed
        const next = nextStep(record, { retentionMs: options.retentionSeconds * 1000 });
        if (next.action !== 'forget' || next.at > nowMs) {
          result.kept++;
          continue;
        }
        if (await removeFile(this.documentPath(signRef))) result.documents++;
        await removeFile(this.recordPath(signRef));
        result.deleted.push(signRef);
      } finally {
        await lock.release();
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
    if (result.deleted.length || result.orphanDocuments || result.tempFiles) await this.syncDir();
    return result;
  }

  // -- internals ------------------------------------------------------------------------------------------------

  private async names(): Promise<string[]> {
    try {
      return (await fsp.readdir(this.dir)).sort();
    } catch (e) {
      if (errno(e) === 'ENOENT') return [];
      throw e;
    }
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

export interface DueRecord {
  signRef: string;
  /** What the record needs now (`nextStep`): never `forget` (ended sessions are cleanUp's). */
  action: Exclude<SessionAction, 'forget'>;
  /** UNIX ms from which the action was due. */
  dueSince: number;
  record: SessionRecord;
}

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

function refused(reason: 'conflict' | 'exists', signRef: string, expectedRevision: number | undefined, current: SessionRecord): SaveOutcome {
  return { saved: false, reason, signRef, expectedRevision, storedRevision: current.revision, storedStatus: current.state.status };
}

function busy(signRef: string, why: string): SingpassFlowsError {
  return new SingpassFlowsError('STORE_BUSY', `Session record ${signRef} could not be saved: ${why}; nothing was written, retry`, { retryable: true });
}

async function exists(file: string): Promise<boolean> {
  return fsp.stat(file).then(() => true, () => false);
}

async function mtimeAge(file: string, nowMs: number): Promise<number | undefined> {
  const st = await fsp.stat(file).catch(() => undefined);
  return st ? nowMs - st.mtimeMs : undefined;
}

