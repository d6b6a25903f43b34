/**
 * The front ends of the conformance suite, each started the way its documentation sets it up, against the sandbox,
 * on 127.0.0.1 only: `serve` (the built CLI in a child process, a folder store), Node-RED (a real Node-RED in a child
 * process with the signing example deployed as a user deploys it), n8n (one n8n 2.41 process with the package
 * installed as n8n installs community packages and the sample signing workflow; queue mode: ./n8n-queue-front-end.ts).
 * Each adapter knows only its front end's
 * documented surface: how to start it, its webhook and key-set URLs, how a user starts a session (upload a PDF), and
 * where the session's status can be read.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { fixture } from '../fixtures/pdfs';
import { REPO_ROOT, deploy, freePort, startNodeRedProcess, type NodeRedProcess } from '../node-red/embedded';
import { createN8n, importSamples, installCommunityPackage, n8nInstallDir, releasePackage, sessionStoreCredential, uploadHeaders, uploadKeyCredential } from '../n8n/real-n8n';

export interface FrontEnd {
  name: string;
  /** The DSAP's client id at the signing service. */
  clientId: string;
  /** The DSAP's notification secret (what it issues and checks client_notification_tokens with). */
  notificationSecret: string;
  /** Where the service's deliveries go (the relay passes them on here). */
  webhookUrl: string;
  /** The DSAP's public key set (registered with the service). */
  jwksUrl: string;
  /** Start a signing session as a user does (upload a PDF); its sign_ref. */
  startSession(name: string): Promise<string>;
  /** The session's status as the front end stored it (`created` … `completed`, `failed`, `expired`), if known. */
  status(signRef: string): Promise<string | undefined>;
  /** What the front end stored about the session's end: status, phase, the result (level reached, `missing`) or the error. */
  outcome(signRef: string): Promise<Outcome | undefined>;
  /** The signed PDF once the front end is done with it (every step its flow runs after the session completed). */
  signedPdf(signRef: string): Promise<Buffer>;
  /**
   * SIGKILL the front end's process, or all of them (n8n queue mode), nothing flushed; `restart` starts it again on
   * the same files, databases and ports.
   */
  kill(): Promise<void>;
  restart(): Promise<void>;
  /** False once killed or stopped, until `restart`. */
  running(): boolean;
  /**
   * Take the session store away and bring it back as it was (`storeUp` does nothing when it is not down): a folder
   * store is replaced by a regular file (unusable whoever runs the test, root too); a PostgreSQL store's server stops.
   */
  storeDown(): void | Promise<void>;
  storeUp(): void | Promise<void>;
  /**
   * The flow's storage of signed PDFs (the folder or SFTP server its sample writes them to), where a session's
   * hand-over ends: what it holds for a session, and an outage of it (`up` does nothing when it is not down).
   */
  storage: {
    stored(signRef: string): Promise<Buffer | undefined>;
    down(): void | Promise<void>;
    up(): void | Promise<void>;
  };
  /** Recent log lines, for failure messages. */
  log(): string;
  /**
   * Runs started through the flow's webhooks so far, where the engine records them (n8n's webhook executions): a
   * refused delivery must start none. Undefined where the engine keeps no such count.
   */
  webhookRuns?(): Promise<number>;
  stop(): Promise<void>;
}

export interface Outcome {
  status?: string;
  /** The stored phase (`handingOver`, `completed`, `undelivered`…). */
  phase?: string;
  handOver?: { attempts?: number; lastFailure?: { code?: string; message?: string }; acknowledgedAt?: number; undelivered?: { code?: string; message?: string } };
  result?: { level?: string; valid?: boolean; missing?: { requested?: string; stage?: string; code?: string; message?: string } };
  error?: { code?: string; message?: string };
  lastFinishFailure?: { stage?: string; code?: string; attempts?: number };
  lastSubmitFailure?: { code?: string; attempts?: number };
}

/** Poll `probe` until it gives a value (a probe that throws is asked again), or fail naming `what`. */
export async function poll<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await Promise.resolve().then(probe).catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A folder's outage: it moves aside and a regular file takes its path (ENOTDIR / EEXIST for every access). */
function folderOutage(dir: string): { down(): void; up(): void } {
  const aside = `${dir}.away`;
  return {
    down() {
      fs.renameSync(dir, aside);
      fs.writeFileSync(dir, 'the session store is down (conformance fault)');
    },
    up() {
      if (!fs.existsSync(aside)) return;
      fs.rmSync(dir, { force: true });
      fs.renameSync(aside, dir);
    },
  };
}

