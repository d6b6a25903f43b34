/**
 * An approved signature is never lost (issue 17), in the signing example in a real Node-RED 4 against the sandbox over
 * real HTTP on 127.0.0.1, faults switched over the sandbox's HTTP fault routes:
 * - the TSA, or the OCSP responder, fails N requests then recovers: the finish node leaves the session signed with
 *   `lastFinishFailure` (no error), the signing webhook node's sweep finishes it, the flow writes the signed PDF
 *   (one signature by the user, pdfsig); a TSA that refuses the request for good still ends with the signed PDF, at
 *   B-B, saying what is missing (issue 24);
 * - the service refuses the FIRST hash call: the session fails with the service's code and message (Catch);
 * - a notification presented with the token of another session is answered 400 and starts no flow;
 * - Node-RED killed the moment finishing starts (signature stored), started again: the sweep finishes it.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { startSandbox, type Sandbox } from '../../sandbox';
import { SESSION_POLICY, type FinishFailure } from '../../src/session';
import { WEBHOOK_ERROR_BODY, WEBHOOK_ERROR_CODES } from '../../src/sign/wire';
import { fixture } from '../fixtures/pdfs';
import { makeNssDb } from '../helpers/pki-tools';
import { freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';
import { deploySigningExample, sessionPdfs, signInHeader, storedRecord } from './signing-scenario';

const run = promisify(execFile);
type Flow = Record<string, unknown>[];
type Line = Record<string, unknown>;

let sb: Sandbox;
let tmp: string;
let nr: NodeRedProcess;
let userDir: string;
let signedDir: string;
let nss: string;
const running: NodeRedProcess[] = [];

/** The example, with the signing page's upload also taking `?level=` (the start node reads `msg.level`). */
const withLevel = (flow: Flow): Flow => flow.map((n) => (n.id === 'sf-name'
  ? { ...n, rules: [...(n.rules as unknown[]), { t: 'set', p: 'level', pt: 'msg', to: 'req.query.level', tot: 'msg' }] }
  : n));

beforeAll(async () => {
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-sign.js'))) throw new Error('run `npm run build` first (npm test does)');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-finish-'));
  userDir = path.join(tmp, 'userDir');
  signedDir = path.join(tmp, 'signed');
  sb = await startSandbox({ port: 0, webhookRetryDelayMs: 300 });
  nss = await makeNssDb(path.join(tmp, 'nss'), sb.pki.root.certPem);
  nr = await startNodeRedProcess({ userDir, port: await freePort(), env: { SINGPASS_SIGNED_DIR: signedDir } });
  running.push(nr);
  await deploySigningExample(nr, sb, undefined, withLevel);
}, 120_000);

afterEach(async () => {
  // a test that failed early must not leave failures pending for the next one
  await pkiFaults({ tsa_fail: 0, ocsp_fail: 0 });
  await signFaults({ reset: true });
});

