/**
 * The sample signing workflow through a REAL n8n 2.41 in queue mode, 1 worker then 2 workers in the same run
 * (everything else equal: main + webhook process, Redis, PostgreSQL for n8n and the session store, binary data in
 * the database), against `singpass-flows sandbox --auto-phone` (the phone scans every session at once and approves
 * every hash). N sessions of a ~1 MB PDF at level B-T, started a few at a time; per configuration it prints:
 *   sessions/s (first upload → last signed PDF delivered), cert→hash p50/p99 (the service sent the certificate → it
 *   received the hash, both on the sandbox's clock), webhook answer p99 (n8n's answer to the service's deliveries,
 *   timed at the relay) and upload answer p99 (the QR page), lost (no signed PDF, record not completed, by the end),
 *   duplicated (a second signed PDF, a second hash accepted or a second distinct hash sent);
 * then, per configuration, 20 sessions uploaded (their pages shown) and then scanned in the same instant, and the answer
 * p99 of those certificate deliveries (the trigger answers first and the work runs after, on a worker); beside it, 20
 * uploads at once each scanned 50 ms after the service created it (before Create Session may have saved its record,
 * which no user can do: the trigger waits for the record);
 * then the ratio 2 workers / 1 worker. Prints; asserts nothing.
 *
 * Run: `npm run bench:n8n-queue` (needs scripts/install-n8n.sh, postgresql, redis-server). Options:
 * `-- --sessions 200 --parallel 8 --workers 1,2 --mb 1 --concurrency 10 --worker-nice 10 --webhooks 2` (jobs per
 * worker; the workers' `nice` level; `n8n webhook` processes, called in turn). SINGPASS_FLOWS_BENCH_SESSIONS also sets the count.
 * SINGPASS_FLOWS_N8N_CPU_PROF=<dir> profiles every n8n process and adds how much of the workers' and the webhook
 * process's CPU was our code's (bench/profile-share.ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { cpuByKind, cpuSpent } from './proc-cpu';
import { profileShares, splitByShares } from './profile-share';
import { generateClientKeys } from '../src/keys';
import { installedPackageDir, type N8nQueue } from '../test/helpers/n8n-queue';
import { startDeliveryRelay, type DeliveryRelay } from '../test/n8n/delivery-relay';
import { startQueueSample } from '../test/n8n/queue-workflow';
import { freePort, n8nInstallDir, releasePackage, startCliSandbox, uploadHeaders, type CliSandbox } from '../test/n8n/real-n8n';
import { writePdf } from './pdf-file';

const { values } = parseArgs({ options: { sessions: { type: 'string' }, parallel: { type: 'string' }, mb: { type: 'string' }, workers: { type: 'string' }, concurrency: { type: 'string' }, 'worker-nice': { type: 'string' }, webhooks: { type: 'string' } } });
const SESSIONS = Number(values.sessions ?? process.env.SINGPASS_FLOWS_BENCH_SESSIONS ?? 200);
const PARALLEL = Number(values.parallel ?? 8);
const MB = Number(values.mb ?? 1);
const WORKER_COUNTS = (values.workers ?? '1,2').split(',').map(Number);
/** Jobs each worker runs at once (n8n's `--concurrency`; n8n's default 10). */
const CONCURRENCY = Number(values.concurrency ?? 10);
/** `nice` level of the workers (0: the same priority as the webhook process, which answers the service). */
const WORKER_NICE = Number(values['worker-nice'] ?? 0);
/** `n8n webhook` processes; the bench spreads uploads and the service's deliveries over them in turn, as a load balancer. */
const WEBHOOK_PROCESSES = Number(values.webhooks ?? 1);
const TIMEOUT_MS = Math.max(300_000, SESSIONS * 3_000);

interface Figures {
  workers: number;
  sessions: number;
  seconds: number;
  perSecond: number;
  certToHash: { p50: number; p99: number };
  webhookAnswerP99: number;
  uploadAnswerP99: number;
  lost: number;
  duplicated: number;
  /** Uploads answered with an error (no session started). */
  uploadsFailed: number;
  /** BURST sessions uploaded and answered, then all scanned at once: the certificate deliveries' answer p99. */
  burstScanAnswerP99: number;
  /** BURST uploads at once, each scanned 50 ms after the service created it (before its record may be saved). */
  uploadsAndScansAnswerP99: number;
  /** CPU ms per signed session by part, over the main round (from /proc): which shared part saturates first. */
  cpuPerSession: Record<string, number>;
  /** The main round on the monotonic clock (µs), for the processes' V8 profiles. */
  round: { fromUs: number; toUs: number };
}

