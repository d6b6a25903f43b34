/** The document-signing example in an embedded Node-RED 4 (this repository's build): see signing-scenario.ts. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import type { NodeRedProcess } from './embedded';
import { signExampleKilledAfterHash, signExampleWithRestart } from './signing-scenario';

let sb: Sandbox;
let tmp: string;
let nr: NodeRedProcess | undefined;

beforeAll(async () => {
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-sign.js'))) throw new Error('run `npm run build` first (npm test does)');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-e2e-'));
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

test('signs a PDF end to end in the example flow, with a Node-RED restart between the certificate and the signature', async () => {
  await signExampleWithRestart({ sb, tmp, version: /^4\./, running: (p) => (nr = p) });
}, 300_000);

test('a SIGKILL between the hash submission and the record write still completes the session', async () => {
  // Without the engine's save point the replayed certificate event would prepare a new hash, which the service refuses.
  await signExampleKilledAfterHash({ sb, tmp: path.join(tmp, 'killed'), version: /^4\./, running: (p) => (nr = p) });
}, 300_000);
