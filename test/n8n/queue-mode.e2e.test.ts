/**
 * The sample signing workflow in a REAL n8n 2.41 in QUEUE MODE: Redis, PostgreSQL as n8n's database, one main, one
 * `n8n webhook` process, two `n8n worker` processes, the package installed in every process's user folder, binary
 * data in n8n's database mode, session records in PostgreSQL through the Session Record nodes' PostgreSQL store.
 * The signing sandbox (`singpass-flows sandbox`, its own process) calls the webhook process through a small relay in
 * this test (it can hand one delivery to two n8n processes at once). The workflow is the shipped queue-mode sample
 * (flows/n8n/document-signing-queue-mode.json): its FTP node uploads each signed PDF to an SFTP server (Debian's
 * openssh-server, chrooted account), where the test reads it and checks it with qpdf, pdfsig and the package's own
 * `singpass-flows verify` against the sandbox's root. Everything is started and stopped by this file, on 127.0.0.1.
 *
 * The signer's page in a real headless Chromium, before any fault: upload → 303 → the page served by any worker,
 * scanned, signed, the signed PDF downloaded from the store.
 *
 * Faults: a worker SIGKILLed mid-session (before the hash got through; after it got through, before the answer),
 * one certificate delivery raced through two processes, the same delivery again while the first execution waits at the
 * save point, Redis restarted (empty) and PostgreSQL restarted while
 * sessions are in flight, the SFTP server down when a signed PDF is to be stored, every worker killed while its upload
 * hangs. What must hold: a session completes or ends with a recorded reason, never silently lost, never a second
 * hash; a signed PDF the server could not take is handed over again until the server has it.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { SIGNER_PAGE_HEADERS } from '../../src/session';
import { fixture } from '../fixtures/pdfs';
import { CHROMIUM, launchChromium } from '../helpers/chromium';
import { installedPackageDir, type N8nQueue } from '../helpers/n8n-queue';
import { hasPostgres } from '../helpers/postgres';
import { hasRedis } from '../helpers/redis';
import { hasSshd, startSftpServer, type SftpServer } from '../helpers/sftp';
import { startDeliveryRelay, type DeliveryRelay } from './delivery-relay';
import { startQueueSample, type Workflow } from './queue-workflow';
import { freePort, n8nInstallDir, releasePackage, startCliSandbox, uploadHeaders, type CliSandbox } from './real-n8n';

const installDir = n8nInstallDir();
const ready = !!installDir && hasPostgres() && hasRedis() && hasSshd() && fs.existsSync(CHROMIUM);
if (!ready && process.env.CI) throw new Error('queue-mode e2e needs n8n (scripts/install-n8n.sh), postgresql, redis-server, openssh-server and chromium');
const describeQueue = ready ? describe : describe.skip;

const RESUME_EVERY_S = 2;
const IDLE_S = 5;
/** Run Due Step's hand-over lease (not 5 min): an upload lost with its worker is handed over again within the test. */
const HANDOVER_LEASE_S = 20;
const SESSION_TTL_S = 60;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface StoredRecord {
  found: boolean;
  status?: string;
  revision?: number;
  error?: { code: string; message: string; serviceCode?: string };
  record?: {
    submitting?: { documentHash: string }; state: { status: string }; phase?: string; result?: { level?: string; valid?: boolean };
    handOver?: { attempts?: number; lastFailure?: { code: string; message: string }; acknowledgedAt?: number };
  };
}

