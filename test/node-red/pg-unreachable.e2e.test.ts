/**
 * The Sign API client's session store when it cannot be used, in a real Node-RED (child process, 127.0.0.1): a
 * PostgreSQL database that does not answer, PostgreSQL settings that are wrong (no host), a session folder that
 * cannot be created. A webhook delivery is answered 503 (our fault: the signing service retries) with the store's
 * code in the log (STORE_BUSY / STORE_FAILED, never a raw WEBHOOK_HANDLER_FAILED), never a final 4xx, and Node-RED
 * keeps running. The passwords never appear in Node-RED's log. (A database restarted under two live instances: two-instances.e2e.test.ts.)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateClientKeys } from '../../src/keys';
import { createNotificationTokens } from '../../src/sign';
import { WEBHOOK_ERROR_BODY, WEBHOOK_ERROR_CODES } from '../../src/sign/wire';
import { deploy, freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';
import { rootPem } from './helper';

let tmp: string;
let nr: NodeRedProcess;
const PASSWORD = 'never-in-a-log-7f3a9c';
const SECRET = 'x'.repeat(40);

beforeAll(async () => {
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-sign.js'))) throw new Error('run `npm run build` first (npm test does)');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-pgdown-'));
  nr = await startNodeRedProcess({ userDir: path.join(tmp, 'userDir'), port: await freePort(), env: { NODE_RED_LOG_LEVEL: 'info' } });
}, 120_000);

afterAll(async () => {
  await nr?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function flow(store: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const { signing } = await generateClientKeys();
  return [
    { id: 't', type: 'tab', label: 'store down' },
    { id: 'secret', type: 'singpass-notification-secret', credentials: { secret: SECRET } },
    {
      id: 'client', type: 'singpass-sign-client', name: 'shared', environment: 'custom', baseUrl: 'http://127.0.0.1:9/sign/api/v1', keySetUrl: 'http://127.0.0.1:9/keys.json',
      clientId: 'dsap', domainName: 'sign.example.sg', tenantId: 'acme', notificationSecret: 'secret', trustedRoots: rootPem(), sessionStore: 'postgres',
      pgHost: '127.0.0.1', pgDatabase: 'singpass', pgUser: 'nodered', ...store, credentials: { signingKey: JSON.stringify(signing), pgPassword: PASSWORD },
    },
    { id: 'hook', z: 't', type: 'singpass-sign-webhook', client: 'client', url: '/hook', x: 100, y: 100, wires: [[], [], [], []] },
  ];
}

/**
 * A delivery as the service posts it, with a Bearer this DSAP issued (from the flow's secret: a made-up one is refused
 * 400 before any store read): the JWT is not checked before the session is looked up (the store is asked first).
 */
async function deliver(): Promise<{ status: number; body: unknown }> {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const token = `${part({ alg: 'ES256', kid: 'k' })}.${part({ sign_ref: 'some-session', iat: 1 })}.${Buffer.from('sig').toString('base64url')}`;
  const bearer = createNotificationTokens({ secret: SECRET }).issue();
  const res = await fetch(`${nr.url}/hook`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` }, body: JSON.stringify({ token }) });
  const text = await res.text();
  return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) as unknown : text.slice(0, 100) };
}

/** A path under a regular file: no folder can be made there (ENOTDIR), whoever runs the test. */
function folderUnderAFile(): string {
  const file = path.join(tmp, 'not-a-folder');
  fs.writeFileSync(file, 'x');
  return path.join(file, 'sessions');
}

test.each([
  ['a database that refuses connections', async () => ({ pgPort: String(await freePort()) }), 'STORE_BUSY'],
  ['settings without a host', async () => ({ pgHost: '' }), 'STORE_FAILED'],
  ['a session folder that cannot be created', async () => ({ sessionStore: 'folder', sessionDir: folderUnderAFile() }), 'STORE_FAILED'],
])('%s: the webhook answers 503 (the service retries), Node-RED keeps running, no password in the log', async (_what, store, code) => {
  const before = `${nr.log()}${nr.output()}`.length;
  await deploy(nr.url, await flow(await store()));
  await waitFor('the webhook route after the deploy', async () => (await deliver()).status !== 404 || undefined, 30_000);
  const answers = [];
  for (let i = 0; i < 3; i++) answers.push(await deliver());
  for (const a of answers) expect(a).toMatchObject({ status: 503, body: { [WEBHOOK_ERROR_BODY.errorCode]: WEBHOOK_ERROR_CODES.internal } });
  expect(nr.child.exitCode).toBeNull();
  expect(`${nr.log()}${nr.output()}`).not.toContain(PASSWORD);
  expect(`${nr.log()}${nr.output()}`.slice(before)).toContain(`(503): ${code}`);
}, 60_000);
