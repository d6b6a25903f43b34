/**
 * A session nobody scans: once its deadline passed, the signing example's webhook node ends it as SESSION_EXPIRED,
 * the flow records it in errors.jsonl, and the PDF waiting in the document folder is deleted (embedded Node-RED 4,
 * sandbox with a 2 s session lifetime, real HTTP on 127.0.0.1); the signer's page says it expired.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { fixture } from '../fixtures/pdfs';
import { freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';
import { deploySigningExample, sessionPdfs, startSigning } from './signing-scenario';

let sb: Sandbox;
let tmp: string;
let nr: NodeRedProcess;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-expiry-'));
  sb = await startSandbox({ port: 0, sessionTtlSeconds: 2 });
  nr = await startNodeRedProcess({ userDir: path.join(tmp, 'userDir'), port: await freePort(), env: { SINGPASS_SIGNED_DIR: path.join(tmp, 'signed') } });
  await deploySigningExample(nr, sb);
}, 120_000);

afterAll(async () => {
  await nr?.stop();
  await sb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('an unscanned session ends as SESSION_EXPIRED at its deadline: recorded, PDF deleted', async () => {
  const userDir = path.join(tmp, 'userDir');
  const { signRef, expiresAt, page } = await startSigning(nr, await fixture('classic'));
  expect(sessionPdfs(userDir)).toHaveLength(1); // waiting for the scan
  const errors = path.join(tmp, 'signed', 'errors.jsonl');
  const line = await waitFor('the expiry line', () => (fs.existsSync(errors) ? fs.readFileSync(errors, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.signRef === signRef) : undefined), 60_000);
  expect(line.code).toBe('SESSION_EXPIRED');
  expect(Date.parse(String(line.at))).toBeGreaterThanOrEqual(expiresAt * 1000); // not before its deadline
  expect(sessionPdfs(userDir)).toEqual([]);
  // the signer's page, read from the store, says so in plain words instead of waiting forever
  const link = new URL(page, `${nr.url}/`).searchParams.get('link')!;
  const status = (await (await fetch(`${nr.url}/sign/s/${signRef}/status?link=${encodeURIComponent(link)}`)).json()) as Record<string, unknown>;
  expect(status).toMatchObject({ stage: 'expired', done: true, headline: 'The signing session expired', error: { code: 'SESSION_EXPIRED' } });
  expect(status.detail).toContain('The time to scan and approve ran out. Nothing was signed');
}, 120_000);
