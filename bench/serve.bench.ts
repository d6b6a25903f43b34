/**
 * `singpass-flows serve` beyond one process: N signing sessions (default 200, 1 MB PDFs, B-T) through 1 and then 2
 * serve processes of the built CLI over one shared store (PostgreSQL by default; `--store file` for a folder), behind
 * Debian's nginx (round robin, one URL), against the sandbox in its own process. Both rounds in one run, so the
 * scaling ratio compares like with like on this machine. `--concurrency` users (default 20) at a time open a session
 * and scan it at once, each next user as one is through opening; the phone approves each hash 20 ms after the service accepted it.
 *
 * Prints per round: sessions/s (first start to the poll that saw the last completion, polls 2 s apart), scan→hash p50/p99 (the user waits at the phone),
 * webhook answer p50/p99 (nginx's $request_time for POST /webhook: what the service sees; it gives up at 2 s), lost
 * (not completed), duplicated hashes; and the ratio 2 vs 1. Asserts nothing.
 *
 * Run: npm run bench:serve -- [--sessions 200] [--mb 1] [--store pg|file] [--processes 1,2] [--concurrency 20]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { generateClientKeys } from '../src/keys';
import { derToPem } from '../sandbox/pki';
import { startNginx, type RunningNginx } from '../test/helpers/nginx';
import { startPostgres, type Postgres } from '../test/helpers/postgres';
import { writePdf } from './pdf-file';
import { cpuByKind, cpuSpent } from './proc-cpu';
import { startSandboxProcess } from './sandbox-process';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
}
const pct = (xs: number[], p: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const CLI = path.join(__dirname, '..', 'cli', 'index.js');
/** Each open session's status is asked for this often: the signer page's interval, so the load is production's. */
const POLL_MS = 2000;