describeQueue('the sample signing workflow in n8n queue mode (main + webhook process + 2 workers, Redis, PostgreSQL)', () => {
  let q: N8nQueue;
  let signing: CliSandbox;
  let signingDir: string;
  let relay: DeliveryRelay;
  let workflow: Workflow;
  let sftp: SftpServer;

  beforeAll(async () => {
    sftp = await startSftpServer();
    ({ q, workflow } = await startQueueSample({
      queue: { workers: 2 }, resumeEverySeconds: RESUME_EVERY_S, idleSeconds: IDLE_S, handOver: { leaseSeconds: HANDOVER_LEASE_S, windowSeconds: 3600 },
      async services(n8n) {
        relay = await startDeliveryRelay({ webhookUrl: () => n8n.webhookUrl, mainUrl: () => n8n.mainUrl });
        signingDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-sandbox-'));
        signing = await startCliSandbox(installedPackageDir(n8n.userFolder('main')), await freePort(), signingDir, [
          '--client-id', 'n8n-dsap', '--jwks-url', `${n8n.webhookUrl}/webhook/singpass-sign/jwks`, '--webhook-url', `${relay.baseUrl}/hook`,
          '--webhook-retry-delay-ms', '1000', '--session-ttl', String(SESSION_TTL_S),
        ]);
        return { signingUrl: signing.baseUrl, sftp };
      },
    }));
  }, 900_000);

  afterAll(async () => {
    await signing?.stop();
    await relay?.close();
    await q?.stop();
    await sftp?.stop();
    if (signingDir) fs.rmSync(signingDir, { recursive: true, force: true });
    releasePackage();
  }, 120_000);

  async function startSession(): Promise<string> {
    const res = await fetch(`${q.webhookUrl}/webhook/singpass-sign/document`, {
      method: 'POST', headers: uploadHeaders(), body: new Uint8Array(await fixture('classic')), redirect: 'manual',
    });
    const html = await res.text();
    // 303 to the signer's page
    if (res.status !== 303) throw new Error(`upload answered ${res.status}: ${html}\n${q.log()}`);
    return res.headers.get('x-sign-ref')!;
  }

  /** The stored record as Load Session Record (PostgreSQL) outputs it, through the probe workflow. */
  async function stored(signRef: string): Promise<StoredRecord | undefined> {
    try {
      const res = await fetch(`${q.webhookUrl}/webhook/test/session-record?signRef=${encodeURIComponent(signRef)}`, { signal: AbortSignal.timeout(15_000) });
      return res.ok ? (await res.json()) as StoredRecord : undefined;
    } catch {
      return undefined; // a process or Redis/PostgreSQL is restarting
    }
  }

  async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 120_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await check();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${q.log()}`);
      await sleep(500);
    }
  }
  const statusIs = (signRef: string, ...statuses: string[]) => async () => {
    const r = await stored(signRef);
    return r?.found && statuses.includes(r.status!) ? r : undefined;
  };

  /**
   * The signed PDF as the SFTP server holds it, once it is whole: the file is written in place by n8n's FTP node, so
   * a read during the upload would see part of it (the same size twice, 300 ms apart, ending in %%EOF).
   */
  async function signedOnServer(signRef: string): Promise<Buffer | undefined> {
    const file = path.join(sftp.localDir, `${signRef}-signed.pdf`);
    if (!fs.existsSync(file)) return undefined;
    const size = fs.statSync(file).size;
    await sleep(300);
    const pdf = fs.readFileSync(file);
    return pdf.length === size && /%%EOF\s*$/.test(pdf.subarray(-32).toString('latin1')) ? pdf : undefined;
  }

  /** SFTP logins so far: each one is an upload by the workflow (nothing else logs in). */
  const sftpLogins = () => (sftp.log().match(/Accepted publickey for /g) ?? []).length;

  /** One user signature (valid, the sandbox user's), per pdfsig; the package's verify with the sandbox root: `level`. */
  async function expectValidSigned(pdf: Buffer, label: string, level: string): Promise<void> {
    const file = path.join(os.tmpdir(), `spfl-queue-${label}.pdf`);
    fs.writeFileSync(file, pdf);
    try {
      execFileSync('qpdf', ['--check', file], { stdio: 'pipe' });
      const pdfsig = execFileSync('pdfsig', [file], { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
      const signatures = pdfsig.split(/^Signature #\d+:$/m).slice(1);
      expect(signatures.filter((s) => /Signature Type: ETSI\.CAdES\.detached/.test(s) && /Signature Validation: Signature is Valid/.test(s))).toHaveLength(1);
      expect(pdfsig).toMatch(/Signer full Distinguished Name: serialNumber=S1234567D,/);
      const cli = path.join(installedPackageDir(q.userFolder('main')), 'dist', 'cli', 'index.js');
      const report = JSON.parse(execFileSync(process.execPath, [cli, 'verify', file, '--root', path.join(signingDir, 'root-ca.pem'), '--json'], { stdio: ['ignore', 'pipe', 'pipe'] }).toString()) as { valid: boolean; level: string };
      expect({ valid: report.valid, level: report.level }).toEqual({ valid: true, level });
    } finally {
      fs.rmSync(file, { force: true });
    }
  }

  /** Completed, its signed PDF on the SFTP server, valid B-LTA (one user signature, then the document timestamp). */
  async function expectSignedOnServer(signRef: string): Promise<void> {
    const pdf = await waitFor(`${signRef} completed and its signed PDF on the SFTP server`, async () => ((await statusIs(signRef, 'completed')()) ? signedOnServer(signRef) : undefined));
    await expectValidSigned(pdf, signRef, 'B-LTA');
  }

  /**
   * Every hash call for the session carried the one saved hash (none at all only when `mayHaveNone`: a session that
   * ended before its hash), and the service accepted at most one call.
   */
  async function expectOneHash(signRef: string, savedHash?: string, mayHaveNone = false): Promise<void> {
    const calls = await signing.hashes(signRef);
    const hashes = new Set(calls.map((c) => c.docHash).filter((h): h is string => h !== undefined));
    expect(hashes.size).toBe(mayHaveNone && hashes.size === 0 ? 0 : 1);
    if (savedHash) expect([...hashes]).toEqual([savedHash]);
    expect(calls.filter((c) => c.status === 200).length).toBeLessThanOrEqual(1);
  }

  /** The worker running the certificate execution of this moment (the only long-running one). */
  async function workerRunningTheCertificateStep(): Promise<number> {
    return waitFor('the worker running the certificate step', async () => {
      const running = (await q.executions(workflow.id)).filter((e) => e.status === 'running').map((e) => e.id);
      for (const id of running.reverse()) {
        for (let w = 0; w < q.workers; w++) {
          const log = q.log(`worker${w}`);
          if (log.includes(`Worker started execution ${id} `) && !log.includes(`Worker finished execution ${id} `)) return w;
        }
      }
      return undefined;
    }, 30_000);
  }

  it('signs a PDF end to end: upload on the webhook process, events run on the workers, record in PostgreSQL, one hash, a valid PDF on the SFTP server', async () => {
    const logins = sftpLogins();
    const refs = await Promise.all([startSession(), startSession(), startSession(), startSession()]);
    for (const ref of refs) await signing.phone('scan', { sign_ref: ref, user: 'p256' });
    for (const ref of refs) {
      await waitFor(`${ref} hash submitted`, statusIs(ref, 'hash_submitted'));
      await signing.phone('approve', { sign_ref: ref });
    }
    for (const ref of refs) {
      await expectSignedOnServer(ref);
      await expectOneHash(ref);
    }
    // the work was spread over the processes of queue mode
    expect(q.log('webhook')).toMatch(/Enqueued execution \d+/);
    for (let w = 0; w < q.workers; w++) expect(q.log(`worker${w}`)).toMatch(/Worker started execution \d+/);
    // one upload per session, whichever worker ran it: every file on the one server, nothing else there
    expect(sftpLogins() - logins).toBe(refs.length);
    expect(fs.readdirSync(sftp.localDir).filter((f) => refs.some((r) => f.startsWith(r))).sort()).toEqual(refs.map((r) => `${r}-signed.pdf`).sort());
  }, 600_000);

  // the signer's page before any part is killed: every page, poll and download is a webhook execution on whichever
  // worker takes it, so what the page shows comes from the store, never from a process's memory
  describe('the signer\'s page in Chromium', () => {
    let browser: Browser;
    beforeAll(async () => { browser = await launchChromium(); }, 60_000);
    afterAll(async () => { await browser?.close(); });

    it('upload → 303 → the page on any worker: QR and code, scanned, signed; the signed PDF downloaded from the store', async () => {
      const upload = `${q.webhookUrl}/webhook/singpass-sign/document`;
      const res = await fetch(upload, { method: 'POST', headers: uploadHeaders(), redirect: 'manual', body: new Uint8Array(await fixture('classic')) });
      expect(res.status).toBe(303);
      const signRef = res.headers.get('x-sign-ref')!;
      const pageUrl = new URL(res.headers.get('location')!, upload).href;
      const context = await browser.newContext({ acceptDownloads: true });
      const page = await context.newPage();
      try {
        const served = await fetch(pageUrl);
        expect([served.status, served.headers.get('content-type'), served.headers.get('x-frame-options'), served.headers.get('content-disposition')]).toEqual([200, 'text/html; charset=utf-8', 'DENY', 'inline']);
        await page.goto(pageUrl);
        await page.locator('#qr svg').waitFor();
        expect(await page.locator('#code').textContent()).toBe(res.headers.get('x-challenge-code'));
        await signing.phone('scan', { sign_ref: signRef, user: 'p256' });
        await page.locator('#stage[data-stage="scanned"]').waitFor({ timeout: 90_000 });
        await signing.phone('approve', { sign_ref: signRef });
        await page.locator('#stage[data-stage="signed"]').waitFor({ timeout: 120_000 });
        const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download-link').click()]);
        const file = path.join(q.userFolder('main'), `${signRef}-downloaded.pdf`);
        await download.saveAs(file);
        // through the webhook process from a worker's one Respond to Webhook node: the type, the name, the core's headers
        const dl = await fetch(new URL((await page.locator('#download-link').getAttribute('href'))!, pageUrl));
        expect([dl.status, dl.headers.get('content-type'), dl.headers.get('content-disposition'), dl.headers.get('cache-control'), dl.headers.get('referrer-policy')])
          .toEqual([200, 'application/pdf', 'attachment; filename="contract-signed.pdf"', SIGNER_PAGE_HEADERS['cache-control'], SIGNER_PAGE_HEADERS['referrer-policy']]);
        expect(Buffer.from(await dl.arrayBuffer())).toEqual(fs.readFileSync(file));
        execFileSync('qpdf', ['--check', file]);
        const pdfsig = execFileSync('pdfsig', [file]).toString();
        expect(pdfsig).toMatch(/Signature Validation: Signature is Valid/);
        expect(pdfsig).toMatch(/Signer full Distinguished Name: serialNumber=S1234567D,/);
      } catch (err) {
        await page.screenshot({ path: path.join(os.tmpdir(), `spfl-queue-signer-page-${signRef}.png`) }).catch(() => undefined);
        throw err;
      } finally {
        await context.close();
      }
      // the pages, polls and the download ran as executions on the workers (the webhook process only takes requests)
      expect(q.log('worker0') + q.log('worker1')).not.toMatch(/Error loading package|Unrecognized node type/);
    }, 600_000);
  });

  it('a worker SIGKILLed after the certificate, before the hash got through: the schedule resubmits the saved hash once, the session completes', async () => {
    const ref = await startSession();
    // the service takes no hash for now: the live Submit keeps retrying while the record waits at the save point
    await signing.faults({ service_error: 1000, service_error_status: 503 });
    let savedHash: string;
    let killed: number;
    try {
      await signing.phone('scan', { sign_ref: ref, user: 'p256' });
      const atSavePoint = await waitFor('the save point', async () => {
        const r = await statusIs(ref, 'certificate_received')();
        return r?.record?.submitting ? r : undefined;
      });
      savedHash = atSavePoint.record!.submitting!.documentHash;
      killed = await workerRunningTheCertificateStep();
      await q.killWorker(killed);
    } finally {
      await signing.faults({ reset: true });
    }
    expect((await signing.hashes(ref)).filter((h) => h.status === 200)).toEqual([]); // nothing got through
    await q.startWorker(killed);
    await waitFor('the resumed hash', statusIs(ref, 'hash_submitted'));
    await signing.phone('approve', { sign_ref: ref });
    await expectSignedOnServer(ref);
    await expectOneHash(ref, savedHash);
  }, 600_000);

  it('a worker SIGKILLed after the hash got through, before its answer: the schedule\'s resend reads "already submitted", the session completes with that one hash', async () => {
    const ref = await startSession();
    // the service takes the hash at once and answers a minute late: the worker dies waiting for the answer
    await signing.faults({ hash_delay_ms: 60_000 });
    let savedHash: string;
    let killed: number;
    try {
      await signing.phone('scan', { sign_ref: ref, user: 'p256' });
      await waitFor('the hash taken by the service', async () => ((await signing.hashes(ref)).some((h) => h.docHash) ? true : undefined));
      savedHash = (await stored(ref))!.record!.submitting!.documentHash;
      killed = await workerRunningTheCertificateStep();
      await q.killWorker(killed);
    } finally {
      await signing.faults({ reset: true });
    }
    await q.startWorker(killed);
    await waitFor('the session recorded as submitted', statusIs(ref, 'hash_submitted'));
    await signing.phone('approve', { sign_ref: ref });
    await expectSignedOnServer(ref);
    await expectOneHash(ref, savedHash);
  }, 600_000);

  it('one certificate delivery handed to two n8n processes at once (two executions race on the record): one hash, the session completes', async () => {
    const ref = await startSession();
    relay.raceNext(ref);
    await signing.phone('scan', { sign_ref: ref, user: 'p256' });
    await waitFor('the hash submitted', statusIs(ref, 'hash_submitted'));
    // both processes answer 200; the store keeps the event once, so only one of them starts an execution
    expect(relay.deliveries.find((d) => d.signRef === ref && d.type === 'user_cert')?.statuses).toEqual([200, 200]);
    await signing.phone('approve', { sign_ref: ref });
    await expectSignedOnServer(ref);
    await expectOneHash(ref);
  }, 600_000);

  it('the certificate delivered again to another process while the first execution waits at the save point (the service resending a late answer): kept already, it starts nothing; one hash, the session completes', async () => {
    const ref = await startSession();
    // the service takes the hash at once and answers 4 s later: the first execution sits in Submit Document Hash. Less
    // than IDLE_S, as the credential's idle time must outlast a live step: the schedule's driver counts each resend in
    // the record before it leaves, so resends started faster than they end would keep superseding each other.
    await signing.faults({ hash_delay_ms: 4000 });
    try {
      await signing.phone('scan', { sign_ref: ref, user: 'p256' });
      await waitFor('the hash taken by the service', async () => ((await signing.hashes(ref)).some((h) => h.docHash) ? true : undefined));
      const atSavePoint = await stored(ref);
      expect(atSavePoint).toMatchObject({ status: 'certificate_received', record: { submitting: expect.anything() } });
      // the same delivery on main: a new execution loads the record at the save point (the first one has not saved its answer)
      expect(await relay.redeliverCertificate(ref)).toBe(200);
      await waitFor('the session recorded as submitted', statusIs(ref, 'hash_submitted'));
    } finally {
      await signing.faults({ reset: true });
    }
    await signing.phone('approve', { sign_ref: ref });
    await expectSignedOnServer(ref);
    await expectOneHash(ref);
    // completed, not failed: had the second execution sent the hash as a FIRST call, the service's "already
    // submitted" would have failed the session. (The service may log more than one call of the same hash: the resume
    // schedule resends it once the first call has been waiting longer than IDLE_S, which is its job.)
    expect((await stored(ref))?.error).toBeUndefined();
    expect((await stored(ref))?.status).toBe('completed');
  }, 600_000);

  it('n8n cannot record the execution of a certificate it answered 200 (its database refuses it, as in an outage right after the answer): the kept certificate is replayed by the resume schedule, one hash, the session completes', async () => {
    const ref = await startSession();
    const n8nDb = (query: string) => q.postgres.sql(query, q.postgres.database);
    const sessionStatus = async () => q.postgres.sql(`SELECT record->'state'->>'status' FROM singpass_sign_sessions WHERE sign_ref = '${ref}'`, q.sessionDb.database);
    await n8nDb('ALTER TABLE execution_entity ADD CONSTRAINT spfl_refuse_executions CHECK (false) NOT VALID');
    try {
      await signing.phone('scan', { sign_ref: ref, user: 'p256' });
      await waitFor('the certificate answered 200', () => (relay.deliveries.some((d) => d.signRef === ref && d.type === 'user_cert' && d.statuses[0] === 200) ? true : undefined));
      // n8n could not create the execution: nothing ran, the event is only in the store, kept and unapplied
      await sleep((IDLE_S + RESUME_EVERY_S) * 1000);
      expect(await sessionStatus()).toBe('waiting_for_scan');
      expect(await q.postgres.sql(`SELECT applied FROM singpass_sign_deliveries WHERE sign_ref = '${ref}' AND type = 'certificate'`, q.sessionDb.database)).toBe('f');
      expect(q.log('webhook')).toMatch(/spfl_refuse_executions/);
    } finally {
      await n8nDb('ALTER TABLE execution_entity DROP CONSTRAINT IF EXISTS spfl_refuse_executions');
    }
    // the certificate is never delivered again (it was answered 200): only the schedule's replay can move the session
    await waitFor('the session recorded as submitted', statusIs(ref, 'hash_submitted'));
    expect(relay.deliveries.filter((d) => d.signRef === ref && d.type === 'user_cert')).toHaveLength(1);
    await signing.phone('approve', { sign_ref: ref });
    await expectSignedOnServer(ref);
    await expectOneHash(ref);
  }, 600_000);

  /**
   * The SFTP server gone while signed PDFs are to be stored: sshd is stopped and its port held by a listener that
   * counts connections and either closes each at once (a server gone: the upload fails fast) or holds it unanswered
   * (a server hanging: the upload waits), so the test sees every hand-over's try.
   */
  async function sftpDown(mode: 'refuse' | 'hang' = 'refuse'): Promise<{ attempts: () => number; up: () => Promise<void> }> {
    await sftp.halt();
    let attempts = 0;
    const held = new Set<net.Socket>();
    const gone = net.createServer((c) => {
      attempts++;
      if (mode === 'refuse') return void c.destroy();
      held.add(c);
      c.on('close', () => held.delete(c));
    });
    await new Promise<void>((resolve, reject) => { gone.once('error', reject); gone.listen(sftp.port, '127.0.0.1', resolve); });
    let isUp = false;
    return {
      attempts: () => attempts,
      async up() {
        if (isUp) return;
        isUp = true;
        for (const c of held) c.destroy();
        await new Promise<void>((r) => gone.close(() => r()));
        await sftp.start();
      },
    };
  }

  /** The stored record once `ok` says so (its phase and hand-over, as Load Session Record outputs it). */
  const recordWhere = (signRef: string, what: string, ok: (r: NonNullable<StoredRecord['record']>) => boolean, timeoutMs = 120_000) =>
    waitFor(`${signRef}: ${what}`, async () => {
      const r = (await stored(signRef))?.record;
      return r && ok(r) ? r : undefined;
    }, timeoutMs);

  it('the SFTP server down when a signed PDF is to be stored: the upload\'s failure reported, the PDF handed over again until the server is back, then B-LTA on the server and the session acknowledged', async () => {
    const ref = await startSession();
    await signing.phone('scan', { sign_ref: ref, user: 'p256' });
    await waitFor(`${ref} hash submitted`, statusIs(ref, 'hash_submitted'));
    const down = await sftpDown('refuse');
    try {
      await signing.phone('approve', { sign_ref: ref });
      // finished and handed over: the upload refused, reported by the FTP node's error output, handed over again
      const refused = await recordWhere(ref, 'a refused hand-over reported, then handed over again', (r) => r.phase === 'handingOver' && r.handOver?.lastFailure !== undefined && (r.handOver.attempts ?? 0) >= 2);
      expect(refused.result).toMatchObject({ level: 'B-LTA', valid: true });
      expect(await signedOnServer(ref)).toBeUndefined();
      expect(down.attempts()).toBeGreaterThanOrEqual(2);
    } finally {
      await down.up();
    }
    await expectSignedOnServer(ref);
    const done = await recordWhere(ref, 'acknowledged', (r) => r.phase === 'completed');
    expect(done.handOver).toMatchObject({ acknowledgedAt: expect.any(Number), lastFailure: expect.anything() });
    await expectOneHash(ref);
  }, 600_000);

  it('every worker SIGKILLed between completing and storing (the upload hanging on an SFTP server that does not answer), started again with the server back: the PDF handed over again reaches the SFTP server at B-LTA, one signature', async () => {
    const ref = await startSession();
    await signing.phone('scan', { sign_ref: ref, user: 'p256' });
    await waitFor(`${ref} hash submitted`, statusIs(ref, 'hash_submitted'));
    const down = await sftpDown('hang');
    try {
      await signing.phone('approve', { sign_ref: ref });
      // finished, the first hand-over saved and leased before the PDF left; its upload hangs in a worker
      await recordWhere(ref, 'handed over once', (r) => r.phase === 'handingOver' && r.handOver?.attempts === 1);
      await waitFor('the upload connecting to the SFTP server', () => (down.attempts() > 0 ? true : undefined), 60_000);
      for (let w = 0; w < q.workers; w++) await q.killWorker(w);
      await down.up();
      for (let w = 0; w < q.workers; w++) await q.startWorker(w);
    } finally {
      await down.up();
    }
    // nothing acknowledged it: past the lease the schedule hands the same PDF over again
    await expectSignedOnServer(ref);
    const done = await recordWhere(ref, 'acknowledged', (r) => r.phase === 'completed');
    expect(done.handOver?.attempts).toBeGreaterThanOrEqual(2);
    expect(done.result).toMatchObject({ level: 'B-LTA', valid: true });
    await expectOneHash(ref);
  }, 600_000);

  /** Sessions in flight across an outage: each completes (valid PDF) or ends with a recorded reason; never two hashes. */
  async function sessionsAcross(outage: () => Promise<void>): Promise<Record<string, string>> {
    const refs = await Promise.all([startSession(), startSession(), startSession()]);
    await Promise.all(refs.map((ref) => signing.phone('scan', { sign_ref: ref, user: 'p256' })));
    await outage();
    const approved = new Set<string>();
    const outcome: Record<string, string> = {};
    // approve each session whose hash got through; wait until every session has ended (the deadline bounds it)
    await waitFor('every session ended', async () => {
      for (const ref of refs) {
        if (outcome[ref]) continue;
        const r = await stored(ref);
        if (!r?.found) continue;
        if (r.status === 'hash_submitted' && !approved.has(ref)) {
          await signing.phone('approve', { sign_ref: ref }).then(() => approved.add(ref), () => undefined);
        }
        if (r.status === 'completed' && await signedOnServer(ref)) outcome[ref] = 'completed';
        if (r.status === 'failed' || r.status === 'expired') {
          // our code and message; the service's own code beside them when the service gave the reason
          const { serviceCode, ...ours } = r.error!;
          expect(ours).toEqual({ code: expect.stringMatching(/^[A-Z_]+$/), message: expect.any(String) });
          if (serviceCode !== undefined) expect(serviceCode).toMatch(/^[A-Z_]+$/);
          outcome[ref] = `${r.status}: ${r.error!.code}`;
        }
      }
      return refs.every((ref) => outcome[ref]) ? true : undefined;
    }, (SESSION_TTL_S + 120 + 60) * 1000);
    for (const ref of refs) {
      if (outcome[ref] === 'completed') await expectSignedOnServer(ref);
      await expectOneHash(ref, undefined, outcome[ref] !== 'completed');
      // what happened to a session that did not complete: its deliveries as n8n answered them, and n8n's errors
      if (outcome[ref] !== 'completed') {
        console.log(`${ref} ended ${outcome[ref]}; deliveries:`, JSON.stringify(relay.deliveries.filter((d) => d.signRef === ref)),
          '\nservice deliveries:', JSON.stringify((await signing.deliveries()).filter((d) => d.signRef === ref)),
          '\nn8n errors:\n', q.log().split('\n').filter((l) => /rror|Problem|crash|Lost|fail/i.test(l)).slice(-40).join('\n'));
      }
    }
    return outcome;
  }

  it('Redis restarted (empty) while sessions are in flight: each completes or ends with a recorded reason, never a second hash', async () => {
    const outcome = await sessionsAcross(() => q.restartRedis({ downMs: 3000 }));
    console.log('sessions across a Redis restart:', outcome);
  }, 900_000);

  it('PostgreSQL restarted while sessions are in flight: each completes or ends with a recorded reason, never a second hash', async () => {
    const outcome = await sessionsAcross(() => q.restartPostgres({ downMs: 3000 }));
    console.log('sessions across a PostgreSQL restart:', outcome);
  }, 900_000);
});