/** What a stored session record says about the session's end (its status is `state.status`). */
export function recordOutcome(record: unknown): Outcome {
  const r = record as Outcome & { state?: { status?: string } };
  return { ...r, status: r.state?.status };
}

/** The signed PDF a front end delivered into `dir` for `signRef` (its hand-over file name ends with the sign_ref). */
function deliveredPdf(dir: string, signRef: string): Buffer | undefined {
  try {
    const name = fs.readdirSync(dir).find((f) => f.endsWith(`-${signRef}.pdf`));
    return name ? fs.readFileSync(path.join(dir, name)) : undefined;
  } catch {
    return undefined; // the folder is away (a storage outage)
  }
}

/** A session record as a folder store keeps it (`<folder>/<sign_ref>.json`). */
function storedOutcome(file: string): Outcome | undefined {
  try {
    return recordOutcome(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch {
    return undefined; // not there, or read while being replaced: asked again by the caller's poll
  }
}

/** A front end whose flow does not hand its signed PDF to a storage of the suite's yet (its hand-over scenarios are pending). */
export function noStorage(name: string): FrontEnd['storage'] {
  const no = (): never => { throw new Error(`${name}: the flow's storage is not wired into the conformance suite`); };
  return { stored: async () => no(), down: no, up: () => undefined };
}

/** Start a front end against `sb`, its files under `dir` (made fresh by the caller). */
export type StartFrontEnd = (sb: Sandbox, dir: string) => Promise<FrontEnd>;

export const SECRET = 'conformance-suite-notification-secret-0123456789';
/** The n8n sample's upload key (a Header Auth credential on its upload form). */
/** n8n's resume schedule every 2 s (not 30), a step left alone 5 s (not 45): faults resolve within a test. */
export const RESUME_INTERVAL_S = 2;
export const RESUME_IDLE_S = 5;
/**
 * Every front end's hand-over policy in the suite, set where its documentation says: a hand-over not acknowledged
 * within 4 s is handed over again, and given up after 60 s (not 5 min and a day), so hand-over faults resolve within a test.
 * The window must outlast a restart of the whole front end (n8n queue mode: four processes) under the suite's load.
 */
export const HANDOVER_LEASE_S = 4;
export const HANDOVER_WINDOW_S = 60;
/** What the applications of the `serve` front end present to its /sessions routes. */
const SERVE_APPLICATION_KEY = 'conformance-application-key-0123456789abcdef';

/** Uploads `pdf` to the n8n signing sample's form (with its upload key); its sign_ref from the 303 to the signer's page. */
export async function uploadToSample(documentUrl: string, name: string, pdf: Buffer): Promise<string> {
  const res = await fetch(documentUrl, { method: 'POST', headers: uploadHeaders(name), body: new Uint8Array(pdf), redirect: 'manual' });
  const text = await res.text();
  const signRef = res.headers.get('x-sign-ref');
  if (res.status !== 303 || !signRef) throw new Error(`upload: HTTP ${res.status} ${text.slice(0, 500)}`);
  return signRef;
}

/** `singpass-flows serve` (dist/cli, as `npm run test:e2e` builds it) with a folder store. */
export const serveFrontEnd: StartFrontEnd = async (sb, dir) => {
  fs.writeFileSync(path.join(dir, 'root.pem'), sb.pki.root.certPem);
  const configPath = path.join(dir, 'config.json');
  fs.writeFileSync(configPath, JSON.stringify({
    signApiBaseUrl: sb.urls.signApi, clientId: 'conformance-serve', signingKey: (await generateClientKeys()).signing,
    serviceKeySetUrl: sb.urls.signKeys, tsaUrl: sb.urls.tsa, trustedRoots: ['root.pem'],
    domainName: 'conformance.example.sg', tenantId: 'conformance', notificationSecret: SECRET, applicationKey: SERVE_APPLICATION_KEY,
    handOverLeaseSeconds: HANDOVER_LEASE_S, handOverWindowSeconds: HANDOVER_WINDOW_S,
  }));
  // the flow's storage: the folder serve delivers signed PDFs to
  const delivered = path.join(dir, 'delivered');
  fs.mkdirSync(delivered);
  const app = { authorization: `Bearer ${SERVE_APPLICATION_KEY}` };
  const cli = path.join(REPO_ROOT, 'dist', 'cli', 'index.js');
  const store = path.join(dir, 'store');
  const port = await freePort(); // the same port after a restart (the sandbox has the key set's URL)
  const lines: string[] = [];
  let child: ChildProcess;
  const start = async () => {
    child = spawn(process.execPath, [cli, 'serve', '--config', configPath, '--store', store, '--port', String(port), '--deliver-to', delivered], { stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<string>((resolve, reject) => {
      let buf = '';
      child.stdout!.on('data', (d: Buffer) => {
        buf += d.toString();
        const parts = buf.split('\n');
        buf = parts.pop()!;
        for (const line of parts) {
          lines.push(line);
          const m = /^serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
          if (m) resolve(m[1]!);
        }
      });
      child.stderr!.on('data', (d: Buffer) => lines.push(`stderr: ${d.toString()}`));
      child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${lines.join('\n')}`)));
    });
  };
  await start();
  const url = `http://127.0.0.1:${port}`;
  const outage = folderOutage(store);
  const deliveryOutage = folderOutage(delivered);
  const outcome = async (signRef: string): Promise<Outcome | undefined> => {
    const res = await fetch(`${url}/sessions/${encodeURIComponent(signRef)}`, { headers: app });
    if (res.status !== 200) return undefined; // 404: not stored; 500: the store is down
    const o = (await res.json()) as Outcome & { retrying?: { step: string; stage?: string; code?: string; attempts?: number } };
    const r = o.retrying;
    return { ...o, ...(r?.step === 'finish' ? { lastFinishFailure: r } : r?.step === 'hash' ? { lastSubmitFailure: r } : {}) };
  };
  const pdf = await fixture('classic');
  return {
    name: 'serve',
    clientId: 'conformance-serve',
    notificationSecret: SECRET,
    webhookUrl: `${url}/webhook`,
    jwksUrl: `${url}/jwks`,
    async startSession(name) {
      const res = await fetch(`${url}/sessions?name=${encodeURIComponent(name)}&level=B-LTA`, { method: 'POST', body: new Uint8Array(pdf), headers: { ...app, 'content-type': 'application/pdf' } });
      const text = await res.text();
      if (res.status !== 201) throw new Error(`POST /sessions: HTTP ${res.status} ${text}`);
      return (JSON.parse(text) as { signRef: string }).signRef;
    },
    status: async (signRef) => (await outcome(signRef))?.status,
    outcome,
    signedPdf: (signRef) => poll(`the signed PDF of ${signRef}`, async () => {
      const res = await fetch(`${url}/sessions/${encodeURIComponent(signRef)}/signed.pdf`, { headers: app });
      return res.status === 200 ? Buffer.from(await res.arrayBuffer()) : undefined;
    }, 30_000),
    kill: () => stopChild(child, 'SIGKILL'),
    restart: start,
    running: () => child.exitCode === null && child.signalCode === null,
    storeDown: outage.down,
    storeUp: outage.up,
    storage: { stored: async (signRef) => deliveredPdf(delivered, signRef), down: deliveryOutage.down, up: deliveryOutage.up },
    log: () => lines.slice(-40).join('\n'),
    stop: () => stopChild(child),
  };
};

/**
 * A real Node-RED (scripts/node-red-runtime.js, this package installed in its userDir) with the signing example
 * (examples/singpass-document-signing.json) deployed as docs/node-red.md tells a user: the sandbox URL, a signing key
 * and the notification secret pasted into its config nodes, the hand-over lease and window set on the client. Sessions
 * are started on the example's upload endpoint; their status is read from the client's session folder
 * (`<userDir>/singpass-sessions/<sign_ref>.json`); the flow's storage is the signed folder it writes `<sign_ref>.pdf` to.
 */
export const nodeRedFrontEnd: StartFrontEnd = async (sb, dir) => {
  const userDir = path.join(dir, 'userDir');
  // the example's sign-in, in Node-RED's environment (docs/node-red.md): only a signed-in caller starts a session
  const signIn = { SINGPASS_SIGN_USER: 'conformance', SINGPASS_SIGN_PASSWORD: 'conformance-sign-in-password-0123' };
  const authorization = `Basic ${Buffer.from(`${signIn.SINGPASS_SIGN_USER}:${signIn.SINGPASS_SIGN_PASSWORD}`).toString('base64')}`;
  const signedDir = path.join(dir, 'signed');
  const port = await freePort(); // the same port after a restart (the sandbox has the key set's URL)
  const start = () => startNodeRedProcess({ userDir, port, env: { SINGPASS_SIGNED_DIR: signedDir, ...signIn } });
  let nr: NodeRedProcess = await start();
  const logs: string[] = [];
  const sessions = path.join(userDir, 'singpass-sessions');
  try {
    const keys = await generateClientKeys();
    const flow = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', 'singpass-document-signing.json'), 'utf8')) as Record<string, unknown>[]).map((n) => {
      // the hand-over lease and window as a user sets them on the client (docs/node-red.md)
      if (n.type === 'singpass-sign-client') {
        return { ...n, sandboxUrl: sb.baseUrl, handOverLeaseSeconds: String(HANDOVER_LEASE_S), handOverWindowSeconds: String(HANDOVER_WINDOW_S), credentials: { signingKey: JSON.stringify(keys.signing) } };
      }
      if (n.type === 'singpass-notification-secret') return { ...n, credentials: { secret: SECRET } };
      return n;
    });
    const client = flow.find((n) => n.type === 'singpass-sign-client')!;
    const webhook = flow.find((n) => n.type === 'singpass-sign-webhook')!;
    const keySet = flow.find((n) => n.type === 'singpass-keyset')!;
    await deploy(nr.url, flow);
    const jwksUrl = `${nr.url}${String(keySet.url)}`;
    // the flows start a moment after the deploy's answer (and after a restart)
    const flowsStarted = () => poll(`the key set at ${jwksUrl}`, async () => ((await fetch(jwksUrl)).status === 200 ? true : undefined), 30_000);
    await flowsStarted();
    const outage = folderOutage(sessions);
    // the example's storage: the signed folder, `<signRef>.pdf` (written before the hand-over is acknowledged)
    fs.mkdirSync(signedDir, { recursive: true });
    const storageOutage = folderOutage(signedDir);
    const storedPdf = (signRef: string): Buffer | undefined => {
      try {
        return fs.readFileSync(path.join(signedDir, `${signRef}.pdf`));
      } catch {
        return undefined; // not written (yet), or the folder is down
      }
    };
    const resultLine = (signRef: string) => {
      try {
        return fs.readFileSync(path.join(signedDir, 'results.jsonl'), 'utf8').split('\n').find((l) => l.includes(`"signRef":"${signRef}"`));
      } catch {
        return undefined;
      }
    };
    const outcome = async (signRef: string) => storedOutcome(path.join(sessions, `${signRef}.json`));
    const pdf = await fixture('classic');
    return {
      name: 'Node-RED',
      clientId: String(client.clientId),
      notificationSecret: SECRET,
      webhookUrl: `${nr.url}${String(webhook.url)}`,
      jwksUrl,
      async startSession(name) {
        const res = await fetch(`${nr.url}/sign/start?name=${encodeURIComponent(name)}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', authorization }, body: new Uint8Array(pdf) });
        const text = await res.text();
        if (res.status !== 200) throw new Error(`POST /sign/start: HTTP ${res.status} ${text}`);
        return (JSON.parse(text) as { signRef: string }).signRef;
      },
      status: async (signRef) => (await outcome(signRef))?.status,
      outcome,
      // the example writes the PDF, then its result line
      signedPdf: (signRef) => poll(`the signed PDF of ${signRef}`, () => (resultLine(signRef) ? fs.readFileSync(path.join(signedDir, `${signRef}.pdf`)) : undefined), 30_000),
      async kill() {
        logs.push(nr.log());
        await nr.stop('SIGKILL');
      },
      async restart() {
        nr = await start();
        await flowsStarted();
      },
      running: () => nr.child.exitCode === null && nr.child.signalCode === null,
      storeDown: outage.down,
      storeUp: outage.up,
      storage: { stored: async (signRef) => storedPdf(signRef), down: storageOutage.down, up: storageOutage.up },
      log: () => (logs.join('\n') + nr.log()).slice(-4000),
      stop: () => nr.stop(),
    };
  } catch (e) {
    await nr.stop();
    throw e;
  }
};

/**
 * A real n8n 2.41 (one process, SQLite, the sample's Folder store; queue mode is ./n8n-queue-front-end.ts) with this
 * package packed and installed as n8n installs a community package, the sample workflows (flows/n8n/document-signing.json,
 * key-set-endpoint.json) imported and published with their credentials, as docs/n8n.md tells a user. Sessions are
 * started by uploading a PDF to the sample's form endpoint; their status is read from the folder of the sample's store credential.
 * Needs `bash scripts/install-n8n.sh` first.
 */
const SIGNING_WORKFLOW_ID = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'flows', 'n8n', 'document-signing.json'), 'utf8')) as { id: string }).id;

export const n8nFrontEnd: StartFrontEnd = async (sb) => {
  const installDir = n8nInstallDir();
  if (!installDir) throw new Error('n8n is not installed: run scripts/install-n8n.sh first');
  const port = await freePort();
  const n8n = await createN8n(installDir, port);
  const stop = async () => {
    await n8n.stop();
    fs.rmSync(n8n.userFolder, { recursive: true, force: true });
    releasePackage();
  };
  try {
    await installCommunityPackage(n8n);
    const clientId = 'conformance-n8n';
    await importSamples(n8n, ['document-signing.json', 'key-set-endpoint.json'], [
      { id: 'spflSignApi00001', name: 'Singpass Sign API (sandbox)', type: 'singpassSignApi', data: { environment: 'sandbox', sandboxUrl: sb.baseUrl, clientId, signingKey: JSON.stringify((await generateClientKeys()).signing), tenantId: 'conformance', domainName: 'conformance.example.sg', tsaUrl: '', trustedRoots: '' } },
      { id: 'spflTokenSec0001', name: 'Singpass notification token secret', type: 'singpassNotificationTokenApi', data: { secret: SECRET } },
      // the upload form's key (Header Auth), where the sample asks for one
      uploadKeyCredential(),
      // the sample's one session store: its folder (the status below reads the records there); a step left alone 5 s
      // (not 45), so faults resolve within a test
      sessionStoreCredential({ idleSeconds: RESUME_IDLE_S }),
    ], {
      // the resume schedule every 2 s (not 30); every run kept, so that a test can tell whether a delivery started one;
      // Run Due Step's hand-over lease and window (the suite's, not 5 min and a day)
      'document-signing.json': [['"secondsInterval": 30', `"secondsInterval": ${RESUME_INTERVAL_S}`],
        ['"saveDataSuccessExecution": "none"', '"saveDataSuccessExecution": "all"'],
        ['"handOverLeaseSeconds": 300', `"handOverLeaseSeconds": ${HANDOVER_LEASE_S}`],
        ['"handOverWindowSeconds": 86400', `"handOverWindowSeconds": ${HANDOVER_WINDOW_S}`]],
    });
    await n8n.start();
    const outage = folderOutage(n8n.filesDir);
    const outcome = async (signRef: string) => storedOutcome(path.join(n8n.filesDir, `${signRef}.json`));
    // the sample's storage: Store Signed PDF's folder, one file per session
    const storage = folderOutage(n8n.signedDir);
    const stored = async (signRef: string): Promise<Buffer | undefined> => {
      try {
        return fs.readFileSync(path.join(n8n.signedDir, `${signRef}-signed.pdf`));
      } catch {
        return undefined; // not there, or the storage is down
      }
    };
    const pdf = await fixture('classic');
    return {
      name: 'n8n',
      clientId,
      notificationSecret: SECRET,
      webhookUrl: `${n8n.baseUrl}/webhook/singpass-sign/webhook`,
      jwksUrl: `${n8n.baseUrl}/webhook/singpass-sign/jwks`,
      startSession: (name) => uploadToSample(`${n8n.baseUrl}/webhook/singpass-sign/document`, name, pdf),
      status: async (signRef) => (await outcome(signRef))?.status,
      outcome,
      // what the sample's storage holds once the flow acknowledged it (written whole by then)
      signedPdf: (signRef) => poll(`the sample's stored signed PDF of ${signRef}`, async () => ((await outcome(signRef))?.phase === 'completed' ? stored(signRef) : undefined), 90_000),
      kill: () => n8n.kill(),
      restart: () => n8n.start(),
      running: () => n8n.pid() !== undefined,
      storeDown: outage.down,
      storeUp: outage.up,
      storage: { stored, down: storage.down, up: storage.up },
      log: () => n8n.log().slice(-4000),
      async webhookRuns() {
        // those still starting count too: a run is recorded as it starts
        return (await n8n.executions(SIGNING_WORKFLOW_ID)).filter((e) => e.mode === 'webhook').length;
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
};

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
