/**
 * `singpass-flows serve` as an ops team runs it beyond one process: two processes of the built CLI over one shared
 * store — a folder (one host) and PostgreSQL (several hosts) — behind Debian's nginx (round robin, one URL for the
 * signing service and the applications), against the sandbox over real HTTP. A certificate event taken by one
 * process and the signature by the other complete the session; a process SIGKILLed in the middle (the hash call in
 * flight; after the hash) loses nothing: exactly one hash is accepted and the PDF verifies (our verifier and pdfsig).
 * With PostgreSQL also: the same certificate delivery to both processes at once gives one hash, and a database
 * restart during a run loses no session.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { verifyPdfSignatures } from '../../src/pades/verify';
import { run, samplePdf } from '../pades/ltv-helpers';
import { makeNssDb } from '../helpers/pki-tools';
import { pdfsigSections } from '../pades/foreign-signer';
import { startNginx, type RunningNginx } from '../helpers/nginx';
import { startPostgres, type Postgres } from '../helpers/postgres';
import { until } from '../helpers/poll';

const ROOT = join(__dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli', 'index.js');
/** The applications' key to the /sessions routes (the config also lists an older one, as while changing it). */
const APPLICATION_KEY = 'the-applications-key-to-sessions-0123456789';
const APP = { authorization: `Bearer ${APPLICATION_KEY}` };

interface ServeProcess {
  child: ChildProcess;
  url: string;
  port: number;
  log: string[];
}

