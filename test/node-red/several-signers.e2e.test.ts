/**
 * The several-signers example (examples/several-signers.json) in a real Node-RED (child process) against the sandbox
 * over real HTTP on 127.0.0.1: signer 1 (Landlord) signs, the flow starts signer 2's (Tenant) session over signer 1's
 * signed PDF once it is stored and acknowledged, and hands over their page link; each signer's PDF is at the level
 * asked for (B-LTA); the final PDF carries both signatures, both valid and trusted, B-LTA
 * after the last, and `singpass-flows verify` reports each signer. When signer 2 declines, the chain stops there and
 * signer 1's signed PDF stays available (their page, the signed folder); errors.jsonl says why. The same when signer
 * 2 never scans and the session expires.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { startSandbox, type Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { verifyPdfSignatures } from '../../src/pades';
import type { SessionRecord } from '../../src/session';
import { fixture } from '../fixtures/pdfs';
import { makeNssDb } from '../helpers/pki-tools';
import { REPO_ROOT, deploy, freePort, startNodeRedProcess, waitFor, type NodeRedProcess } from './embedded';
import { SIGN_IN, sessionDirOf, signInHeader } from './signing-scenario';

const run = promisify(execFile);
const EXAMPLE = path.join(REPO_ROOT, 'examples', 'several-signers.json');

let sb: Sandbox;
let nr: NodeRedProcess;
let tmp: string;
let userDir: string;
let signedDir: string;

beforeAll(async () => {
  if (!fs.existsSync(path.join(REPO_ROOT, 'dist', 'node-red', 'singpass-signer.js'))) throw new Error('run `npm run build` first');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-signers-'));
  userDir = path.join(tmp, 'userDir');
  signedDir = path.join(tmp, 'signed');
  // sessions live 20 s: long enough for each signer here to scan at once, short enough to watch one expire
  sb = await startSandbox({ port: 0, sessionTtlSeconds: 20 });
  nr = await startNodeRedProcess({ userDir, port: await freePort(), env: { SINGPASS_SIGNED_DIR: signedDir, SINGPASS_SIGN_USER: SIGN_IN.user, SINGPASS_SIGN_PASSWORD: SIGN_IN.password } });
  const { signing } = await generateClientKeys();
  await deploy(nr.url, (JSON.parse(fs.readFileSync(EXAMPLE, 'utf8')) as Record<string, unknown>[]).map((n) => {
    if (n.type === 'singpass-sign-client') return { ...n, sandboxUrl: sb.baseUrl, credentials: { signingKey: JSON.stringify(signing) } };
    if (n.type === 'singpass-notification-secret') return { ...n, credentials: { secret: 'several-signers-e2e-secret-0123456789abcdef' } };
    return n;
  }));
  await waitFor('the key set', async () => ((await fetch(`${nr.url}/signers/jwks`)).status === 200) || undefined);
  sb.sign.registerClient({ clientId: 'node-red-dsap', jwksUrl: `${nr.url}/signers/jwks`, notificationUrl: `${nr.url}/signers/sign/webhook` });
}, 120_000);

afterAll(async () => {
  await nr?.stop();
  await sb?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

type Status = { stage: string; downloadUrl?: string; signer?: Record<string, unknown>; detail?: string };

const pageOf = (link: string) => new URL(link, `${nr.url}/`);
async function statusOf(page: URL): Promise<Status> {
  const ref = page.pathname.split('/').pop()!;
  return (await (await fetch(new URL(`${ref}/status${page.search}`, page))).json()) as Status;
}
async function signAs(page: URL, user: 'p256' | 'p384', approve = true): Promise<Status> {
  const signRef = decodeURIComponent(page.pathname.split('/').pop()!);
  await sb.phone.scan(signRef, { user });
  await waitFor('the hash', () => (sb.sign.session(signRef)?.state === 'hash_submitted' || undefined), 30_000);
  if (approve) await sb.phone.approve(signRef);
  else await sb.phone.reject(signRef);
  return waitFor(`session ${signRef} done`, async () => {
    const s = await statusOf(page);
    return s.stage === 'signed' || s.stage === 'failed' ? s : undefined;
  }, 60_000);
}
/** The handover line for the session after `previousSignRef` (the next signer's page link). */
const handover = (previousSignRef: string) => waitFor('the handover to the next signer', () => {
  const file = path.join(signedDir, 'handovers.jsonl');
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  return text.endsWith('\n') ? text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.previousSignRef === previousSignRef) : undefined;
}, 60_000);