afterAll(async () => {
  for (const p of running) await p.stop();
  await sb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const lines = (dir: string, file: string): Line[] =>
  fs.existsSync(path.join(dir, file)) ? fs.readFileSync(path.join(dir, file), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Line) : [];

async function startSession(node: NodeRedProcess, level = 'B-LTA'): Promise<string> {
  const res = await fetch(`${node.url}/sign/start?name=Contract.pdf&level=${level}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', authorization: signInHeader() }, body: new Uint8Array(await fixture('classic')) });
  const body = (await res.json()) as { signRef: string };
  expect(res.status).toBe(200);
  return body.signRef;
}

/** The sandbox PKI's fault switch over HTTP: `{tsa_fail, ocsp_fail, requests: {tsa, ocsp}}` after applying `body`. */
async function pkiFaults(body: Record<string, unknown> = {}): Promise<{ tsa_fail: number; ocsp_fail: number; requests: { tsa: number; ocsp: number } }> {
  const res = await fetch(`${sb.baseUrl}/ca/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return (await res.json()) as never;
}

async function signFaults(body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${sb.urls.signBase}/sandbox/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
}

async function scanAndWaitForHash(signRef: string): Promise<void> {
  await sb.phone.scan(signRef, { user: 'p256' });
  await waitFor('the hash', () => sb.sign.session(signRef)?.state === 'hash_submitted' || undefined, 30_000);
}

/** Wait for the result line of `signRef`, collecting every `lastFinishFailure` the stored record showed meanwhile. */
async function resultWithFailures(node: NodeRedProcess, signRef: string, dirs = { user: userDir, signed: signedDir }, ms = 90_000): Promise<{ result: Line; failures: FinishFailure[] }> {
  const failures: FinishFailure[] = [];
  const dir = dirs.signed;
  const result = await waitFor('the result line', () => {
    const f = storedRecord(dirs.user, signRef)?.lastFinishFailure;
    if (f && !failures.some((g) => g.attempts === f.attempts)) failures.push(f);
    return lines(dir, 'results.jsonl').find((l) => l.signRef === signRef);
  }, ms).catch((e: Error) => { throw new Error(`${e.message}\n${node.log()}\nerrors: ${JSON.stringify(lines(dir, 'errors.jsonl'))}`); });
  return { result, failures };
}

/** The signatures in the PDF as pdfsig (poppler) sees them, and the count of signature dictionaries qpdf sees. */
async function signaturesOf(file: string): Promise<{ user: string[]; timestamps: string[]; sigDictionaries: number }> {
  let report: string;
  try {
    report = (await run('pdfsig', ['-nssdir', `sql:${nss}`, file])).stdout;
  } catch (e) {
    report = `${(e as { stdout?: string }).stdout ?? ''}`;
  }
  const blocks = report.split(/^Signature #\d+:$/m).slice(1);
  await run('qpdf', ['--check', file]);
  const qdf = (await run('qpdf', ['--qdf', '--object-streams=disable', file, '-'], { maxBuffer: 64 * 1024 * 1024, encoding: 'latin1' })).stdout;
  return {
    // poppler 22 does not name RFC 3161 document timestamps; they are the TSA's and sit in the DocTimeStamp field
    user: blocks.filter((b) => !/Signature Field Name: DocTimeStamp/.test(b)),
    timestamps: blocks.filter((b) => /Signature Field Name: DocTimeStamp/.test(b)),
    sigDictionaries: (qdf.match(/\/Type \/Sig\b/g) ?? []).length,
  };
}

function documentsLeft(dir: string): string[] {
  return sessionPdfs(dir);
}

test('the TSA fails 3 requests then recovers: the session stays signed with lastFinishFailure, the sweep finishes it at B-LTA with one signature by the user', async () => {
  const signRef = await startSession(nr);
  await scanAndWaitForHash(signRef);
  const before = await pkiFaults({ tsa_fail: 3, tsa_failure: 503 });
  expect(before.tsa_fail).toBe(3);
  await sb.phone.approve(signRef);

  const { result, failures } = await resultWithFailures(nr, signRef);
  expect(result).toMatchObject({ status: 'completed', level: 'B-LTA', valid: true });
  // each failed try was kept as the signed record with its failure: first by the finish node, then by the sweep
  expect(failures.map((f) => f.attempts)).toEqual([1, 2, 3]);
  expect(failures.every((f) => f.stage === 'embed' && f.code === 'TSA_FAILED' && f.status === 503 && f.retryAt > f.at)).toBe(true);
  const after = await pkiFaults();
  expect(after.tsa_fail).toBe(0);
  expect(after.requests.tsa - before.requests.tsa).toBe(3 + 2); // the 3 failures, then the signature and document timestamps once
  expect(lines(signedDir, 'errors.jsonl').filter((l) => l.signRef === signRef)).toEqual([]);

  const sigs = await signaturesOf(path.join(signedDir, `${signRef}.pdf`));
  expect(sigs.user).toHaveLength(1);
  expect(sigs.user[0]).toMatch(/Signature Type: ETSI\.CAdES\.detached/);
  expect(sigs.user[0]).toMatch(/Signature Validation: Signature is Valid\./);
  expect(sigs.timestamps).toHaveLength(1);
  expect(sigs.sigDictionaries).toBe(1); // /Type /Sig once; the B-LTA timestamp is a /DocTimeStamp
  const record = storedRecord(userDir, signRef)!;
  expect(record.state.status).toBe('completed');
  expect(record.lastFinishFailure).toBeUndefined();
  expect(documentsLeft(userDir)).toEqual([]);
}, 180_000);

test('the OCSP responder fails 3 requests then recovers: a B-LT session waits signed, then completes with one signature', async () => {
  const signRef = await startSession(nr, 'B-LT');
  await scanAndWaitForHash(signRef); // the certificate check's OCSP request is done before the fault is switched on
  const before = await pkiFaults({ ocsp_fail: 3, ocsp_failure: 503 });
  await sb.phone.approve(signRef);

  const { result, failures } = await resultWithFailures(nr, signRef);
  expect(result).toMatchObject({ status: 'completed', level: 'B-LT', valid: true });
  expect(failures.length).toBeGreaterThanOrEqual(1);
  expect(failures.every((f) => f.stage === 'validationData' && f.code === 'OCSP_FAILED')).toBe(true);
  const after = await pkiFaults();
  expect(after.ocsp_fail).toBe(0);
  expect(after.requests.ocsp - before.requests.ocsp).toBeGreaterThan(3);
  expect(lines(signedDir, 'errors.jsonl').filter((l) => l.signRef === signRef)).toEqual([]);

  const sigs = await signaturesOf(path.join(signedDir, `${signRef}.pdf`));
  expect(sigs.user).toHaveLength(1);
  expect(sigs.user[0]).toMatch(/Signature Validation: Signature is Valid\./);
  expect(sigs.timestamps).toHaveLength(0);
  expect(sigs.sigDictionaries).toBe(1);
  expect(storedRecord(userDir, signRef)?.state.status).toBe('completed');
}, 180_000);

test('a TSA that refuses the request for good (HTTP 400, not temporary): not retried; the session completes with the signed PDF at B-B, written like any result, saying what is missing', async () => {
  const signRef = await startSession(nr);
  await scanAndWaitForHash(signRef);
  const before = await pkiFaults({ tsa_fail: 1, tsa_failure: 400 });
  await sb.phone.approve(signRef);

  const { result, failures } = await resultWithFailures(nr, signRef);
  expect(result).toMatchObject({
    status: 'completed', level: 'B-B', valid: true,
    missing: { requested: 'B-LTA', stage: 'embed', code: 'TSA_FAILED', message: expect.stringContaining('HTTP 400') },
  });
  expect(failures).toEqual([]);
  expect((await pkiFaults()).requests.tsa - before.requests.tsa).toBe(1); // not retried
  expect(lines(signedDir, 'errors.jsonl').filter((l) => l.signRef === signRef)).toEqual([]);
  const record = storedRecord(userDir, signRef)!;
  expect(record.state.status).toBe('completed');
  expect(record.error).toBeUndefined();
  expect(record.result?.missing).toMatchObject({ code: 'TSA_FAILED' });
  const sigs = await signaturesOf(path.join(signedDir, `${signRef}.pdf`));
  expect(sigs.user).toHaveLength(1);
  expect(sigs.user[0]).toMatch(/Signature Validation: Signature is Valid\./);
  expect(sigs.timestamps).toHaveLength(0);
  expect(documentsLeft(userDir)).toEqual([]);
}, 120_000);

test('the service refuses the FIRST hash call: the session fails with the service\'s code and message, not hash_submitted', async () => {
  const signRef = await startSession(nr);
  const message = 'document hash refused by the e2e test';
  await signFaults({ refuse_hash: 1, refuse_hash_message: message });
  await sb.phone.scan(signRef, { user: 'p256' });

  const error = await waitFor('the error line', () => lines(signedDir, 'errors.jsonl').find((l) => l.signRef === signRef), 60_000);
  expect(error.code).toBe('SIGN_REQUEST_REJECTED');
  expect(String(error.message)).toContain(message);
  const record = storedRecord(userDir, signRef)!;
  expect(record.state.status).toBe('failed');
  expect(record.error).toMatchObject({ code: 'SIGN_REQUEST_REJECTED' });
  expect(sb.sign.session(signRef)?.state).not.toBe('hash_submitted');
  expect(sb.sign.hashCalls().filter((c) => c.signRef === signRef).map((c) => c.status)).toEqual([400]);
  expect(documentsLeft(userDir)).toEqual([]);
}, 120_000);

test('a notification with the Bearer token of another session is answered 400 and starts no flow; with its own token it does', async () => {
  // The sandbox delivers to this capturing server instead of Node-RED, so the test holds genuine notifications.
  const captured = new Map<string, { authorization: string; body: string; contentType: string }>();
  const capture = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const jwt = (JSON.parse(body) as { token: string }).token;
      const claims = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
      captured.set(String(claims.sign_ref), { authorization: String(req.headers.authorization), body, contentType: String(req.headers['content-type']) });
      res.writeHead(200, { 'content-length': '0' }).end();
    });
  });
  await new Promise<void>((r) => capture.listen(0, '127.0.0.1', r));
  try {
    sb.sign.registerClient({ clientId: 'node-red-dsap', jwksUrl: `${nr.url}/singpass/jwks`, notificationUrl: `http://127.0.0.1:${(capture.address() as AddressInfo).port}/hook` });
    const a = await startSession(nr);
    const b = await startSession(nr);
    await sb.phone.scan(a, { user: 'p256' });
    await sb.phone.scan(b, { user: 'p256' });
    const ca = await waitFor('A\'s certificate notification', () => captured.get(a));
    const cb = await waitFor('B\'s certificate notification', () => captured.get(b));
    expect(ca.authorization).not.toBe(cb.authorization);

    const post = (n: { body: string; contentType: string }, authorization: string) => fetch(`${nr.url}/singpass/sign/webhook`, { method: 'POST', headers: { 'content-type': n.contentType, authorization }, body: n.body });
    const refused = await post(ca, cb.authorization); // A's genuine notification, B's genuine token
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as Record<string, unknown>)[WEBHOOK_ERROR_BODY.errorCode]).toBe(WEBHOOK_ERROR_CODES.unauthorized);
    await new Promise((r) => setTimeout(r, 1500)); // room for a flow to (wrongly) start
    expect(storedRecord(userDir, a)?.state.status).toBe('waiting_for_scan');
    expect(sb.sign.hashCalls().filter((c) => c.signRef === a)).toEqual([]);
    expect(lines(signedDir, 'errors.jsonl').filter((l) => l.signRef === a)).toEqual([]);

    // the same notification with A's own token is taken: the flow checks the certificate and submits A's hash
    const taken = await post(ca, ca.authorization);
    expect(taken.status).toBe(200);
    await waitFor('A\'s hash', () => sb.sign.session(a)?.state === 'hash_submitted' || undefined, 30_000);
  } finally {
    sb.sign.registerClient({ clientId: 'node-red-dsap', jwksUrl: `${nr.url}/singpass/jwks`, notificationUrl: `${nr.url}/singpass/sign/webhook` });
    await new Promise<void>((r) => capture.close(() => r()));
  }
}, 120_000);

