/**
 * How fast the Singpass Sign Trigger answers the signing service in a REAL n8n 2.41 (regular mode: executions run
 * in the process that serves the webhooks) when 20 users scan at once, as the service sees it: it gives up after
 * 2 s and retries. n8n and `singpass-flows sandbox` (the installed package's CLI) are separate processes on
 * 127.0.0.1; a relay in this process between them times each delivery (request sent → n8n's answer).
 *
 * Scenarios, measured in the same run against the same n8n (rounds interleaved, so load on this shared machine hits
 * all alike):
 *  - `trigger only`: a workflow with nothing but the trigger (stateless check): n8n's webhook path + our check;
 *  - `trigger only + record binding`: the same with the Session Record Folder set (the record read before answering);
 *  - `sample, scans`: the sample workflow: each certificate event runs Load → Prepare (chain, OCSP, PDF) → Save →
 *    Submit → Save in the same process while later deliveries wait for their answer;
 *  - `sample, approvals`: the same sessions approved at once: signature events while B-LTA finishing runs.
 * Also: n8n's CPU seconds per round (from /proc), so a round bounded by CPU shows as such.
 *
 * Run: `npm run bench:n8n-webhook` (needs `bash scripts/install-n8n.sh`). Prints; asserts nothing. SESSIONS=20 and
 * ROUNDS=3 by default (env BENCH_SESSIONS, BENCH_ROUNDS).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateClientKeys } from '../src/keys';
import { fixture } from '../test/fixtures/pdfs';
import { createN8n, releasePackage, freePort, importSamples, installCommunityPackage, n8nInstallDir, sessionStoreCredential, startCliSandbox, startRelay, uploadHeaders, uploadKeyCredential, type CliSandbox, type N8n, type Relay } from '../test/n8n/real-n8n';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SAMPLE_PATH = 'singpass-sign/webhook';
const SIGNING = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'flows', 'n8n', 'document-signing.json'), 'utf8')) as { nodes: Array<Record<string, unknown>> };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A workflow with the sample's trigger (same credentials, its store credential's folder) and nothing after it. */
function triggerOnly(id: string, webhookPath: string, bound: boolean): Record<string, unknown> {
  const trigger = structuredClone(SIGNING.nodes.find((n) => String(n.type).endsWith('.singpassSignTrigger'))!) as { parameters: Record<string, unknown>; webhookId: string };
  // stateless: the certificate in the item, as the runs measured before the trigger's version 3 left it out by default
  trigger.parameters = { path: webhookPath, ...(bound ? {} : { sessionRecords: 'none', certificateInOutput: 'include' }) };
  trigger.webhookId = `bench-${id}`;
  return { id, name: `bench: trigger only (${bound ? 'record binding' : 'stateless'})`, nodes: [trigger], connections: {}, active: false, settings: { executionOrder: 'v1', saveDataSuccessExecution: 'none' }, pinData: {} };
}

/** utime + stime of a process, in seconds (Linux /proc). */
function cpuSeconds(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks (USER_HZ = 100 on Linux)
  } catch {
    return NaN;
  }
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];
const summary = (xs: number[]) => `p50 ${pct(xs, 50)} ms, p99 ${pct(xs, 99)} ms, max ${Math.max(...xs)} ms`;

interface Scenario { name: string; target: string; kind: 'scan' | 'approve' }

