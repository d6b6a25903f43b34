/**
 * The front ends of the conformance suite, each started the way its documentation sets it up, against the sandbox,
 * on 127.0.0.1 only: `serve` (the built CLI in a child process, a folder store), Node-RED (a real Node-RED in a child
 * process with the signing example deployed as a user deploys it), n8n (one n8n 2.41 process with the package
 * installed as n8n installs community packages and the sample signing workflow). Each adapter knows only its front end's
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
import { createN8n, importSamples, installCommunityPackage, n8nInstallDir, packTarball } from '../n8n/real-n8n';

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
  /** Recent log lines, for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

/** Start a front end against `sb`, its files under `dir` (made fresh by the caller). */
export type StartFrontEnd = (sb: Sandbox, dir: string) => Promise<FrontEnd>;

const SECRET = 'conformance-suite-notification-secret-0123456789';
/** The n8n sample's upload key (a Header Auth credential on its upload form). */
const UPLOAD_KEY_HEADER = 'x-upload-key';
const UPLOAD_KEY = 'conformance-upload-key-0123456789abcdef';

/** `singpass-flows serve` (dist/cli, as `npm run test:e2e` builds it) with a folder store. */
export const serveFrontEnd: StartFrontEnd = async (sb, dir) => {
  fs.writeFileSync(path.join(dir, 'root.pem'), sb.pki.root.certPem);
  const configPath = path.join(dir, 'config.json');
  fs.writeFileSync(configPath, JSON.stringify({
    signApiBaseUrl: sb.urls.signApi, clientId: 'conformance-serve', signingKey: (await generateClientKeys()).signing,
    serviceKeySetUrl: sb.urls.signKeys, tsaUrl: sb.urls.tsa, trustedRoots: ['root.pem'],
    domainName: 'conformance.example.sg', tenantId: 'conformance', notificationSecret: SECRET,
  }));
  const cli = path.join(REPO_ROOT, 'dist', 'cli', 'index.js');
  const child = spawn(process.execPath, [cli, 'serve', '--config', configPath, '--store', path.join(dir, 'store'), '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
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
  const pdf = await fixture('classic');
  return {
    name: 'serve',
    clientId: 'conformance-serve',
    notificationSecret: SECRET,
    webhookUrl: `${url}/webhook`,
    jwksUrl: `${url}/jwks`,
    async startSession(name) {
      const res = await fetch(`${url}/sessions?name=${encodeURIComponent(name)}&level=B-T`, { method: 'POST', body: new Uint8Array(pdf), headers: { 'content-type': 'application/pdf' } });
      const text = await res.text();
      if (res.status !== 201) throw new Error(`POST /sessions: HTTP ${res.status} ${text}`);
      return (JSON.parse(text) as { signRef: string }).signRef;
    },
    async status(signRef) {
      const res = await fetch(`${url}/sessions/${encodeURIComponent(signRef)}`);
      if (res.status === 404) return undefined;
      return ((await res.json()) as { status: string }).status;
    },
    log: () => lines.slice(-40).join('\n'),
    stop: () => stopChild(child),
  };
};

/**
 * A real Node-RED (scripts/node-red-runtime.js, this package installed in its userDir) with the signing example
 * (examples/singpass-document-signing.json) deployed as docs/node-red.md tells a user: the sandbox URL, a signing key
 * and the notification secret pasted into its config nodes. Sessions are started on the example's upload endpoint;
 * their status is read from the client's session folder (`<userDir>/singpass-sessions/<sign_ref>.json`).
 */
export const nodeRedFrontEnd: StartFrontEnd = async (sb, dir) => {
  const userDir = path.join(dir, 'userDir');
  const nr: NodeRedProcess = await startNodeRedProcess({ userDir, port: await freePort(), env: { SINGPASS_SIGNED_DIR: path.join(dir, 'signed') } });
  try {
    const keys = await generateClientKeys();
    const flow = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', 'singpass-document-signing.json'), 'utf8')) as Record<string, unknown>[]).map((n) => {
      if (n.type === 'singpass-sign-client') return { ...n, sandboxUrl: sb.baseUrl, credentials: { signingKey: JSON.stringify(keys.signing) } };
      if (n.type === 'singpass-notification-secret') return { ...n, credentials: { secret: SECRET } };
      return n;
    });
    const client = flow.find((n) => n.type === 'singpass-sign-client')!;
    const webhook = flow.find((n) => n.type === 'singpass-sign-webhook')!;
    const keySet = flow.find((n) => n.type === 'singpass-keyset')!;
    await deploy(nr.url, flow);
    const jwksUrl = `${nr.url}${String(keySet.url)}`;
    for (let i = 0; ; i++) { // the flows start a moment after the deploy's answer
      const r = await fetch(jwksUrl).catch(() => undefined);
      if (r?.status === 200) break;
      if (i > 200) throw new Error(`no key set at ${jwksUrl}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    const pdf = await fixture('classic');
    return {
      name: 'Node-RED',
      clientId: String(client.clientId),
      notificationSecret: SECRET,
      webhookUrl: `${nr.url}${String(webhook.url)}`,
      jwksUrl,
      async startSession(name) {
        const res = await fetch(`${nr.url}/sign/start?name=${encodeURIComponent(name)}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(pdf) });
        const text = await res.text();
        if (res.status !== 200) throw new Error(`POST /sign/start: HTTP ${res.status} ${text}`);
        return (JSON.parse(text) as { signRef: string }).signRef;
      },
      async status(signRef) {
        try {
          const record = JSON.parse(fs.readFileSync(path.join(userDir, 'singpass-sessions', `${signRef}.json`), 'utf8')) as { state?: { status?: string } };
          return record.state?.status;
        } catch {
          return undefined; // not there, or read while being replaced: asked again by the caller's poll
        }
      },
      log: () => nr.log().slice(-4000),
      stop: () => nr.stop(),
    };
  } catch (e) {
    await nr.stop();
    throw e;
  }
};