test('Node-RED killed as finishing starts (signature stored, nothing finished), started again: finished at once, once', async () => {
  const dir = path.join(tmp, 'crash');
  const crashUserDir = path.join(dir, 'userDir');
  const crashSigned = path.join(dir, 'signed');
  const port = await freePort();
  const start = (env: Record<string, string> = {}) => startNodeRedProcess({ userDir: crashUserDir, port, env: { SINGPASS_SIGNED_DIR: crashSigned, ...env } });
  const killed = await start({ SINGPASS_TEST_SIGKILL_AT: '/ca/tsa' }); // SIGKILL as the first TSA request is about to leave
  running.push(killed);
  await deploySigningExample(killed, sb);
  const signRef = await startSession(killed);
  await scanAndWaitForHash(signRef);
  const before = await pkiFaults();
  await sb.phone.approve(signRef);
  await waitFor('Node-RED killed as finishing started', () => killed.child.signalCode === 'SIGKILL' || undefined, 30_000);

  // What the crash left: the user's signature stored in the signed record, the PDF kept, nothing of the finish.
  const left = storedRecord(crashUserDir, signRef)!;
  expect(left.state.status).toBe('signed');
  expect(left.state.signature).toMatch(/^[0-9a-f]+$/);
  expect(left.lastFinishFailure).toBeUndefined();
  expect(documentsLeft(crashUserDir)).toHaveLength(1);

  const restarted = await start();
  running.push(restarted);
  const { result, failures } = await resultWithFailures(restarted, signRef, { user: crashUserDir, signed: crashSigned }, 150_000);
  expect(failures).toEqual([]);
  expect(result).toMatchObject({ status: 'completed', level: 'B-LTA', valid: true });
  // a folder store is this instance's alone: after its restart nothing else can be finishing the session, so it is
  // taken up at once, not after the take-over idle time a shared store waits for
  expect(Date.parse(String(result.at))).toBeLessThan(left.state.updatedAt * 1000 + SESSION_POLICY.takeOverIdleMs);
  expect((await pkiFaults()).requests.tsa - before.requests.tsa).toBe(2); // one finish: signature + document timestamp
  const sigs = await signaturesOf(path.join(crashSigned, `${signRef}.pdf`));
  expect(sigs.user).toHaveLength(1);
  expect(sigs.user[0]).toMatch(/Signature Validation: Signature is Valid\./);
  expect(sigs.timestamps).toHaveLength(1);
  expect(lines(crashSigned, 'errors.jsonl')).toEqual([]);
  expect(documentsLeft(crashUserDir)).toEqual([]);
  await restarted.stop();
}, 240_000);
