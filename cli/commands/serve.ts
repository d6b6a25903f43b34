import { statSync } from 'node:fs';
import * as http from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readUserFile, wantsHelp, type CliCommand } from '../command';
import { SingpassFlowsError, invalidInput, isSingpassFlowsError } from '../../src/errors';
import { writeFileAtomic } from '../../src/files';
import { loadSigningKey, publicKeySet } from '../../src/keys';
import type { PadesLevel } from '../../src/pades';
import {
  MemorySessionStore, SESSION_POLICY, createSessionRunner, createSigningEngine, type SessionRunner, type SessionStore,
} from '../../src/session';
import { constantTimeEqual } from '../../src/secrets';
import { SigningApiClient, createNotificationTokens, readBearer } from '../../src/sign';
import { LEVELS } from '../signing-session';
import { parseSignConfig } from './sign';
import { openStore } from '../store';

const HELP = `Usage: singpass-flows serve --config <file.json> [--port 8080] [--host 127.0.0.1]
                            [--store <folder> | --store postgres://user@host/db] [--sweep-ms 5000] [--take-over-ms 45000]
                            [--keep-ended-days 7] [--deliver-to <folder>]

Runs a signing service for your applications (you are the DSAP): one process, or several behind one URL over a
shared store. Each signing session is kept in the store at every step (the claimed certificate, the hash before it
is sent, the user's signature before finishing, the signed PDF before it is handed over), so a process that dies
loses nothing: the others take it over (--sweep-ms), or it resumes after a restart. A session ends when its signed
PDF is delivered: written to the --deliver-to folder, or downloaded in full by your application.

Routes:
  POST /sessions?name=<document name>&level=B-LTA   body: the PDF   → {signRef, qrPayload, challengeCode, expiresAt}
       (optional &appLink=<https URL>: your app's registered link the Singpass app returns the user to)
  GET  /sessions/<signRef>                           → the session's status, error, result
  GET  /sessions/<signRef>/signed.pdf                → the signed PDF once completed (404 before); without
       --deliver-to, a complete download is the delivery (the session then ends; until then it stays "handingOver")
       (the /sessions routes answer only your applications: "Authorization: Bearer <applicationKey>", else 401)
  POST /webhook                                      the notification URL to register with the signing service
  GET  /jwks                                         your public key set (register its URL with the service)
  GET  /healthz

Options:
  --config <file>   the service and your keys, as for "sign --config" (signApiBaseUrl, clientId, signingKey,
                    serviceKeySetUrl, tsaUrl, trustedRoots, domainName, tenantId) plus notificationSecret: at least
                    32 characters, the SAME in every process (it checks the webhook's Bearer tokens), and
                    applicationKey: at least 32 characters, what your applications send to the /sessions routes (a
                    list of keys while you change it)
  --store <where>   a folder (one host) or a postgres:// URL (several hosts); default: memory (one process, a
                    restart loses the sessions in flight)
  --port <n>        default 8080 (0: any free port; the chosen one is printed)
  --host <addr>     default 127.0.0.1; put a reverse proxy (TLS) in front
  --sweep-ms <n>    how often to look for sessions another process left (default 5000 with a shared store; 0: off)
  --take-over-ms <n>  how long a session in the middle of a step is left to the process working on it before
                    another takes it over (default 45000, the session policy)
  --deliver-to <folder>  where each signed PDF is written (<document>-signed-<signRef>.pdf, atomically; the same
                    name again if it is delivered twice); a write that fails is tried again, and a session not
                    delivered within a day ends "undelivered" with its PDF kept in the store. Config keys
                    handOverLeaseSeconds (300) and handOverWindowSeconds (86400) change those times
  --keep-ended-days <n>  how long an ended session (completed, failed, expired) and its PDFs stay in the store;
                    checked at start and hourly (default 7, the session policy; the folder store keeps the signed
                    PDFs, <signRef>-signed.pdf, for you to move or delete)
  -h, --help        show this help`;

export interface ServeOptions {
  configText: string;
  baseDir: string;
  store?: string;
  port: number;
  host: string;
  sweepMs?: number;
  /** How long a session in the middle of a step is left to the process working on it (runner takeOverAfterMs). */
  takeOverMs?: number;
  /** How long ended sessions stay in the store (runner retentionMs); default the session policy's. */
  keepEndedMs?: number;
  /** How often the store is cleaned of them (default hourly). */
  cleanUpIntervalMs?: number;
  /** Where signed PDFs are delivered (a folder); without it an application's complete download delivers them. */
  deliverTo?: string;
  log: (line: string) => void;
}

export interface RunningServer {
  url: string;
  runner: SessionRunner;
  close(): Promise<void>;
}

