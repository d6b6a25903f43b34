/** The document-signing example in an embedded Node-RED 4 (this repository's build): see signing-scenario.ts. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import type { NodeRedProcess } from './embedded';
import { signExampleWithRestart } from './signing-scenario';

let sb: Sandbox;
let tmp: string;
let nr: NodeRedProcess | undefined;

beforeAll(async () => {
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-sign.js'))) throw new Error('run `npm run build` first (npm test does)');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-e2e-'));
  sb = await startSandbox({ port: 0, webhookRetryDelayMs: 500 });
}, 60_000);

afterAll(async () => {
  await nr?.stop();
  await sb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('signs a PDF end to end in the example flow, with a Node-RED restart between the certificate and the signature', async () => {
  await signExampleWithRestart({ sb, tmp, version: /^4\./, running: (p) => (nr = p) });
}, 300_000);

// Not covered yet: Node-RED killed in the milliseconds between the hash submission and the write of the record that
// holds the prepared PDF state. The replayed certificate event then prepares again (another hash) and the service
// refuses it: the session ends in errors.jsonl instead of completing. Needs the engine to hand the prepared record to
// the adapter (to persist) BEFORE it submits the hash.
test.todo('a SIGKILL between the hash submission and the record write still completes the session');
