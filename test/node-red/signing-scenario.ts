/**
 * The document-signing example flow (examples/singpass-document-signing.json) in a real Node-RED with this package
 * installed, against the sandbox over real HTTP on 127.0.0.1: upload a PDF to the flow's endpoint, the phone scans,
 * the flow checks the certificate and submits the hash — then Node-RED is KILLED (SIGKILL: nothing flushed) and
 * started again — the phone approves, and the restarted flow finishes the session and writes the signed PDF, which
 * pdfsig and qpdf check. Shared by the Node-RED 4 test (repository build) and the packaged-tarball test (Node-RED 5).
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import type { SessionRecord } from '../../src/session';
import { fixture } from '../fixtures/pdfs';
import { makeNssDb } from '../helpers/pki-tools';
import { REPO_ROOT, deploy, freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';

const run = promisify(execFile);
const EXAMPLE = path.join(REPO_ROOT, 'examples', 'singpass-document-signing.json');

/** The sign-in the tests give the example (its tab's environment variables, as docs/node-red.md describes). */
export const SIGN_IN = { user: 'signer', password: 'e2e-sign-in-password-0123456789' };

/** The Authorization header of a signed-in caller of the example's upload page and start route. */
export function signInHeader(sign = SIGN_IN): string {
  return `Basic ${Buffer.from(`${sign.user}:${sign.password}`).toString('base64')}`;
}

/**
 * The example as a user deploys it: the sandbox URL of this run, the secrets pasted into the config nodes, and the
 * sign-in set as the tab's environment variables.
 */
export function exampleFlow(sb: Sandbox, signingJwk: unknown, file = EXAMPLE): Record<string, unknown>[] {
  const flow = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>[];
  return flow.map((n) => {
    if (n.type === 'tab' && n.id === 'sf-sign-tab') {
      return { ...n, env: [{ name: 'SINGPASS_SIGN_USER', value: SIGN_IN.user, type: 'str' }, { name: 'SINGPASS_SIGN_PASSWORD', value: SIGN_IN.password, type: 'str' }] };
    }
    if (n.type === 'singpass-sign-client') return { ...n, sandboxUrl: sb.baseUrl, credentials: { signingKey: JSON.stringify(signingJwk) } };
    if (n.type === 'singpass-notification-secret') return { ...n, credentials: { secret: 'a-long-random-secret-for-the-e2e-test-0123456789' } };
    return n;
  });
}

export interface SigningScenario {
  sb: Sandbox;
  /** Fresh folder for the userDir, the signed PDFs and the NSS database. */
  tmp: string;
  /** Expected Node-RED version. */
  version: RegExp;
  /** Node binary, Node-RED package dir and installed package dir (defaults: this process, the dev dependency, this repo). */
  node?: string;
  nodeRedDir?: string;
  packageDir?: string;
  /** Told about each Node-RED started, so the caller's afterAll can stop it. */
  running(nr: NodeRedProcess): void;
}

/**
 * Deploy the example as a user would (fresh keys and secret pasted in; the example shipped in the installed package
 * when there is one — what Import ▸ Examples shows) and register this Node-RED as the DSAP with the sandbox.
 */
export async function deploySigningExample(nr: NodeRedProcess, sb: Sandbox, file = EXAMPLE, change: (flow: Record<string, unknown>[]) => Record<string, unknown>[] = (f) => f, signingJwk?: unknown): Promise<void> {
  const keys = signingJwk ? { signing: signingJwk } : await generateClientKeys();
  await deploy(nr.url, change(exampleFlow(sb, keys.signing, file)));
  const jwks = await waitFor('the key-set endpoint', async () => {
    const r = await fetch(`${nr.url}/singpass/jwks`);
    return r.status === 200 ? ((await r.json()) as { keys: Record<string, unknown>[] }) : undefined;
  });
  expect(jwks.keys).toHaveLength(1);
  expect(jwks.keys[0]).not.toHaveProperty('d');
  sb.sign.registerClient({ clientId: 'node-red-dsap', jwksUrl: `${nr.url}/singpass/jwks`, notificationUrl: `${nr.url}/singpass/sign/webhook` });
}