const MAX_PDF = 50 * 1024 * 1024;
const CLEAN_UP_EVERY_MS = 3600_000;
const DAY_MS = 86_400_000;

/** A retention for the log: days, else hours, else seconds. */
const formatKept = (ms: number): string => (ms >= DAY_MS ? `${+(ms / DAY_MS).toFixed(2)} d` : ms >= 3600_000 ? `${+(ms / 3600_000).toFixed(2)} h` : `${Math.round(ms / 1000)} s`);

/** Start the server (exported for tests and benches: they run it in-process or as a child process). */
export async function startServe(o: ServeOptions): Promise<RunningServer> {
  const raw = JSON.parse(o.configText) as Record<string, unknown>;
  const config = parseSignConfig(JSON.stringify({ listenPort: 0, ...raw }));
  const secret = raw.notificationSecret;
  if (typeof secret !== 'string' || Buffer.byteLength(secret) < 32) throw invalidInput('config.notificationSecret', 'is required: at least 32 characters, the same in every process of this service');
  const applicationKeys = readApplicationKeys(raw.applicationKey);
  let signingKey;
  try {
    signingKey = await loadSigningKey({ key: config.signingKey });
  } catch (e) {
    throw isSingpassFlowsError(e) ? invalidInput('config.signingKey', e.message) : e;
  }
  const trustedRoots = config.trustedRoots.map((f) => readUserFile(resolve(o.baseDir, f), 'config.trustedRoots'));
  const engine = createSigningEngine({
    client: new SigningApiClient({ baseUrl: config.signApiBaseUrl, clientId: config.clientId, signingKey, audience: config.audience }),
    serviceKeySetUrl: config.serviceKeySetUrl,
    notificationTokens: createNotificationTokens({ secret }),
    trustedRoots, tsaUrl: config.tsaUrl, domainName: config.domainName, tenantId: config.tenantId ?? 'singpass-flows serve',
  });
  const store: SessionStore & { close?(): Promise<void> } = o.store ? await openStore(o.store, { takeOverMs: o.takeOverMs }) : new MemorySessionStore();
  const shared = o.store !== undefined && !(store instanceof MemorySessionStore);
  const sweepMs = o.sweepMs ?? (shared ? 5000 : 0);
  const keepEndedMs = o.keepEndedMs ?? SESSION_POLICY.retentionMs;
  const policy = handOverPolicy(raw);
  const deliverTo = o.deliverTo ? resolve(o.deliverTo) : undefined;
  const runner = createSessionRunner({
    engine, store, policy,
    // the session ends when its PDF is in the folder (or, without one, when an application downloaded it in full)
    onHandOver: async (h) => {
      if (!deliverTo) return false;
      await writeFileAtomic(join(deliverTo, h.fileName), h.pdf);
      o.log(`session ${h.signRef} signed PDF written to ${h.fileName}${h.attempt > 1 ? ` (delivery ${h.attempt})` : ''}`);
      return true;
    },
    ...(sweepMs > 0 ? { sweepIntervalMs: sweepMs } : {}),
    ...(o.takeOverMs !== undefined ? { takeOverAfterMs: o.takeOverMs } : {}),
    // One line per step, for operators (no personal data: the sign_ref and the step's name, codes on failures).
    onStep: (signRef, step) => {
      if (step.step === 'submitDeferred' || step.step === 'finishDeferred') o.log(`session ${signRef} ${step.step} ${step.code} (attempt ${step.attempts})`);
      else if (step.step === 'handOverFailed' || step.step === 'undelivered') o.log(`session ${signRef} ${step.step} ${step.code}`);
      else if (step.step !== 'ended' && step.step !== 'verified') o.log(`session ${signRef} ${step.step}`);
    },
    onEnded: (out) => {
      const missing = out.record.result?.missing;
      const why = out.record.error ? ` (${out.record.error.code})` : missing ? ` at ${out.record.result?.level}, short of ${missing.requested} (${missing.code})` : '';
      o.log(`session ${out.record.state.signRef} ${out.record.state.status}${why}`);
    },
    onRefused: (r) => { if (r.status !== 200) o.log(`webhook refused (${r.status}): ${r.code}`); },
    onSweepFailed: (f) => o.log(`sweep could not read the store (${f.code}): ${f.message}; trying again in ${sweepMs} ms`),
    cleanUpIntervalMs: o.cleanUpIntervalMs ?? CLEAN_UP_EVERY_MS,
    retentionMs: keepEndedMs,
    onCleanedUp: (c) => o.log(`clean-up: ${c.deleted} ended session(s) deleted (ended more than ${formatKept(keepEndedMs)} ago)`),
    onCleanUpFailed: (f) => o.log(`clean-up could not reach the store (${f.code}): ${f.message}; trying again in an hour`),
  });
  const jwks = JSON.stringify(publicKeySet([signingKey]));
  const fromApplication = (headers: http.IncomingHttpHeaders): boolean => {
    const presented = readBearer(headers);
    // every key compared, so the answer's timing does not tell which one (or whether any) came close
    return presented !== undefined && applicationKeys.map((k) => constantTimeEqual(presented, k)).includes(true);
  };
  const server = http.createServer((req, res) => {
    handle(req, res).catch((e: unknown) => json(res, 500, { code: 'INTERNAL', message: (e as Error).message }));
  });
  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const p = url.pathname;
    if (req.method === 'GET' && p === '/healthz') return json(res, 200, { ok: true });
    if (req.method === 'GET' && p === '/jwks') return void res.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
    if (req.method === 'POST' && p === '/webhook') {
      const body = await readBody(req, 1024 * 1024);
      const r = await runner.handleWebhook({ headers: req.headers, body });
      return 'body' in r && r.body !== undefined ? json(res, r.status, r.body) : void res.writeHead(r.status, { 'content-length': '0' }).end();
    }
    // starting a session and reading one (its status, the signed PDF) are for the DSAP's own applications
    if ((p === '/sessions' || p.startsWith('/sessions/')) && !fromApplication(req.headers)) {
      res.setHeader('www-authenticate', 'Bearer realm="singpass-flows serve"');
      return json(res, 401, { code: 'UNAUTHORIZED', message: 'send the applicationKey of this service\'s config as "Authorization: Bearer <key>"' });
    }
    if (req.method === 'POST' && p === '/sessions') {
      try {
        const level = (url.searchParams.get('level') ?? 'B-LTA') as PadesLevel;
        if (!LEVELS.includes(level)) throw invalidInput('level', `must be one of ${LEVELS.join(', ')}`);
        const pdf = await readBody(req, MAX_PDF);
        const s = await runner.start(pdf, { documentName: url.searchParams.get('name') ?? 'Document.pdf', level, ...(url.searchParams.get('appLink') ? { appLink: url.searchParams.get('appLink')! } : {}) });
        return json(res, 201, { signRef: s.signRef, qrPayload: s.qrPayload, challengeCode: s.challengeCode, expiresAt: s.expiresAt });
      } catch (e) {
        return json(res, isSingpassFlowsError(e) && e.code === 'INVALID_INPUT' ? 400 : 502, errorJson(e));
      }
    }
    const m = /^\/sessions\/([^/]+)(\/signed\.pdf)?$/.exec(p);
    if (req.method === 'GET' && m) {
      const signRef = decodeURIComponent(m[1]);
      const record = await store.get(signRef);
      if (!record) return json(res, 404, { code: 'SIGN_REF_NOT_FOUND', message: 'no such session here' });
      if (!m[2]) {
        return json(res, 200, {
          signRef, status: record.state.status, phase: record.phase, ...(record.error ? { error: record.error } : {}), ...(record.result ? { result: record.result } : {}),
          ...(record.handOver ? { handOver: record.handOver } : {}),
          ...(record.lastSubmitFailure ? { retrying: { step: 'hash', ...record.lastSubmitFailure } } : {}),
          ...(record.lastFinishFailure ? { retrying: { step: 'finish', ...record.lastFinishFailure } } : {}),
        });
      }
      const pdf = record.state.status === 'completed' ? await store.getSignedDocument?.(signRef) : undefined;
      if (!pdf) return json(res, 404, { code: 'NOT_SIGNED', message: `the session is ${record.state.status}` });
      // without a delivery folder the application's download is the delivery: once all of it was sent
      if (!deliverTo) res.once('finish', () => void runner.acknowledge(signRef).catch((e: unknown) => o.log(`session ${signRef} download not recorded (${isSingpassFlowsError(e) ? e.code : 'STORE_BUSY'}); delivered again later`)));
      return void res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': pdf.length }).end(pdf);
    }
    return json(res, 404, { code: 'NOT_FOUND', message: `no route ${req.method ?? ''} ${p}` });
  }
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(o.port, o.host, () => ok());
  });
  await runner.resume(); // what this process (or a previous run) left in the store
  const address = server.address() as { port: number };
  const url = `http://${o.host}:${address.port}`;
  return {
    url, runner,
    async close() {
      await new Promise<void>((ok) => server.close(() => ok()));
      await runner.close();
      await store.close?.();
    },
  };
}

