/**
 * Issue 37 in a REAL n8n 2.41 (Node 24) running the sample signing workflow against `singpass-flows sandbox`: the
 * user's certificate and NRIC do not outlive the session. One session signs (B-LTA), one fails after the
 * certificate step (the TSA refusing for good: Run Due Step finishes it at B-B and hands that over), one is refused at the certificate step (a revoked certificate). Then n8n's database (every execution
 * kept, successful ones too), its log and the session store folder (records, kept deliveries; the signed PDFs
 * aside, which must carry the certificate) are searched for the certificates' base64 and the NRICs: none found.
 * The signed PDFs carry the OCSP answer of the pre-hash check (issue 37, item 2) and pdfsig says valid.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateClientKeys } from '../../src/keys';
import { verifyPdfSignatures } from '../../src/pades/verify';
import { fixture } from '../fixtures/pdfs';
import {
  createN8n, freePort, importSamples, installCommunityPackage, n8nInstallDir, releasePackage, sessionStoreCredential, signedAtBlta, startCliSandbox, uploadHeaders, uploadKeyCredential, waitFor,
  type CliSandbox, type N8n,
} from './real-n8n';

const installDir = n8nInstallDir();
if (!installDir && process.env.CI) throw new Error('n8n is not installed: run scripts/install-n8n.sh before the tests');
const describeN8n = installDir ? describe : describe.skip;
const WORKFLOW = JSON.parse(fs.readFileSync(path.join(__dirname, '../../flows/n8n/document-signing.json'), 'utf8')) as { id: string };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface StoredRecord { state: { status: string }; phase?: string; result?: { level: string; missing?: unknown }; error?: { code: string; message: string } }

/** The sandbox users' certificates (base64 DER) and NRICs, read from the sandbox's own PKI state. */
function sandboxUsers(dir: string): Record<'p256' | 'revoked', { base64: string; nric: string }> {
  const stateFile = execFileSync('find', [dir, '-name', 'pki-state.json']).toString().trim().split('\n')[0];
  const state = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { entities: Record<string, { certPem: string }> };
  const certs = Object.values(state.entities).map((e) => {
    const base64 = e.certPem.replace(/-----[^-]+-----|\s+/g, '');
    return { base64, subject: new X509Certificate(Buffer.from(base64, 'base64')).subject };
  });
  const of = (name: string) => {
    const { base64, subject } = certs.find((c) => c.subject.includes(`CN=${name}\n`))!;
    return { base64, nric: /serialNumber=(\S+)/.exec(subject)![1] };
  };
  return { p256: of('TAN AH KOW'), revoked: of('REVOKED TEST USER') };
}

/** Where `needle` occurs in `haystack` (latin1), for the failure message. */
function hits(haystack: Buffer | string, needles: string[]): string[] {
  const text = Buffer.isBuffer(haystack) ? haystack.toString('latin1') : haystack;
  return needles.filter((n) => text.includes(n)).map((n) => {
    const at = text.indexOf(n);
    return `${n.slice(0, 20)}… at ${at}: ${JSON.stringify(text.slice(Math.max(0, at - 120), at + 60))}`;
  });
}