/** Upload a PDF to the example's endpoint as its signing page does; the session it started. */
export async function startSigning(nr: NodeRedProcess | { url: string }, pdf: Buffer, name = 'Contract.pdf'): Promise<{ signRef: string; challengeCode: string; expiresAt: number; qr: string; page: string }> {
  const res = await fetch(`${nr.url}/sign/start?name=${encodeURIComponent(name)}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', authorization: signInHeader() }, body: new Uint8Array(pdf) });
  const started = (await res.json()) as { signRef: string; challengeCode: string; expiresAt: number; qr: string; page: string };
  expect(res.status).toBe(200);
  return started;
}

export async function signExampleWithRestart(o: SigningScenario): Promise<void> {
  const { sb } = o;
  const userDir = path.join(o.tmp, 'userDir');
  const signedDir = path.join(o.tmp, 'signed');
  const port = await freePort();
  const env = { SINGPASS_SIGNED_DIR: signedDir };
  const start = () => startNodeRedProcess({ userDir, port, env, node: o.node, nodeRedDir: o.nodeRedDir, packageDir: o.packageDir });
  let nr = await start();
  o.running(nr);
  expect(nr.version).toMatch(o.version);
  // the sandbox layout the config node assumes is the one the sandbox serves
  expect(sb.urls.signKeys).toBe(`${sb.baseUrl}/sign/static/.well-known/keys.json`);

  await deploySigningExample(nr, sb, o.packageDir ? path.join(o.packageDir, 'examples', 'singpass-document-signing.json') : EXAMPLE);

  expect((await fetch(`${nr.url}/sign`)).status).toBe(401); // the upload page asks for the sign-in
  const page = await fetch(`${nr.url}/sign`, { headers: { authorization: signInHeader() } });
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('Start signing');

  const input = await fixture('classic');
  const started = await startSigning(nr, input);
  expect(started.qr).toMatch(/^data:image\/png;base64,/);
  expect(started.challengeCode).toMatch(/^[A-Z0-9]{4}$/);
  const { signRef } = started;

  await sb.phone.scan(signRef, { user: 'p256' });
  const view = await waitFor('the hash', () => (sb.sign.session(signRef)?.state === 'hash_submitted' ? sb.sign.session(signRef) : undefined), 30_000);
  expect(view.challengeCode).toBe(started.challengeCode); // what the app shows = what the page shows
  expect(view.docName).toBe('Contract.pdf');

  // The flow has handled the certificate event once its record says so in the session folder. (Killing between the
  // hash submission and that write is signExampleKilledAfterHash's case: the save point before the hash call.)
  await waitFor('the submitted session in the session folder', () => storedStatus(userDir, signRef) === 'hash_submitted' || undefined, 30_000);
  // Crash: nothing in Node-RED's memory survives.
  await nr.stop('SIGKILL');
  nr = await start();
  o.running(nr);

  await sb.phone.approve(signRef);
  await expectSignedExample(o, nr, { signRef, input, userDir, signedDir });
  // the restarted Node-RED's signer page (the link issued before the crash) hands out the same signed PDF
  const signerPage = new URL(started.page, `${nr.url}/`);
  const status = (await (await fetch(new URL(`${signRef}/status${signerPage.search}`, signerPage))).json()) as { stage: string; downloadUrl?: string };
  expect(status.stage).toBe('signed');
  const download = await fetch(new URL(status.downloadUrl!, signerPage));
  expect(download.headers.get('content-type')).toBe('application/pdf');
  expect(Buffer.from(await download.arrayBuffer()).equals(fs.readFileSync(path.join(signedDir, `${signRef}.pdf`)))).toBe(true);
}

/**
 * Node-RED is KILLED the moment the service accepted the hash, before the flow saw the answer (the test runtime's
 * SINGPASS_TEST_SIGKILL_AFTER_HASH hook), so the record on disk is the one from the engine's save point. Restarted,
 * the kept certificate delivery is replayed: the same hash goes out again (refused as already submitted: the first
 * got through), never a new one, and the user's approval of the first hash completes the session.
 */
export async function signExampleKilledAfterHash(o: SigningScenario): Promise<void> {
  const { sb } = o;
  fs.mkdirSync(o.tmp, { recursive: true });
  const userDir = path.join(o.tmp, 'userDir');
  const signedDir = path.join(o.tmp, 'signed');
  const port = await freePort();
  const start = (env: Record<string, string> = {}) => startNodeRedProcess({ userDir, port, env: { SINGPASS_SIGNED_DIR: signedDir, ...env }, node: o.node, nodeRedDir: o.nodeRedDir, packageDir: o.packageDir });
  let nr = await start({ SINGPASS_TEST_SIGKILL_AFTER_HASH: '1' });
  o.running(nr);
  await deploySigningExample(nr, sb, o.packageDir ? path.join(o.packageDir, 'examples', 'singpass-document-signing.json') : EXAMPLE);
  const input = await fixture('classic');
  const { signRef } = await startSigning(nr, input, 'Killed.pdf');
  let hashCalls = 0;
  const countHash = (v: { signRef: string }) => void (v.signRef === signRef && hashCalls++);
  sb.sign.events.on('hash', countHash);
  try {
    await sb.phone.scan(signRef, { user: 'p256' });
    const killed = nr;
    await waitFor('Node-RED killed after the hash call', () => killed.child.signalCode === 'SIGKILL' || undefined, 30_000);
    expect(sb.sign.session(signRef)?.state).toBe('hash_submitted');
    // What the crash left on disk: the save point (prepared state + the exact hash), not a "hash_submitted" record.
    const left = storedRecord(userDir, signRef);
    expect(left?.state?.status).toBe('certificate_received');
    expect(left?.submitting?.documentHash).toBe(sb.sign.session(signRef)?.docHash);

    nr = await start();
    o.running(nr);
    await waitFor('the resubmitted session in the session folder', () => storedRecord(userDir, signRef)?.state?.status === 'hash_submitted' || undefined, 30_000)
      .catch((e: Error) => { throw new Error(`${e.message}
${nr.log()}
errors: ${readIfExists(path.join(signedDir, 'errors.jsonl'))}`); });
    expect(storedRecord(userDir, signRef)?.state?.documentHash).toBe(left?.submitting?.documentHash);
    await sb.phone.approve(signRef);
    await expectSignedExample(o, nr, { signRef, input, userDir, signedDir });
    expect(hashCalls).toBe(1); // the service accepted one hash: the one the user approved
  } finally {
    sb.sign.events.off('hash', countHash);
  }
}

/**
 * The flow wrote the signed PDF, acknowledged it (the session completed on the first hand-over) and wrote its result
 * line; pdfsig and qpdf agree; the session's PDF copy is gone.
 */
export async function expectSignedExample(o: SigningScenario, nr: NodeRedProcess, s: { signRef: string; input: Buffer; userDir: string; signedDir: string }): Promise<void> {
  const { signRef, input, userDir, signedDir } = s;
  const signedFile = path.join(signedDir, `${signRef}.pdf`);
  const results = path.join(signedDir, 'results.jsonl');
  // Node-RED's file node may be caught mid-write: only a whole line (ending in a newline) counts.
  const completeLine = () => {
    const text = fs.existsSync(results) ? fs.readFileSync(results, 'utf8') : '';
    return text.endsWith('\n') ? text.trim() : undefined;
  };
  const line = await waitFor('the result line', completeLine, 60_000)
    .catch((e: Error) => { throw new Error(`${e.message}\n${nr.log()}\nerrors: ${readIfExists(path.join(signedDir, 'errors.jsonl'))}`); });
  expect(JSON.parse(line)).toMatchObject({ signRef, status: 'completed', phase: 'completed', level: 'B-LTA', valid: true, attempt: 1, file: signedFile });
  expect(fs.existsSync(path.join(signedDir, 'errors.jsonl'))).toBe(false);
  const record = storedRecord(userDir, signRef);
  expect(record?.phase).toBe('completed');
  expect(record?.handOver).toMatchObject({ attempts: 1, acknowledgedAt: expect.any(Number) });

  // Independent checks of the written PDF.
  await run('qpdf', ['--check', signedFile]);
  const nss = await makeNssDb(path.join(o.tmp, 'nss'), o.sb.pki.root.certPem);
  let report: string;
  try {
    report = (await run('pdfsig', ['-nssdir', `sql:${nss}`, signedFile])).stdout;
  } catch (e) {
    report = `${(e as { stdout?: string }).stdout ?? ''}${(e as { stderr?: string }).stderr ?? ''}`;
  }
  const [first, second] = report.split('Signature #2:');
  expect(first).toMatch(/Signature #1:[\s\S]*Signature Validation: Signature is Valid\.[\s\S]*Certificate Validation: Certificate is Trusted\./);
  // the document timestamp (B-LTA); pdfsig does not validate RFC 3161 document timestamps, our verify did (valid: true)
  expect(second).toContain('Signature Field Name: DocTimeStamp1');
  expect(fs.readFileSync(signedFile).subarray(0, input.length).equals(input)).toBe(true); // incremental: original bytes kept

  // The session ended: its PDF and kept deliveries are gone from the session folder.
  expect(sessionPdfs(userDir)).toEqual([]);
  expect(fs.existsSync(path.join(sessionDirOf(userDir), '.deliveries', `${signRef}.certificate.json`))).toBe(false);
}

/** The session's status as the signing nodes' folder store holds it on disk. */
function storedStatus(userDir: string, signRef: string): string | undefined {
  return storedRecord(userDir, signRef)?.state?.status;
}

/** The default session folder of a Node-RED with this user directory (the Sign API client's "Session folder"). */
export function sessionDirOf(userDir: string): string {
  return path.join(userDir, 'singpass-sessions');
}

/** The session record as the signing nodes' folder store holds it on disk (`<userDir>/singpass-sessions/<signRef>.json`). */
export function storedRecord(userDir: string, signRef: string): SessionRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(sessionDirOf(userDir), `${signRef}.json`), 'utf8')) as SessionRecord;
  } catch {
    return undefined; // not written yet (every write is an atomic rename: never caught half-written)
  }
}

/** The PDFs waiting for their signature in the session folder. */
export function sessionPdfs(userDir: string): string[] {
  const dir = sessionDirOf(userDir);
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.pdf') && !f.endsWith('-signed.pdf')) : [];
}

function readIfExists(file: string): string {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '-';
}