/** The config's hand-over times (seconds), unset ones the session policy's. */
function handOverPolicy(raw: Record<string, unknown>): { handOverLeaseMs?: number; handOverWindowMs?: number } {
  const seconds = (key: string): number | undefined => {
    const v = raw[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > 365 * 86_400) throw invalidInput(`config.${key}`, 'must be a number of seconds above 0 (at most a year)');
    return v * 1000;
  };
  const lease = seconds('handOverLeaseSeconds');
  const window = seconds('handOverWindowSeconds');
  return { ...(lease !== undefined ? { handOverLeaseMs: lease } : {}), ...(window !== undefined ? { handOverWindowMs: window } : {}) };
}

/** `applicationKey`: one key, or several while it is being changed; each at least 32 characters. */
function readApplicationKeys(v: unknown): string[] {
  const keys = typeof v === 'string' ? [v] : Array.isArray(v) ? v : [];
  if (keys.length === 0 || !keys.every((k) => typeof k === 'string' && Buffer.byteLength(k) >= 32)) {
    throw invalidInput('config.applicationKey', 'is required: at least 32 characters (or a list of such keys), sent by your applications as "Authorization: Bearer <key>" to /sessions');
  }
  return keys as string[];
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

function errorJson(e: unknown): { code: string; message: string } {
  return isSingpassFlowsError(e) ? { code: e.code, message: e.message } : { code: 'INTERNAL', message: (e as Error)?.message ?? String(e) };
}

function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((ok, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        fail(new SingpassFlowsError('INVALID_INPUT', `the request body is larger than ${limit} bytes`));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => ok(Buffer.concat(chunks)));
    req.on('error', fail);
  });
}

