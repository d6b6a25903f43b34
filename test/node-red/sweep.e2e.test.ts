/**
 * The signing webhook node's sweep runs each due session through the core's driver (`runDueStep`), so it does what the
 * CLI's runner and n8n do with the same record. In a real Node-RED 4 (child process) on a real PostgreSQL (the store
 * whose *Take over after* can be set small: 3 s here), against the sandbox over real HTTP on 127.0.0.1:
 * - Node-RED SIGKILLed during the certificate check (the claim saved, nothing prepared) and started again: once the
 *   claim is idle the sweep continues it (check, prepare, the hash), the user approves, the flow writes the signed PDF
 *   (pdfsig: valid);
 * - a flow that prepares the signature and never submits the hash: once idle the sweep sends the saved hash.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { startSandbox, type Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { PgSessionStore } from '../../src/session';
import { fixture } from '../fixtures/pdfs';
import { makeNssDb } from '../helpers/pki-tools';
import { postgresDatabase, type Postgres } from '../helpers/postgres';
import { freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';
import { deploySigningExample, startSigning } from './signing-scenario';

const run = promisify(execFile);
type Flow = Record<string, unknown>[];
/** The config node's *Take over after* (s): how long a session mid-step is left before the sweep takes it over. */
const TAKE_OVER_S = 3;

let sb: Sandbox;
let pg: Postgres;
let records: PgSessionStore;
let tmp: string;
let userDir: string;
let signedDir: string;
let port: number;
let signingJwk: unknown;
let input: Buffer;
const running: NodeRedProcess[] = [];
/** When the service took each session's hash (ms), and which hash. */
const hashes = new Map<string, Array<{ at: number; hash: string }>>();

/** The example on PostgreSQL with a short take-over time; `prepareOnly`: the certificate goes to prepare signature, no submit hash. */
const onPostgres = (prepareOnly: boolean) => (flow: Flow): Flow => flow.map((n) => {
  if (n.type === 'singpass-sign-client') {
    return { ...n, sessionStore: 'postgres', pgHost: '127.0.0.1', pgPort: String(pg.port), pgDatabase: pg.database, pgUser: pg.user, pgTakeOverSeconds: String(TAKE_OVER_S),
      credentials: { ...(n.credentials as Record<string, unknown>), pgPassword: pg.password } };
  }
  if (prepareOnly && n.id === 'sf-on-cert') return { ...n, type: 'singpass-sign-prepare', name: 'prepare (the hash never submitted by the flow)' };
  return n;
});

async function startNodeRed(env: Record<string, string> = {}): Promise<NodeRedProcess> {
  const nr = await startNodeRedProcess({ userDir, port, env: { SINGPASS_SIGNED_DIR: signedDir, NODE_RED_LOG_LEVEL: 'info', ...env } });
  running.push(nr);
  return nr;
}

beforeAll(async () => {
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-sign.js'))) throw new Error('run `npm run build` first (npm test does)');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-sweep-'));
  userDir = path.join(tmp, 'userDir');
  signedDir = path.join(tmp, 'signed');
  port = await freePort();
  signingJwk = (await generateClientKeys()).signing;
  input = await fixture('classic');
  pg = await postgresDatabase();
  records = new PgSessionStore(pg.url);
  sb = await startSandbox({ port: 0, webhookRetryDelayMs: 300 });
  sb.sign.events.on('hash', (v: { signRef: string; docHash?: string }) => hashes.set(v.signRef, [...(hashes.get(v.signRef) ?? []), { at: Date.now(), hash: String(v.docHash) }]));
}, 120_000);

