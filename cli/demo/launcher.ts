/**
 * The interactive demo: the sandbox and an embedded Node-RED running this package's nodes with the signing example
 * flow (examples/singpass-document-signing.json, the same file Node-RED lists under Import ▸ Examples) deployed
 * against the sandbox, all on 127.0.0.1. Only the demo's own settings are filled in (sandbox URL, fresh keys,
 * token secret); the flow itself is used as shipped.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { SingpassFlowsError, invalidInput } from '../../src/errors';
import { generateClientKeys } from '../../src/keys';
// The CLI (not the core) may use the sandbox: the demo runs against a local stand-in of the services.
import { startSandbox, type Sandbox } from '../../sandbox';

export const DEMO_PORTS = { sandbox: 5156, nodeRed: 1890 } as const;
export const SIGNING_EXAMPLE = 'singpass-document-signing.json';

export interface DemoLaunchOptions {
  /** Sandbox port on 127.0.0.1 (0: any free port). */
  sandboxPort: number;
  /** Node-RED port on 127.0.0.1 (0: any free port). */
  nodeRedPort: number;
  /** Folder where the flow writes signed PDFs and results.jsonl / errors.jsonl. */
  signedDir: string;
  /** The sandbox phone scans and approves by itself (the `--auto` run). Default: manual, from the phone page. */
  autoPhone?: boolean;
}

export interface DemoUrls {
  editor: string;
  signingPage: string;
  phone: string;
  sandbox: string;
}

export interface RunningDemo {
  urls: DemoUrls;
  sandbox: Sandbox;
  /** Node-RED's origin, e.g. http://127.0.0.1:1890 (the flow's http-in routes hang off it). */
  nodeRedUrl: string;
  nodeRedVersion: string;
  signedDir: string;
  samplesDir: string;
  /** This run's sandbox root certificate (PEM), written next to the signed PDFs: `singpass-flows verify --root` it. */
  rootCertPath: string;
  /** The sign-in of the signing page for this run (the example lets only signed-in users start a session). */
  signIn: { user: string; password: string };
  /** Stop Node-RED, then the sandbox, and delete the temporary Node-RED user folder. Safe to call twice. */
  stop(): Promise<void>;
}

/** What `scripts/node-red-runtime.js` (shared with the Node-RED end-to-end tests) exports. */
interface NodeRedRuntime {
  startNodeRed(o: { userDir: string; port?: number; packageDir?: string; settings?: Record<string, unknown> }): Promise<{
    url: string; version: string; stop(): Promise<void>;
    RED: { events: { once(event: 'flows:started', cb: () => void): void } };
  }>;
}

type FlowNode = Record<string, unknown> & { id: string; type: string };

/** The package root (holds package.json): from cli/demo (ts) or dist/cli/demo (compiled). */
export function packageRoot(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'examples'))) return dir;
    dir = path.dirname(dir);
  }
  throw new SingpassFlowsError('INVALID_INPUT', 'The demo cannot find the package folder (package.json with examples/ next to it)');
}

/** Refuse a busy port before anything starts, naming the option that changes it. */
export async function assertPortFree(port: number, option: string): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (e: NodeJS.ErrnoException) => {
      reject(e.code === 'EADDRINUSE' || e.code === 'EACCES'
        ? invalidInput(option, `port ${port} on 127.0.0.1 is ${e.code === 'EACCES' ? 'not allowed' : 'already in use (another demo still running, or another program)'}: stop that program or choose another port with ${option} <port>`)
        : e);
    });
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

