/**
 * The document-signing example flow (examples/singpass-document-signing.json) in a real, embedded Node-RED 4 with
 * this package installed, against the sandbox over real HTTP on 127.0.0.1: upload a PDF to the flow's endpoint, the
 * phone scans, the flow checks the certificate and submits the hash — then Node-RED is KILLED (SIGKILL: nothing
 * flushed) and started again — the phone approves, and the restarted flow finishes the session and writes the signed
 * PDF, which pdfsig and qpdf check.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { startSandbox, type Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { fixture } from '../fixtures/pdfs';
import { makeNssDb } from '../helpers/pki-tools';
import { deploy, freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';

const run = promisify(execFile);
const EXAMPLE = path.resolve(__dirname, '..', '..', 'examples', 'singpass-document-signing.json');

let sb: Sandbox;
let tmp: string;
let nr: NodeRedProcess | undefined;

beforeAll(async () => {
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-sign.js'))) throw new Error('run `npm run build` first (npm test does)');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-e2e-'));
  sb = await startSandbox({ port: 0, webhookRetryDelayMs: 500 });
});

afterAll(async () => {
  await nr?.stop();
  await sb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The example as a user deploys it: the sandbox URL of this run, and the secrets pasted into the config nodes. */
function exampleFlow(signingJwk: unknown): Record<string, unknown>[] {
  const flow = JSON.parse(fs.readFileSync(EXAMPLE, 'utf8')) as Record<string, unknown>[];
  return flow.map((n) => {
    if (n.type === 'singpass-sign-client') return { ...n, sandboxUrl: sb.baseUrl, credentials: { signingKey: JSON.stringify(signingJwk) } };
    if (n.type === 'singpass-notification-secret') return { ...n, credentials: { secret: 'a-long-random-secret-for-the-e2e-test-0123456789' } };
    return n;
  });
}

test('signs a PDF end to end in the example flow, with a Node-RED restart between the certificate and the signature', async () => {
  const userDir = path.join(tmp, 'userDir');
  const signedDir = path.join(tmp, 'signed');
  const port = await freePort();
  const env = { SINGPASS_SIGNED_DIR: signedDir };
  nr = await startNodeRedProcess({ userDir, port, env });
  expect(nr.version).toMatch(/^4\./);
  // the sandbox layout the config node assumes is the one the sandbox serves
  expect(sb.urls.signKeys).toBe(`${sb.baseUrl}/sign/static/.well-known/keys.json`);

  const keys = await generateClientKeys();
  await deploy(nr.url, exampleFlow(keys.signing));
  const jwks = await waitFor('the key-set endpoint', async () => {
    const r = await fetch(`${nr!.url}/singpass/jwks`);
    return r.status === 200 ? ((await r.json()) as { keys: Record<string, unknown>[] }) : undefined;
  });
  expect(jwks.keys).toHaveLength(1);
  expect(jwks.keys[0]).not.toHaveProperty('d');
  sb.sign.registerClient({ clientId: 'node-red-dsap', jwksUrl: `${nr.url}/singpass/jwks`, notificationUrl: `${nr.url}/singpass/sign/webhook` });

  const page = await fetch(`${nr.url}/sign`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('Start signing');

  const input = await fixture('classic');
  const res = await fetch(`${nr.url}/sign/start?name=Contract.pdf`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(input) });
  const started = (await res.json()) as { signRef: string; challengeCode: string; expiresAt: number; qr: string };
  expect(res.status).toBe(200);
  expect(started.qr).toMatch(/^data:image\/png;base64,/);
  expect(started.challengeCode).toMatch(/^[A-Z0-9]{4}$/);
  const { signRef } = started;

  await sb.phone.scan(signRef, { user: 'p256' });
  const view = await waitFor('the hash', () => (sb.sign.session(signRef)?.state === 'hash_submitted' ? sb.sign.session(signRef) : undefined), 30_000);
  expect(view.challengeCode).toBe(started.challengeCode); // what the app shows = what the page shows
  expect(view.docName).toBe('Contract.pdf');

  // Crash: nothing in Node-RED's memory survives.
  await nr.stop('SIGKILL');
  nr = await startNodeRedProcess({ userDir, port, env });

  await sb.phone.approve(signRef);
  const signedFile = path.join(signedDir, `${signRef}.pdf`);
  const results = path.join(signedDir, 'results.jsonl');
  const line = await waitFor('the result line', () => (fs.existsSync(results) ? fs.readFileSync(results, 'utf8').trim() : undefined), 60_000)
    .catch((e: Error) => { throw new Error(`${e.message}\n${nr!.log()}\nerrors: ${fs.existsSync(path.join(signedDir, 'errors.jsonl')) ? fs.readFileSync(path.join(signedDir, 'errors.jsonl'), 'utf8') : '-'}`); });
  expect(JSON.parse(line)).toMatchObject({ signRef, status: 'completed', level: 'B-LTA', valid: true, file: signedFile });
  expect(fs.existsSync(path.join(signedDir, 'errors.jsonl'))).toBe(false);

  // Independent checks of the written PDF.
  await run('qpdf', ['--check', signedFile]);
  const nss = await makeNssDb(path.join(tmp, 'nss'), sb.pki.root.certPem);
  let report: string;
  try {
    report = (await run('pdfsig', ['-nssdir', `sql:${nss}`, signedFile])).stdout;
  } catch (e) {
    report = `${(e as { stdout?: string }).stdout ?? ''}${(e as { stderr?: string }).stderr ?? ''}`;
  }
  expect(report).toMatch(/Signature #1:[\s\S]*Signature Validation: Signature is Valid\./);
  expect(report).toMatch(/Signature #2:/); // the document timestamp (B-LTA)
  expect(report).not.toMatch(/Signature Validation: (?!Signature is Valid)/);
  expect(fs.readFileSync(signedFile).subarray(0, input.length).equals(input)).toBe(true); // incremental: original bytes kept

  // The session ended: its PDF is gone from the document folder.
  const docs = path.join(userDir, 'singpass-sign-documents');
  expect(fs.existsSync(docs) ? fs.readdirSync(docs).filter((f) => f.endsWith('.pdf')) : []).toEqual([]);
});