async function main(): Promise<void> {
  const installDir = n8nInstallDir();
  if (!installDir) throw new Error('n8n is not installed: run bash scripts/install-n8n.sh first');
  const [port, signingPort] = await Promise.all([freePort(), freePort()]);
  const signingDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-bench-sandbox-'));
  const n8n: N8n = await createN8n(installDir, port, { N8N_LOG_LEVEL: 'warn' });
  let signing: CliSandbox | undefined;
  let relay: Relay | undefined;
  try {
    const installed = await installCommunityPackage(n8n);
    relay = await startRelay(`${n8n.baseUrl}/webhook/${SAMPLE_PATH}`);
    signing = await startCliSandbox(installed, signingPort, signingDir, ['--client-id', 'n8n-dsap', '--jwks-url', `${n8n.baseUrl}/webhook/singpass-sign/jwks`, '--webhook-url', relay.url]);
    const dsap = await generateClientKeys();
    await importSamples(n8n, ['document-signing.json', 'key-set-endpoint.json'], [
      { id: 'spflSignApi00001', name: 'Singpass Sign API (sandbox)', type: 'singpassSignApi', data: { environment: 'sandbox', sandboxUrl: signing.baseUrl, clientId: 'n8n-dsap', signingKey: JSON.stringify(dsap.signing), tenantId: 'acme', domainName: 'sign.example.sg', tsaUrl: '', trustedRoots: '' } },
      { id: 'spflTokenSec0001', name: 'Singpass notification token secret', type: 'singpassNotificationTokenApi', data: { secret: 'bench-notification-secret-0123456789abcdef' } },
      uploadKeyCredential(),
      sessionStoreCredential(),
    ]);
    const extra = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-bench-wf-'));
    for (const [id, p, bound] of [['spflBenchTrig0001', 'bench/stateless', false], ['spflBenchTrig0002', 'bench/bound', true]] as const) {
      fs.writeFileSync(path.join(extra, `${id}.json`), JSON.stringify(triggerOnly(id, p, bound)));
      await n8n.cli(['import:workflow', `--input=${path.join(extra, `${id}.json`)}`]);
      await n8n.cli(['publish:workflow', `--id=${id}`]);
      n8n.webhooks.push({ path: p, method: 'POST' });
    }
    fs.rmSync(extra, { recursive: true });
    await n8n.start();

    const pdf = new Uint8Array(await fixture('classic'));
    const upload = async (): Promise<string> => {
      const res = await fetch(`${n8n.baseUrl}/webhook/singpass-sign/document`, {
        method: 'POST', headers: uploadHeaders('bench.pdf'),
        body: pdf, redirect: 'manual',
      });
      // 303 to the signer's page
      if (res.status !== 303) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
      return res.headers.get('x-sign-ref')!;
    };
    const status = (signRef: string): string | undefined => {
      try {
        return (JSON.parse(fs.readFileSync(path.join(n8n.filesDir, `${signRef}.json`), 'utf8')) as { state: { status: string } }).state.status;
      } catch {
        return undefined;
      }
    };
    const until = async (what: string, ok: () => boolean, ms = 180_000) => {
      for (const deadline = Date.now() + ms; !ok(); await sleep(200)) if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    };

    const scenarios: Scenario[] = [
      { name: 'trigger only (stateless)', target: `${n8n.baseUrl}/webhook/bench/stateless`, kind: 'scan' },
      { name: 'trigger only + record binding', target: `${n8n.baseUrl}/webhook/bench/bound`, kind: 'scan' },
      { name: 'sample workflow, 20 scans', target: `${n8n.baseUrl}/webhook/${SAMPLE_PATH}`, kind: 'scan' },
      { name: 'sample workflow, 20 approvals', target: `${n8n.baseUrl}/webhook/${SAMPLE_PATH}`, kind: 'approve' },
    ];
    const results = new Map<string, { ms: number[]; cpu: number[]; wall: number[]; non200: number; retried: number }>(scenarios.map((s) => [s.name, { ms: [], cpu: [], wall: [], non200: 0, retried: 0 }]));
    console.log(`n8n ${path.basename(installDir)} (regular mode) on Node 24; ${SESSIONS} concurrent deliveries per round, ${ROUNDS} rounds; ${os.availableParallelism()} CPUs, load ${os.loadavg().map((l) => l.toFixed(2)).join(', ')}`);
    // warm-up: one session through the whole sample (caches: key set, intermediates, code paths)
    {
      const ref = await upload();
      await signing.phone('scan', { sign_ref: ref, user: 'p256' });
      await until('warm-up hash', () => status(ref) === 'hash_submitted');
      await signing.phone('approve', { sign_ref: ref });
      await until('warm-up completed', () => status(ref) === 'completed');
    }
    for (let round = 0; round < ROUNDS; round++) {
      let sampleRefs: string[] = [];
      for (const s of scenarios) {
        const refs = s.kind === 'approve' ? sampleRefs : [];
        if (s.kind === 'scan') {
          for (let i = 0; i < SESSIONS; i++) refs.push(await upload());
          await until('records saved', () => refs.every((r) => status(r) === 'waiting_for_scan'));
        }
        relay.target = s.target;
        const mark = relay.relayed.length;
        const cpu0 = cpuSeconds(n8n.pid());
        const t0 = Date.now();
        await Promise.all(refs.map((r) => signing!.phone(s.kind, s.kind === 'scan' ? { sign_ref: r, user: 'p256' } : { sign_ref: r })));
        const type = s.kind === 'scan' ? 'user_cert' : 'signed_doc_hash';
        // the deliveries are answered; for the sample, wait for the work they started to end too (CPU of the round)
        if (s.name.startsWith('sample')) {
          const want = s.kind === 'scan' ? 'hash_submitted' : 'completed';
          await until(`${s.name}: all ${want}`, () => refs.every((r) => status(r) === want || status(r) === 'failed'));
        }
        const wall = Date.now() - t0;
        const cpu = cpuSeconds(n8n.pid()) - cpu0;
        const mine = relay.relayed.slice(mark).filter((d) => refs.includes(d.signRef) && d.requestType === type);
        const r = results.get(s.name)!;
        const firsts = new Map<string, number>();
        for (const d of mine) if (!firsts.has(d.signRef)) firsts.set(d.signRef, d.ms);
        r.ms.push(...firsts.values());
        r.non200 += mine.filter((d) => d.status !== 200).length;
        r.retried += mine.length - firsts.size;
        r.cpu.push(cpu);
        r.wall.push(wall);
        if (s.name === 'sample workflow, 20 scans') sampleRefs = refs;
        await sleep(1000);
      }
    }
    console.log('Answer latency of the trigger (first attempt of each delivery, as timed between the service and n8n):');
    for (const s of scenarios) {
      const r = results.get(s.name)!;
      console.log(`  ${s.name.padEnd(32)} ${summary(r.ms)} (n=${r.ms.length}; not 200: ${r.non200}; resent by the service: ${r.retried}); n8n CPU ${r.cpu.map((c) => c.toFixed(1)).join('/')} s over ${r.wall.map((w) => (w / 1000).toFixed(1)).join('/')} s per round`);
    }
    console.log(`  the service gives up on an answer after 2,000 ms; load after: ${os.loadavg().map((l) => l.toFixed(2)).join(', ')}`);
  } finally {
    await n8n.stop();
    await signing?.stop();
    await relay?.close();
    fs.rmSync(signingDir, { recursive: true, force: true });
    releasePackage();
    if (!process.env.SINGPASS_FLOWS_KEEP_N8N) fs.rmSync(n8n.userFolder, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