/**
 * A real n8n 2.41 (one process, SQLite; queue mode is too heavy for this suite on a small machine) with this package
 * packed and installed as n8n installs a community package, the sample workflows (flows/n8n/document-signing.json,
 * key-set-endpoint.json) imported and published with their credentials, as docs/n8n.md tells a user. Sessions are
 * started by uploading a PDF to the sample's form endpoint; their status is read from the sample's Folder store.
 * Needs `bash scripts/install-n8n.sh` first.
 */
export const n8nFrontEnd: StartFrontEnd = async (sb) => {
  const installDir = n8nInstallDir();
  if (!installDir) throw new Error('n8n is not installed: run scripts/install-n8n.sh first');
  const [tarball, port] = await Promise.all([packTarball(), freePort()]);
  const n8n = await createN8n(installDir, port);
  const stop = async () => {
    await n8n.stop();
    fs.rmSync(n8n.userFolder, { recursive: true, force: true });
    fs.rmSync(path.dirname(tarball), { recursive: true, force: true });
  };
  try {
    await installCommunityPackage(n8n, tarball);
    const clientId = 'conformance-n8n';
    await importSamples(n8n, ['document-signing.json', 'key-set-endpoint.json'], [
      { id: 'spflSignApi00001', name: 'Singpass Sign API (sandbox)', type: 'singpassSignApi', data: { environment: 'sandbox', sandboxUrl: sb.baseUrl, clientId, signingKey: JSON.stringify((await generateClientKeys()).signing), tenantId: 'conformance', domainName: 'conformance.example.sg', tsaUrl: '', trustedRoots: '' } },
      { id: 'spflTokenSec0001', name: 'Singpass notification token secret', type: 'singpassNotificationTokenApi', data: { secret: SECRET } },
      // the upload form's key (Header Auth), where the sample asks for one
      { id: 'spflUploadKey001', name: 'Upload key (Singpass signing sample)', type: 'httpHeaderAuth', data: { name: UPLOAD_KEY_HEADER, value: UPLOAD_KEY } },
    ]);
    await n8n.start();
    const pdf = await fixture('classic');
    return {
      name: 'n8n',
      clientId,
      notificationSecret: SECRET,
      webhookUrl: `${n8n.baseUrl}/webhook/singpass-sign/webhook`,
      jwksUrl: `${n8n.baseUrl}/webhook/singpass-sign/jwks`,
      async startSession(name) {
        const res = await fetch(`${n8n.baseUrl}/webhook/singpass-sign/document`, {
          method: 'POST', headers: { 'content-type': 'application/pdf', 'content-disposition': `attachment; filename="${name}"`, [UPLOAD_KEY_HEADER]: UPLOAD_KEY }, body: new Uint8Array(pdf), redirect: 'manual',
        });
        const text = await res.text();
        const signRef = res.headers.get('x-sign-ref');
        // 303 to the signer's page
        if (res.status !== 303 || !signRef) throw new Error(`upload: HTTP ${res.status} ${text.slice(0, 500)}`);
        return signRef;
      },
      async status(signRef) {
        try {
          return (JSON.parse(fs.readFileSync(path.join(n8n.filesDir, `${signRef}.json`), 'utf8')) as { state?: { status?: string } }).state?.status;
        } catch {
          return undefined;
        }
      },
      log: () => n8n.log().slice(-4000),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
};

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