/** --deliver-to: an existing folder (a missing one is a typo more often than a wish to create it). */
function checkFolder(dir: string): string {
  try {
    if (statSync(dir).isDirectory()) return dir;
  } catch {
    // reported below
  }
  throw invalidInput('--deliver-to', `${dir} is not an existing folder`);
}

export const serveCommand: CliCommand = {
  name: 'serve',
  summary: 'run a signing service for your applications (one process, or several behind one URL over a shared store)',
  help: HELP,
  async run(argv) {
    if (wantsHelp(argv)) {
      console.log(HELP);
      return 0;
    }
    let values: Record<string, string | undefined>;
    try {
      ({ values } = parseArgs({
        args: argv, strict: true, allowPositionals: false,
        options: { config: { type: 'string' }, store: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, 'sweep-ms': { type: 'string' }, 'take-over-ms': { type: 'string' }, 'keep-ended-days': { type: 'string' }, 'deliver-to': { type: 'string' } },
      }) as { values: Record<string, string | undefined> });
      if (!values.config) throw invalidInput('--config', 'is required');
      const port = Number(values.port ?? 8080);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw invalidInput('--port', 'must be a port number');
      const sweepMs = values['sweep-ms'] === undefined ? undefined : Number(values['sweep-ms']);
      if (sweepMs !== undefined && (!Number.isInteger(sweepMs) || (sweepMs !== 0 && sweepMs < 100))) throw invalidInput('--sweep-ms', 'must be 0 (off) or at least 100');
      const takeOverMs = values['take-over-ms'] === undefined ? undefined : Number(values['take-over-ms']);
      if (takeOverMs !== undefined && (!Number.isInteger(takeOverMs) || takeOverMs < 0)) throw invalidInput('--take-over-ms', 'must be a whole number of milliseconds');
      const keepDays = values['keep-ended-days'] === undefined ? undefined : Number(values['keep-ended-days']);
      if (keepDays !== undefined && !(Number.isFinite(keepDays) && keepDays > 0 && keepDays <= 3650)) throw invalidInput('--keep-ended-days', 'must be a number of days above 0 (at most 3650)');
      const path = resolve(values.config);
      const running = await startServe({
        configText: readUserFile(path, '--config').toString('utf8'), baseDir: dirname(path), store: values.store, port, host: values.host ?? '127.0.0.1', sweepMs, takeOverMs,
        ...(keepDays !== undefined ? { keepEndedMs: keepDays * DAY_MS } : {}),
        ...(values['deliver-to'] !== undefined ? { deliverTo: checkFolder(values['deliver-to']) } : {}),
        log: (line) => console.log(line),
      });
      console.log(`serving on ${running.url} (webhook ${running.url}/webhook, key set ${running.url}/jwks)`);
      await new Promise<void>((ok) => {
        const stop = () => ok();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await running.close();
      return 0;
    } catch (e) {
      console.error(isSingpassFlowsError(e) ? `${e.code}: ${e.message}` : (e as Error).message);
      return 1;
    }
  },
};
