/**
 * Webhook verification cost, against a baseline measured in the same run:
 *  1. tokens/s of `createWebhookVerifier().handle()` and of jose's `jwtVerify` with a local key set
 *     (`createLocalJWKSet`) on the SAME tokens, and their ratio (goal ≥ 0.9×);
 *  2. the whole HTTP webhook path: a node:http server on 127.0.0.1 (its own process, so one core) running handle()
 *     on real tokens, under autocannon in this process — requests/s and p50/p99 latency (goal ≥ 2,000 req/s).
 * Run: `npm run bench:webhook` (append `-- tokens` for the first part only). Bounded: a few seconds per round, a fixed number of rounds. Prints; asserts nothing.
 */
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import * as os from 'node:os';
import type { AddressInfo } from 'node:net';
import { SignJWT, createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import { createWebhookVerifier, type WebhookVerifier } from '../src/sign';

const SESSIONS = 1000; // each session: one certificate and one signature notification → 2,000 distinct tokens
const ROUNDS = 5;
const HTTP_SECONDS = 8;
const HTTP_CONNECTIONS = 16;
/** Before any pinning (availableParallelism() follows this process's CPU affinity). */
const CPUS = os.availableParallelism();
const NOTIFICATION_TOKEN = (i: number) => `bench_notification_token-${i}`;

interface Delivery { token: string; signRef: string; body: string; bearer: string }

/** A self-signed P-256 certificate, as the certificate notification carries one (openssl, once per run). */
function userCertificate(): string {
  return execFileSync('sh', ['-c', 'd=$(mktemp -d) && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=Bench -days 30 -keyout $d/k -outform DER 2>/dev/null | base64 -w0; rm -rf $d']).toString().trim();
}

/** The service stand-in: one P-256 key published (with a decoy) at a key-set URL, and 2 tokens per session. */
async function fixture() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const decoy = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
  const jwks = { keys: [
    { ...(decoy.export({ format: 'jwk' }) as JWK), kid: 'decoy', use: 'sig' },
    { ...(publicKey.export({ format: 'jwk' }) as JWK), kid: 'svc-1', use: 'sig', alg: 'ES256' },
  ] };
  const cert = userCertificate();
  const iat = Math.floor(Date.now() / 1000);
  const deliveries: Delivery[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const signRef = `ref-${i}-${crypto.randomBytes(4).toString('hex')}`;
    const events = [
      { sign_ref: signRef, request_type: 'user_cert', user_cert: cert, nonce: crypto.randomBytes(16).toString('hex') },
      { sign_ref: signRef, request_type: 'signed_doc_hash', doc_hash: crypto.randomBytes(32).toString('hex'), doc_hash_signature: `3044${crypto.randomBytes(68).toString('hex')}` },
    ];
    for (const claims of events) {
      const token = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'svc-1', typ: 'JWT' }).setIssuedAt(iat).setExpirationTime(iat + 600).sign(privateKey);
      deliveries.push({ token, signRef, body: JSON.stringify({ token }), bearer: NOTIFICATION_TOKEN(i) });
    }
  }
  return { jwks, deliveries };
}

