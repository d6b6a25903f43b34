/**
 * Where Node-RED keeps signing sessions (node-red/lib/folder-session-store.ts): the core's folder store in the user
 * directory, written through before the webhook answers 200, so Node-RED's own settings do not matter. A real
 * Node-RED 4 runs the example flow against the sandbox over HTTP on 127.0.0.1, with DEFAULT settings (no
 * contextStorage at all) and with the cached `localfilesystem` context store older READMEs asked for (flushed every
 * 30 s), and is SIGKILLed the moment a delivery (certificate, then signature) was answered 200 — inside that flush
 * window. Restarted on the same user directory, it completes the session: a PDF pdfsig and qpdf accept. And a session
 * an older version left in the context store is moved to the folder when Node-RED starts, and completes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { fixture } from '../fixtures/pdfs';
import { freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';
import { deploySigningExample, expectSignedExample, sessionDirOf, startSigning, storedRecord } from './signing-scenario';

let sb: Sandbox;
let tmp: string;
let nr: NodeRedProcess | undefined;

beforeAll(async () => {
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-sign.js'))) throw new Error('run `npm run build` first (npm test does)');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-folder-'));
  sb = await startSandbox({ port: 0, webhookRetryDelayMs: 500 });
}, 60_000);

afterEach(async () => {
  await nr?.stop();
  nr = undefined;
});

afterAll(async () => {
  await sb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const SETTINGS = {
  'default settings (no contextStorage)': {},
  'the cached localfilesystem context store': { SINGPASS_TEST_CONTEXT_STORAGE: 'localfilesystem' },
} as const;

test.each(Object.keys(SETTINGS) as Array<keyof typeof SETTINGS>)('%s: SIGKILL right after the certificate\'s 200, and again right after the signature\'s 200: the session completes', async (settings) => {
  const dir = path.join(tmp, settings.startsWith('default') ? 'default' : 'cached');
  const userDir = path.join(dir, 'userDir');
  const signedDir = path.join(dir, 'signed');
  const port = await freePort();
  const start = async () => {
    nr = await startNodeRedProcess({ userDir, port, env: { SINGPASS_SIGNED_DIR: signedDir, ...SETTINGS[settings] } });
    return nr;
  };
  let running = await start();
  await deploySigningExample(running, sb);
  const input = await fixture('classic');
  const { signRef } = await startSigning(running, input, 'Crash.pdf');
  const kept = (type: string) => path.join(sessionDirOf(userDir), '.deliveries', `${signRef}.${type}.json`);

  // The certificate: answered 200 only once kept on disk; killed before the flow could do anything else with it.
  expect(await sb.phone.scan(signRef, { user: 'p256' })).toBe('acknowledged');
  await running.stop('SIGKILL');
  expect(fs.existsSync(kept('certificate'))).toBe(true);
  expect(storedRecord(userDir, signRef)?.state.status).toMatch(/^(waiting_for_scan|certificate_received|hash_submitted)$/);

  // Restarted: the kept certificate is replayed; the hash goes out (once: the service takes one per session).
  running = await start();
  await waitFor('the submitted hash', () => sb.sign.session(signRef)?.state === 'hash_submitted' || undefined, 30_000)
    .catch((e: Error) => { throw new Error(`${e.message}\n${running.log()}`); });
  await waitFor('the record at hash_submitted', () => storedRecord(userDir, signRef)?.state.status === 'hash_submitted' || undefined, 30_000);

  // The signature: answered 200 once kept; killed before the flow finished the session.
  expect(await sb.phone.approve(signRef)).toBe('acknowledged');
  await running.stop('SIGKILL');
  expect(fs.existsSync(kept('signature'))).toBe(true);

  running = await start();
  await expectSignedExample({ sb, tmp: dir, version: /^4\./, running: () => undefined }, running, { signRef, input, userDir, signedDir });
  expect(storedRecord(userDir, signRef)?.state.status).toBe('completed');
}, 300_000);

test('a session an older version kept in the (cached localfilesystem) context store moves to the folder at start and completes', async () => {
  const dir = path.join(tmp, 'upgrade');
  const userDir = path.join(dir, 'userDir');
  const signedDir = path.join(dir, 'signed');
  const port = await freePort();
  const env = { SINGPASS_SIGNED_DIR: signedDir, SINGPASS_TEST_CONTEXT_STORAGE: 'localfilesystem' };
  nr = await startNodeRedProcess({ userDir, port, env });
  await deploySigningExample(nr, sb);
  const input = await fixture('classic');
  const { signRef } = await startSigning(nr, input, 'Upgrade.pdf');
  await nr.stop();

  // Leave the session where an older version kept it: the record in global context, the PDF in singpass-sign-documents.
  const encoded = Buffer.from(signRef, 'utf8').toString('base64url');
  const sessions = sessionDirOf(userDir);
  const globalFile = path.join(userDir, 'context', 'global', 'global.json');
  const global = fs.existsSync(globalFile) ? JSON.parse(fs.readFileSync(globalFile, 'utf8')) as Record<string, unknown> : {};
  fs.mkdirSync(path.dirname(globalFile), { recursive: true });
  fs.writeFileSync(globalFile, JSON.stringify({ ...global, [`singpassSign_${encoded}`]: storedRecord(userDir, signRef) }));
  fs.mkdirSync(path.join(userDir, 'singpass-sign-documents'));
  fs.renameSync(path.join(sessions, `${signRef}.pdf`), path.join(userDir, 'singpass-sign-documents', `${encoded}.pdf`));
  fs.rmSync(path.join(sessions, `${signRef}.json`));

  const running = nr = await startNodeRedProcess({ userDir, port, env: { ...env, NODE_RED_LOG_LEVEL: 'info' } });
  await waitFor('the moved session', () => storedRecord(userDir, signRef), 30_000);
  // logged once the move is done, which may be a moment after the record is in the folder
  await waitFor('the move logged', () => running.output().includes('moved 1 signing session(s) from the context store to the session folder') || undefined, 30_000);
  expect(fs.existsSync(path.join(sessions, `${signRef}.pdf`))).toBe(true);
  expect(fs.readdirSync(path.join(userDir, 'singpass-sign-documents'))).toEqual([]);

  expect(await sb.phone.scan(signRef, { user: 'p256' })).toBe('acknowledged');
  await waitFor('the submitted hash', () => storedRecord(userDir, signRef)?.state.status === 'hash_submitted' || undefined, 30_000)
    .catch((e: Error) => { throw new Error(`${e.message}\n${running.log()}`); });
  expect(await sb.phone.approve(signRef)).toBe('acknowledged');
  await expectSignedExample({ sb, tmp: dir, version: /^4\./, running: () => undefined }, running, { signRef, input, userDir, signedDir });
}, 300_000);
