import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { SingpassFlowsError } from '../../errors';
import { acquireLockFile, errno, syncDir, writeFileAtomic, type HeldLock } from '../../files';
import { checkSignRef } from '../../sign/validate';
import { storePolicy, type StorePolicy } from '../store';

/**
 * The folder store's ground: the folder, its atomic writes and folder fsyncs, and the per-record lock file
 * (`.<signRef>.lock`, O_EXCL; a stale one broken by one process at a time). The documents, deliveries and records
 * layers build on it (file-store.ts).
 */
export class FolderBase {
  readonly dir: string;
  protected readonly lockStaleMs: number;
  protected readonly lockTimeoutMs: number;
  protected readonly now: () => number;
  protected readonly scanExtensionSeconds: number;
  /** The timings the store works by (SESSION_POLICY unless changed): take-over time, retention. */
  readonly policy: StorePolicy;
  /** Whether clean-up deletes a session's signed PDF with it (see FileSessionStoreOptions). */
  readonly signedDocuments: 'keep' | 'forget';

  constructor(dir: string, options: FileSessionStoreOptions = {}) {
    if (typeof dir !== 'string' || dir.trim() === '') throw new SingpassFlowsError('INVALID_INPUT', 'Folder: give the folder session records are kept in', { field: 'Folder' });
    this.dir = path.resolve(dir);
    this.lockStaleMs = options.lockStaleMs ?? 10_000;
    this.lockTimeoutMs = options.lockTimeoutMs ?? 15_000;
    this.now = options.now ?? Date.now;
    this.policy = storePolicy({ ...options.policy, ...(options.scanExtensionSeconds !== undefined ? { scanExtensionSeconds: options.scanExtensionSeconds } : {}) });
    this.scanExtensionSeconds = this.policy.scanExtensionSeconds;
    this.signedDocuments = options.signedDocuments ?? 'keep';
  }

  /** `<dir>/<signRef>.json` (the signRef checked: no path tricks). */
  recordPath(signRef: string): string {
    return path.join(this.dir, `${ref(signRef)}.json`);
  }

  protected names(): Promise<string[]> {
    return namesIn(this.dir);
  }

  protected async ensureDir(): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 });
  }

  protected writeAtomic(name: string, data: string | Buffer): Promise<void> {
    return writeFileAtomic(path.join(this.dir, name), data);
  }

  protected syncDir(): Promise<void> {
    return syncDir(this.dir);
  }

  /** The per-record lock: `.<signRef>.lock` (see acquireLockFile); waits up to lockTimeoutMs, breaks a stale one. */
  protected async lock(signRef: string): Promise<HeldLock> {
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
  /** The engine's scan extension (default: the policy's), for the deadline in listDue. */
  scanExtensionSeconds?: number;
  /** The timings (default `SESSION_POLICY`): the take-over time of the due list, the retention of cleanUp. */
  policy?: Partial<StorePolicy>;
  /**
   * `keep` (default): `<signRef>-signed.pdf` outlives its session, as the product the CLI writes for you to move.
   * `forget`: it is a copy (the flow stored the product) and goes with its session, as in PostgreSQL.
   */
  signedDocuments?: 'keep' | 'forget';
  /**
   * Work every call waits for, once (e.g. moving sessions an older version kept elsewhere into the folder). It gets a
   * store of its own on the folder; a failure is its own to report (the store is used anyway).
   */
  beforeFirstUse?: (store: import('../file-store').FileSessionStore) => Promise<unknown>;
}


export const TEMP_FILE_MAX_AGE_MS = 3_600_000;

export async function namesIn(dir: string): Promise<string[]> {
  try {
    return (await fsp.readdir(dir)).sort();
  } catch (e) {
    if (errno(e) === 'ENOENT') return [];
    throw e;
  }
}

export function ref(signRef: string): string {
  const s = checkSignRef(signRef);
  // also no path separators or names the store keeps for itself
  if (s.includes('/') || s.includes('\\') || s.startsWith('.')) throw new SingpassFlowsError('INVALID_INPUT', 'signRef: contains characters a sign_ref never has; pass the value from createSession', { field: 'signRef' });
  return s;
}


export function isSignRef(s: string): boolean {
  try {
    ref(s);
    return true;
  } catch {
    return false;
  }
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

export function busy(signRef: string, why: string): SingpassFlowsError {
  return new SingpassFlowsError('STORE_BUSY', `Session record ${signRef} could not be saved: ${why}; nothing was written, retry`, { retryable: true });
}

export function retentionMsOf(retentionSeconds: unknown): number {
  if (typeof retentionSeconds !== 'number' || !Number.isFinite(retentionSeconds) || retentionSeconds < 0) throw new SingpassFlowsError('INVALID_INPUT', 'retentionSeconds: a number of seconds ≥ 0', { field: 'retentionSeconds' });
  return retentionSeconds * 1000;
}

export async function exists(file: string): Promise<boolean> {
  return fsp.stat(file).then(() => true, () => false);
}

export async function mtimeAge(file: string, nowMs: number): Promise<number | undefined> {
  const st = await fsp.stat(file).catch(() => undefined);
  return st ? nowMs - st.mtimeMs : undefined;
}