describeN8n('issue 37: no certificate and no NRIC left in a real n8n after the sessions end', () => {
  let signing: CliSandbox;
  let n8n: N8n;
  let signingDir: string;

  beforeAll(async () => {
    const [port, signingPort] = await Promise.all([freePort(), freePort()]);
    signingDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-sandbox-'));
    n8n = await createN8n(installDir!, port);
    const installed = await installCommunityPackage(n8n);
    signing = await startCliSandbox(installed, signingPort, signingDir, [
      '--client-id', 'n8n-dsap', '--jwks-url', `${n8n.baseUrl}/webhook/singpass-sign/jwks`, '--webhook-url', `${n8n.baseUrl}/webhook/singpass-sign/webhook`, '--webhook-retry-delay-ms', '1000',
    ]);
    const dsap = await generateClientKeys();
    await importSamples(n8n, ['document-signing.json', 'key-set-endpoint.json'], [
      { id: 'spflSignApi00001', name: 'Singpass Sign API (sandbox)', type: 'singpassSignApi', data: { environment: 'sandbox', sandboxUrl: signing.baseUrl, clientId: 'n8n-dsap', signingKey: JSON.stringify(dsap.signing), tenantId: 'acme', domainName: 'sign.example.sg', tsaUrl: '', trustedRoots: '' } },
      { id: 'spflTokenSec0001', name: 'Singpass notification token secret', type: 'singpassNotificationTokenApi', data: { secret: 'e2e-notification-secret-0123456789abcdef' } },
      uploadKeyCredential(),
      sessionStoreCredential({ idleSeconds: 5 }),
    ], {
      // every run kept (the default keeps failed ones only): the search covers what a deployer who keeps them has
      'document-signing.json': [['"secondsInterval": 30', '"secondsInterval": 2'], ['"saveDataSuccessExecution": "none"', '"saveDataSuccessExecution": "all"']],
    });
    await n8n.start();
    expect(n8n.log()).not.toMatch(/Error loading package|Unrecognized node type/);
  }, 900_000);

  afterAll(async () => {
    await n8n?.stop();
    await signing?.stop();
    if (signingDir) fs.rmSync(signingDir, { recursive: true, force: true });
    releasePackage();
    if (n8n && !process.env.SINGPASS_FLOWS_KEEP_N8N) fs.rmSync(n8n.userFolder, { recursive: true, force: true });
  }, 60_000);

  const readRecord = (signRef: string): StoredRecord | undefined => {
    const f = path.join(n8n.filesDir, `${signRef}.json`);
    return fs.existsSync(f) ? (JSON.parse(fs.readFileSync(f, 'utf8')) as StoredRecord) : undefined;
  };
  const signedPdf = (signRef: string) => path.join(n8n.filesDir, `${signRef}-signed.pdf`);
  const until = <T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 120_000) => waitFor(what, n8n, check, ms);

  async function startSession(): Promise<string> {
    const res = await fetch(`${n8n.baseUrl}/webhook/singpass-sign/document`, { method: 'POST', headers: uploadHeaders(), body: new Uint8Array(await fixture('classic')), redirect: 'manual' });
    if (res.status !== 303) throw new Error(`upload answered ${res.status}: ${await res.text()}\nn8n log tail:\n${n8n.log().slice(-6000)}`);
    return res.headers.get('x-sign-ref')!;
  }
  async function caFaults(body: Record<string, unknown>): Promise<void> {
    const res = await fetch(`${signing.baseUrl}/ca/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`/ca/faults answered ${res.status}`);
  }

  it('signs, fails one session after the certificate step, refuses a revoked one: the database, the log and the store hold neither certificate nor NRIC', async () => {
    const users = sandboxUsers(signingDir);
    const needles = [users.p256.base64, users.p256.base64.slice(200, 260), users.p256.nric, users.revoked.base64, users.revoked.base64.slice(200, 260), users.revoked.nric];

    // 1. signed to B-LTA
    const a = await startSession();
    await signing.phone('scan', { sign_ref: a, user: 'p256' });
    await until('A: hash submitted', () => (readRecord(a)?.state.status === 'hash_submitted' ? true : undefined));
    await signing.phone('approve', { sign_ref: a });
    await until('A: completed at B-LTA', () => (readRecord(a)?.state.status === 'completed' && signedAtBlta(signedPdf(a)) ? true : undefined));

    // 2. after the certificate step, the TSA refuses for good: finished short of its level (B-B), handed over, stored
    const b = await startSession();
    await signing.phone('scan', { sign_ref: b, user: 'p256' });
    await until('B: hash submitted', () => (readRecord(b)?.state.status === 'hash_submitted' ? true : undefined));
    await caFaults({ tsa_fail: 1000, tsa_failure: 'badRequest' });
    try {
      await signing.phone('approve', { sign_ref: b });
      await until('B: completed short of its level and acknowledged', () => (readRecord(b)?.phase === 'completed' ? true : undefined));
    } finally {
      await caFaults({ tsa_fail: 0 });
    }
    expect(readRecord(b)).toMatchObject({ result: { level: 'B-B', missing: { code: 'TSA_FAILED' } } });

    // 3. a revoked certificate: refused at the certificate step, the message names the holder, not the NRIC
    const c = await startSession();
    await signing.phone('scan', { sign_ref: c, user: 'revoked' });
    await until('C: failed', () => (readRecord(c)?.state.status === 'failed' ? true : undefined));
    expect(readRecord(c)!.error).toMatchObject({ code: 'OCSP_REVOKED', message: expect.stringContaining('REVOKED TEST USER') });

    // the signed PDFs carry what a signature must (the certificate) and the OCSP answer of the pre-hash check
    for (const signRef of [a, b]) {
      const pdf = fs.readFileSync(signedPdf(signRef));
      const sig = (await verifyPdfSignatures(pdf)).signatures.find((s) => s.type === 'signature')!;
      expect(sig.signedRevocationInfo).toMatchObject({ ocsps: 1, signer: { status: 'good' } });
      expect(execFileSync('pdfsig', [signedPdf(signRef)], { stdio: ['ignore', 'pipe', 'pipe'] }).toString()).toContain('Signature Validation: Signature is Valid.');
    }

    await sleep(5000); // a few resume rounds over the ended sessions
    const runs = await n8n.executions(WORKFLOW.id);
    expect(runs.length).toBeGreaterThanOrEqual(8);

    // n8n's database: executions (successful kept too), their data, the workflow's static data
    const dbDir = path.join(n8n.userFolder, '.n8n');
    const dbFiles = fs.readdirSync(dbDir).filter((f) => f.startsWith('database.sqlite'));
    expect(dbFiles.length).toBeGreaterThanOrEqual(1);
    const db = Buffer.concat(dbFiles.map((f) => fs.readFileSync(path.join(dbDir, f))));
    expect(db.toString('latin1')).toContain(a); // the search does read the executions
    expect(hits(db, needles)).toEqual([]);
    // n8n's log
    expect(hits(n8n.log(), needles)).toEqual([]);
    // the session store after the sessions ended: records, kept deliveries (all but the signed PDFs themselves)
    const files = execFileSync('find', [n8n.filesDir, '-type', 'f']).toString().trim().split('\n').filter((f) => !f.endsWith('-signed.pdf'));
    expect(files.some((f) => f.endsWith(`${c}.json`))).toBe(true);
    for (const f of files) expect({ file: f, hits: hits(fs.readFileSync(f), needles) }).toEqual({ file: f, hits: [] });
  }, 600_000);
});
