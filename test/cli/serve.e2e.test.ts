/**
 * `singpass-flows serve` as an ops team runs it beyond one process: two processes of the built CLI over one shared
 * store behind Debian's nginx (round robin, one URL for the signing service and the applications), against the
 * sandbox over real HTTP. A certificate event taken by one process and the signature by the other complete the
 * session; a process SIGKILLed in the middle (the hash call in flight; after the hash) loses nothing: exactly one hash
 * is accepted and the PDF verifies (our verifier and pdfsig).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { verifyPdfSignatures } from '../../src/pades/verify';
import { run, samplePdf } from '../pades/ltv-helpers';
import { makeNssDb } from '../helpers/pki-tools';
import { pdfsigSections } from '../pades/foreign-signer';
import { startNginx, type RunningNginx } from '../helpers/nginx';

const ROOT = join(__dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli', 'index.js');

interface ServeProcess {
  child: ChildProcess;
  url: string;
  port: number;
  log: string[];
}

/** One `serve` process; resolves once it prints where it listens. */
function startServe(args: string[]): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const log: string[] = [];
    let buf = '';
    const onLine = (line: string) => {
      log.push(line);
      const m = /^serving on (http:\/\/127\.0\.0\.1:(\d+))/.exec(line);
      if (m) resolve({ child, url: m[1]!, port: Number(m[2]), log });
    };
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      lines.forEach(onLine);
    });
    child.stderr!.on('data', (d: Buffer) => log.push(`stderr: ${d.toString()}`));
    child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${log.join('\n')}`)));
  });
}

async function until<T>(check: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('serve: two processes over one store behind nginx', () => {
  let sandbox: Sandbox;
  let dir: string;
  let nginx: RunningNginx;
  let procs: ServeProcess[] = [];
  let pdf: Buffer;
  let configPath: string;
  const store = () => join(dir, 'store');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'serve-'));
    pdf = await samplePdf('Served');
    sandbox = await startSandbox({ webhookRetryDelayMs: 300 });
    writeFileSync(join(dir, 'root.pem'), sandbox.pki.root.certPem);
    configPath = join(dir, 'config.json');
    writeFileSync(configPath, JSON.stringify({
      signApiBaseUrl: sandbox.urls.signApi, clientId: 'serve-dsap', signingKey: (await generateClientKeys()).signing,
      serviceKeySetUrl: sandbox.urls.signKeys, tsaUrl: sandbox.urls.tsa, trustedRoots: ['root.pem'],
      domainName: 'serve.example.sg', tenantId: 'serve tests', notificationSecret: 'the-same-secret-in-every-process-0123456789',
    }));
    procs = [];
    for (let i = 0; i < 2; i++) procs.push(await startServe(['--config', configPath, '--store', store(), '--port', '0', '--sweep-ms', '300', '--take-over-ms', '1500']));
    nginx = await startNginx(procs.map((p) => `127.0.0.1:${p.port}`));
    sandbox.sign.events.on('hash', (x: { signRef: string }) => taken.set(x.signRef, (taken.get(x.signRef) ?? 0) + 1));
    sandbox.sign.registerClient({ clientId: 'serve-dsap', jwksUrl: `${nginx.url}/jwks`, notificationUrl: `${nginx.url}/webhook` });
  }, 60_000);

  afterAll(async () => {
    sandbox?.phone.auto(false);
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await nginx?.stop();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(name: string, level = 'B-T'): Promise<string> {
    const res = await fetch(`${nginx.url}/sessions?name=${encodeURIComponent(name)}&level=${level}`, { method: 'POST', body: new Uint8Array(pdf), headers: { 'content-type': 'application/pdf' } });
    expect(res.status).toBe(201);
    return ((await res.json()) as { signRef: string }).signRef;
  }
  const status = async (signRef: string) => {
    const res = await fetch(`${nginx.url}/sessions/${signRef}`);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET /sessions/${signRef}: HTTP ${res.status} ${text.slice(0, 200)}`);
    return JSON.parse(text) as { status: string; result?: { level: string; valid: boolean }; error?: { code: string } };
  };
  // A poll may meet nginx's 502 for a moment after an upstream died (both marked failed for fail_timeout): poll again.
  const completed = (signRef: string) => until(async () => {
    const s = await status(signRef).catch(() => undefined);
    if (!s) return undefined;
    return s.status === 'completed' || s.status === 'failed' || s.status === 'expired' ? s : undefined;
  }, `session ${signRef} to end`, 45_000);
  /** Hashes the service took for the session (its own count: a call whose answer was cut off still counts). */
  const taken = new Map<string, number>();
  const acceptedHashes = (signRef: string) => taken.get(signRef) ?? 0;
  /** Which process logged `step` for the session. */
  const processWith = (signRef: string, step: string) => procs.find((p) => p.log.some((l) => l === `session ${signRef} ${step}`));

  async function expectSignedPdf(signRef: string, name: string): Promise<void> {
    const res = await fetch(`${nginx.url}/sessions/${signRef}/signed.pdf`);
    expect(res.status).toBe(200);
    const signed = Buffer.from(await res.arrayBuffer());
    const report = await verifyPdfSignatures(signed, { trustedRoots: [sandbox.pki.root.certDer] });
    expect(report.newest).toMatchObject({ valid: true, level: 'B-T' });
    expect(report.signatures.filter((s) => s.type === 'signature')).toHaveLength(1);
    const file = join(dir, name);
    writeFileSync(file, signed);
    const nss = await makeNssDb(join(dir, `nss-${name}`), sandbox.pki.root.certPem);
    const sections = pdfsigSections(await run('pdfsig', ['-nssdir', `sql:${nss}`, file]).then((r) => r.stdout, (e: { stdout?: string }) => e.stdout ?? ''));
    expect(sections).toHaveLength(1);
    expect(sections[0]).toContain('Signature Validation: Signature is Valid.');
  }

  it('sessions through one URL complete whichever process takes each event; one hash each', async () => {
    const refs = await Promise.all([0, 1, 2, 3].map((i) => start(`Served ${i}.pdf`)));
    for (const signRef of refs) {
      await sandbox.phone.scan(signRef, { user: 'p256' });
      await until(() => sandbox.sign.session(signRef)?.state === 'hash_submitted' || undefined, 'the hash');
      await sandbox.phone.approve(signRef);
    }
    for (const signRef of refs) {
      const s = await completed(signRef);
      expect(s).toMatchObject({ status: 'completed', result: { level: 'B-T', valid: true } });
      expect(acceptedHashes(signRef)).toBe(1);
    }
    await expectSignedPdf(refs[0]!, 'served.pdf');
    // round robin: both processes did part of the work
    expect(procs.every((p) => p.log.some((l) => / (certificate|signature|embedded)$/.test(l)))).toBe(true);
  }, 90_000);

  it('the process making the hash call is SIGKILLed mid-call: the other takes the session over, one hash accepted, the PDF verifies', async () => {
    const signRef = await start('Killed mid-call.pdf');
    sandbox.sign.faults.hashAnswerDelay(4000); // the hash is taken at once, its answer is late: the call is in flight
    await sandbox.phone.scan(signRef, { user: 'p256' });
    const worker = await until(() => processWith(signRef, 'prepared'), 'the process preparing the hash');
    await until(() => sandbox.sign.hashCalls().some((c) => c.signRef === signRef) || undefined, 'the hash call');
    worker.child.kill('SIGKILL');
    sandbox.sign.faults.hashAnswerDelay(0);
    // the survivor's sweep resends the SAME saved hash after --take-over-ms; "already submitted" = it got through
    await until(() => (sandbox.sign.hashCalls().filter((c) => c.signRef === signRef).length >= 2) || undefined, 'the resend', 20_000);
    await sandbox.phone.approve(signRef);
    const s = await completed(signRef);
    expect(s).toMatchObject({ status: 'completed', result: { level: 'B-T', valid: true } });
    expect(acceptedHashes(signRef)).toBe(1);
    await expectSignedPdf(signRef, 'killed.pdf');
    // bring the killed process back for the next test (a restarted instance resumes from the store)
    const i = procs.indexOf(worker);
    procs[i] = await startServe(['--config', configPath, '--store', store(), '--port', String(worker.port), '--sweep-ms', '300', '--take-over-ms', '1500']);
  }, 90_000);

  it('the process that submitted the hash is SIGKILLed before the user approves: the signature goes to the other, which finishes', async () => {
    const signRef = await start('Killed after hash.pdf');
    await sandbox.phone.scan(signRef, { user: 'p256' });
    await until(() => sandbox.sign.session(signRef)?.state === 'hash_submitted' || undefined, 'the hash');
    const worker = await until(() => processWith(signRef, 'submitted'), 'the process that submitted');
    worker.child.kill('SIGKILL');
    await sandbox.phone.approve(signRef); // nginx skips the dead upstream; the service retries a failed delivery too
    const s = await completed(signRef);
    expect(s).toMatchObject({ status: 'completed', result: { level: 'B-T', valid: true } });
    expect(acceptedHashes(signRef)).toBe(1);
  }, 90_000);
});
