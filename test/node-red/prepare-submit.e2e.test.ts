/**
 * The certificate step in two nodes — prepare signature, then submit hash — in the signing example, in an embedded
 * Node-RED 4 against the sandbox over real HTTP on 127.0.0.1: a session signs end to end; a revoked certificate ends
 * at prepare with OCSP_REVOKED and no hash; and a flow that stopped between the two nodes (here: deployed without
 * submit hash, then Node-RED killed and started with the complete flow) sends exactly the hash prepare saved; a
 * hash call the service answers 503 leaves the session at the save point (output with retryLater, no error) and the
 * webhook node's sweep sends the same hash again once the service is back; submit hash counts its call in the stored
 * record before the call leaves, so a refusal of that first call ends the session with the service's code and message.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { fixture } from '../fixtures/pdfs';
import { freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';
import { deploySigningExample, startSigning, storedRecord } from './signing-scenario';

type Flow = Record<string, unknown>[];

let sb: Sandbox;
let tmp: string;
let nr: NodeRedProcess | undefined;
let signedDir: string;
let userDir: string;
let port: number;
let signingJwk: unknown;
const hashes = new Map<string, string[]>();

/** The example with its "apply event" on the certificate output replaced by prepare signature → submit hash. */
function twoStep(withSubmit: boolean, preparedLog: string) {
  return (flow: Flow): Flow => flow.flatMap((n): Flow => {
    if (n.id === 'sf-on-cert') {
      return [
        { ...n, id: 'sf-prepare', type: 'singpass-sign-prepare', name: 'check certificate, prepare (nothing sent)', wires: [[...(withSubmit ? ['sf-submit'] : []), 'sf-prepared-line', 'sf-p-record']] },
        { ...n, id: 'sf-submit', type: 'singpass-sign-submit', name: 'submit hash', y: (n.y as number) + 40, wires: [['sf-p-record', 'sf-submitted-line']] },
        { id: 'sf-submitted-line', z: n.z, type: 'change', name: '', x: 700, y: 300, rules: [{ t: 'set', p: 'payload', pt: 'msg', to: '$string({"signRef": signRef, "status": session.state.status, "retryLater": retryLater, "code": session.lastSubmitFailure.code, "hash": session.submitting.documentHash})', tot: 'jsonata' }], wires: [['sf-submitted-file']] },
        { id: 'sf-submitted-file', z: n.z, type: 'file', name: '', x: 900, y: 300, filename: path.join(path.dirname(preparedLog), 'submitted.jsonl'), filenameType: 'str', appendNewline: true, createDir: true, overwriteFile: 'false', encoding: 'utf8', wires: [[]] },
        { id: 'sf-prepared-line', z: n.z, type: 'change', name: '', x: 700, y: 260, rules: [{ t: 'set', p: 'payload', pt: 'msg', to: '$string({"signRef": signRef, "ready": readyToSubmit, "hash": session.submitting.documentHash})', tot: 'jsonata' }], wires: [['sf-prepared-file']] },
        { id: 'sf-prepared-file', z: n.z, type: 'file', name: '', x: 900, y: 260, filename: preparedLog, filenameType: 'str', appendNewline: true, createDir: true, overwriteFile: 'false', encoding: 'utf8', wires: [[]] },
      ];
    }
    if (n.id === 'sf-webhook') return [{ ...n, wires: (n.wires as string[][]).map((out, i) => (i === 0 ? out.map((id) => (id === 'sf-on-cert' ? 'sf-prepare' : id)) : out)) }];
    if (n.id === 'sf-catch') return [{ ...n, scope: [...(n.scope as string[]).filter((id) => id !== 'sf-on-cert'), 'sf-prepare', 'sf-submit'] }];
    return [n];
  });
}

const lines = (file: string): Array<Record<string, unknown>> =>
  fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : [];

async function startNodeRed(withSubmit: boolean): Promise<NodeRedProcess> {
  nr = await startNodeRedProcess({ userDir, port, env: { SINGPASS_SIGNED_DIR: signedDir } });
  await deploySigningExample(nr, sb, undefined, twoStep(withSubmit, path.join(signedDir, 'prepared.jsonl')), signingJwk);
  return nr;
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-two-step-'));
  signedDir = path.join(tmp, 'signed');
  userDir = path.join(tmp, 'userDir');
  port = await freePort();
  signingJwk = (await generateClientKeys()).signing;
  sb = await startSandbox({ port: 0 });
  sb.sign.events.on('hash', (v: { signRef: string; docHash?: string }) => hashes.set(v.signRef, [...(hashes.get(v.signRef) ?? []), String(v.docHash)]));
}, 60_000);

