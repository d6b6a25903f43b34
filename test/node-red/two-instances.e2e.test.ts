/**
 * Node-RED as an ops team runs it beyond one process (issue 18): two real Node-RED 4 instances (child processes, the
 * signing example flow deployed on each with the Sign API client's "Session store" set to PostgreSQL) on one real
 * PostgreSQL, behind Debian's nginx (round robin: one URL for the signing service and the signing page), against the
 * sandbox over real HTTP on 127.0.0.1.
 * - a certificate event taken by one instance and the signature by the other complete the session;
 * - an instance SIGKILLed after the certificate, before the hash leaves / right after the service took the hash / after
 *   the hash, before the signature: the other completes the session, exactly one hash accepted, the PDF verifies;
 * - the same certificate delivery given to both instances at once: one hash;
 * - PostgreSQL restarted during a run: deliveries meanwhile are answered 503 (never a final 4xx), the instances do not
 *   crash, every session completes with one hash.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { startSandbox, type Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { PgSessionStore, type SessionRecord } from '../../src/session';
import { fixture } from '../fixtures/pdfs';
import { startNginx, type RunningNginx } from '../helpers/nginx';
import { makeNssDb } from '../helpers/pki-tools';
import { startPostgres, type Postgres } from '../helpers/postgres';
import { deploy, freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';
import { exampleFlow, signInHeader } from './signing-scenario';

const run = promisify(execFile);
/** Seconds a session mid-step is left to its instance before the other takes it over (the config node's field). */
const TAKE_OVER_S = 4;

interface Instance {
  name: 'A' | 'B';
  port: number;
  userDir: string;
  nr: NodeRedProcess;
}

let sb: Sandbox;
let pg: Postgres;
let nginx: RunningNginx;
let relay: http.Server;
let tmp: string;
let signedDir: string;
let killFiles: { at: string; afterHash: string };
let records: PgSessionStore;
let instances: Instance[] = [];
let input: Buffer;
const stopped: NodeRedProcess[] = [];
/** Hashes the service took, per session (its own count: a call whose answer was cut off still counts). */
const taken = new Map<string, number>();
/** Every status the relay passed back to the service, and the race's two answers. */
const answered: number[] = [];
const raced: number[] = [];
let raceNextDelivery = false;

function envFor(name: string): Record<string, string> {
  return {
    INSTANCE: name, NODE_RED_LOG_LEVEL: 'info', SINGPASS_SIGNED_DIR: signedDir,
    // one kill among the two instances, only while the test has put the file there (scripts/node-red-runtime.js)
    SINGPASS_TEST_SIGKILL_AT: '/hash', SINGPASS_TEST_SIGKILL_AT_ONCE: killFiles.at,
    SINGPASS_TEST_SIGKILL_AFTER_HASH: '1', SINGPASS_TEST_SIGKILL_AFTER_HASH_ONCE: killFiles.afterHash,
  };
}

async function startInstance(i: Pick<Instance, 'name' | 'port' | 'userDir'>): Promise<Instance> {
  const nr = await startNodeRedProcess({ userDir: i.userDir, port: i.port, env: envFor(i.name) });
  stopped.push(nr);
  return { ...i, nr };
}

/** The example as deployed on both instances: PostgreSQL as the session store, and a `GET /whoami` to see where nginx sends the next request. */
function flowFor(signingJwk: unknown): Record<string, unknown>[] {
  const flow = exampleFlow(sb, signingJwk).map((n) => (n.type === 'singpass-sign-client'
    ? { ...n, sessionStore: 'postgres', pgHost: '127.0.0.1', pgPort: String(pg.port), pgDatabase: pg.database, pgUser: pg.user, pgTakeOverSeconds: String(TAKE_OVER_S),
      credentials: { ...(n.credentials as Record<string, unknown>), pgPassword: pg.password } }
    : n));
  const tab = flow.find((n) => n.type === 'tab')?.id ?? flow.find((n) => typeof n.z === 'string')?.z;
  return [...flow,
    { id: 'who-in', type: 'http in', z: tab, url: '/whoami', method: 'get', x: 100, y: 900, wires: [['who-fn']] },
    { id: 'who-fn', type: 'function', z: tab, func: 'msg.payload = env.get("INSTANCE"); return msg;', outputs: 1, x: 300, y: 900, wires: [['who-out']] },
    { id: 'who-out', type: 'http response', z: tab, x: 500, y: 900, wires: [] }];
}

