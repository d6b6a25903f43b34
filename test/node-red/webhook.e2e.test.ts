/**
 * The signing example's webhook and error path in an embedded Node-RED 4 against the sandbox (real HTTP, 127.0.0.1):
 * every notification delivered twice and a first attempt failing still gives one hash and one signed PDF; forged
 * deliveries are refused with the spec's 400 body and never reach the flow; a sign_ref with no session is answered
 * 503; a revoked certificate and a declined session end in errors.jsonl with the core's code, and no hash is ever
 * submitted for the revoked one.
 */
import { generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { createNotificationTokens } from '../../src/sign';
import { WEBHOOK_ERROR_BODY, WEBHOOK_ERROR_CODES } from '../../src/sign/wire';
import { fixture } from '../fixtures/pdfs';
import { deploy, freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';
import { deploySigningExample, startSigning } from './signing-scenario';

let sb: Sandbox;
let tmp: string;
let nr: NodeRedProcess;
let signedDir: string;
const hashes = new Map<string, number>();
/** The notification token secret the example is deployed with (signing-scenario.ts). */
const EXAMPLE_SECRET = 'a-long-random-secret-for-the-e2e-test-0123456789';

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-webhook-'));
  signedDir = path.join(tmp, 'signed');
  sb = await startSandbox({ port: 0, webhookRetryDelayMs: 300 });
  sb.sign.events.on('hash', (v: { signRef: string }) => hashes.set(v.signRef, (hashes.get(v.signRef) ?? 0) + 1));
  nr = await startNodeRedProcess({ userDir: path.join(tmp, 'userDir'), port: await freePort(), env: { SINGPASS_SIGNED_DIR: signedDir } });
  await deploySigningExample(nr, sb);
}, 120_000);