afterAll(async () => {
  await nr?.stop();
  await sb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('prepare signature → submit hash: signs end to end; a revoked certificate ends at prepare with no hash', async () => {
  const node = await startNodeRed(true);
  const ok = await startSigning(node, await fixture('classic'));
  await sb.phone.scan(ok.signRef, { user: 'p256' });
  await waitFor('the hash', () => (sb.sign.session(ok.signRef)?.state === 'hash_submitted' || undefined), 30_000);
  await sb.phone.approve(ok.signRef);
  const result = await waitFor('the result line', () => lines(path.join(signedDir, 'results.jsonl')).find((l) => l.signRef === ok.signRef), 60_000);
  expect(result).toMatchObject({ status: 'completed', valid: true, level: 'B-LTA' });
  expect(lines(path.join(signedDir, 'prepared.jsonl')).find((l) => l.signRef === ok.signRef)).toMatchObject({ ready: true, hash: hashes.get(ok.signRef)![0] });
  expect(hashes.get(ok.signRef)).toHaveLength(1);

  const revoked = await startSigning(node, await fixture('classic'));
  await sb.phone.scan(revoked.signRef, { user: 'revoked' });
  const error = await waitFor('the error line', () => lines(path.join(signedDir, 'errors.jsonl')).find((l) => l.signRef === revoked.signRef), 30_000);
  expect(error).toMatchObject({ code: 'OCSP_REVOKED' });
  expect(hashes.get(revoked.signRef)).toBeUndefined();
  await nr!.stop();
  nr = undefined;
}, 180_000);

test('stopped between prepare and submit (killed, started again): the hash prepare saved goes out once', async () => {
  await startNodeRed(false); // a flow without its submit hash node: sessions stop at the save point
  const s = await startSigning(nr!, await fixture('classic'));
  await sb.phone.scan(s.signRef, { user: 'p256' });
  const prepared = await waitFor('the prepared line', () => lines(path.join(signedDir, 'prepared.jsonl')).find((l) => l.signRef === s.signRef), 30_000);
  expect(prepared).toMatchObject({ ready: true, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  expect(hashes.get(s.signRef)).toBeUndefined();
  await nr!.stop('SIGKILL');
  // started again with the complete flow: the kept certificate event is replayed, prepare hands on the saved session
  await startNodeRed(true);
  await waitFor('the hash after the restart', () => (sb.sign.session(s.signRef)?.state === 'hash_submitted' || undefined), 30_000);
  expect(hashes.get(s.signRef)).toEqual([prepared.hash]);
  await sb.phone.approve(s.signRef);
  const result = await waitFor('the result line', () => lines(path.join(signedDir, 'results.jsonl')).find((l) => l.signRef === s.signRef), 60_000);
  expect(result).toMatchObject({ status: 'completed', valid: true, level: 'B-LTA' });
}, 180_000);

test('the service answers the hash call 503 for a while: submit hash outputs the save point (retryLater, no error), the same hash goes out again later, the session completes', async () => {
  await nr?.stop();
  await startNodeRed(true);
  const s = await startSigning(nr!, await fixture('classic'));
  sb.sign.faults.serviceError(4, 503); // submit hash (2 HTTP attempts), the first resubmission (2), then up
  await sb.phone.scan(s.signRef, { user: 'p256' });
  const submitted = await waitFor('the submit hash output', () => lines(path.join(signedDir, 'submitted.jsonl')).find((l) => l.signRef === s.signRef), 30_000);
  expect(submitted).toMatchObject({ status: 'certificate_received', retryLater: true, code: 'SIGN_SERVICE_ERROR', hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  expect(lines(path.join(signedDir, 'errors.jsonl')).find((l) => l.signRef === s.signRef)).toBeUndefined();
  await waitFor('the hash once the service is back', () => (sb.sign.session(s.signRef)?.state === 'hash_submitted' || undefined), 30_000);
  expect(hashes.get(s.signRef)).toEqual([submitted.hash]);
  expect(sb.sign.hashCalls().filter((c) => c.signRef === s.signRef).map((c) => c.status)).toEqual([503, 503, 503, 503, 200]);
  await sb.phone.approve(s.signRef);
  const result = await waitFor('the result line', () => lines(path.join(signedDir, 'results.jsonl')).find((l) => l.signRef === s.signRef), 60_000);
  expect(result).toMatchObject({ status: 'completed', valid: true, level: 'B-LTA' });
  expect(lines(path.join(signedDir, 'errors.jsonl')).find((l) => l.signRef === s.signRef)).toBeUndefined();
}, 180_000);

test('submit hash counts the call in the stored record before it leaves; the first call refused ends the session with the service\'s message (Catch)', async () => {
  await nr?.stop();
  await startNodeRed(true);
  // The service takes the hash at once and answers 2 s late: meanwhile the record on disk already counts the call.
  const slow = await startSigning(nr!, await fixture('classic'));
  sb.sign.faults.hashAnswerDelay(2000);
  try {
    await sb.phone.scan(slow.signRef, { user: 'p256' });
    await waitFor('the hash taken by the service', () => (sb.sign.session(slow.signRef)?.state === 'hash_submitted' || undefined), 30_000);
    const during = storedRecord(userDir, slow.signRef);
    expect(during?.state.status).toBe('certificate_received'); // the answer is not back yet
    expect(during?.submitting?.attempts).toBe(1); // prepare saved 0; submit hash saved 1 before calling
  } finally {
    sb.sign.faults.hashAnswerDelay(0);
  }
  await waitFor('the submit hash output', () => lines(path.join(signedDir, 'submitted.jsonl')).find((l) => l.signRef === slow.signRef && l.status === 'hash_submitted'), 30_000);

  const refused = await startSigning(nr!, await fixture('classic'));
  const message = 'document hash refused by the two-step e2e test';
  sb.sign.faults.refuseHash(1, message);
  await sb.phone.scan(refused.signRef, { user: 'p256' });
  const error = await waitFor('the error line', () => lines(path.join(signedDir, 'errors.jsonl')).find((l) => l.signRef === refused.signRef), 30_000);
  expect(error.code).toBe('SIGN_REQUEST_REJECTED');
  expect(String(error.message)).toContain(message);
  expect(storedRecord(userDir, refused.signRef)).toMatchObject({ state: { status: 'failed' }, error: { code: 'SIGN_REQUEST_REJECTED' } });
  expect(lines(path.join(signedDir, 'submitted.jsonl')).find((l) => l.signRef === refused.signRef)).toBeUndefined();
  expect(sb.sign.hashCalls().filter((c) => c.signRef === refused.signRef).map((c) => c.status)).toEqual([400]);
}, 180_000);