/** One `serve` process; resolves once it prints where it listens. */
function startServe(args: string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
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

describe.each(['a folder', 'PostgreSQL'] as const)('serve: two processes over one store (%s) behind nginx', (kind) => {
  let sandbox: Sandbox;
  let dir: string;
  let nginx: RunningNginx;
  let procs: ServeProcess[] = [];
  let pdf: Buffer;
  let configPath: string;
  let pg: Postgres | undefined;
  /** The --store value; PostgreSQL's password goes in PGPASSWORD, as docs/cli.md advises, never on the command line. */
  const store = () => (pg ? `postgres://${pg.user}@127.0.0.1:${pg.port}/${pg.database}` : join(dir, 'store'));
  const storeEnv = (): Record<string, string> => (pg ? { PGPASSWORD: pg.password } : {});
  const serveArgs = (port = 0) => ['--config', configPath, '--store', store(), '--port', String(port), '--sweep-ms', '300', '--take-over-ms', '1500'];
  /** The webhook URL the service calls: nginx, or (race test) both processes at once. */
  let relay: http.Server;
  let raceNextDelivery = false;
  const raced: number[] = [];
  const relayErrors: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'serve-'));
    if (kind === 'PostgreSQL') pg = await startPostgres();
    pdf = await samplePdf('Served');
    sandbox = await startSandbox({ webhookRetryDelayMs: 300, webhookAttempts: 20 });
    writeFileSync(join(dir, 'root.pem'), sandbox.pki.root.certPem);
    configPath = join(dir, 'config.json');
    writeFileSync(configPath, JSON.stringify({
      signApiBaseUrl: sandbox.urls.signApi, clientId: 'serve-dsap', signingKey: (await generateClientKeys()).signing,
      serviceKeySetUrl: sandbox.urls.signKeys, tsaUrl: sandbox.urls.tsa, trustedRoots: ['root.pem'],
      domainName: 'serve.example.sg', tenantId: 'serve tests', notificationSecret: 'the-same-secret-in-every-process-0123456789',
      applicationKey: ['an-old-application-key-being-changed-0123', APPLICATION_KEY],
    }));
    procs = [];
    for (let i = 0; i < 2; i++) procs.push(await startServe(serveArgs(), storeEnv()));
    nginx = await startNginx(procs.map((p) => `127.0.0.1:${p.port}`));
    relay = await startRelay();
    sandbox.sign.events.on('hash', (x: { signRef: string }) => taken.set(x.signRef, (taken.get(x.signRef) ?? 0) + 1));
    const relayUrl = `http://127.0.0.1:${(relay.address() as { port: number }).port}`;
    sandbox.sign.registerClient({ clientId: 'serve-dsap', jwksUrl: `${nginx.url}/jwks`, notificationUrl: `${relayUrl}/webhook` });
  }, 120_000);

  afterAll(async () => {
    sandbox?.phone.auto(false);
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await new Promise((r) => (relay ? relay.close(r) : r(undefined)));
    await nginx?.stop();
    await sandbox?.close();
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The service's webhook calls pass through here to nginx; with `raceNextDelivery` the next one goes to BOTH
   * processes at the same moment (the same verified delivery taken twice at once), answered with the first answer.
   */
  function startRelay(): Promise<http.Server> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const headers: Record<string, string> = {};
        for (const k of ['authorization', 'content-type']) if (typeof req.headers[k] === 'string') headers[k] = req.headers[k];
        const targets = raceNextDelivery ? procs.map((p) => p.url) : [nginx.url];
        raceNextDelivery = false;
        Promise.all(targets.map((t) => fetch(`${t}${req.url}`, { method: req.method, headers, body: new Uint8Array(body) }).then(async (r) => ({ status: r.status, text: await r.text() }))))
          .then((answers) => {
            if (targets.length > 1) raced.push(...answers.map((a) => a.status));
            res.writeHead(answers[0]!.status, { 'content-type': 'application/json' }).end(answers[0]!.text);
          }, (e: Error) => {
            relayErrors.push(e.message);
            res.writeHead(502).end();
          });
      });
    });
    return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
  }

  async function start(name: string, level = 'B-T'): Promise<string> {
    const res = await fetch(`${nginx.url}/sessions?name=${encodeURIComponent(name)}&level=${level}`, { method: 'POST', body: new Uint8Array(pdf), headers: { ...APP, 'content-type': 'application/pdf' } });
    expect(res.status).toBe(201);
    return ((await res.json()) as { signRef: string }).signRef;
  }
  const status = async (signRef: string) => {
    const res = await fetch(`${nginx.url}/sessions/${signRef}`, { headers: APP });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET /sessions/${signRef}: HTTP ${res.status} ${text.slice(0, 200)}`);
    return JSON.parse(text) as { status: string; phase?: string; result?: { level: string; valid: boolean }; error?: { code: string } };
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
    const res = await fetch(`${nginx.url}/sessions/${signRef}/signed.pdf`, { headers: APP });
    expect(res.status).toBe(200);
    const signed = Buffer.from(await res.arrayBuffer());
    // without --deliver-to the application's complete download is the delivery: the session then ends
    await until(async () => ((await status(signRef).catch(() => undefined))?.phase === 'completed' ? true : undefined), `session ${signRef} delivered by its download`, 10_000);
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

  it('/sessions answers only the applications: 401 without the key or with a wrong one; either listed key works', async () => {
    const signRef = await start('Protected.pdf');
    const routes: [string, string, RequestInit['body']?][] = [
      ['POST', '/sessions?name=Anonymous.pdf&level=B-T', new Uint8Array(pdf)], ['GET', `/sessions/${signRef}`], ['GET', `/sessions/${signRef}/signed.pdf`],
    ];
    const refused: Record<string, string>[] = [{}, { authorization: 'Bearer the-applications-key-to-sessions-012345678' }, { authorization: `Basic ${Buffer.from(`x:${APPLICATION_KEY}`).toString('base64')}` }];
    for (const [method, route, body] of routes) {
      for (const headers of refused) {
        const res = await fetch(`${nginx.url}${route}`, { method, headers, body });
        expect({ route, status: res.status, challenge: res.headers.get('www-authenticate'), code: ((await res.json()) as { code: string }).code })
          .toEqual({ route, status: 401, challenge: 'Bearer realm="singpass-flows serve"', code: 'UNAUTHORIZED' });
      }
    }
    const old = await fetch(`${nginx.url}/sessions/${signRef}`, { headers: { authorization: 'Bearer an-old-application-key-being-changed-0123' } });
    expect(old.status).toBe(200);
    // the service's routes stay open to it: the key set, and the webhook, whose front door judges the delivery itself
    expect((await fetch(`${nginx.url}/jwks`)).status).toBe(200);
    const webhook = await fetch(`${nginx.url}/webhook`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect({ status: webhook.status, challenge: webhook.headers.get('www-authenticate') }).toEqual({ status: 400, challenge: null });
  });

  it('refuses to start without an applicationKey of 32 characters or more', async () => {
    const weak = join(dir, 'weak.json');
    for (const applicationKey of [undefined, 'short', ['an-old-application-key-being-changed-0123', 'short']]) {
      writeFileSync(weak, JSON.stringify({ ...JSON.parse(readFileSync(configPath, 'utf8')), applicationKey }));
      await expect(startServe(['--config', weak, '--port', '0'])).rejects.toThrow(/config\.applicationKey: is required: at least 32 characters/);
    }
  });

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
    procs[i] = await startServe(serveArgs(worker.port), storeEnv());
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
    procs[procs.indexOf(worker)] = await startServe(serveArgs(worker.port), storeEnv());
  }, 90_000);
  it('the same certificate delivery reaching both processes at once: both answer 200, one hash is accepted, the session completes', async () => {
    const signRef = await start('Raced.pdf');
    raceNextDelivery = true;
    await sandbox.phone.scan(signRef, { user: 'p256' });
    await until(() => raced.length >= 2 || undefined, 'the raced delivery').catch((e: Error) => {
      throw new Error(`${e.message}: ${relayErrors.join('; ')}`);
    });
    expect(raced.slice(-2)).toEqual([200, 200]);
    await until(() => sandbox.sign.session(signRef)?.state === 'hash_submitted' || undefined, 'the hash');
    await sandbox.phone.approve(signRef);
    const s = await completed(signRef);
    expect(s).toMatchObject({ status: 'completed', result: { level: 'B-T', valid: true } });
    expect(acceptedHashes(signRef)).toBe(1);
    expect(sandbox.sign.hashCalls().filter((c) => c.signRef === signRef)).toHaveLength(1);
  }, 90_000);

  if (kind === 'PostgreSQL') it('PostgreSQL restarted during a run: sessions in flight complete (webhooks answered 503 meanwhile are retried by the service), one hash each', async () => {
    const refs = await Promise.all([0, 1, 2].map((i) => start(`Restart ${i}.pdf`)));
    await sandbox.phone.scan(refs[0]!, { user: 'p256' });
    await until(() => sandbox.sign.session(refs[0]!)?.state === 'hash_submitted' || undefined, 'the first hash');
    await pg!.halt();
    // while the database is down: a scan (its certificate event cannot be stored: 503, the service retries) and an approval
    const during = [sandbox.phone.scan(refs[1]!, { user: 'p256' }), sandbox.phone.approve(refs[0]!)];
    await new Promise((r) => setTimeout(r, 1500));
    await pg!.start();
    await Promise.all(during);
    await sandbox.phone.scan(refs[2]!, { user: 'p256' });
    for (const signRef of refs.slice(1)) {
      await until(() => sandbox.sign.session(signRef)?.state === 'hash_submitted' || undefined, 'the hash after the restart', 45_000).catch(async (e: Error) => {
        throw new Error(`${e.message} (${signRef}: service ${sandbox.sign.session(signRef)?.state}, record ${JSON.stringify(await status(signRef).catch((x: Error) => x.message))})\n${procs.map((p) => p.log.slice(-15).join('\n')).join('\n---\n')}`);
      });
    }
    for (const signRef of refs.slice(1)) await sandbox.phone.approve(signRef);
    for (const signRef of refs) {
      const s = await completed(signRef);
      expect(s).toMatchObject({ status: 'completed', result: { level: 'B-T', valid: true } });
      expect(acceptedHashes(signRef)).toBe(1);
    }
    expect(procs.every((p) => p.child.exitCode === null)).toBe(true); // an outage is not a crash
  }, 150_000);
});
