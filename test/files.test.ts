/**
 * src/files.ts on the real file system: atomic replacement leaves the old or the new file and no temporary file;
 * a lock file is exclusive, waits for its holder, times out with the caller's error, and a stale one (holder died)
 * is broken; release never removes a lock that is no longer ours. A missing file reads as undefined, other failures throw.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLockFile, readFileIfExists, writeFileAtomic } from '../src/files';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'files-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('readFileIfExists', () => {
  it('the bytes or the text of a file; undefined when there is none; any other failure throws', async () => {
    writeFileSync(join(dir, 'a.pdf'), Buffer.from([1, 2, 3]));
    expect(await readFileIfExists(join(dir, 'a.pdf'))).toEqual(Buffer.from([1, 2, 3]));
    expect(await readFileIfExists(join(dir, 'a.pdf'), 'utf8')).toBe('\u0001\u0002\u0003');
    expect(await readFileIfExists(join(dir, 'missing.pdf'))).toBeUndefined();
    await expect(readFileIfExists(dir)).rejects.toMatchObject({ code: 'EISDIR' });
  });
});

describe('writeFileAtomic', () => {
  it('replaces the file as a whole, mode 0600, and leaves no temporary file', async () => {
    const file = join(dir, 'a.json');
    writeFileSync(file, 'old');
    const versions = Array.from({ length: 20 }, (_, i) => `new ${i} `.repeat(1000));
    await Promise.all(versions.map((v) => writeFileAtomic(file, v)));
    expect(versions).toContain(readFileSync(file, 'utf8')); // one whole version, never a mix
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['a.json']);
  });
});

describe('acquireLockFile', () => {
  const opts = { staleMs: 10_000, timeoutMs: 300, onTimeout: () => new Error('busy') };

  it('is exclusive: a second taker waits until the first releases', async () => {
    const file = join(dir, '.x.lock');
    const first = await acquireLockFile(file, opts);
    let second = false;
    const waiting = acquireLockFile(file, { ...opts, timeoutMs: 5_000 }).then((l) => {
      second = true;
      return l;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(second).toBe(false);
    await first.release();
    const l = await waiting;
    expect(await l.held()).toBe(true);
    await l.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('times out with the caller\'s error while a live holder keeps it', async () => {
    const file = join(dir, '.x.lock');
    const held = await acquireLockFile(file, opts);
    await expect(acquireLockFile(file, opts)).rejects.toThrow('busy');
    await held.release();
  });

  it('breaks a stale lock (its holder died); the dead holder\'s release then leaves the new lock alone', async () => {
    const file = join(dir, '.x.lock');
    const dead = await acquireLockFile(file, opts);
    const past = new Date(Date.now() - 60_000);
    utimesSync(file, past, past);
    const taker = await acquireLockFile(file, opts);
    expect(await dead.held()).toBe(false);
    await dead.release();
    expect(await taker.held()).toBe(true);
    await taker.release();
  });
});
