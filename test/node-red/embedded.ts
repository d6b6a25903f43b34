/**
 * A real Node-RED in a child process (scripts/node-red-runtime.js: this package installed in its userDir, 127.0.0.1,
 * default settings: no context storage), so a test can kill it — SIGKILL, nothing flushed — and start it again on the same userDir
 * and port, as after a crash or a restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';

import * as fs from 'node:fs';

/** The repository root, from test/node-red (jest) or dist/test/node-red (compiled). */
export const REPO_ROOT = [path.resolve(__dirname, '..', '..'), path.resolve(__dirname, '..', '..', '..')].find((d) => fs.existsSync(path.join(d, 'scripts', 'node-red-runtime.js')))!;
const RUNTIME = path.join(REPO_ROOT, 'scripts', 'node-red-runtime.js');

export interface NodeRedProcess {
  url: string;
  version: string;
  child: ChildProcess;
  /** stderr so far (Node-RED's warnings and errors, for failure messages). */
  log(): string;
  /** stdout so far (Node-RED's info log lines with NODE_RED_LOG_LEVEL=info). */
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

export function startNodeRedProcess(o: { userDir: string; port: number; env?: Record<string, string>; node?: string; nodeRedDir?: string; packageDir?: string }): Promise<NodeRedProcess> {
  const args = [RUNTIME, '--user-dir', o.userDir, '--port', String(o.port)];
  if (o.nodeRedDir) args.push('--node-red', o.nodeRedDir);
  if (o.packageDir) args.push('--package', o.packageDir);
  const child = spawn(o.node ?? process.execPath, args, { env: { ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`Node-RED did not start within 60 s:\n${stderr}`)), 60_000);
    const fail = (e: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(e);
    };
    const early = (code: number | null) => fail(new Error(`Node-RED exited (${code}) before it was ready:\n${stderr}`));
    child.once('exit', early);
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const line = stdout.split('\n').find((l) => l.startsWith('{"ready"'));
      if (!line) return;
      clearTimeout(timer);
      child.removeListener('exit', early); // not `exited`: stop() waits on it
      const { url, version } = JSON.parse(line) as { url: string; version: string };
      resolve({
        url, version, child, log: () => stderr, output: () => stdout,
        async stop(signal: NodeJS.Signals = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await exited;
        },
      });
    });
  });
}

/** Deploy a whole flow (with `credentials` on the nodes that need them) through the admin API. */
export async function deploy(url: string, flow: unknown[]): Promise<void> {
  const res = await fetch(`${url}/flows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full', 'node-red-api-version': 'v1' },
    body: JSON.stringify(flow),
  });
  if (res.status !== 204 && res.status !== 200) throw new Error(`deploy failed: HTTP ${res.status} ${await res.text()}`);
}

/**
 * Poll `probe` until it gives a value. A probe that throws is asked again until the deadline: the files it reads are
 * written by Node-RED's file nodes at the same time, so a read can see half a line.
 */
export async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 60_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    let v: T | undefined;
    let failure: unknown;
    try {
      v = await probe();
    } catch (e) {
      failure = e;
    }
    if (failure === undefined && v !== undefined && v !== false) return v as T;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}${failure ? `: ${(failure as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
