/**
 * The demo as a user runs it: the built CLI (`node dist/cli/index.js demo`, what `npm run demo` runs) in a
 * child process on free ports, stopped with Ctrl-C (SIGINT). `npm test` builds dist first.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { makeNssDb } from '../helpers/pki-tools';

const run = promisify(execFile);
export const ROOT = path.resolve(__dirname, '..', '..');
export const CLI = path.join(ROOT, 'dist', 'cli', 'index.js');
/** Screenshots and downloads of the demo tests (gitignored). */
export const ARTIFACTS = path.join(ROOT, 'artifacts', 'demo');

export function requireBuild(): void {
  if (!existsSync(CLI) || !existsSync(path.join(ROOT, 'dist', 'node-red'))) {
    throw new Error(`${CLI} is missing: the demo runs the built package; run "npm run build" (npm test does) first`);
  }
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run the CLI to the end. */
export function runCli(args: string[], o: { timeoutMs?: number; tmp?: string } = {}): Promise<CliRun> {
  const timeoutMs = o.timeoutMs ?? 180_000;
  return new Promise((resolve, reject) => {
    const env = o.tmp ? { ...process.env, TMPDIR: o.tmp } : process.env;
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`singpass-flows ${args.join(' ')} did not end within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface InteractiveDemo {
  signingPage: string;
  /** The sign-in the demo printed for its signing page. */
  signIn: { username: string; password: string };
  phone: string;
  editor: string;
  sandbox: string;
  child: ChildProcess;
  output(): string;
  /** Ctrl-C; resolves with the exit code and everything printed (rejects, after SIGKILL, if it did not stop in time). */
  interrupt(timeoutMs?: number): Promise<CliRun>;
}

/** `singpass-flows demo` on free ports, ready once it printed its URLs. */
export function startInteractiveDemo(signedDir: string): Promise<InteractiveDemo> {
  const child = spawn(process.execPath, [CLI, 'demo', '--sandbox-port', '0', '--node-red-port', '0', '--signed-dir', signedDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let ready = false;
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the demo did not print its URLs within 90 s:\n${stdout}\n${stderr}`));
    }, 90_000);
    const early = (code: number | null): void => {
      clearTimeout(timer);
      reject(new Error(`the demo exited (${code}) before it was ready:\n${stdout}\n${stderr}`));
    };
    child.once('exit', early);
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (ready || !stdout.includes('Press Ctrl-C')) return;
      ready = true;
      clearTimeout(timer);
      child.off('exit', early);
      const url = (label: string): string => {
        const m = new RegExp(`^\\s*${label}\\s+(http://127\\.0\\.0\\.1:\\d+\\S*)`, 'm').exec(stdout);
        if (!m) throw new Error(`no "${label}" URL in:\n${stdout}`);
        return m[1]!;
      };
      resolve({
        signingPage: url('Signing page'), phone: url('Phone page'), editor: url('Node-RED editor'), sandbox: url('Sandbox'),
        signIn: signInOf(stdout),
        child,
        output: () => `${stdout}\n${stderr}`,
        async interrupt(timeoutMs = 30_000) {
          child.kill('SIGINT');
          let timer: NodeJS.Timeout | undefined;
          const late = new Promise<never>((_, rej) => {
            timer = setTimeout(() => {
              child.kill('SIGKILL');
              rej(new Error(`the demo did not stop within ${timeoutMs} ms of Ctrl-C:\n${stdout}\n${stderr}`));
            }, timeoutMs);
          });
          try {
            const code = await Promise.race([exited, late]);
            return { code, stdout, stderr };
          } finally {
            clearTimeout(timer);
          }
        },
      });
    });
  });
}

/** The sign-in line the demo prints: `Sign-in  user <user>, password <password>`. */
function signInOf(stdout: string): { username: string; password: string } {
  const m = /^\s*Sign-in\s+user (\S+), password (\S+)/m.exec(stdout);
  if (!m) throw new Error(`no "Sign-in" line in:\n${stdout}`);
  return { username: m[1]!, password: m[2]! };
}

/** pdfsig's report with an NSS database trusting the given root (PEM). */
export async function pdfsigTrusting(file: string, rootPem: string): Promise<string> {
  const db = await makeNssDb(mkdtempSync(path.join(tmpdir(), 'demo-nss-')), rootPem);
  try {
    return (await run('pdfsig', ['-nssdir', `sql:${db}`, file])).stdout;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    return `${err.stdout ?? ''}\n${err.stderr ?? ''}`;
  } finally {
    rmSync(db, { recursive: true, force: true });
  }
}

/** Node-RED user folders a demo run (given TMPDIR=tmp) left behind: there must be none after it stopped. */
export function leftoverUserDirs(tmp: string): string[] {
  return readdirSync(tmp).filter((d) => d.startsWith('singpass-flows-demo-node-red-'));
}

export function readText(file: string): string {
  return readFileSync(file, 'utf8');
}