/** SINGPASS_FLOWS_N8N_CPU_PROF=<dir>: every n8n process writes V8 CPU profiles there (test/helpers/n8n-queue.ts). */
const PROFILE_DIR = process.env.SINGPASS_FLOWS_N8N_CPU_PROF;
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);
/** Code n8n loaded from the community-package folder: this package and its dependencies (its own pg client too). */
const isOurs = (url: string): boolean => url.includes('/.n8n/nodes/node_modules/');

/** Which part of the set-up a process is, by its command line. */
function kindOf(cmd: string): string | undefined {
  if (/n8n worker/.test(cmd)) return 'n8n workers';
  if (/n8n webhook/.test(cmd)) return 'n8n webhook process';
  if (/n8n start/.test(cmd)) return 'n8n main';
  if (/redis-server/.test(cmd)) return 'Redis';
  if (/postgres/.test(cmd)) return 'PostgreSQL';
  if (/index\.js sandbox/.test(cmd)) return 'service (sandbox)';
  return undefined;
}

/** Uploads started at once for the scan burst (the issue's target: the trigger answers 20 concurrent scans, p99 < 1 s). */
const BURST = 20;

function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

async function runWith(workers: number, pdf: Buffer): Promise<Figures> {
  let q: N8nQueue | undefined;
  let relay: DeliveryRelay | undefined;
  let signing: CliSandbox | undefined;
  const sandboxDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-bench-sandbox-'));
  try {
    const dsapKeys = await generateClientKeys();
    ({ q } = await startQueueSample({
      queue: { workers, concurrency: CONCURRENCY, workerNice: WORKER_NICE || undefined, webhookProcesses: WEBHOOK_PROCESSES },
      resumeEverySeconds: 30, idleSeconds: 45, dsapKeys,
      async services(n8n) {
        relay = await startDeliveryRelay({ webhookUrl: () => nextWebhookUrl(n8n), mainUrl: () => n8n.mainUrl });
        // the DSAP's public key set as a static file (docs/n8n-queue-mode.md): through the key-set workflow it would
        // wait for a worker, and a worker saturated by this load answers the service's key-set fetch after its 5 s timeout
        relay.keySet = dsapKeys.publicKeySet;
        signing = await startCliSandbox(installedPackageDir(n8n.userFolder('main')), await freePort(), sandboxDir, [
          '--client-id', 'n8n-dsap', '--jwks-url', `${relay.baseUrl}/jwks`, '--webhook-url', `${relay.baseUrl}/hook`,
          '--webhook-retry-delay-ms', '1000', '--session-ttl', '600', '--auto-phone',
        ]);
        return { signingUrl: signing.baseUrl, signedPdfUrl: `${relay.baseUrl}/signed` };
      },
    }));
    if (!relay || !signing) throw new Error('the services were not started');
    // one session first: caches warm (service key set, CA certificates) before the clock starts
    await session(q, pdf);
    await waitUntil(() => relay!.signed.size === 1, 120_000);
    relay.signed.clear();
    relay.deliveries.length = 0;

    const refs: string[] = [];
    const uploadMs: number[] = [];
    const uploadFailures: string[] = [];
    const cpu0 = cpuByKind(kindOf);
    const fromUs = monotonicUs();
    const started = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: PARALLEL }, async () => {
      while (next < SESSIONS) {
        next++;
        const t = performance.now();
        try {
          refs.push(await session(q!, pdf));
        } catch (e) {
          // an upload n8n failed: counted and shown with what n8n logged, not hidden
          uploadFailures.push((e as Error).message);
          if (uploadFailures.length === 1) console.log(`  first failed upload: ${(e as Error).message}\n${errorLines(q!)}`);
          continue;
        }
        uploadMs.push(performance.now() - t);
      }
    }));
    const done = await waitUntil(() => refs.every((r) => relay!.signed.has(r)), TIMEOUT_MS);
    const seconds = (performance.now() - started) / 1000;
    const cpuMs = cpuSpent(cpu0, cpuByKind(kindOf));
    const toUs = monotonicUs();
    if (!done) console.log(`  (stopped waiting after ${TIMEOUT_MS / 1000} s)`);

    const deliveries = await signing.deliveries();
    const hashCalls = (await (await fetch(`${signing.baseUrl}/sign/sandbox/hashes`)).json() as { hashes: Array<{ signRef: string; docHash?: string; status: number; at: number }> }).hashes;
    const certToHash: number[] = [];
    let lost = 0;
    let duplicated = 0;
    for (const ref of refs) {
      const cert = deliveries.find((d) => d.signRef === ref && d.requestType === 'user_cert' && d.attempt === 1);
      const calls = hashCalls.filter((h) => h.signRef === ref);
      const firstHash = calls.find((h) => h.docHash);
      if (cert && firstHash) certToHash.push(firstHash.at - cert.at);
      if (!relay.signed.has(ref)) lost++;
      const distinct = new Set(calls.map((c) => c.docHash).filter(Boolean)).size;
      if ((relay.signed.get(ref)?.length ?? 0) > 1 || calls.filter((c) => c.status === 200).length > 1 || distinct > 1) duplicated++;
    }
    if (lost) {
      console.log(`  ${lost} sessions without a signed PDF; n8n's last error lines:\n${errorLines(q)}`);
      // why, from the stored records (the probe workflow reads the PostgreSQL store) and the service's error events
      const why = new Map<string, number>();
      for (const ref of refs.filter((r) => !relay!.signed.has(r))) {
        const rec = await fetch(`${q.webhookUrl}/webhook/test/session-record?signRef=${encodeURIComponent(ref)}`).then((r) => r.json() as Promise<{ status?: string; error?: { code: string; message: string } }>).catch(() => undefined);
        const serviceErrors = deliveries.filter((d) => d.signRef === ref && d.requestType === 'error').length;
        // what the service got for each attempt of the certificate delivery: n8n's status, or its own give-up (timeout)
        const certAnswers = deliveries.filter((d) => d.signRef === ref && d.requestType === 'user_cert').map((d) => d.status ?? d.error ?? '?').join(',');
        const key = `${rec?.status ?? 'unreadable'}${rec?.error ? ` ${rec.error.code}: ${rec.error.message.slice(0, 160)}` : ''}${serviceErrors ? ` (service error events: ${serviceErrors})` : ''} [certificate delivery answers: ${certAnswers || 'none'}]`;
        why.set(key, (why.get(key) ?? 0) + 1);
      }
      for (const [k, n] of why) console.log(`    ${n} × ${k}`);
    }
    const answers = relay.deliveries.filter((d) => d.signRef && refs.includes(d.signRef)).map((d) => d.ms);

    // the scan burst, after the run: BURST uploads answered first (a user scans the QR code of the page the upload's
    // answer leads to), then the phone scans all of them in the same instant
    const scanAnswers = (of: string[]): number[] => relay!.deliveries.filter((d) => d.type === 'user_cert' && d.signRef && of.includes(d.signRef)).map((d) => d.ms);
    await signing.phone('auto', { scan: 'off' });
    const burst = await Promise.all(Array.from({ length: BURST }, () => session(q!, pdf)));
    await signing.phone('auto', { scan: 'on' });
    await Promise.all(burst.map((r) => signing!.phone('scan', { sign_ref: r })));
    if (!await waitUntil(() => burst.every((r) => relay!.signed.has(r)), TIMEOUT_MS)) console.log('  (burst: stopped waiting)');
    // and BURST uploads at once, each scanned 50 ms after the service created it: the scan can come before Create
    // Session has saved the record (no user can: the QR code is shown after), so the trigger waits for the record
    const mixed = await Promise.all(Array.from({ length: BURST }, () => session(q!, pdf)));
    if (!await waitUntil(() => mixed.every((r) => relay!.signed.has(r)), TIMEOUT_MS)) console.log('  (uploads and scans: stopped waiting)');
    return {
      workers, sessions: refs.length, seconds, perSecond: (refs.length - lost) / seconds,
      certToHash: { p50: percentile(certToHash, 50), p99: percentile(certToHash, 99) },
      webhookAnswerP99: percentile(answers, 99), uploadAnswerP99: percentile(uploadMs, 99), lost, duplicated, uploadsFailed: uploadFailures.length,
      burstScanAnswerP99: percentile(scanAnswers(burst), 99),
      uploadsAndScansAnswerP99: percentile(scanAnswers(mixed), 99),
      cpuPerSession: Object.fromEntries(Object.entries(cpuMs).map(([k, v]) => [k, v / Math.max(1, refs.length - lost)])),
      round: { fromUs, toUs },
    };
  } finally {
    await signing?.stop();
    await relay?.close();
    await q?.stop();
    fs.rmSync(sandboxDir, { recursive: true, force: true });
  }
}

