/**
 * Concurrent signing sessions through the session runner (src/session) against the sandbox (its own process by
 * default: the service is a remote peer): N sessions (default 200) with 1 MB PDFs, one webhook URL for all, the
 * phone scanning when told and approving every submitted hash 20 ms later. Rounds, all in one run:
 * - baseline: the same sessions one at a time;
 * - burst: N sessions started at once, each scanned as soon as it exists (N certificate webhooks within ~1 s);
 * - spread: N sessions started at once (all open together), scans spread evenly over `--spread` seconds (default
 *   20 s), as people pick up their phones.
 * Prints sessions/s, p50/p99 from "certificate webhook received" to "hash submitted" (goal p99 ≤ 500 ms), where
 * that time goes, the whole session, how long the webhook took to answer (the service times out at 2 s), and the
 * counts of lost sessions and duplicated hashes (goal 0). Asserts nothing.
 *
 * Run: `npm run bench` (all benches) or `npm run build && node dist/bench/sessions.bench.js [--sessions 200]
 * [--level B-T] [--mb 1] [--spread 20] [--rounds baseline,burst,spread] [--sandbox process|inline]
 * [--cert-concurrency 4|Infinity]` (the baseline
 * always runs).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { listen, readBody } from '../sandbox/http';
import { generateClientKeys, loadSigningKey, publicKeySet } from '../src/keys';
import { SigningApiClient, createNotificationTokens } from '../src/sign';
import { randomToken } from '../src/secrets';
import type { PadesLevel } from '../src/pades/verify';
import { createSessionRunner, createSigningEngine } from '../src/session';
import { writePdf } from './pdf-file';
import { startInlineSandbox, startSandboxProcess } from './sandbox-process';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
}

const pct = (xs: number[], p: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

interface RoundFigures {
  label: string;
  sessions: number;
  wallMs: number;
  certToHash: number[];
  total: number[];
  /** Time to answer the certificate webhook (the service gives up on an attempt after 2 s). */
  webhookAnswer: number[];
  completed: number;
  lost: number;
  duplicatedHashes: number;
  webhook503: number;
  failures: Record<string, number>;
  breakdown: Record<string, number[]>;
  /** CPU time of this (the DSAP's) process over the round, per session: less sensitive to other load than wall time. */
  cpuMsPerSession: number;
}

type Pacing = { kind: 'sequential' } | { kind: 'burst' } | { kind: 'spread'; seconds: number };

