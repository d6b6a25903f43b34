/**
 * Concurrent signing sessions through the session runner (src/session) against the in-process sandbox with the
 * automatic phone: N sessions (default 200) with 1 MB PDFs started at once, one webhook URL for all. Prints
 * sessions/s, p50/p99 from "certificate webhook received" to "hash submitted" (goal p99 ≤ 500 ms), p50/p99 of the
 * whole session, and the counts of lost sessions and duplicated hashes (goal 0). A baseline (the same sessions one
 * at a time) is measured in the same run. Asserts nothing.
 *
 * Run: `npm run bench` (all benches) or `npm run build && node dist/bench/sessions.bench.js [--sessions 200]
 * [--level B-T] [--mb 1]`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startSandbox } from '../sandbox';
import { listen, readBody } from '../sandbox/http';
import { generateClientKeys, loadSigningKey, publicKeySet } from '../src/keys';
import { SigningApiClient, createNotificationTokens } from '../src/sign';
import { randomToken } from '../src/secrets';
import type { PadesLevel } from '../src/pades/verify';
import { createSessionRunner, createSigningEngine } from '../src/session';
import { writePdf } from './pdf-file';

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
  sessions: number;
  wallMs: number;
  certToHash: number[];
  total: number[];
  completed: number;
  lost: number;
  duplicatedHashes: number;
  webhook503: number;
  failures: Record<string, number>;
  breakdown: Record<string, number[]>;
}

async function main(): Promise<void> {
  const n = Number(arg('sessions', '200'));
  const level = arg('level', 'B-T') as PadesLevel;
  const mb = Number(arg('mb', '1'));
  const dir = path.join(os.tmpdir(), 'singpass-flows-bench');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `bench-${mb}mb.pdf`);
  if (!fs.existsSync(file)) writePdf(file, mb);
  const pdf = fs.readFileSync(file);

  // Real-service-like delivery policy (3 attempts, 2 s apart, 2 s timeout), sessions long enough for the run.
  const sandbox = await startSandbox({ autoPhone: { delayMs: 20 }, sessionTtlSeconds: 900 });
  const key = await loadSigningKey({ key: (await generateClientKeys()).signing });
  const engine = createSigningEngine({
    client: new SigningApiClient({ baseUrl: sandbox.urls.signApi, clientId: 'bench-dsap', signingKey: key }),
    serviceKeySetUrl: sandbox.urls.signKeys,
    notificationTokens: createNotificationTokens({ secret: randomToken() }),
    trustedRoots: [sandbox.pki.root.certDer], // intermediates learned via AIA (once) and cached
    tsaUrl: sandbox.urls.tsa, domainName: 'bench.example.sg', tenantId: 'bench',
  });
  await engine.verifier.warmUp();

  const certReceived = new Map<string, number>();
  const hashSubmitted = new Map<string, number>();
  const startedAt = new Map<string, number>();
  const endedAt = new Map<string, number>();
  const hashes = new Map<string, number>();
  sandbox.sign.events.on('hash', (s: { signRef: string }) => hashes.set(s.signRef, (hashes.get(s.signRef) ?? 0) + 1));
  let webhook503 = 0;

  /** Time of every step per session, to say where cert→hash goes (queue, checks, prepare, hash call). */
  const stepAt = new Map<string, Record<string, number>>();
  const runner = createSessionRunner({
    engine,
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
      if (claims.request_type === 'user_cert' && !certReceived.has(claims.sign_ref!)) certReceived.set(claims.sign_ref!, t0);
      return void res.writeHead(200, { 'content-length': '0' }).end();
    }
    res.writeHead(r.status, { 'content-type': 'application/json' }).end(JSON.stringify(r.body));
  });
  sandbox.sign.registerClient({ clientId: 'bench-dsap', jwksUrl: `${dsap.baseUrl}/jwks`, notificationUrl: `${dsap.baseUrl}/webhook` });

  const round = async (count: number, concurrent: boolean): Promise<RoundFigures> => {
    const refs: string[] = [];
    const failures: Record<string, number> = {};
    const before503 = webhook503;
    const one = async (i: number): Promise<void> => {
      const t = performance.now();
      const s = await runner.start(pdf, { documentName: `Bench ${i}.pdf`, level });
      refs.push(s.signRef);
      startedAt.set(s.signRef, t);
      const out = await runner.outcome(s.signRef);
      if (out.record.state.status !== 'completed') failures[out.record.error?.code ?? out.record.state.status] = (failures[out.record.error?.code ?? out.record.state.status] ?? 0) + 1;
    };
    const t0 = performance.now();
    if (concurrent) await Promise.all(Array.from({ length: count }, (_, i) => one(i).catch((e) => { failures[String(e?.code ?? e)] = (failures[String(e?.code ?? e)] ?? 0) + 1; })));
    else for (let i = 0; i < count; i++) await one(i);
    const wallMs = performance.now() - t0;
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
      sessions: count, wallMs, certToHash, total, completed,
      lost: count - refs.filter((r) => endedAt.has(r)).length, // never ended (or never started)
      duplicatedHashes: refs.reduce((a, r) => a + Math.max(0, (hashes.get(r) ?? 0) - 1), 0),
      webhook503: webhook503 - before503,
      failures, breakdown,
    };
  };

  await round(3, false); // warm-up (JIT, AIA intermediate fetched once, key set)
  const baseline = await round(10, false);
  const load = await round(n, true);
  await runner.close();
  await sandbox.close();
  await dsap.close();

  const ms = (x: number) => `${x.toFixed(0)} ms`;
  console.log(`Signing sessions through the runner (node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')})`);
  console.log(`PDF ${(pdf.length / 1024 / 1024).toFixed(2)} MB, level ${level}, sandbox with automatic phone, service-like webhook retries (3 × 2 s)`);
  console.log('round | sessions | completed | sessions/s | cert→hash p50 | p99 | max | session p50 | p99 | lost | duplicated hashes | webhook 503s | failures');
  for (const [label, r] of [['baseline (one at a time)', baseline], [`${n} concurrent`, load]] as const) {
    console.log([
      label, r.sessions, r.completed, (r.completed / (r.wallMs / 1000)).toFixed(1),
      ms(pct(r.certToHash, 50)), ms(pct(r.certToHash, 99)), ms(Math.max(...r.certToHash)),
      ms(pct(r.total, 50)), ms(pct(r.total, 99)), r.lost, r.duplicatedHashes, r.webhook503, JSON.stringify(r.failures),
    ].join(' | '));
  }
  for (const [label, r] of [['baseline', baseline], ['concurrent', load]] as const) {
    console.log(`${label} cert→hash breakdown p50/p99: ${Object.entries(r.breakdown).map(([k, xs]) => `${k} ${ms(pct(xs, 50))}/${ms(pct(xs, 99))}`).join(', ')}`);
  }
  console.log(`cert→hash p99 under load / baseline p99: ${(pct(load.certToHash, 99) / pct(baseline.certToHash, 99)).toFixed(1)}× (goal: p99 ≤ 500 ms; lost 0; duplicated 0)`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
