/**
 * The sandbox for the sessions bench, as its own process by default: the signing service, phone, CA/OCSP and TSA
 * are a remote peer in production, so their CPU must not be charged to the DSAP's event loop being measured. The
 * parent talks to it over the fork IPC channel: it learns the URLs and root, registers its DSAP client, tells the
 * phone when to scan (so a round can spread scans like real users), and hears of every hash the service accepted
 * (to count duplicates). The phone approves every submitted hash after `approveDelayMs`. Also runnable in-process
 * (`inline`) for comparison.
 */
import { fork } from 'node:child_process';
import { startSandbox, type Sandbox, type SandboxOptions } from '../sandbox';

export interface BenchSandboxOptions {
  sandbox: SandboxOptions;
  /** The phone approves a submitted hash this long after the service accepted it. */
  approveDelayMs: number;
  /**
   * The phone scans every session this long after the service created it, by itself: the parent then sends nothing
   * per session (a bench measuring the DSAP's CPU must not count its own driving of the phone). Else on `scan`.
   */
  scanAfterCreateMs?: number;
  /** Tell the parent of every accepted hash (default true); off when nobody listens, so no message per session. */
  reportHashes?: boolean;
}

export interface BenchSandbox {
  urls: { signApi: string; signKeys: string; tsa: string };
  rootCertDer: Buffer;
  registerClient(c: { clientId: string; jwksUrl: string; notificationUrl: string }): Promise<void>;
  /** The phone scans this session's QR code now (the certificate webhook follows). */
  scan(signRef: string): void;
  /** Called for every hash the signing service accepted, with its sign_ref. */
  onHash(listener: (signRef: string) => void): void;
  /** Phone actions that failed (e.g. a session the DSAP ended), for the report. */
  phoneErrors(): Promise<string[]>;
  close(): Promise<void>;
}

type Client = { clientId: string; jwksUrl: string; notificationUrl: string };
type ToChild = { type: 'register'; client: Client } | { type: 'scan'; signRef: string } | { type: 'errors' } | { type: 'close' };
type ToParent =
  | { type: 'ready'; urls: BenchSandbox['urls']; rootCertDer: string }
  | { type: 'registered' }
  | { type: 'hash'; signRef: string }
  | { type: 'errors'; errors: string[] };

/** The phone as the bench drives it: scan when told, approve every accepted hash after a delay. */
function drivePhone(sandbox: Sandbox, options: BenchSandboxOptions, onHash: (signRef: string) => void) {
  const { approveDelayMs, scanAfterCreateMs } = options;
  const errors: string[] = [];
  const scan = (signRef: string) => void sandbox.phone.scan(signRef).catch((e) => errors.push(`scan: ${(e as Error).message}`));
  if (scanAfterCreateMs !== undefined) sandbox.sign.events.on('created', (s: { signRef: string }) => void setTimeout(() => scan(s.signRef), scanAfterCreateMs));
  sandbox.sign.events.on('hash', (s: { signRef: string }) => {
    if (options.reportHashes !== false) onHash(s.signRef);
    setTimeout(() => void sandbox.phone.approve(s.signRef).catch((e) => errors.push(`approve: ${(e as Error).message}`)), approveDelayMs);
  });
  return { scan, errors };
}

/** In this process (the sandbox's work shares the DSAP's event loop). */
export async function startInlineSandbox(options: BenchSandboxOptions): Promise<BenchSandbox> {
  const sandbox = await startSandbox(options.sandbox);
  const listeners: ((signRef: string) => void)[] = [];
  const phone = drivePhone(sandbox, options, (signRef) => listeners.forEach((l) => l(signRef)));
  return {
    urls: sandbox.urls,
    rootCertDer: sandbox.pki.root.certDer,
    registerClient: async (c) => sandbox.sign.registerClient(c),
    scan: phone.scan,
    onHash: (listener) => void listeners.push(listener),
    phoneErrors: async () => [...phone.errors],
    close: () => sandbox.close(),
  };
}

/** In a child process running this file. */
export async function startSandboxProcess(options: BenchSandboxOptions): Promise<BenchSandbox> {
  const child = fork(__filename, ['--child', JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const hashListeners: ((signRef: string) => void)[] = [];
  const waiters = new Map<string, (m: ToParent) => void>();
  const next = (type: ToParent['type']) => new Promise<ToParent>((resolve) => waiters.set(type, resolve));
  child.on('message', (m: ToParent) => {
    if (m.type === 'hash') for (const l of hashListeners) l(m.signRef);
    const w = waiters.get(m.type);
    waiters.delete(m.type);
    w?.(m);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await Promise.race([next('ready'), exited.then(() => { throw new Error('the sandbox process exited before it was ready'); })]);
  if (ready.type !== 'ready') throw new Error('unexpected message from the sandbox process');
  const send = (m: ToChild) => child.send(m);
  return {
    urls: ready.urls,
    rootCertDer: Buffer.from(ready.rootCertDer, 'base64'),
    async registerClient(client) {
      const done = next('registered');
      send({ type: 'register', client });
      await done;
    },
    scan: (signRef) => send({ type: 'scan', signRef }),
    onHash: (listener) => void hashListeners.push(listener),
    async phoneErrors() {
      const answer = next('errors');
      send({ type: 'errors' });
      const m = await answer;
      return m.type === 'errors' ? m.errors : [];
    },
    async close() {
      send({ type: 'close' });
      await exited;
    },
  };
}

async function runChild(options: BenchSandboxOptions): Promise<void> {
  const sandbox = await startSandbox(options.sandbox);
  const send = (m: ToParent) => process.send!(m);
  const phone = drivePhone(sandbox, options, (signRef) => send({ type: 'hash', signRef }));
  process.on('message', (m: ToChild) => {
    if (m.type === 'register') {
      sandbox.sign.registerClient(m.client);
      send({ type: 'registered' });
    } else if (m.type === 'scan') {
      phone.scan(m.signRef);
    } else if (m.type === 'errors') {
      send({ type: 'errors', errors: [...phone.errors] });
    } else if (m.type === 'close') {
      process.disconnect();
    }
  });
  // Asked to close, or the parent went away: either way stop what was started and exit.
  process.on('disconnect', () => void sandbox.close().finally(() => process.exit(0)));
  send({ type: 'ready', urls: { signApi: sandbox.urls.signApi, signKeys: sandbox.urls.signKeys, tsa: sandbox.urls.tsa }, rootCertDer: sandbox.pki.root.certDer.toString('base64') });
}

if (process.argv[2] === '--child' && process.send) {
  runChild(JSON.parse(process.argv[3]!) as BenchSandboxOptions).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