async function main(): Promise<void> {
  const n = Number(arg('sessions', '200'));
  const level = arg('level', 'B-T') as PadesLevel;
  const mb = Number(arg('mb', '1'));
  const spreadSeconds = Number(arg('spread', '20'));
  const dir = path.join(os.tmpdir(), 'singpass-flows-bench');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `bench-${mb}mb.pdf`);
  if (!fs.existsSync(file)) writePdf(file, mb);
  const pdf = fs.readFileSync(file);

  // Real-service-like delivery policy (3 attempts, 2 s apart, 2 s timeout), sessions long enough for the run. The
  // service is a remote peer in production: by default it runs in its own process so only the DSAP side is measured.
  const sandboxOptions = { sandbox: { sessionTtlSeconds: 900 }, approveDelayMs: 20 };
  const inline = arg('sandbox', 'process') === 'inline';
  const sandbox = inline ? await startInlineSandbox(sandboxOptions) : await startSandboxProcess(sandboxOptions);
  const key = await loadSigningKey({ key: (await generateClientKeys()).signing });
  const engine = createSigningEngine({
    client: new SigningApiClient({ baseUrl: sandbox.urls.signApi, clientId: 'bench-dsap', signingKey: key }),
    serviceKeySetUrl: sandbox.urls.signKeys,
    notificationTokens: createNotificationTokens({ secret: randomToken() }),
    trustedRoots: [sandbox.rootCertDer], // intermediates learned via AIA (once) and cached
    tsaUrl: sandbox.urls.tsa, domainName: 'bench.example.sg', tenantId: 'bench',
  });
  await engine.verifier.warmUp();

  const certReceived = new Map<string, number>();
  const certAnswered = new Map<string, number>();
  const hashSubmitted = new Map<string, number>();
  const startedAt = new Map<string, number>();
  const endedAt = new Map<string, number>();
  const hashes = new Map<string, number>();
  sandbox.onHash((signRef) => hashes.set(signRef, (hashes.get(signRef) ?? 0) + 1));
  let webhook503 = 0;

  /** Time of every step per session, to say where cert→hash goes (queue, checks, prepare, hash call). */
  const stepAt = new Map<string, Record<string, number>>();
  const certificateConcurrency = Number(arg('cert-concurrency', '4'));
  const runner = createSessionRunner({
    engine, certificateConcurrency,
    onStep(signRef, step) {
      const at = stepAt.get(signRef) ?? {};
      at[step.step] ??= performance.now();
      stepAt.set(signRef, at);
      if (step.step === 'submitted') hashSubmitted.set(signRef, performance.now());
      if (step.step === 'ended') endedAt.set(signRef, performance.now());
    },
  });
  const dsap = await listen(async (req, res, url) => {
    if (url.pathname === '/jwks') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(publicKeySet([key])));
    const t0 = performance.now();
    const body = await readBody(req, 1024 * 1024);
    const r = await runner.handleWebhook({ headers: req.headers, body });
    if (r.status === 503) webhook503++;
    if (r.status === 200) {
      // Bench bookkeeping only (the runner verified it): which session, which event, first arrival.
      const claims = JSON.parse(Buffer.from(String(JSON.parse(body.toString()).token).split('.')[1]!, 'base64url').toString()) as Record<string, string>;
      if (claims.request_type === 'user_cert' && !certReceived.has(claims.sign_ref!)) {
        certReceived.set(claims.sign_ref!, t0);
        certAnswered.set(claims.sign_ref!, performance.now() - t0);
      }
      return void res.writeHead(200, { 'content-length': '0' }).end();
    }
    res.writeHead(r.status, { 'content-type': 'application/json' }).end(JSON.stringify(r.body));
  });
  await sandbox.registerClient({ clientId: 'bench-dsap', jwksUrl: `${dsap.baseUrl}/jwks`, notificationUrl: `${dsap.baseUrl}/webhook` });

  /** One message per failure code, to say why sessions failed. */
  const failureExamples = new Map<string, string>();
  const round = async (label: string, count: number, pacing: Pacing): Promise<RoundFigures> => {
    const refs: string[] = [];
    const failures: Record<string, number> = {};
    const fail = (code: string, message?: string) => {
      failures[code] = (failures[code] ?? 0) + 1;
      if (message && !failureExamples.has(code)) failureExamples.set(code, message);
    };
    const before503 = webhook503;
    const open = async (i: number): Promise<string> => {
      const t = performance.now();
      const s = await runner.start(pdf, { documentName: `Bench ${i}.pdf`, level });
      refs.push(s.signRef);
      startedAt.set(s.signRef, t);
      return s.signRef;
    };
    const end = async (signRef: string): Promise<void> => {
      const out = await runner.outcome(signRef);
      if (out.record.state.status !== 'completed') fail(out.record.error?.code ?? out.record.state.status, out.record.error?.message);
    };
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    if (pacing.kind === 'sequential') {
      for (let i = 0; i < count; i++) {
        const signRef = await open(i);
        sandbox.scan(signRef);
        await end(signRef);
      }
    } else {
      const opened = await Promise.all(Array.from({ length: count }, async (_, i) => {
        try {
          const signRef = await open(i);
          if (pacing.kind === 'burst') sandbox.scan(signRef);
          return signRef;
        } catch (e) {
          fail(String((e as { code?: string })?.code ?? e), (e as Error)?.message);
          return undefined;
        }
      }));
      if (pacing.kind === 'spread') {
        // Every session is open now; the users scan one after another, evenly over the window.
        const gap = (pacing.seconds * 1000) / count;
        opened.forEach((signRef, i) => signRef && setTimeout(() => sandbox.scan(signRef), i * gap));
      }
      await Promise.all(opened.filter((r): r is string => r !== undefined).map(end));
    }
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const certToHash = refs.filter((r) => certReceived.has(r) && hashSubmitted.has(r)).map((r) => hashSubmitted.get(r)! - certReceived.get(r)!);
    const total = refs.filter((r) => endedAt.has(r)).map((r) => endedAt.get(r)! - startedAt.get(r)!);
    const completed = count - Object.values(failures).reduce((a, b) => a + b, 0);
    const gap = (from: (r: string) => number | undefined, to: string) => refs.map((r) => (stepAt.get(r)?.[to] ?? NaN) - (from(r) ?? NaN)).filter((x) => !Number.isNaN(x));
    const breakdown = {
      'webhook→applied': gap((r) => certReceived.get(r), 'certificate'),
      'checks (chain+OCSP)': gap((r) => stepAt.get(r)?.certificate, 'certificateChecked'),
      prepare: gap((r) => stepAt.get(r)?.certificateChecked, 'prepared'),
      'hash call': gap((r) => stepAt.get(r)?.prepared, 'submitted'),
    };
    return {
      label, sessions: count, wallMs, certToHash, total, completed,
      webhookAnswer: refs.filter((r) => certAnswered.has(r)).map((r) => certAnswered.get(r)!),
      lost: count - refs.filter((r) => endedAt.has(r)).length, // never ended (or never started)
      duplicatedHashes: refs.reduce((a, r) => a + Math.max(0, (hashes.get(r) ?? 0) - 1), 0),
      webhook503: webhook503 - before503,
      failures, breakdown, cpuMsPerSession: (cpu.user + cpu.system) / 1000 / count,
    };
  };

  const loadBefore = os.loadavg();
  await round('warm-up', 3, { kind: 'sequential' }); // JIT, AIA intermediate fetched once, key set
  const wanted = arg('rounds', 'baseline,burst,spread').split(',');
  const baseline = await round('baseline (one at a time)', 10, { kind: 'sequential' });
  const burst = wanted.includes('burst') ? await round(`${n} at once, scans in a burst`, n, { kind: 'burst' }) : undefined;
  const spread = wanted.includes('spread') ? await round(`${n} at once, scans spread over ${spreadSeconds} s`, n, { kind: 'spread', seconds: spreadSeconds }) : undefined;
  const rounds = [baseline, burst, spread].filter((r): r is RoundFigures => r !== undefined);
  const loadAfter = os.loadavg();
  const phoneErrors = await sandbox.phoneErrors();
  await runner.close();
  await sandbox.close();
  await dsap.close();

  const ms = (x: number) => `${x.toFixed(0)} ms`;
  const la = (l: number[]) => l.map((x) => x.toFixed(1)).join(' ');
  console.log(`Signing sessions through the runner (node ${process.version}, ${os.cpus().length} CPUs, load average before ${la(loadBefore)}, after ${la(loadAfter)})`);
  console.log(`PDF ${(pdf.length / 1024 / 1024).toFixed(2)} MB, level ${level}, sandbox (${inline ? 'in this process' : 'own process'}), certificateConcurrency ${certificateConcurrency}, phone approves 20 ms after the hash, service-like webhook retries (3 × 2 s)`);
  console.log('round | sessions | completed | sessions/s | cert→hash p50 | p99 | max | session p50 | p99 | webhook answer p99 | lost | duplicated hashes | webhook 503s | DSAP CPU per session | failures');
  for (const r of rounds) {
    console.log([
      r.label, r.sessions, r.completed, (r.completed / (r.wallMs / 1000)).toFixed(1),
      ms(pct(r.certToHash, 50)), ms(pct(r.certToHash, 99)), ms(Math.max(...r.certToHash)),
      ms(pct(r.total, 50)), ms(pct(r.total, 99)), ms(pct(r.webhookAnswer, 99)), r.lost, r.duplicatedHashes, r.webhook503, ms(r.cpuMsPerSession), JSON.stringify(r.failures),
    ].join(' | '));
  }
  for (const r of rounds) {
    console.log(`${r.label}: cert→hash breakdown p50/p99: ${Object.entries(r.breakdown).map(([k, xs]) => `${k} ${ms(pct(xs, 50))}/${ms(pct(xs, 99))}`).join(', ')}`);
  }
  for (const [code, message] of failureExamples) console.log(`failure ${code}, e.g.: ${message}`);
  if (phoneErrors.length) console.log(`phone errors: ${phoneErrors.slice(0, 5).join('; ')}${phoneErrors.length > 5 ? ` (+${phoneErrors.length - 5})` : ''}`);
  const ratio = (r: RoundFigures) => `${r.label} ${(pct(r.certToHash, 99) / pct(baseline.certToHash, 99)).toFixed(1)}×`;
  console.log(`cert→hash p99 / baseline p99: ${rounds.slice(1).map(ratio).join(', ')} (goal: p99 ≤ 500 ms; lost 0; duplicated 0)`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