beforeAll(async () => {
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-sign.js'))) throw new Error('run `npm run build` first (npm test does)');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-two-'));
  signedDir = path.join(tmp, 'signed');
  killFiles = { at: path.join(tmp, 'kill-at-hash'), afterHash: path.join(tmp, 'kill-after-hash') };
  input = await fixture('classic');
  pg = await startPostgres();
  records = new PgSessionStore(pg.url);
  sb = await startSandbox({ port: 0, webhookRetryDelayMs: 300, webhookAttempts: 40 });
  sb.sign.events.on('hash', (x: { signRef: string }) => taken.set(x.signRef, (taken.get(x.signRef) ?? 0) + 1));
  for (const name of ['A', 'B'] as const) instances.push(await startInstance({ name, port: await freePort(), userDir: path.join(tmp, `userDir-${name}`) }));
  nginx = await startNginx(instances.map((i) => `127.0.0.1:${i.port}`));
  relay = await startRelay();
  const { signing } = await generateClientKeys();
  for (const i of instances) await deploy(i.nr.url, flowFor(signing)); // the same flow and keys on both, as an ops team deploys
  for (const i of instances) await waitFor(`instance ${i.name}'s key set`, async () => ((await fetch(`${i.nr.url}/singpass/jwks`)).status === 200) || undefined);
  const relayUrl = `http://127.0.0.1:${(relay.address() as { port: number }).port}`;
  sb.sign.registerClient({ clientId: 'node-red-dsap', jwksUrl: `${nginx.url}/singpass/jwks`, notificationUrl: `${relayUrl}/singpass/sign/webhook` });
}, 240_000);

