/**
 * Issue 37 in a real Node-RED running the document-signing example against the sandbox: the user's certificate and
 * NRIC do not outlive the session. One session signs (B-LTA), one fails after the certificate step (the TSA refusing
 * for good), one is refused at the certificate step (a revoked certificate). A debug tap (every output of every
 * singpass node and a catch-all, written to a file) records the messages; then the tap, Node-RED's log and its user
 * directory with the session store (records, kept deliveries; the signed PDFs aside, which must carry the
 * certificate) are searched for the certificates' base64 and the NRICs: none found.
 */
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { fixture } from '../fixtures/pdfs';
import { freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';
import { deploySigningExample, startSigning, storedRecord } from './signing-scenario';

let sb: Sandbox;
let tmp: string;
let nr: NodeRedProcess | undefined;

beforeAll(async () => {
  if (!fs.existsSync(path.resolve(__dirname, '..', '..', 'dist', 'node-red', 'singpass-sign.js'))) throw new Error('run `npm run build` first (npm test does)');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-pii-'));
  sb = await startSandbox({ port: 0, webhookRetryDelayMs: 500 });
}, 60_000);

afterAll(async () => {
  await nr?.stop();
  await sb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Every message out of every singpass node, and every error a Catch node sees, one JSON line each (Buffers as latin1, PDFs named only). */
function withTap(flow: Record<string, unknown>[], file: string): Record<string, unknown>[] {
  const tab = (flow.find((n) => n.type === 'tab' && n.id === 'sf-sign-tab') as { id: string }).id;
  const tapped = flow.map((n) => {
    if (typeof n.type !== 'string' || !n.type.startsWith('singpass-') || !Array.isArray(n.wires)) return n;
    return { ...n, wires: (n.wires as string[][]).map((w) => [...w, 'pii-tap']) };
  });
  const body = `const plain = (k, v) => (v && v.type === 'Buffer' && Array.isArray(v.data) ? (Buffer.from(v.data).subarray(0, 5).toString('latin1') === '%PDF-' ? '<pdf>' : Buffer.from(v.data).toString('latin1')) : v);
return { payload: JSON.stringify(msg, plain) };`;
  return [
    ...tapped,
    { id: 'pii-tap', type: 'function', z: tab, name: 'tap', func: body, outputs: 1, x: 100, y: 900, wires: [['pii-tap-file']] },
    { id: 'pii-tap-catch', type: 'catch', z: tab, name: '', scope: null, uncaught: false, x: 100, y: 960, wires: [['pii-tap']] },
    { id: 'pii-tap-file', type: 'file', z: tab, name: 'tap file', filename: file, filenameType: 'str', appendNewline: true, createDir: true, overwriteFile: 'false', encoding: 'utf8', x: 300, y: 900, wires: [] },
  ];
}

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : filesUnder(p);
    return [p];
  });
}

function hits(text: string, needles: string[]): string[] {
  return needles.filter((n) => text.includes(n)).map((n) => {
    const at = text.indexOf(n);
    return `${n.slice(0, 20)}… at ${at}: ${JSON.stringify(text.slice(Math.max(0, at - 120), at + 60))}`;
  });
}

test('signs, fails one session after the certificate step, refuses a revoked one: messages, log and store hold neither certificate nor NRIC', async () => {
  const userDir = path.join(tmp, 'userDir');
  const signedDir = path.join(tmp, 'signed');
  const tapFile = path.join(tmp, 'tap.jsonl');
  nr = await startNodeRedProcess({ userDir, port: await freePort(), env: { SINGPASS_SIGNED_DIR: signedDir, NODE_RED_LOG_LEVEL: 'info' } });
  // the webhook names the signer with the NRIC masked: that much may be on a message, the full NRIC never
  const masked = (flow: Record<string, unknown>[]) => flow.map((n) => (n.type === 'singpass-sign-webhook' ? { ...n, signerId: 'masked' } : n));
  await deploySigningExample(nr, sb, undefined, (flow) => withTap(masked(flow), tapFile));
  const user = (name: 'p256' | 'revoked') => {
    const der = sb.pki.users[name].certDer;
    return { base64: der.toString('base64'), nric: /serialNumber=(\S+)/.exec(new X509Certificate(der).subject)![1] };
  };
  const [good, revoked] = [user('p256'), user('revoked')];
  const needles = [good.base64, good.base64.slice(200, 260), good.nric, revoked.base64, revoked.base64.slice(200, 260), revoked.nric];
  const status = (signRef: string) => storedRecord(userDir, signRef)?.state.status;

  // 1. signed to B-LTA
  const a = (await startSigning(nr, await fixture('classic'))).signRef;
  await sb.phone.scan(a, { user: 'p256' });
  await waitFor('A: hash submitted', () => status(a) === 'hash_submitted' || undefined, 60_000);
  await sb.phone.approve(a);
  await waitFor('A: completed', () => status(a) === 'completed' || undefined, 60_000);

  // 2. after the certificate step, the TSA refuses for good: completed short of its level (B-B handed on)
  const b = (await startSigning(nr, await fixture('classic'))).signRef;
  await sb.phone.scan(b, { user: 'p256' });
  await waitFor('B: hash submitted', () => status(b) === 'hash_submitted' || undefined, 60_000);
  sb.ca.failNext('tsa', 1000, 'badRequest');
  try {
    await sb.phone.approve(b);
    await waitFor('B: ended', () => ['completed', 'failed'].includes(status(b) ?? '') || undefined, 60_000);
  } finally {
    sb.ca.failNext('tsa', 0);
  }
  expect(storedRecord(userDir, b)).toMatchObject({ state: { status: 'completed' }, result: { level: 'B-B', missing: { code: 'TSA_FAILED' } } });

  // 3. a revoked certificate: refused at the certificate step; the message names the holder, not the NRIC
  const c = (await startSigning(nr, await fixture('classic'))).signRef;
  await sb.phone.scan(c, { user: 'revoked' });
  await waitFor('C: failed', () => status(c) === 'failed' || undefined, 60_000);
  expect(storedRecord(userDir, c)!.error).toMatchObject({ code: 'OCSP_REVOKED', message: expect.stringContaining('REVOKED TEST USER') });

  await new Promise((r) => setTimeout(r, 2000)); // the flow's file nodes and the sweep settle
  const tap = fs.readFileSync(tapFile, 'utf8');
  expect(tap).toContain(a); // the tap saw the sessions' messages
  expect(tap).toContain(c);
  expect(hits(tap, needles)).toEqual([]);
  expect(tap).toContain(`"signer":{"name":"TAN AH KOW","maskedId":"*****${good.nric.slice(-4)}"}`);
  expect(hits(nr.log() + nr.output(), needles)).toEqual([]);
  await nr.stop();
  nr = undefined;
  const stored = filesUnder(userDir).filter((f) => !f.endsWith('-signed.pdf'));
  expect(stored.some((f) => f.endsWith(`${c}.json`))).toBe(true);
  for (const f of stored) expect({ file: f, hits: hits(fs.readFileSync(f).toString('latin1'), needles) }).toEqual({ file: f, hits: [] });
  // what the flow wrote besides the signed PDFs (its result and error lines)
  for (const f of filesUnder(signedDir).filter((x) => !x.endsWith('.pdf'))) expect({ file: f, hits: hits(fs.readFileSync(f, 'utf8'), needles) }).toEqual({ file: f, hits: [] });
}, 300_000);