async function keySetServer(jwks: unknown): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' });
    res.end(JSON.stringify(jwks));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/keys.json`,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** One webhook URL for many sessions, as a real receiver has: the Bearer is looked up by sign_ref. */
function lookup(deliveries: Delivery[]): (signRef: string) => string | undefined {
  const bySignRef = new Map(deliveries.map((d) => [d.signRef, d.bearer]));
  return (signRef) => bySignRef.get(signRef);
}

const since = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;
const cpuSince = (start: NodeJS.CpuUsage) => { const u = process.cpuUsage(start); return (u.user + u.system) / 1e6; };

/**
 * jose and handle() alternate token by token (which goes first alternates too), each side's time summed: other
 * processes on this shared machine then slow both sides alike, and the ratio stays meaningful while absolute
 * figures move with the load.
 */
async function inProcess(deliveries: Delivery[], jwks: { keys: JWK[] }, keySetUrl: string) {
  const localSet = createLocalJWKSet(jwks);
  const expectedToken = lookup(deliveries);
  const joseRates: number[] = [];
  const handleRates: number[] = [];
  /** jose's CPU time / handle()'s (process CPU, thread pool included): less moved by other processes than wall time. */
  const cpuRatios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // a fresh verifier each round (its key set loaded ahead, as warmUp() does on activation), so every delivery is
    // a first delivery: the duplicate log grows to 2,000 entries as in a busy window
    const verifier: WebhookVerifier = createWebhookVerifier({ keySetUrl });
    await verifier.warmUp();
    let joseTime = 0;
    let handleTime = 0;
    let joseCpu = 0;
    let handleCpu = 0;
    const jose = async (d: Delivery) => {
      const start = process.hrtime.bigint();
      const cpu = process.cpuUsage();
      await jwtVerify(d.token, localSet, { algorithms: ['ES256'], requiredClaims: ['exp', 'iat'] });
      joseCpu += cpuSince(cpu);
      joseTime += since(start);
    };
    const handle = async (d: Delivery) => {
      const start = process.hrtime.bigint();
      const cpu = process.cpuUsage();
      const r = await verifier.handle({ headers: { authorization: `Bearer ${d.bearer}` }, body: Buffer.from(d.body), expectedToken });
      handleCpu += cpuSince(cpu);
      handleTime += since(start);
      if (r.response.status !== 200 || r.duplicate) throw new Error(`bench delivery refused: ${JSON.stringify(r.error ?? r.response)}`);
    };
    for (const [i, d] of deliveries.entries()) {
      if (i % 2) await jose(d), await handle(d);
      else await handle(d), await jose(d);
    }
    joseRates.push(deliveries.length / joseTime);
    handleRates.push(deliveries.length / handleTime);
    cpuRatios.push(joseCpu / handleCpu);
  }
  return { joseRates, handleRates, cpuRatios };
}

/** The server process: node:http on 127.0.0.1 running handle() on each POST; prints its port to the parent. */
async function serve(keySetUrl: string, lookupTable: Array<[string, string]>): Promise<void> {
  const verifier = createWebhookVerifier({ keySetUrl });
  await verifier.warmUp();
  const bySignRef = new Map(lookupTable);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void verifier.handle({ headers: req.headers, body: Buffer.concat(chunks), expectedToken: (ref) => bySignRef.get(ref) }).then(({ response }) => {
        const body = 'body' in response ? JSON.stringify(response.body) : '';
        res.writeHead(response.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
}

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;

/** `taskset` when present (Linux): the server gets CPU 0 only (jose verifies through WebCrypto, whose work runs on
 * libuv's thread pool — without pinning "one process" could use every core), the load generator the other CPUs. */
function pinning(): { server: string[]; describe: string } | undefined {
  try {
    execFileSync('taskset', ['-c', '0', 'true']);
  } catch {
    return undefined;
  }
  if (CPUS > 1) execFileSync('taskset', ['-a', '-p', '-c', `1-${CPUS - 1}`, String(process.pid)], { stdio: 'ignore' });
  return { server: ['taskset', '-c', '0'], describe: CPUS > 1 ? `server pinned to CPU 0, autocannon to CPU${CPUS > 2 ? `s 1-${CPUS - 1}` : ' 1'}` : 'one CPU for both' };
}

async function overHttp(deliveries: Delivery[], keySetUrl: string, pin: ReturnType<typeof pinning>): Promise<AutocannonResult[]> {
  const args = [__filename, 'serve', keySetUrl];
  const child: ChildProcess = pin
    ? spawn(pin.server[0]!, [...pin.server.slice(1), process.execPath, ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    : fork(args[0]!, args.slice(1), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`bench server exited (${code})`)));
    child.send(deliveries.map((d) => [d.signRef, d.bearer]));
  });
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const autocannon = require('autocannon') as Autocannon;
  const requests = deliveries.map((d) => ({
    method: 'POST', path: '/webhook', body: d.body,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${d.bearer}` },
  }));
  const results: AutocannonResult[] = [];
  try {
    await autocannon({ url: `http://127.0.0.1:${port}`, connections: HTTP_CONNECTIONS, duration: 2, requests }); // warm-up, not reported
    for (let round = 0; round < 3; round++) {
      // Later rounds replay the same tokens: duplicates are verified in full, then acknowledged (200), as in production.
      results.push(await autocannon({ url: `http://127.0.0.1:${port}`, connections: HTTP_CONNECTIONS, duration: HTTP_SECONDS, requests }));
    }
  } finally {
    child.kill();
  }
  return results;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const spread = (xs: number[]) => `best ${fmt(Math.max(...xs))}, worst ${fmt(Math.min(...xs))}`;

async function main(): Promise<void> {
  if (process.argv[2] === 'serve') {
    process.once('message', (table) => void serve(process.argv[3], table as Array<[string, string]>));
    return;
  }
  const { jwks, deliveries } = await fixture();
  const keys = await keySetServer(jwks);
  try {
    console.log(`load average at start: ${os.loadavg().map((l) => l.toFixed(2)).join(', ')} on ${CPUS} CPUs (a shared machine: absolute figures move with it, ratios less)`);
    console.log(`Webhook verification — ${deliveries.length} distinct ES256 tokens (half certificate, half signature notifications), Node ${process.version}, ${ROUNDS} rounds`);
    const { joseRates, handleRates, cpuRatios } = await inProcess(deliveries, jwks as { keys: JWK[] }, keys.url);
    const ratios = handleRates.map((h, i) => h / joseRates[i]);
    console.log(`  jose jwtVerify (createLocalJWKSet): ${fmt(Math.max(...joseRates))} tokens/s (${spread(joseRates)})`);
    console.log(`  handle()                          : ${fmt(Math.max(...handleRates))} tokens/s (${spread(handleRates)})`);
    console.log(`  ratio handle()/jose per round     : best ${Math.max(...ratios).toFixed(2)}×, median ${ratios.sort((a, b) => a - b)[Math.floor(ratios.length / 2)].toFixed(2)}×, worst ${Math.min(...ratios).toFixed(2)}× (goal ≥ 0.90×)`);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(`  same by CPU time (jose CPU / handle() CPU): median ${median(cpuRatios).toFixed(2)}×, best ${Math.max(...cpuRatios).toFixed(2)}×, worst ${Math.min(...cpuRatios).toFixed(2)}×`);
    if (process.argv[2] === 'tokens') return; // `node dist/bench/webhook.bench.js tokens`: the first part only
    const pin = pinning();
    console.log(`HTTP webhook path — node:http + handle() on 127.0.0.1 in one process, autocannon ${HTTP_CONNECTIONS} connections × ${HTTP_SECONDS} s, 3 rounds; ${pin?.describe ?? 'not pinned (no taskset): the server may use more than one core'}`);
    console.log(`  load average before: ${os.loadavg().map((l) => l.toFixed(2)).join(', ')} on ${CPUS} CPUs`);
    for (const r of await overHttp(deliveries, keys.url, pin)) {
      console.log(`  ${fmt(r.requests.average)} requests/s, latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms (${fmt(r.requests.total)} requests, non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts})`);
    }
    console.log(`  goal ≥ 2,000 requests/s; load average after: ${os.loadavg().map((l) => l.toFixed(2)).join(', ')}`);
  } finally {
    await keys.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