function loadNodeRedRuntime(root: string): NodeRedRuntime {
  try {
    require.resolve('node-red', { paths: [root] });
  } catch {
    throw new SingpassFlowsError('INVALID_INPUT', 'The interactive demo needs Node-RED, a development dependency: run it from a clone of the repository after `npm ci` (or `npm install node-red`). `singpass-flows demo --cli` runs the command-line round trip without it.');
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(path.join(root, 'scripts', 'node-red-runtime.js')) as NodeRedRuntime;
}

/**
 * The signing example with the demo's settings: the sandbox URL in the Sign API client, a fresh signing key and
 * notification token secret as credentials (Node-RED keeps them in its credential store, not in the flow).
 */
export function demoFlow(flow: FlowNode[], o: { sandboxUrl: string; signingKey: string; notificationSecret: string }): FlowNode[] {
  const clients = flow.filter((n) => n.type === 'singpass-sign-client');
  const secrets = flow.filter((n) => n.type === 'singpass-notification-secret');
  if (clients.length !== 1 || secrets.length !== 1) {
    throw new SingpassFlowsError('INVALID_INPUT', `The signing example must have one Sign API client and one notification secret config node (found ${clients.length} and ${secrets.length})`);
  }
  return flow.map((n) => {
    if (n.type === 'singpass-sign-client') return { ...n, environment: 'sandbox', sandboxUrl: o.sandboxUrl, credentials: { signingKey: o.signingKey } };
    if (n.type === 'singpass-notification-secret') return { ...n, credentials: { secret: o.notificationSecret } };
    return n;
  });
}

/** The route of the first node of `type` in the flow (its `url`), e.g. the webhook or the key set. */
function routeOf(flow: FlowNode[], type: string): string {
  const node = flow.find((n) => n.type === type);
  if (!node || typeof node.url !== 'string') throw new SingpassFlowsError('INVALID_INPUT', `The signing example has no ${type} node with a url`);
  return node.url.startsWith('/') ? node.url : `/${node.url}`;
}

async function deploy(url: string, flow: FlowNode[]): Promise<void> {
  const res = await fetch(`${url}/flows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full', 'node-red-api-version': 'v1' },
    body: JSON.stringify(flow),
  });
  if (res.status !== 204 && res.status !== 200) throw new SingpassFlowsError('HTTP_UNEXPECTED_RESPONSE', `Node-RED refused the signing example flow: HTTP ${res.status} ${await res.text()}`);
}

/** Start everything; on any failure stop what was started and rethrow. */
export async function startDemo(o: DemoLaunchOptions): Promise<RunningDemo> {
  await assertPortFree(o.sandboxPort, '--sandbox-port');
  await assertPortFree(o.nodeRedPort, '--node-red-port');
  const root = packageRoot();
  const runtime = loadNodeRedRuntime(root);
  const example = JSON.parse(readFileSync(path.join(root, 'examples', SIGNING_EXAMPLE), 'utf8')) as FlowNode[];
  const samplesDir = path.join(root, 'assets', 'samples');
  mkdirSync(o.signedDir, { recursive: true });

  const userDir = mkdtempSync(path.join(tmpdir(), 'singpass-flows-demo-node-red-'));
  const stops: (() => Promise<void>)[] = [async () => rmSync(userDir, { recursive: true, force: true })];
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const sandbox = await startSandbox({ port: o.sandboxPort, webhookRetryDelayMs: 500, sessionTtlSeconds: 300, autoPhone: o.autoPhone ? { delayMs: 300 } : undefined });
    stops.push(() => sandbox.close());
    // Each run has a fresh test CA: keep its root beside the PDFs it signs, so they can be checked after the demo.
    const rootCertPath = path.join(o.signedDir, 'sandbox-root-ca.pem');
    writeFileSync(rootCertPath, sandbox.pki.root.certPem);
    // The flow reads these with $env(): where signed PDFs go, where the sample documents are.
    process.env.SINGPASS_SIGNED_DIR = o.signedDir;
    process.env.SINGPASS_SAMPLES_DIR = samplesDir;
    // The example refuses everyone until it has a sign-in (docs/node-red.md): a fresh one for each run.
    const signIn = { user: 'demo', password: randomBytes(18).toString('base64url') };
    process.env.SINGPASS_SIGN_USER = signIn.user;
    process.env.SINGPASS_SIGN_PASSWORD = signIn.password;
    // Node-RED's start-up warnings (no projects, new credential file) are noise here; errors still show.
    process.env.NODE_RED_LOG_LEVEL ??= 'error';
    const nodeRed = await runtime.startNodeRed({ userDir, port: o.nodeRedPort, packageDir: root });
    stops.push(() => nodeRed.stop());

    const keys = await generateClientKeys();
    const flow = demoFlow(example, {
      sandboxUrl: sandbox.baseUrl,
      signingKey: JSON.stringify(keys.signing),
      notificationSecret: randomBytes(32).toString('base64url'),
    });
    const clientId = String(flow.find((n) => n.type === 'singpass-sign-client')!.clientId);
    sandbox.sign.registerClient({
      clientId,
      jwksUrl: `${nodeRed.url}${routeOf(flow, 'singpass-keyset')}`,
      notificationUrl: `${nodeRed.url}${routeOf(flow, 'singpass-sign-webhook')}`,
    });
    // The admin API answers the deploy before the new flows run: wait for them, or the first page load is a 404.
    const flowsStarted = new Promise<void>((resolve) => nodeRed.RED.events.once('flows:started', () => resolve()));
    await deploy(nodeRed.url, flow);
    await flowsStarted;

    return {
      urls: { editor: `${nodeRed.url}/`, signingPage: `${nodeRed.url}/sign`, phone: sandbox.urls.phone, sandbox: `${sandbox.baseUrl}/` },
      sandbox,
      nodeRedUrl: nodeRed.url,
      nodeRedVersion: nodeRed.version,
      signedDir: o.signedDir,
      samplesDir,
      rootCertPath,
      signIn,
      stop,
    };
  } catch (e) {
    await stop();
    if ((e as NodeJS.ErrnoException)?.code === 'EADDRINUSE') {
      throw invalidInput('port', `a port became busy while the demo started: ${(e as Error).message}; choose others with --sandbox-port / --node-red-port`);
    }
    throw e;
  }
}
