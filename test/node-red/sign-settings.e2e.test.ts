/**
 * Settings a deployer sets, used in a real Node-RED (child process) running the signing example against the sandbox
 * over real HTTP: the Sign API client's assertion audience (a service that gave the DSAP its own value refuses the
 * default with 401; set in the client, a whole session signs), and the service's own error code beside ours in the
 * example's start error answer and its errors file.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { fixture } from '../fixtures/pdfs';
import { freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';
import { deploySigningExample, signInHeader, startSigning, storedRecord } from './signing-scenario';

const AUDIENCE = 'https://sign-audience.example.sg';

let sb: Sandbox;
let nr: NodeRedProcess;
let tmp: string;
let userDir: string;
let signedDir: string;
let keys: Awaited<ReturnType<typeof generateClientKeys>>;

beforeAll(async () => {
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-sign.js'))) throw new Error('run `npm run build` first');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-settings-'));
  userDir = path.join(tmp, 'userDir');
  signedDir = path.join(tmp, 'signed');
  sb = await startSandbox({ port: 0 });
  nr = await startNodeRedProcess({ userDir, port: await freePort(), env: { SINGPASS_SIGNED_DIR: signedDir } });
  keys = await generateClientKeys();
}, 120_000);

afterAll(async () => {
  await nr?.stop();
  await sb?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** The example deployed with this audience in its Sign API client (empty: the default), the DSAP registered with the service's. */
async function deployWith(audience: string): Promise<void> {
  await deploySigningExample(nr, sb, undefined, (flow) => flow.map((n) => (n.type === 'singpass-sign-client' ? { ...n, audience } : n)), keys.signing);
  sb.sign.registerClient({ clientId: 'node-red-dsap', jwksUrl: `${nr.url}/singpass/jwks`, notificationUrl: `${nr.url}/singpass/sign/webhook`, audience: AUDIENCE });
}

const start = () => fetch(`${nr.url}/sign/start?name=Audience.pdf`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', authorization: signInHeader() }, body: new Uint8Array(fs.readFileSync(fixturePath)) });
let fixturePath: string;
beforeAll(async () => {
  fixturePath = path.join(tmp, 'in.pdf');
  fs.writeFileSync(fixturePath, await fixture('classic'));
});

test('assertion audience: the default is refused by a service that wants its own (401), the one set in the client signs a session', async () => {
  await deployWith('');
  const refused = await start();
  expect(refused.status).toBe(400);
  // the start error answer: our code, and the service's own beside it
  expect(await refused.json()).toMatchObject({ code: 'SIGN_AUTH_REJECTED', message: expect.stringContaining('assertion audience'), serviceCode: 'INVALID_ASSERTION' });

  await deployWith(AUDIENCE);
  const s = await startSigning(nr, fs.readFileSync(fixturePath), 'Audience.pdf');
  await sb.phone.scan(s.signRef, { user: 'p256' });
  await waitFor('the hash', () => (sb.sign.session(s.signRef)?.state === 'hash_submitted' || undefined), 30_000);
  await sb.phone.approve(s.signRef);
  await waitFor('the completed session', () => (storedRecord(userDir, s.signRef)?.state.status === 'completed' || undefined), 90_000);
  expect(storedRecord(userDir, s.signRef)!.result).toMatchObject({ level: 'B-LTA', valid: true });
}, 240_000);

test('a hash the service refuses: errors.jsonl has our code and the service\'s own beside it', async () => {
  await deployWith(AUDIENCE);
  const s = await startSigning(nr, fs.readFileSync(fixturePath), 'Refused.pdf');
  sb.sign.faults.refuseHash(1, 'doc_name not valid (sandbox fault)');
  await sb.phone.scan(s.signRef, { user: 'p256' });
  const errors = path.join(signedDir, 'errors.jsonl');
  const line = await waitFor('the error line', () => {
    const text = fs.existsSync(errors) ? fs.readFileSync(errors, 'utf8') : '';
    return text.split('\n').find((l) => l.includes(s.signRef));
  }, 60_000);
  expect(JSON.parse(line)).toMatchObject({ signRef: s.signRef, code: 'SIGN_REQUEST_REJECTED', serviceCode: 'ARGUMENTS_NOT_VALID' });
}, 120_000);