function startServe(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /serving on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume(); // keep draining the step log
        resolve({ child, port: Number(m[1]) });
      }
    });
    child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
    child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${out}`)));
  });
}

interface Round { processes: number; sessions: number; wallMs: number; scanToHash: number[]; webhook: number[]; completed: number; lost: number; duplicated: number; cpuMs: Record<string, number>; walBytes?: number }

/** Which part of the set-up a process is, by its command line (the CPU table's columns). */
const KINDS = ['DSAP (serve)', 'service (sandbox)', 'PostgreSQL', 'nginx', 'bench driver'] as const;
/** What the bench, as the DSAP's application, presents to serve's /sessions routes. */
const APPLICATION_KEY = 'bench-application-key-0123456789abcdef';
const APP = { authorization: `Bearer ${APPLICATION_KEY}` };

function kindOf(cmd: string): string | undefined {
  if (/\bserve\b/.test(cmd) && cmd.includes('index.js')) return 'DSAP (serve)';
  if (cmd.includes('sandbox-process')) return 'service (sandbox)';
  if (/postgres/.test(cmd)) return 'PostgreSQL';
  if (/nginx/.test(cmd)) return 'nginx';
  return undefined;
}

async function main(): Promise<void> {
  const sessions = Number(arg('sessions', '200'));
  const mb = Number(arg('mb', '1'));
  const storeKind = arg('store', 'pg');
  const rounds = arg('processes', '1,2').split(',').map(Number);
  const concurrency = Number(arg('concurrency', '20'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-bench-'));
  writePdf(path.join(dir, 'in.pdf'), mb);
  const pdf = fs.readFileSync(path.join(dir, 'in.pdf'));
  const sandbox = await startSandboxProcess({ sandbox: { webhookRetryDelayMs: 2000, sessionTtlSeconds: 600 }, approveDelayMs: 20 });
  const hashes = new Map<string, number>();
  const hashAt = new Map<string, number>();
  sandbox.onHash((signRef) => {
    hashes.set(signRef, (hashes.get(signRef) ?? 0) + 1);
    if (!hashAt.has(signRef)) hashAt.set(signRef, performance.now());
  });
  fs.writeFileSync(path.join(dir, 'root.pem'), derToPem(sandbox.rootCertDer, 'CERTIFICATE'));
  const config = path.join(dir, 'config.json');
  fs.writeFileSync(config, JSON.stringify({
    signApiBaseUrl: sandbox.urls.signApi, clientId: 'bench-dsap', signingKey: (await generateClientKeys()).signing, serviceKeySetUrl: sandbox.urls.signKeys,
    tsaUrl: sandbox.urls.tsa, trustedRoots: ['root.pem'], domainName: 'bench.example.sg', tenantId: 'bench', notificationSecret: 'bench-secret-shared-by-every-process-0123', applicationKey: APPLICATION_KEY,
  }));
  const results: Round[] = [];
  console.log(`serve bench: ${sessions} sessions, ${mb} MB PDF, B-T, store ${storeKind}, ${concurrency} users at a time, ${os.cpus().length} cores, node ${process.version}`);
  for (const n of rounds) {
    let pg: Postgres | undefined;
    let store: string;
    let env: Record<string, string> = {};
    if (storeKind === 'pg') {
      pg = await startPostgres();
      store = `postgres://${pg.user}@127.0.0.1:${pg.port}/${pg.database}`;
      env = { PGPASSWORD: pg.password };
    } else store = fs.mkdtempSync(path.join(dir, 'store-'));
    const procs = [];
    for (let i = 0; i < n; i++) procs.push(await startServe(['--config', config, '--store', store, '--port', '0', '--sweep-ms', '2000'], env));
    const nginx: RunningNginx = await startNginx(procs.map((p) => `127.0.0.1:${p.port}`), { logRequestTime: true });
    await sandbox.registerClient({ clientId: 'bench-dsap', jwksUrl: `${nginx.url}/jwks`, notificationUrl: `${nginx.url}/webhook` });
    const wal0 = pg ? (await pg.sql('SELECT pg_current_wal_lsn()')).trim() : undefined;
    const cpu0 = cpuByKind(kindOf);
    const driver0 = process.cpuUsage();
    const t0 = performance.now();
    const scannedAt = new Map<string, number>();
    // `concurrency` users at a time open a session and scan it at once (the burst), each next one as a slot frees
    const refs: string[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < sessions) {
        const i = next++;
        const res = await fetch(`${nginx.url}/sessions?name=Bench%20${i}.pdf&level=B-T`, { method: 'POST', body: new Uint8Array(pdf), headers: { ...APP, 'content-type': 'application/pdf' } });
        const text = await res.text();
        if (res.status !== 201) throw new Error(`POST /sessions: HTTP ${res.status} ${text.slice(0, 300)}`);
        const { signRef } = JSON.parse(text) as { signRef: string };
        scannedAt.set(signRef, performance.now());
        sandbox.scan(signRef);
        refs.push(signRef);
      }
    }));
    // completion, polled through the one URL every 2 s, as the signer page polls (src/session/signer-page.ts)
    const done = new Set<string>();
    const deadline = Date.now() + 10 * 60_000;
    let last = t0;
    while (done.size < refs.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      for (const ref of refs) {
        if (done.has(ref)) continue;
        const s = (await (await fetch(`${nginx.url}/sessions/${ref}`, { headers: APP })).json()) as { status: string };
        if (s.status === 'completed' || s.status === 'failed' || s.status === 'expired') {
          done.add(ref);
          last = performance.now();
        }
      }
    }
    const driver = process.cpuUsage(driver0);
    const cpuMs = { ...cpuSpent(cpu0, cpuByKind(kindOf)), 'bench driver': (driver.user + driver.system) / 1000 };
    // what PostgreSQL wrote to its log (WAL) for the round: records, PDFs in and out, indexes — the disk's share
    const walBytes = pg && wal0 ? Number((await pg.sql(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '${wal0}')`)).trim()) : undefined;
    let completed = 0;
    for (const ref of refs) if (((await (await fetch(`${nginx.url}/sessions/${ref}`, { headers: APP })).json()) as { status: string }).status === 'completed') completed++;
    const webhook = nginx.requestTimes('/webhook').map((s) => s * 1000);
    results.push({
      processes: n, sessions, wallMs: last - t0, completed, lost: sessions - completed,
      scanToHash: refs.filter((r) => hashAt.has(r)).map((r) => hashAt.get(r)! - scannedAt.get(r)!),
      webhook, duplicated: refs.reduce((k, r) => k + Math.max(0, (hashes.get(r) ?? 0) - 1), 0), cpuMs, walBytes,
    });
    for (const p of procs) p.child.kill('SIGTERM');
    await nginx.stop();
    await pg?.stop();
  }
  console.log('\nprocesses  sessions/s  scan→hash p50/p99 ms  webhook answer p50/p99 ms  completed  lost  duplicated');
  for (const r of results) {
    console.log(`${String(r.processes).padEnd(10)} ${(r.completed / (r.wallMs / 1000)).toFixed(2).padEnd(11)} ${`${pct(r.scanToHash, 50).toFixed(0)} / ${pct(r.scanToHash, 99).toFixed(0)}`.padEnd(20)} ${`${pct(r.webhook, 50).toFixed(0)} / ${pct(r.webhook, 99).toFixed(0)}`.padEnd(26)} ${String(r.completed).padEnd(10)} ${String(r.lost).padEnd(5)} ${r.duplicated}`);
  }
  // Where a session's CPU goes: the basis of the scaling model in docs/benchmarks.md (in production the service is
  // not on the DSAP's machine; the DSAP processes and PostgreSQL are)
  console.log(`\nCPU ms per completed session (and cores busy on average over the round):`);
  console.log(`processes  ${KINDS.map((k) => k.padEnd(20)).join(' ')} total`);
  for (const r of results) {
    const per = (k: string) => (r.cpuMs[k] ?? 0) / Math.max(1, r.completed);
    const busy = (k: string) => (r.cpuMs[k] ?? 0) / r.wallMs;
    const total = KINDS.reduce((t, k) => t + (r.cpuMs[k] ?? 0), 0);
    console.log(`${String(r.processes).padEnd(10)} ${KINDS.map((k) => `${per(k).toFixed(1)} (${busy(k).toFixed(2)})`.padEnd(20)).join(' ')} ${(total / Math.max(1, r.completed)).toFixed(1)} (${(total / r.wallMs).toFixed(2)} of ${os.cpus().length})`);
  }
  for (const r of results) {
    if (r.walBytes !== undefined) console.log(`PostgreSQL WAL written, ${r.processes} process(es): ${(r.walBytes / Math.max(1, r.completed) / 1e6).toFixed(2)} MB per completed session`);
  }
  if (results.length >= 2) {
    const rate = (r: Round) => r.completed / (r.wallMs / 1000);
    console.log(`\nscaling ${results[1]!.processes} vs ${results[0]!.processes} processes: ${(rate(results[1]!) / rate(results[0]!)).toFixed(2)}x sessions/s (same machine, same run; ${os.cpus().length} cores shared by the sandbox, nginx${storeKind === 'pg' ? ', PostgreSQL' : ''} and the serve processes)`);
  }
  await sandbox.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