async function startChain(name: string): Promise<{ signRef: string; page: URL }> {
  const anonymous = await fetch(`${nr.url}/signers/start?name=${name}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(await fixture('classic')) });
  expect(anonymous.status).toBe(401);
  const res = await fetch(`${nr.url}/signers/start?name=${name}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', authorization: signInHeader() }, body: new Uint8Array(await fixture('classic')) });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { signRef: string; page: string; signer: unknown };
  expect(body.signer).toEqual({ position: 1, of: 2, label: 'Landlord' });
  return { signRef: body.signRef, page: pageOf(body.page) };
}

test('two signers in order: the final PDF carries both signatures, valid and trusted, B-LTA; verify reports each signer', async () => {
  const input = await fixture('classic');
  const first = await startChain('Lease.pdf');
  expect(await (await fetch(first.page)).text()).toContain('signer 1 of 2 (Landlord)');
  const one = await signAs(first.page, 'p256');
  expect(one.stage).toBe('signed');

  const next = await handover(first.signRef);
  expect(next).toMatchObject({ position: 2, of: 2, label: 'Tenant' });
  const second = { signRef: String(next.signRef), page: pageOf(String(next.page)) };
  const record = JSON.parse(fs.readFileSync(path.join(sessionDirOf(userDir), `${second.signRef}.json`), 'utf8')) as SessionRecord;
  expect(record.request.signer).toEqual({ position: 2, of: 2, label: 'Tenant', previousSignRef: first.signRef });
  // signer 1's PDF was stored and acknowledged before signer 2 started; their record names signer 2's session (the
  // core's startNextSigner: a repeated hand-over gets this same session)
  const previous = JSON.parse(fs.readFileSync(path.join(sessionDirOf(userDir), `${first.signRef}.json`), 'utf8')) as SessionRecord;
  expect(previous).toMatchObject({ phase: 'completed', handOver: { attempts: 1, acknowledgedAt: expect.any(Number) }, nextSigner: { signRef: second.signRef } });
  expect(await (await fetch(second.page)).text()).toContain('signer 2 of 2 (Tenant)');
  const two = await signAs(second.page, 'p384');
  expect(two.stage).toBe('signed');

  const pdf = Buffer.from(await (await fetch(new URL(two.downloadUrl!, second.page))).arrayBuffer());
  const firstPdf = Buffer.from(await (await fetch(new URL(one.downloadUrl!, first.page))).arrayBuffer());
  expect(pdf.subarray(0, input.length).equals(input)).toBe(true);
  expect(pdf.subarray(0, firstPdf.length).equals(firstPdf)).toBe(true); // signer 2 signed signer 1's output, incrementally
  expect(firstPdf.equals(fs.readFileSync(path.join(signedDir, `${first.signRef}.pdf`)))).toBe(true); // what the flow stored
  expect((await verifyPdfSignatures(firstPdf, { trustedRoots: [sb.pki.root.certDer] })).level).toBe('B-LTA'); // signer 1's at the level asked for
  const report = await verifyPdfSignatures(pdf, { trustedRoots: [sb.pki.root.certDer] });
  expect(report.valid).toBe(true);
  expect(report.level).toBe('B-LTA');
  const signatures = report.signatures.filter((s) => s.type === 'signature');
  expect(signatures.map((s) => s.signer?.subject)).toEqual([expect.stringContaining('TAN AH KOW'), expect.stringContaining('LIM BEE LENG')]);
  for (const s of signatures) {
    expect(s.chain.trusted).toBe(true);
    expect(s.revocationDataComplete).toBe(true); // LTV kept for signer 1 too, under signer 2's document timestamp
  }
  // Each signer's own box (the example's start nodes: bottom-right corner of the last page), the second beside the first.
  expect(signatures.map((s) => [s.visible, s.page])).toEqual([[true, 2], [true, 2]]);
  const [a, b] = signatures.map((s) => s.rect!);
  expect(a![2] <= b![0] || b![2] <= a![0] || a![3] <= b![1] || b![3] <= a![1]).toBe(true);

  // independent checks: the CLI's verify names each signer; pdfsig calls both signatures valid and trusted
  const file = path.join(tmp, 'final.pdf');
  const root = path.join(tmp, 'root.pem');
  fs.writeFileSync(file, pdf);
  fs.writeFileSync(root, sb.pki.root.certPem);
  const verify = await run(process.execPath, [path.join(REPO_ROOT, 'dist', 'cli', 'index.js'), 'verify', file, '--root', root]);
  expect(verify.stdout).toContain('Result: VALID (B-LTA)');
  expect(verify.stdout).toMatch(/TAN AH KOW[\s\S]*LIM BEE LENG/);
  const nss = await makeNssDb(path.join(tmp, 'nss'), sb.pki.root.certPem);
  let pdfsig: string;
  try {
    pdfsig = (await run('pdfsig', ['-nssdir', `sql:${nss}`, file])).stdout;
  } catch (e) {
    pdfsig = `${(e as { stdout?: string }).stdout ?? ''}`;
  }
  const bySigner = pdfsig.split(/^Signature #\d+:$/m).filter((b) => /Signer Certificate Common Name: (TAN AH KOW|LIM BEE LENG)/.test(b));
  expect(bySigner).toHaveLength(2);
  for (const b of bySigner) {
    expect(b).toContain('Signature Validation: Signature is Valid.');
    expect(b).toContain('Certificate Validation: Certificate is Trusted.');
  }
}, 240_000);

test('signer 2 declines: the chain stops, signer 1\'s signed PDF stays available, errors.jsonl says why', async () => {
  const first = await startChain('Declined lease.pdf');
  const one = await signAs(first.page, 'p256');
  const next = await handover(first.signRef);
  const second = pageOf(String(next.page));
  const two = await signAs(second, 'p384', false);
  expect(two.stage).toBe('failed');
  expect(two.detail).toContain('You declined the signing in the Singpass app. Nothing was signed.');
  expect(two.downloadUrl).toBeUndefined();

  // signer 1's page still says signed and still hands out their signed PDF (a fresh download link each time)
  const again = await statusOf(first.page);
  expect(again.stage).toBe('signed');
  const kept = Buffer.from(await (await fetch(new URL(again.downloadUrl!, first.page))).arrayBuffer());
  expect(kept.equals(fs.readFileSync(path.join(signedDir, `${first.signRef}.pdf`)))).toBe(true);
  const report = await verifyPdfSignatures(kept, { trustedRoots: [sb.pki.root.certDer] });
  expect(report.valid).toBe(true);
  expect(one.stage).toBe('signed');
  const errors = await waitFor('the error line', () => {
    const f = path.join(signedDir, 'errors.jsonl');
    const text = fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '';
    return text.endsWith('\n') ? text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.signRef === next.signRef) : undefined;
  });
  expect(errors).toMatchObject({ signer: { position: 2, of: 2, label: 'Tenant', previousSignRef: first.signRef }, serviceCode: 'user_cancelled' });
  // no third session was started
  const handovers = fs.readFileSync(path.join(signedDir, 'handovers.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(handovers.filter((h) => h.previousSignRef === next.signRef)).toEqual([]);
}, 240_000);

test('signer 2 never scans: the session expires, the chain stops, signer 1\'s signed PDF stays available', async () => {
  const first = await startChain('Expired lease.pdf');
  const one = await signAs(first.page, 'p256');
  expect(one.stage).toBe('signed');
  const next = await handover(first.signRef);
  const second = pageOf(String(next.page));
  const expired = await waitFor('signer 2\'s session expired', async () => {
    const s = await statusOf(second);
    return s.stage === 'expired' ? s : undefined;
  }, 90_000);
  expect(expired.detail).toContain('The time to scan and approve ran out. Nothing was signed');
  const again = await statusOf(first.page);
  expect(again.stage).toBe('signed');
  const kept = Buffer.from(await (await fetch(new URL(again.downloadUrl!, first.page))).arrayBuffer());
  expect(kept.equals(fs.readFileSync(path.join(signedDir, `${first.signRef}.pdf`)))).toBe(true);
  const line = await waitFor('the expiry line', () => {
    const f = path.join(signedDir, 'errors.jsonl');
    const text = fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '';
    return text.endsWith('\n') ? text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.signRef === next.signRef) : undefined;
  });
  expect(line).toMatchObject({ code: 'SESSION_EXPIRED', signer: { position: 2, previousSignRef: first.signRef } });
}, 240_000);