let turn = 0;
/** The webhook processes in turn (round robin, as nginx in front of them would). */
function nextWebhookUrl(q: N8nQueue): string {
  return q.webhookUrls[turn++ % q.webhookUrls.length];
}

async function session(q: N8nQueue, pdf: Buffer): Promise<string> {
  const res = await fetch(`${nextWebhookUrl(q)}/webhook/singpass-sign/document`, {
    method: 'POST', headers: uploadHeaders('bench.pdf'), body: new Uint8Array(pdf), redirect: 'manual',
  });
  const text = await res.text();
  // 303 to the signer's page
  if (res.status !== 303) throw new Error(`upload answered ${res.status}: ${text.slice(0, 500)}`);
  return res.headers.get('x-sign-ref')!;
}

/** n8n's error lines (all processes), the last 30. */
function errorLines(q: N8nQueue): string {
  return q.log().split('\n').filter((l) => /rror|Problem|crash|Lost|fail|stalled/i.test(l)).slice(-30).join('\n');
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
  return true;
}

function show(f: Figures): void {
  const ms = (v: number) => `${Math.round(v)} ms`;
  console.log(`${f.workers} worker${f.workers > 1 ? 's' : ' '}: ${f.sessions} sessions in ${f.seconds.toFixed(1)} s = ${f.perSecond.toFixed(2)} sessions/s | `
    + `cert→hash p50 ${ms(f.certToHash.p50)} p99 ${ms(f.certToHash.p99)} | webhook answer p99 ${ms(f.webhookAnswerP99)} | upload answer p99 ${ms(f.uploadAnswerP99)} | `
    + `lost ${f.lost} | duplicated ${f.duplicated} | uploads failed ${f.uploadsFailed} | ${BURST} scans at once: certificate delivery answer p99 ${ms(f.burstScanAnswerP99)} (${BURST} uploads at once, each scanned 50 ms after creation: ${ms(f.uploadsAndScansAnswerP99)})`);
  console.log(`  CPU ms per signed session: ${Object.entries(f.cpuPerSession).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(' | ')}`);
  if (PROFILE_DIR) showShares(f, PROFILE_DIR);
}

