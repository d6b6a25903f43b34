/**
 * A throwaway PostgreSQL cluster (Debian's postgresql 15) for end-to-end tests: its own data folder in a temporary
 * directory, listening on 127.0.0.1 only (and a Unix socket in that directory), password authentication over TCP.
 * PostgreSQL refuses to run as root, so when the tests run as root the server runs as the `postgres` OS user and the
 * temporary directory is handed to it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports';
import { registerServer } from './servers';

const run = promisify(execFile);

export interface Postgres {
  /** `postgres://user:password@127.0.0.1:port/database` */
  url: string;
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** The folder of the server's Unix socket (psql -h). */
  socketDir: string;
  /** Run SQL through psql (as the superuser, over the Unix socket); returns psql's unaligned, tuples-only output. */
  sql(query: string, database?: string): Promise<string>;
  /** Create another database (e.g. one for n8n, one for the session store). */
  createDatabase(name: string): Promise<void>;
  /** Stop (fast shutdown: sessions are cut off) and start again on the same port with the same data. */
  restart(options?: { downMs?: number }): Promise<void>;
  /** Stop the server, keeping the data (start() brings it back). */
  halt(): Promise<void>;
  start(): Promise<void>;
  /** Stop the server and delete its data folder. */
  stop(): Promise<void>;
  log(): string;
}

/** Debian's server binaries (the newest installed major version), or SINGPASS_FLOWS_PG_BIN. */
const PG_BIN = process.env.SINGPASS_FLOWS_PG_BIN ?? newestPgBin();

function newestPgBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  return path.join(root, versions[0] ?? '15', 'bin');
}

export function hasPostgres(): boolean {
  return fs.existsSync(path.join(PG_BIN, 'postgres'));
}

/** The server's OS user: ourselves, or `postgres` when we are root. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  if (!passwd) throw new Error('running as root but there is no "postgres" OS user to run PostgreSQL as (apt-get install postgresql)');
  const [, , uid, gid] = passwd.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

export async function startPostgres(options: { database?: string; maxConnections?: number } = {}): Promise<Postgres> {
  const owner = serverUser();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-pg-'));
  const data = path.join(dir, 'data');
  const port = await freePort();
  const user = 'postgres';
  const password = randomBytes(12).toString('hex');
  const database = options.database ?? 'singpass';
  fs.writeFileSync(path.join(dir, 'pw'), password);
  if (owner) {
    fs.chmodSync(dir, 0o700);
    for (const f of [dir, path.join(dir, 'pw')]) fs.chownSync(f, owner.uid, owner.gid);
  }
  const asServer = owner ? { uid: owner.uid, gid: owner.gid } : {};
  const env = serverEnv();
  await run(path.join(PG_BIN, 'initdb'), ['-D', data, '-U', user, `--pwfile=${path.join(dir, 'pw')}`, '--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--no-sync'],
    { ...asServer, env, cwd: dir, timeout: 120_000 });
  fs.rmSync(path.join(dir, 'pw'));

  let child: ChildProcess | undefined;
  let output = '';
  const psql = async (query: string, db = 'postgres') => {
    const { stdout } = await run(path.join(PG_BIN, 'psql'), ['-h', dir, '-p', String(port), '-U', user, '-d', db, '-v', 'ON_ERROR_STOP=1', '-At', '-c', query],
      { env, timeout: 60_000 });
    return stdout.trim();
  };
  const start = async () => {
    // fsync off: a test cluster is thrown away; restarts here are process restarts, not power cuts
    child = spawn(path.join(PG_BIN, 'postgres'), ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1',
      '-c', `max_connections=${options.maxConnections ?? 200}`, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
    { ...asServer, env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    registerServer(child.pid);
    child.stdout!.on('data', (d) => { output += d; });
    child.stderr!.on('data', (d) => { output += d; });
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`postgres exited (${child.exitCode}):\n${output.slice(-3000)}`);
      try {
        await run(path.join(PG_BIN, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q'], { env });
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`postgres not ready in 60 s:\n${output.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const halt = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGINT'); // fast shutdown: roll back open transactions, close sessions, checkpoint
    const timer = setTimeout(() => { try { process.kill(-c.pid!, 'SIGKILL'); } catch { /* gone */ } }, 30_000);
    await exited;
    clearTimeout(timer);
  };
  await start();
  await psql(`CREATE DATABASE ${ident(database)}`);
  return {
    url: `postgres://${user}:${password}@127.0.0.1:${port}/${database}`,
    host: '127.0.0.1', port, user, password, database, socketDir: dir,
    sql: psql,
    createDatabase: async (name) => { await psql(`CREATE DATABASE ${ident(name)}`); },
    async restart({ downMs = 0 } = {}) {
      await halt();
      if (downMs) await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
    halt,
    start,
    async stop() {
      await halt();
      fs.rmSync(dir, { recursive: true, force: true });
    },
    log: () => output,
  };
}

/** Set by the test runner (scripts/run-tests.js): the run's one cluster, as JSON {host, port, user, password, socketDir}. */
export const RUN_POSTGRES = 'SINGPASS_FLOWS_POSTGRES';

/**
 * A database of its own in the run's one cluster, or in a cluster of its own when the file runs alone: for the tests
 * that never stop the server (those that do use startPostgres()). stop() drops the database.
 */
export async function postgresDatabase(): Promise<Postgres> {
  const shared = process.env[RUN_POSTGRES];
  if (!shared) return startPostgres();
  const c = JSON.parse(shared) as Pick<Postgres, 'host' | 'port' | 'user' | 'password' | 'socketDir'>;
  const database = `t_${randomBytes(6).toString('hex')}`;
  const psql = async (query: string, db = 'postgres') => {
    const { stdout } = await run(path.join(PG_BIN, 'psql'), ['-h', c.socketDir, '-p', String(c.port), '-U', c.user, '-d', db, '-v', 'ON_ERROR_STOP=1', '-At', '-c', query],
      { env: serverEnv(), timeout: 60_000 });
    return stdout.trim();
  };
  const created: string[] = [database];
  await psql(`CREATE DATABASE ${database}`);
  const shutdown = () => Promise.reject(new Error('this database is in the run\'s shared cluster, which a test may not stop: use startPostgres() for a server of its own'));
  return {
    ...c,
    url: `postgres://${c.user}:${c.password}@${c.host}:${c.port}/${database}`,
    database,
    sql: psql,
    createDatabase: async (name) => { await psql(`CREATE DATABASE ${ident(name)}`); created.push(name); },
    restart: shutdown,
    halt: shutdown,
    start: shutdown,
    async stop() {
      for (const d of created.splice(0)) await psql(`DROP DATABASE IF EXISTS ${ident(d)} WITH (FORCE)`);
    },
    log: () => '',
  };
}

/** psql and the server get a plain environment; the run's marker stays, so that a server left behind is found. */
function serverEnv(): NodeJS.ProcessEnv {
  const marker = process.env.SINGPASS_FLOWS_TEST_RUN;
  return { PATH: process.env.PATH, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', ...(marker ? { SINGPASS_FLOWS_TEST_RUN: marker } : {}) };
}

function ident(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain SQL identifier: ${name}`);
  return name;
}