afterAll(async () => {
  await nr?.stop();
  await sb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const lines = (file: string): Array<Record<string, unknown>> =>
  fs.existsSync(path.join(signedDir, file)) ? fs.readFileSync(path.join(signedDir, file), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : [];

test('duplicate deliveries and a failed first attempt: one hash, one signed PDF, no error', async () => {
  sb.sign.faults.deliverTwice(true);
  sb.sign.faults.failDeliveries(1, 503);
  try {
    const { signRef } = await startSigning(nr, await fixture('classic'));
    await sb.phone.scan(signRef, { user: 'p256' });
    await waitFor('the hash', () => sb.sign.session(signRef)?.state === 'hash_submitted' || undefined, 30_000);
    await sb.phone.approve(signRef);
    await waitFor('the result line', () => lines('results.jsonl').find((l) => l.signRef === signRef), 60_000);
    await new Promise((r) => setTimeout(r, 1500)); // room for a late duplicate to (wrongly) show up
    expect(lines('results.jsonl').filter((l) => l.signRef === signRef)).toHaveLength(1);
    expect(lines('results.jsonl').find((l) => l.signRef === signRef)).toMatchObject({ status: 'completed', valid: true, level: 'B-LTA' });
    expect(hashes.get(signRef)).toBe(1);
    expect(lines('errors.jsonl').filter((l) => l.signRef === signRef)).toEqual([]);
  } finally {
    sb.sign.faults.reset();
  }
}, 180_000);

test('forged deliveries get 400 with the spec\'s error body and never reach the flow', async () => {
  const before = lines('errors.jsonl').length;
  const post = (headers: Record<string, string>, body: string) => fetch(`${nr.url}/singpass/sign/webhook`, { method: 'POST', headers: { 'content-type': 'application/jwt', ...headers }, body });
  for (const r of [await post({}, 'eyJhbGciOiJFUzI1NiJ9.e30.c2ln'), await post({ authorization: 'Bearer made-up-token' }, 'not a jwt')]) {
    expect(r.status).toBe(400);
    const body = (await r.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(Object.values(WEBHOOK_ERROR_BODY).sort());
  }
  expect(lines('errors.jsonl')).toHaveLength(before);
}, 60_000);

test('a delivery for a sign_ref with no session (a Bearer this DSAP issued) is answered 503 after short re-reads: the service delivers again', async () => {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const token = `${part({ alg: 'ES256', kid: 'k' })}.${part({ sign_ref: 'no-such-session', iat: 1 })}.${Buffer.from('sig').toString('base64url')}`;
  const bearer = createNotificationTokens({ secret: EXAMPLE_SECRET }).issue();
  const r = await fetch(`${nr.url}/singpass/sign/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` }, body: JSON.stringify({ token }) });
  expect(r.status).toBe(503); // the core's front door: a record saved a moment late, or in another store (docs/faults.md)
  expect(((await r.json()) as Record<string, unknown>)[WEBHOOK_ERROR_BODY.errorCode]).toBe(WEBHOOK_ERROR_CODES.internal);
}, 60_000);

test('a revoked certificate ends the session before any hash; a declined one is recorded too', async () => {
  const revoked = await startSigning(nr, await fixture('classic'), 'Revoked.pdf');
  await sb.phone.scan(revoked.signRef, { user: 'revoked' });
  const line = await waitFor('the revoked error line', () => lines('errors.jsonl').find((l) => l.signRef === revoked.signRef), 60_000);
  expect(line.code).toBe('OCSP_REVOKED');
  expect(hashes.get(revoked.signRef)).toBeUndefined();
  expect(sb.sign.session(revoked.signRef)?.state).not.toBe('hash_submitted');

  const declined = await startSigning(nr, await fixture('classic'), 'Declined.pdf');
  await sb.phone.scan(declined.signRef, { user: 'p256' });
  await waitFor('the hash', () => sb.sign.session(declined.signRef)?.state === 'hash_submitted' || undefined, 30_000);
  await sb.phone.reject(declined.signRef);
  const d = await waitFor('the declined error line', () => lines('errors.jsonl').find((l) => l.signRef === declined.signRef), 60_000);
  expect(d.code).toBe('SIGN_REQUEST_REJECTED');
  expect(d.serviceCode).toBe('user_cancelled'); // the service's own code, kept beside ours
  expect(String(d.message)).toContain('user_cancelled');
  expect(lines('results.jsonl').filter((l) => l.signRef === revoked.signRef || l.signRef === declined.signRef)).toEqual([]);
}, 180_000);

test('a webhook whose client cannot work answers 503 (the service retries) and a Catch node gets the core\'s code', async () => {
  const rsaPem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const out = path.join(tmp, 'caught.jsonl');
  await deploy(nr.url, [
    { id: 'bad-secret', type: 'singpass-notification-secret', name: '', credentials: { secret: 'x'.repeat(40) } },
    { id: 'bad-client', type: 'singpass-sign-client', environment: 'sandbox', sandboxUrl: sb.baseUrl, clientId: 'node-red-dsap', domainName: 'localhost', tenantId: 't', notificationSecret: 'bad-secret', credentials: { signingKey: rsaPem } },
    { id: 'bad-tab', type: 'tab', label: 'bad' },
    { id: 'bad-webhook', z: 'bad-tab', type: 'singpass-sign-webhook', client: 'bad-client', url: '/bad/webhook', x: 100, y: 100, wires: [[], [], []] },
    { id: 'bad-catch', z: 'bad-tab', type: 'catch', scope: ['bad-webhook'], uncaught: false, x: 100, y: 200, wires: [['bad-line']] },
    { id: 'bad-line', z: 'bad-tab', type: 'change', rules: [{ t: 'set', p: 'payload', pt: 'msg', to: '$string({"code": error.code, "answered": payload.webhookAnswered})', tot: 'jsonata' }], x: 300, y: 200, wires: [['bad-file']] },
    { id: 'bad-file', z: 'bad-tab', type: 'file', filename: out, filenameType: 'str', appendNewline: true, createDir: true, overwriteFile: 'false', encoding: 'utf8', x: 500, y: 200, wires: [[]] },
  ]);
  const r = await waitFor('the new webhook route', async () => {
    const res = await fetch(`${nr.url}/bad/webhook`, { method: 'POST', headers: { authorization: 'Bearer x', 'content-type': 'application/jwt' }, body: 'a.b.c' });
    return res.status === 404 ? undefined : res;
  });
  expect(r.status).toBe(503);
  expect(((await r.json()) as Record<string, unknown>)[WEBHOOK_ERROR_BODY.errorCode]).toBe('SERVER_SIDE_ERROR');
  const caught = await waitFor('the Catch node output', () => (fs.existsSync(out) ? fs.readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) : undefined));
  expect(caught[0]).toEqual({ code: 'KEY_UNSUPPORTED', answered: 503 });
}, 120_000);