afterAll(async () => {
  for (const nr of running) await nr.stop('SIGKILL').catch(() => undefined);
  await records?.close();
  await sb?.close();
  await pg?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

const lines = (file: string): Array<Record<string, unknown>> => {
  const text = fs.existsSync(path.join(signedDir, file)) ? fs.readFileSync(path.join(signedDir, file), 'utf8') : '';
  // a file node may be caught mid-write: whole lines only
  return text.split('\n').slice(0, text.endsWith('\n') ? undefined : -1).filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, unknown>);
};

/** The flow wrote the session's signed PDF once, valid at B-LTA (pdfsig, qpdf); one hash; the PDF being signed is gone. */
async function expectSigned(nr: NodeRedProcess, signRef: string): Promise<void> {
  const result = await waitFor('the result line', () => lines('results.jsonl').find((l) => l.signRef === signRef), 90_000)
    .catch((e: Error) => { throw new Error(`${e.message}\n${nr.log()}\nerrors: ${JSON.stringify(lines('errors.jsonl'))}`); });
  expect(result).toMatchObject({ status: 'completed', level: 'B-LTA', valid: true });
  expect(lines('errors.jsonl').filter((l) => l.signRef === signRef)).toEqual([]);
  expect(hashes.get(signRef)).toHaveLength(1);
  const file = String(result.file);
  await run('qpdf', ['--check', file]);
  const nss = await makeNssDb(path.join(tmp, `nss-${signRef}`), sb.pki.root.certPem);
  const report = await run('pdfsig', ['-nssdir', `sql:${nss}`, file]).then((r) => r.stdout, (e: { stdout?: string }) => e.stdout ?? '');
  expect(report.split('Signature #2:')[0]).toMatch(/Signature #1:[\s\S]*Signature Validation: Signature is Valid\.[\s\S]*Certificate Validation: Certificate is Trusted\./);
  expect(fs.readFileSync(file).subarray(0, input.length).equals(input)).toBe(true);
  expect(await records.getDocument(signRef)).toBeUndefined();
}

test('a certificate claimed by a Node-RED killed during its check is continued by the sweep once idle: one hash, a valid signed PDF', async () => {
  // SIGKILL as the certificate's OCSP request is about to leave: the claim is saved, nothing prepared
  const killed = await startNodeRed({ SINGPASS_TEST_SIGKILL_AT: '/ca/ocsp' });
  await deploySigningExample(killed, sb, undefined, onPostgres(false), signingJwk);
  const { signRef } = await startSigning(killed, input, 'Claimed.pdf');
  await sb.phone.scan(signRef, { user: 'p256' });
  await waitFor('Node-RED killed during the certificate check', () => killed.child.signalCode === 'SIGKILL' || undefined, 30_000);
  const left = (await records.get(signRef))!;
  expect(left.phase).toBe('certificateClaimed');
  expect(left.state.certificate).toBeDefined();
  expect(left.submitting).toBeUndefined();
  expect(hashes.get(signRef)).toBeUndefined();

  const nr = await startNodeRed(); // the same user directory: the flow and its credentials are there
  await waitFor('the hash sent by the sweep', () => hashes.get(signRef), 60_000)
    .catch((e: Error) => { throw new Error(`${e.message}\n${nr.log()}\n${nr.output()}`); });
  // taken over only once the claim was idle for the take-over time, by the sweep (not a replay of the kept delivery)
  expect(hashes.get(signRef)![0]!.at).toBeGreaterThanOrEqual(left.state.updatedAt * 1000 + TAKE_OVER_S * 1000);
  // logged once the service's answer is saved, which may be a moment after the service saw the hash
  await waitFor('the sweep\'s log line', () => nr.output().includes(`signing webhook: continueCertificate for session ${signRef} by the sweep: hash_submitted`) || undefined, 30_000);
  expect(nr.output()).not.toContain(`taking over the certificate event of session ${signRef}`);
  await waitFor('the submitted record', async () => (await records.get(signRef))?.state.status === 'hash_submitted' || undefined, 30_000);

  await sb.phone.approve(signRef);
  await expectSigned(nr, signRef);
  await nr.stop();
}, 240_000);

test('a hash prepare signature saved and submit hash never sent is sent by the sweep once idle: the same hash, a valid signed PDF', async () => {
  const nr = await startNodeRed();
  await deploySigningExample(nr, sb, undefined, onPostgres(true), signingJwk);
  const { signRef } = await startSigning(nr, input, 'Prepared.pdf');
  await sb.phone.scan(signRef, { user: 'p256' });
  const prepared = await waitFor('the prepared record', async () => {
    const r = await records.get(signRef);
    return r?.phase === 'atSavePoint' || r?.state.status === 'hash_submitted' ? r : undefined;
  }, 30_000);
  expect(prepared.submitting).toMatchObject({ attempts: 0, documentHash: expect.stringMatching(/^[0-9a-f]{64}$/) }); // nothing sent by the flow

  await waitFor('the hash sent by the sweep', () => hashes.get(signRef), 60_000)
    .catch((e: Error) => { throw new Error(`${e.message}\n${nr.log()}\n${nr.output()}`); });
  expect(hashes.get(signRef)).toEqual([{ at: expect.any(Number), hash: prepared.submitting!.documentHash }]);
  expect(hashes.get(signRef)![0]!.at).toBeGreaterThanOrEqual(prepared.state.updatedAt * 1000 + TAKE_OVER_S * 1000);
  await waitFor('the sweep\'s log line', () => nr.output().includes(`signing webhook: submitHash for session ${signRef} by the sweep: hash_submitted`) || undefined, 30_000);
  await waitFor('the submitted record', async () => (await records.get(signRef))?.state.status === 'hash_submitted' || undefined, 30_000);

  await sb.phone.approve(signRef);
  await expectSigned(nr, signRef);
  await nr.stop();
}, 240_000);