/**
 * With profiles (written when the processes stopped, after the round): how much of the workers' and the webhook
 * process's CPU per session was our code's and how much n8n's own, over the main round. Profiling slows both sides.
 */
function showShares(f: Figures, dir: string): void {
  const parts: Array<[string, string, string]> = [['n8n workers', 'worker', 'workers'], ['n8n webhook process', 'webhook', 'webhook process']];
  let n8nOwn = 0;
  const said = parts.map(([kind, prefix, label]) => {
    const dirs = fs.existsSync(dir) ? fs.readdirSync(dir).filter((d) => d.startsWith(prefix)).map((d) => path.join(dir, d)) : [];
    const split = splitByShares(f.cpuPerSession[kind] ?? 0, profileShares(dirs, isOurs, f.round));
    n8nOwn += split.host;
    return `${label} ${(100 * split.oursFraction).toFixed(0)} % ours (${split.ours.toFixed(0)} ms ours, ${split.host.toFixed(0)} ms n8n's)`;
  });
  console.log(`  V8 profiles of the round, per signed session: ${said.join(' | ')}; n8n's own in all ${n8nOwn.toFixed(0)} ms`);
}

async function main(): Promise<void> {
  if (!n8nInstallDir()) throw new Error('n8n is not installed: run scripts/install-n8n.sh first');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-bench-'));
  try {
    const file = path.join(dir, 'bench.pdf');
    writePdf(file, MB);
    const pdf = fs.readFileSync(file);
    console.log(`n8n 2.41.1 queue mode (main + webhook process + N workers, Redis, PostgreSQL), sample workflow with the PostgreSQL store, `
      + `${SESSIONS} sessions of a ${(pdf.length / 1048576).toFixed(2)} MB PDF at B-T, ${PARALLEL} uploads at a time, worker concurrency ${CONCURRENCY}${WEBHOOK_PROCESSES > 1 ? `, ${WEBHOOK_PROCESSES} webhook processes` : ''}${WORKER_NICE ? `, workers at nice ${WORKER_NICE}` : ''}, ${os.availableParallelism()} CPUs`);
    const runs: Figures[] = [];
    for (const workers of WORKER_COUNTS) {
      runs.push(await runWith(workers, pdf));
      show(runs[runs.length - 1]);
    }
    const [one, two] = [runs.find((r) => r.workers === 1), runs.find((r) => r.workers === 2)];
    if (one && two) console.log(`scaling 2 workers / 1 worker: ${(two.perSecond / one.perSecond).toFixed(2)}×`);
    releasePackage();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
