/**
 * Issue 17 in a REAL n8n 2.41 (Node 24) running the sample signing workflow, against `singpass-flows sandbox` (the
 * installed package's CLI, its own process) over real HTTP on 127.0.0.1, with the faults switched on over the
 * sandbox's HTTP fault routes: the TSA failing N times then recovering (the signature is kept at the second save
 * point and the resume schedule finishes it: ONE user signature, pdfsig), n8n SIGKILLed while finishing waits for
 * the TSA, the first hash call refused (the session fails with the service's message), and a notification presented
 * with another session's token (400 at the trigger, no execution). A relay between the service and n8n records the
 * deliveries and swaps the Bearer for the last case. Needs `bash scripts/install-n8n.sh` first (skipped without it
 * locally, failing in CI).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateClientKeys } from '../../src/keys';
import { fixture } from '../fixtures/pdfs';
import {
  createN8n, freePort, importSamples, installCommunityPackage, n8nInstallDir, packTarball, sessionStoreCredential, signedAtBlta, startCliSandbox, startRelay, uploadHeaders, uploadKeyCredential, waitFor,
  type CliSandbox, type N8n, type Relay,
} from './real-n8n';

const installDir = n8nInstallDir();
if (!installDir && process.env.CI) throw new Error('n8n is not installed: run scripts/install-n8n.sh before the tests');
const describeN8n = installDir ? describe : describe.skip;
const WORKFLOW = JSON.parse(fs.readFileSync(path.join(__dirname, '../../flows/n8n/document-signing.json'), 'utf8')) as { id: string };
const RESUME_INTERVAL_S = 2;
const RESUME_GRACE_S = 5;
const TSA_FAILURES = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface StoredRecord {
  state: { status: string; clientNotificationToken: string };
  revision: number;
  result?: { level: string; valid: boolean };
  error?: { code: string; message: string };
  submitting?: { documentHash: string; attempts?: number };
  lastFinishFailure?: { stage: string; code: string; attempts: number; retryAt: number; finishBy: number };
}

describeN8n('issue 17 faults in a real n8n running the sample workflow', () => {
  let signing: CliSandbox;
  let n8n: N8n;
  let relay: Relay;
  let signingDir: string;

  beforeAll(async () => {
    const [tarball, port] = await Promise.all([packTarball(), freePort()]);
    const signingPort = await freePort();
    signingDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-sandbox-'));
    n8n = await createN8n(installDir!, port);
    const installed = await installCommunityPackage(n8n, tarball);
    relay = await startRelay(`${n8n.baseUrl}/webhook/singpass-sign/webhook`);
    signing = await startCliSandbox(installed, signingPort, signingDir, [
      '--client-id', 'n8n-dsap', '--jwks-url', `${n8n.baseUrl}/webhook/singpass-sign/jwks`, '--webhook-url', relay.url, '--webhook-retry-delay-ms', '1000',
    ]);
    const dsap = await generateClientKeys();
    await importSamples(n8n, ['document-signing.json', 'key-set-endpoint.json'], [
      { id: 'spflSignApi00001', name: 'Singpass Sign API (sandbox)', type: 'singpassSignApi', data: { environment: 'sandbox', sandboxUrl: signing.baseUrl, clientId: 'n8n-dsap', signingKey: JSON.stringify(dsap.signing), tenantId: 'acme', domainName: 'sign.example.sg', tsaUrl: '', trustedRoots: '' } },
      { id: 'spflTokenSec0001', name: 'Singpass notification token secret', type: 'singpassNotificationTokenApi', data: { secret: 'e2e-notification-secret-0123456789abcdef' } },
      uploadKeyCredential(),
      // the sample's one session store: its folder, a step in progress left alone 5 s (not 45)
      sessionStoreCredential({ idleSeconds: RESUME_GRACE_S }),
    ], {
      // the resume schedule every 2 s (not 30); every run kept, so the test can tell whether a notification started one
      'document-signing.json': [['"secondsInterval": 30', `"secondsInterval": ${RESUME_INTERVAL_S}`],
        ['"saveDataSuccessExecution": "none"', '"saveDataSuccessExecution": "all"']],
    });
    await n8n.start();
    expect(n8n.log()).not.toMatch(/Error loading package|Unrecognized node type/);
  }, 900_000);

  afterAll(async () => {
    await n8n?.stop();
    await signing?.stop();
    await relay?.close();
    if (signingDir) fs.rmSync(signingDir, { recursive: true, force: true });
    fs.rmSync(path.dirname(await packTarball()), { recursive: true, force: true });
    if (n8n && !process.env.SINGPASS_FLOWS_KEEP_N8N) fs.rmSync(n8n.userFolder, { recursive: true, force: true });
  }, 60_000);

  const readRecord = (signRef: string): StoredRecord | undefined => {
    const f = path.join(n8n.filesDir, `${signRef}.json`);
    return fs.existsSync(f) ? (JSON.parse(fs.readFileSync(f, 'utf8')) as StoredRecord) : undefined;
  };
  const signedPdf = (signRef: string) => path.join(n8n.filesDir, `${signRef}-signed.pdf`);

  async function caFaults(body: Record<string, unknown>): Promise<{ tsa_fail: number; ocsp_fail: number; requests: { tsa: number; ocsp: number } }> {
    const res = await fetch(`${signing.baseUrl}/ca/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`/ca/faults answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as Awaited<ReturnType<typeof caFaults>>;
  }

  async function startSession(): Promise<string> {
    const res = await fetch(`${n8n.baseUrl}/webhook/singpass-sign/document`, {
      method: 'POST', headers: uploadHeaders(), body: new Uint8Array(await fixture('classic')), redirect: 'manual',
    });
    const html = await res.text();
    // 303 to the signer's page
    if (res.status !== 303) throw new Error(`upload answered ${res.status}: ${html}\nn8n log tail:\n${n8n.log().slice(-6000)}`);
    return res.headers.get('x-sign-ref')!;
  }

  async function scanned(): Promise<string> {
    const signRef = await startSession();
    await signing.phone('scan', { sign_ref: signRef, user: 'p256' });
    await waitFor('hash_submitted in the stored record', n8n, () => (readRecord(signRef)?.state.status === 'hash_submitted' ? true : undefined), 120_000);
    return signRef;
  }

  /** Every distinct revision of the record until `done` says so (polled every 100 ms: each deferral lasts ≥ 1 s). */
  async function watch(signRef: string, done: (r: StoredRecord) => boolean, timeoutMs: number): Promise<StoredRecord[]> {
    const seen: StoredRecord[] = [];
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = readRecord(signRef);
      if (r && r.revision !== seen.at(-1)?.revision) seen.push(r);
      if (r && done(r)) return seen;
      if (Date.now() > deadline) throw new Error(`record ${signRef} not done in ${timeoutMs} ms; seen ${JSON.stringify(seen.map((x) => [x.revision, x.state.status, x.lastFinishFailure?.attempts]))}\nn8n log tail:\n${n8n.log().slice(-3000)}`);
      await sleep(100);
    }
  }

  /** qpdf-valid, exactly ONE user signature (valid, the test user's) and the B-LTA document timestamp; record completed. */
  function checkOneSignatureAtBlta(signRef: string): void {
    const file = signedPdf(signRef);
    execFileSync('qpdf', ['--check', file]);
    const parts = execFileSync('pdfsig', [file], { stdio: ['ignore', 'pipe', 'pipe'] }).toString().split(/^Signature #\d+:$/m).slice(1);
    const users = parts.filter((p) => /ETSI\.CAdES\.detached/.test(p));
    expect(users).toHaveLength(1);
    expect(users[0]).toMatch(/Signature Validation: Signature is Valid/);
    expect(users[0]).toMatch(/Signer full Distinguished Name: serialNumber=S1234567D,/);
    expect(parts).toHaveLength(2);
    expect(parts.filter((p) => /Time Stamping Authority/.test(p))).toHaveLength(1);
    const qdf = execFileSync('qpdf', ['--qdf', '--object-streams=disable', file, '-'], { maxBuffer: 64 * 1024 * 1024 }).toString('latin1');
    expect(qdf).toMatch(/\/Type \/DocTimeStamp/);
    expect(qdf).toMatch(/\/OCSPs/);
    // finalized at B-T (Create Session's level); the document steps took the PDF to B-LTA (checked above)
    expect(readRecord(signRef)).toMatchObject({ state: { status: 'completed' }, result: { level: 'B-T', valid: true } });
    expect(JSON.stringify(readRecord(signRef))).not.toMatch(/"lastFinishFailure"|"prepared"|"certificate"/);
  }

  it(`the TSA fails ${TSA_FAILURES} times, then recovers: the signature waits at the second save point (signed, lastFinishFailure) and the resume schedule finishes it at B-LTA with ONE user signature`, async () => {
    const signRef = await scanned();
    const armed = await caFaults({ tsa_fail: TSA_FAILURES, tsa_failure: 503 });
    expect(armed.tsa_fail).toBe(TSA_FAILURES);
    try {
      await signing.phone('approve', { sign_ref: signRef });
      const seen = await watch(signRef, (r) => r.state.status === 'completed' && signedAtBlta(signedPdf(signRef)), 180_000);
      // saved with the signature before finishing; then kept signed with the failure, once per failed attempt
      const deferred = seen.filter((r) => r.state.status === 'signed' && r.lastFinishFailure);
      expect(deferred.map((r) => r.lastFinishFailure)).toEqual(Array.from({ length: TSA_FAILURES }, (_, i) => expect.objectContaining({ stage: 'embed', code: 'TSA_FAILED', attempts: i + 1 })));
      // backoff 1 s, 2 s, 4 s between attempts (the schedule takes the record at its retryAt, not before)
      expect(deferred.map((r) => r.lastFinishFailure!.retryAt - (r.lastFinishFailure as unknown as { at: number }).at)).toEqual([1000, 2000, 4000]);
      expect((await caFaults({})).tsa_fail).toBe(0);
      checkOneSignatureAtBlta(signRef);
    } finally {
      await caFaults({ tsa_fail: 0 });
    }
  }, 300_000);

  it('n8n SIGKILLed while finishing waits for the TSA: after the restart the schedule finishes the stored signature (ONE user signature)', async () => {
    const signRef = await scanned();
    await caFaults({ tsa_fail: 1000 });
    try {
      await signing.phone('approve', { sign_ref: signRef });
      await watch(signRef, (r) => r.state.status === 'signed' && (r.lastFinishFailure?.attempts ?? 0) >= 2, 120_000);
      await n8n.kill();
    } finally {
      await caFaults({ tsa_fail: 0 });
    }
    expect(readRecord(signRef)).toMatchObject({ state: { status: 'signed' } });
    await n8n.start();
    await watch(signRef, (r) => r.state.status === 'completed' && signedAtBlta(signedPdf(signRef)), 120_000);
    checkOneSignatureAtBlta(signRef);
  }, 420_000);

  it('the first hash call refused by the service (400): the session fails with the service\'s code and message, no second call', async () => {
    const signRef = await startSession();
    await signing.faults({ refuse_hash: 1, refuse_hash_message: 'certificate not delivered yet' });
    try {
      await signing.phone('scan', { sign_ref: signRef, user: 'p256' });
      const [failed] = (await watch(signRef, (r) => r.state.status === 'failed', 120_000)).slice(-1);
      expect(failed.error).toMatchObject({ code: 'SIGN_REQUEST_REJECTED', message: expect.stringContaining('certificate not delivered yet') });
      expect(JSON.stringify(failed)).not.toMatch(/"prepared"|"submitting"|"certificate"/);
    } finally {
      await signing.faults({ reset: true });
    }
    await sleep((RESUME_GRACE_S + 2 * RESUME_INTERVAL_S) * 1000); // a few schedule rounds: an ended session is left alone
    expect((await signing.hashes(signRef)).map((h) => h.status)).toEqual([400]);
    expect(readRecord(signRef)?.state.status).toBe('failed');
  }, 300_000);

  it('a notification presented with another session\'s token: 400 at the trigger and no execution; the same notification with its own token then runs', async () => {
    const a = await startSession();
    const b = await startSession();
    const tokenOfB = readRecord(b)!.state.clientNotificationToken;
    const webhookRuns = async () => (await n8n.executions(WORKFLOW.id)).filter((e) => e.mode === 'webhook');
    // the uploads' runs are over (their answers came from their last node): wait until none is still running
    await waitFor('the upload runs to end', n8n, async () => ((await webhookRuns()).every((e) => !['new', 'running'].includes(e.status)) ? true : undefined));
    const before = (await webhookRuns()).length;
    relay.rewriteAuthorization = (signRef, authorization) => (signRef === a ? `Bearer ${tokenOfB}` : authorization);
    try {
      await signing.phone('scan', { sign_ref: a, user: 'p256' });
      await waitFor('the relayed notification', n8n, () => relay.relayed.find((d) => d.signRef === a));
    } finally {
      relay.rewriteAuthorization = undefined;
    }
    const refused = relay.relayed.find((d) => d.signRef === a)!;
    expect(refused).toMatchObject({ requestType: 'user_cert', status: 400 });
    await sleep(3000);
    // the service takes a 400 as final: it does not retry, it ends the session and notifies that (refused too)
    const attempts = (await signing.deliveries()).filter((d) => d.signRef === a);
    expect(attempts.map(({ requestType, attempt, status }) => ({ requestType, attempt, status }))).toEqual([
      { requestType: 'user_cert', attempt: 1, status: 400 }, { requestType: 'error', attempt: 1, status: 400 },
    ]);
    expect((await webhookRuns()).length).toBe(before);
    expect(readRecord(a)?.state.status).toBe('waiting_for_scan');

    // the same genuine notification with A's own token is answered 200 and starts the certificate branch (which then
    // finds the session ended by the service)
    const own = await fetch(`${n8n.baseUrl}/webhook/singpass-sign/webhook`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${readRecord(a)!.state.clientNotificationToken}` }, body: refused.body,
    });
    expect(own.status).toBe(200);
    await waitFor('A\'s record to move on', n8n, () => (readRecord(a)?.state.status !== 'waiting_for_scan' ? true : undefined), 60_000);
    expect((await webhookRuns()).length).toBe(before + 1);
  }, 300_000);
});
