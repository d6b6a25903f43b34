/**
 * A throwaway Redis (Debian's redis-server) for end-to-end tests: 127.0.0.1 on its own port, a temporary working
 * folder, no persistence (`--save ''`, no AOF): a restart comes back EMPTY, the harshest case for n8n's Bull queue.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports';
import { registerServer } from './servers';

const run = promisify(execFile);

export interface Redis {
  host: string;
  port: number;
  /** redis-cli against this server; returns its output. */
  cli(...args: string[]): Promise<string>;
  /** Stop (SIGTERM), wait `downMs`, start again on the same port — empty. */
  restart(options?: { downMs?: number }): Promise<void>;
  stop(): Promise<void>;
  log(): string;
}

export function hasRedis(): boolean {
  return ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].some((f) => fs.existsSync(f));
}

export async function startRedis(): Promise<Redis> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';
  const cli = async (...args: string[]) => (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 30_000 })).stdout.trim();
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--protected-mode', 'yes'],
      { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    registerServer(child.pid);
    child.stdout!.on('data', (d) => { output += d; });
    child.stderr!.on('data', (d) => { output += d; });
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}):\n${output.slice(-3000)}`);
      if (await cli('ping').then((o) => o === 'PONG', () => false)) return;
      if (Date.now() > deadline) throw new Error(`redis-server not ready in 30 s:\n${output.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const halt = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  };
  await start();
  return {
    host: '127.0.0.1',
    port,
    cli,
    async restart({ downMs = 0 } = {}) {
      await halt();
      if (downMs) await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
    async stop() {
      await halt();
      fs.rmSync(dir, { recursive: true, force: true });
    },
    log: () => output,
  };
}
