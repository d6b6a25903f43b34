/**
 * Crash-safe file primitives for stores kept in a folder (the session store; anything else that keeps state on one
 * host): atomic replacement of a file, and a lock file shared by processes, broken when its holder died.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Replace `file` atomically: a temporary file in the same folder (`.<name>.<pid>-<random>.tmp`, mode 0600), written
 * and fsynced, renamed over `file`, then the folder fsynced. A reader, or a crash at any moment, sees the old file or
 * the new one, never a part. Temporary files a crash left start with `.` and end with `.tmp`.
 */
export async function writeFileAtomic(file: string, data: string | Buffer): Promise<void> {
  return writeFileAtomicWith(file, (fh) => fh.writeFile(data));
}

/** {@link writeFileAtomic} of what `write` writes to the temporary file, in as many pieces as it likes. */
export async function writeFileAtomicWith(file: string, write: (fh: fsp.FileHandle) => Promise<void>): Promise<void> {
  const tmp = await writeTempBeside(file, write);
  try {
    await fsp.rename(tmp, file);
  } catch (e) {
    await removeFile(tmp);
    throw e;
  }
  await syncDir(path.dirname(file));
}

/**
 * Create `file` with `data` only if it does not exist yet, atomically and durably: the data goes to a temporary file
 * (written, fsynced), which is then hard-linked to `file` — `link` fails with EEXIST when `file` exists, so of several
 * processes creating the same file exactly one succeeds, and nobody ever sees it partly written. False when `file`
 * existed (nothing changed).
 */
export async function createFileExclusive(file: string, data: string | Buffer): Promise<boolean> {
  const tmp = await writeTempBeside(file, (fh) => fh.writeFile(data));
  let created = false;
  try {
    await fsp.link(tmp, file);
    created = true;
  } catch (e) {
    if (errno(e) !== 'EEXIST') throw e;
  } finally {
    await removeFile(tmp);
  }
  if (created) await syncDir(path.dirname(file));
  return created;
}

/** `data` written and fsynced to a new temporary file in `file`'s folder (so a rename or link to `file` is atomic). */
async function writeTempBeside(file: string, write: (fh: fsp.FileHandle) => Promise<void>): Promise<string> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
  const fh = await fsp.open(tmp, 'wx', 0o600);
  try {
    await write(fh);
    await fh.sync();
  } catch (e) {
    await fh.close();
    await removeFile(tmp);
    throw e;
  }
  await fh.close();
  return tmp;
}

/** fsync a folder, so a rename or unlink in it survives a power cut (not supported everywhere: best effort). */
export async function syncDir(dir: string): Promise<void> {
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(dir, 'r');
    await fh.sync();
  } catch {
    // some platforms/file systems cannot fsync a directory
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

export interface HeldLock {
  /** Still ours (not broken as stale by another process meanwhile). */
  held(): Promise<boolean>;
  release(): Promise<void>;
}

export interface LockFileOptions {
  /** A lock file older than this is its dead holder's and is broken. */
  staleMs: number;
  /** Give up waiting after this long (`onTimeout` says how). */
  timeoutMs: number;
  onTimeout(): Error;
}

/**
 * Take the lock file `file` (created with O_EXCL, i.e. `'wx'`, holding a token of ours): waits with jittered backoff
 * while another holds it, and breaks a lock older than `staleMs` — one breaker at a time (a second `.break` file), so
 * a second breaker cannot delete the lock the first one's retry just created. Release removes only our own lock.
 */
export async function acquireLockFile(file: string, options: LockFileOptions): Promise<HeldLock> {
  const token = `${os.hostname()}:${process.pid}:${randomBytes(8).toString('hex')}`;
  const deadline = Date.now() + options.timeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      const fh = await fsp.open(file, 'wx', 0o600);
      try {
        await fh.writeFile(token);
      } finally {
        await fh.close();
      }
      const ours = async () => (await fsp.readFile(file, 'utf8').catch(() => '')) === token;
      return {
        held: ours,
        release: async () => {
          // only our own lock: a lock broken as stale may be someone else's by now
          if (await ours()) await removeFile(file);
        },
      };
    } catch (e) {
      if (errno(e) !== 'EEXIST') throw e;
    }
    if (await breakIfStale(file, options.staleMs)) continue;
    if (Date.now() > deadline) throw options.onTimeout();
    await new Promise((r) => setTimeout(r, Math.min(5 * 2 ** Math.min(attempt, 4), 50) * (0.5 + Math.random())));
  }
}

/** True when the lock is gone now (it was stale and we broke it, or its holder released it). */
async function breakIfStale(file: string, staleMs: number): Promise<boolean> {
  let st: Awaited<ReturnType<typeof fsp.stat>>;
  try {
    st = await fsp.stat(file);
  } catch (e) {
    if (errno(e) === 'ENOENT') return true;
    throw e;
  }
  if (Date.now() - st.mtimeMs < staleMs) return false;
  const guard = `${file}.break`;
  let g: fsp.FileHandle;
  try {
    g = await fsp.open(guard, 'wx', 0o600);
  } catch (e) {
    if (errno(e) !== 'EEXIST') throw e;
    const gs = await fsp.stat(guard).catch(() => null);
    if (gs && Date.now() - gs.mtimeMs >= staleMs) await removeFile(guard);
    return false;
  }
  try {
    await g.close();
    const again = await fsp.stat(file).catch(() => null);
    if (again && again.ino === st.ino && again.mtimeMs === st.mtimeMs) await removeFile(file);
    return true;
  } finally {
    await removeFile(guard);
  }
}

/** A file's bytes (or text, given an encoding); undefined when it is not there. Other failures throw. */
export async function readFileIfExists(file: string): Promise<Buffer | undefined>;
export async function readFileIfExists(file: string, encoding: 'utf8'): Promise<string | undefined>;
export async function readFileIfExists(file: string, encoding?: 'utf8'): Promise<Buffer | string | undefined> {
  try {
    return encoding ? await fsp.readFile(file, encoding) : await fsp.readFile(file);
  } catch (e) {
    if (errno(e) === 'ENOENT') return undefined;
    throw e;
  }
}

/** Remove a file; false when it was not there. */
export async function removeFile(file: string): Promise<boolean> {
  try {
    await fsp.unlink(file);
    return true;
  } catch (e) {
    if (errno(e) === 'ENOENT') return false;
    throw e;
  }
}

export function errno(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}