afterAll(async () => {
  sb?.phone.auto(false);
  for (const p of stopped) await p.stop('SIGKILL').catch(() => undefined);
  await new Promise((r) => (relay ? relay.close(r) : r(undefined)));
  await nginx?.stop();
  await records?.close();
  await sb?.close();
  await pg?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

/**
 * The service's webhook calls pass through here to nginx; with `raceNextDelivery` the next one goes to BOTH
 * instances at the same moment (the same verified delivery taken twice at once), answered with the first answer.
 */
function startRelay(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers: Record<string, string> = {};
      for (const k of ['authorization', 'content-type']) if (typeof req.headers[k] === 'string') headers[k] = req.headers[k];
      const targets = raceNextDelivery ? instances.map((i) => i.nr.url) : [nginx.url];
      raceNextDelivery = false;
      Promise.all(targets.map((t) => fetch(`${t}${req.url}`, { method: req.method, headers, body: new Uint8Array(body) }).then(async (r) => ({ status: r.status, text: await r.text() }))))
        .then((answers) => {
          if (targets.length > 1) raced.push(...answers.map((a) => a.status));
          answered.push(answers[0]!.status);
          res.writeHead(answers[0]!.status, { 'content-type': 'application/json' }).end(answers[0]!.text);
        }, () => {
          answered.push(502);
          res.writeHead(502).end();
        });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function startSession(name: string): Promise<string> {
  const res = await fetch(`${nginx.url}/sign/start?name=${encodeURIComponent(name)}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', authorization: signInHeader() }, body: new Uint8Array(input) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST /sign/start: HTTP ${res.status} ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { signRef: string }).signRef;
}

/** The instance whose webhook node took the `type` event of the session (its info log line). */
const tookEvent = (signRef: string, type: string): Instance | undefined => instances.find((i) => i.nr.output().includes(`signing webhook: ${type} event for session ${signRef}`));
const record = (signRef: string): Promise<SessionRecord | undefined> => records.get(signRef);
const serviceState = (signRef: string) => sb.sign.session(signRef)?.state;

function resultLines(): Array<Record<string, unknown>> {
  const file = path.join(signedDir, 'results.jsonl');
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  // a file node may be caught mid-write: whole lines only
  return text.split('\n').slice(0, text.endsWith('\n') ? undefined : -1).filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, unknown>);
}

function diagnostics(): string {
  const errors = path.join(signedDir, 'errors.jsonl');
  return `${instances.map((i) => `--- ${i.name} stderr:\n${i.nr.log().slice(-3000)}\n--- ${i.name} stdout:\n${i.nr.output().slice(-3000)}`).join('\n')}\nerrors: ${fs.existsSync(errors) ? fs.readFileSync(errors, 'utf8') : '-'}`;
}

/** The session completed (record in PostgreSQL, result line written once by the flow), one hash taken, the PDF valid (qpdf, pdfsig). */
async function expectCompleted(signRef: string): Promise<void> {
  const lines = await waitFor(`the result line of ${signRef}`, () => {
    const l = resultLines().filter((x) => x.signRef === signRef);
    return l.length > 0 ? l : undefined;
  }, 90_000).catch((e: Error) => { throw new Error(`${e.message}\n${diagnostics()}`); });
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ signRef, status: 'completed', level: 'B-LTA', valid: true });
  expect((await record(signRef))?.state.status).toBe('completed');
  expect(taken.get(signRef)).toBe(1);
  const file = lines[0]!.file as string;
  await run('qpdf', ['--check', file]);
  const nss = await makeNssDb(path.join(tmp, `nss-${signRef}`), sb.pki.root.certPem);
  const report = await run('pdfsig', ['-nssdir', `sql:${nss}`, file]).then((r) => r.stdout, (e: { stdout?: string }) => e.stdout ?? '');
  const [first] = report.split('Signature #2:');
  expect(first).toMatch(/Signature #1:[\s\S]*Signature Validation: Signature is Valid\.[\s\S]*Certificate Validation: Certificate is Trusted\./);
  expect(fs.readFileSync(file).subarray(0, input.length).equals(input)).toBe(true);
  // the session ended: its PDF left the documents table; no delivery left pending
  expect(await records.getDocument(signRef)).toBeUndefined();
  expect((await records.pendingDeliveries()).filter((d) => d.signRef === signRef)).toEqual([]);
}

/** Bring a killed instance back (same port and userDir: its flows and credentials are there). */
async function restart(i: Instance): Promise<void> {
  await waitFor(`instance ${i.name} gone`, () => i.nr.child.exitCode !== null || i.nr.child.signalCode !== null || undefined, 10_000);
  const again = await startInstance(i);
  instances = instances.map((x) => (x.name === i.name ? again : x));
}

test('a certificate taken by one instance and the signature by the other complete the session; one hash', async () => {
  const signRef = await startSession('Split.pdf');
  await sb.phone.scan(signRef, { user: 'p256' });
  await waitFor('the hash', () => serviceState(signRef) === 'hash_submitted' || undefined, 60_000);
  const certBy = await waitFor('the instance that took the certificate', () => tookEvent(signRef, 'certificate'), 30_000);
  await waitFor('the submitted record', async () => (await record(signRef))?.state.status === 'hash_submitted' || undefined, 30_000);
  // nginx alternates: once a request lands on the certificate's instance, the next one (the signature) goes to the other
  await waitFor('nginx pointing at the other instance next', async () => (await (await fetch(`${nginx.url}/whoami`)).text()) === certBy.name || undefined, 10_000);
  await sb.phone.approve(signRef);
  await expectCompleted(signRef);
  const sigBy = tookEvent(signRef, 'signature');
  expect(sigBy?.name).toBeDefined();
  expect(sigBy!.name).not.toBe(certBy.name);
}, 180_000);

test('an instance SIGKILLed after the certificate, as its hash call is about to leave: the other sends the saved hash, one accepted, the PDF verifies', async () => {
  const signRef = await startSession('Killed before hash.pdf');
  fs.writeFileSync(killFiles.at, '');
  await sb.phone.scan(signRef, { user: 'p256' });
  const victim = await waitFor('an instance killed at the hash call', () => instances.find((i) => i.nr.child.signalCode === 'SIGKILL'), 60_000);
  expect(fs.existsSync(killFiles.at)).toBe(false);
  expect(taken.get(signRef) ?? 0).toBe(0); // nothing reached the service
  const left = await record(signRef);
  expect(left?.submitting?.attempts).toBe(1); // the save point: the exact hash, the call counted before it left
  // the survivor's sweep takes the session over after the take-over time and sends THAT hash
  await waitFor('the hash from the survivor', () => serviceState(signRef) === 'hash_submitted' || undefined, 60_000).catch((e: Error) => { throw new Error(`${e.message}\n${diagnostics()}`); });
  expect(sb.sign.session(signRef)?.docHash).toBe(left?.submitting?.documentHash);
  await sb.phone.approve(signRef);
  await expectCompleted(signRef);
  await restart(victim);
}, 180_000);

test('an instance SIGKILLed right after the service took its hash (before it saved the answer): the other resends the same hash, one accepted', async () => {
  const signRef = await startSession('Killed after hash.pdf');
  fs.writeFileSync(killFiles.afterHash, '');
  await sb.phone.scan(signRef, { user: 'p256' });
  const victim = await waitFor('an instance killed after the hash', () => instances.find((i) => i.nr.child.signalCode === 'SIGKILL'), 60_000);
  expect(serviceState(signRef)).toBe('hash_submitted');
  expect((await record(signRef))?.state.status).toBe('certificate_received'); // the crash left the save point
  await waitFor('the survivor settling the save point', async () => (await record(signRef))?.state.status === 'hash_submitted' || undefined, 60_000).catch((e: Error) => { throw new Error(`${e.message}\n${diagnostics()}`); });
  await sb.phone.approve(signRef);
  await expectCompleted(signRef);
  await restart(victim);
}, 180_000);

test('the instance that submitted the hash is SIGKILLed before the user approves: the signature goes to the other, which finishes', async () => {
  const signRef = await startSession('Killed before signature.pdf');
  await sb.phone.scan(signRef, { user: 'p256' });
  await waitFor('the submitted record', async () => (await record(signRef))?.state.status === 'hash_submitted' || undefined, 60_000);
  const victim = tookEvent(signRef, 'certificate')!;
  await victim.nr.stop('SIGKILL');
  await sb.phone.approve(signRef); // nginx skips the dead upstream
  await expectCompleted(signRef);
  expect(tookEvent(signRef, 'signature')?.name).not.toBe(victim.name);
  await restart(victim);
}, 180_000);

test('the same certificate delivery reaching both instances at once: both answer 200, one takes it, one hash', async () => {
  const signRef = await startSession('Raced.pdf');
  raceNextDelivery = true;
  await sb.phone.scan(signRef, { user: 'p256' });
  await waitFor('the raced delivery', () => raced.length >= 2 || undefined, 30_000);
  expect(raced.slice(-2)).toEqual([200, 200]);
  await waitFor('the hash', () => serviceState(signRef) === 'hash_submitted' || undefined, 60_000);
  // exactly one instance was told the delivery was fresh
  expect(instances.filter((i) => i.nr.output().includes(`signing webhook: certificate event for session ${signRef}`)).map((i) => i.name)).toHaveLength(1);
  await sb.phone.approve(signRef);
  await expectCompleted(signRef);
  expect(sb.sign.hashCalls().filter((c) => c.signRef === signRef)).toHaveLength(1);
}, 180_000);

test('PostgreSQL restarted during a run: deliveries meanwhile are answered 503 (the service retries), no instance crashes, every session completes with one hash', async () => {
  const refs = [await startSession('Restart 0.pdf'), await startSession('Restart 1.pdf'), await startSession('Restart 2.pdf')];
  await sb.phone.scan(refs[0]!, { user: 'p256' });
  await waitFor('the first submitted record', async () => (await record(refs[0]!))?.state.status === 'hash_submitted' || undefined, 60_000);
  const before = answered.length;
  await pg.halt();
  // while the database is down: a scan (its certificate event cannot be kept: 503) and an approval (the same)
  const during = [sb.phone.scan(refs[1]!, { user: 'p256' }), sb.phone.approve(refs[0]!)];
  await waitFor('a webhook answered while the database is down', () => answered.length > before || undefined, 30_000);
  await new Promise((r) => setTimeout(r, 1500));
  await pg.start();
  await Promise.all(during);
  const outage = answered.slice(before);
  expect(outage).toContain(503);
  expect(outage.filter((s) => s >= 400 && s < 500)).toEqual([]); // never a final refusal
  await sb.phone.scan(refs[2]!, { user: 'p256' });
  for (const signRef of refs.slice(1)) {
    await waitFor(`the hash of ${signRef} after the restart`, () => serviceState(signRef) === 'hash_submitted' || undefined, 90_000).catch((e: Error) => { throw new Error(`${e.message}\n${diagnostics()}`); });
  }
  for (const signRef of refs.slice(1)) await sb.phone.approve(signRef);
  for (const signRef of refs) await expectCompleted(signRef);
  expect(instances.every((i) => i.nr.child.exitCode === null && i.nr.child.signalCode === null)).toBe(true); // an outage is not a crash
}, 300_000);
