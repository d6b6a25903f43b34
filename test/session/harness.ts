import { startSandbox, type Sandbox, type SandboxOptions } from '../../sandbox';
import { listen, readBody, sendJson, type RunningServer } from '../../sandbox/http';
import type { Fetch } from '../../src/http';
import { generateClientKeys, loadSigningKey, publicKeySet } from '../../src/keys';
import { SigningApiClient, createNotificationTokens, type NotificationTokens } from '../../src/sign';
import {
  createSessionRunner, createSigningEngine, MemorySessionStore, type SessionRecord, type SessionRunner, type SessionRunnerOptions, type SessionStep,
  type SigningEngine, type SigningEngineOptions,
} from '../../src/session';

/** One raw webhook POST as the DSAP received it (to replay it with other headers) and what was answered. */
export interface RawDelivery {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  status: number;
}

/**
 * The real sandbox on 127.0.0.1 and a DSAP built from the session engine: its key set and ONE webhook URL served by
 * a runner (or, with `mode: 'steps'`, only recorded, so a test drives the step functions itself).
 */
export interface SessionHarness {
  sandbox: Sandbox;
  engine: SigningEngine;
  /** Build another engine with the same configuration (a "second process": no shared memory). */
  newEngine(overrides?: Partial<SigningEngineOptions>): SigningEngine;
  tokens: NotificationTokens;
  runner: SessionRunner;
  /** A "restarted process": close the runner and serve the webhook URL with a new one (same hooks), e.g. over a store that survived. */
  restartRunner(options: Partial<SessionRunnerOptions>): Promise<SessionRunner>;
  store: MemorySessionStore;
  dsap: RunningServer;
  webhookUrl: string;
  /** Every webhook POST, oldest first. */
  raw: RawDelivery[];
  steps: { signRef: string; step: SessionStep }[];
  refused: { signRef?: string; code: string; status: number }[];
  /** Hashes the sandbox accepted, by sign_ref. */
  hashes: Map<string, number>;
  close(): Promise<void>;
}

export async function startSessionHarness(o: {
  sandbox?: SandboxOptions;
  mode?: 'runner' | 'steps';
  engine?: Partial<SigningEngineOptions>;
  runner?: Partial<SessionRunnerOptions>;
  /** The signing API client's fetch (e.g. to lose an answer on the way back). */
  clientFetch?: Fetch;
} = {}): Promise<SessionHarness> {
  const sandbox = await startSandbox({ webhookRetryDelayMs: 50, ...o.sandbox });
  const key = await loadSigningKey({ key: (await generateClientKeys()).signing });
  const tokens = createNotificationTokens({ secret: 'test-secret-of-this-dsap-0123456789abcdef' });
  const config = (): SigningEngineOptions => ({
    client: new SigningApiClient({ baseUrl: sandbox.urls.signApi, clientId: 'session-dsap', signingKey: key, retry: { delayMs: 10 }, ...(o.clientFetch ? { fetch: o.clientFetch } : {}) }),
    serviceKeySetUrl: sandbox.urls.signKeys,
    notificationTokens: tokens,
    trustedRoots: [sandbox.pki.root.certDer],
    tsaUrl: sandbox.urls.tsa,
    domainName: 'session.example.sg',
    tenantId: 'session tests',
    ...o.engine,
  });
  const engine = createSigningEngine(config());
  await engine.verifier.warmUp();
  const store = new MemorySessionStore();
  const steps: SessionHarness['steps'] = [];
  const refused: SessionHarness['refused'] = [];
  const newRunner = (options: Partial<SessionRunnerOptions>): SessionRunner => createSessionRunner({
    engine, store,
    onStep: (signRef, step) => void steps.push({ signRef, step }),
    onRefused: (r) => void refused.push({ signRef: r.signRef, code: r.code, status: r.status }),
    ...options,
  });
  let runner = newRunner(o.runner ?? {});
  const hashes = new Map<string, number>();
  sandbox.sign.events.on('hash', (s: { signRef: string }) => hashes.set(s.signRef, (hashes.get(s.signRef) ?? 0) + 1));
  const raw: RawDelivery[] = [];
  const dsap = await listen(async (req, res, url) => {
    if (url.pathname === '/jwks') return sendJson(res, 200, publicKeySet([key]));
    if (url.pathname === '/webhook' && req.method === 'POST') {
      const body = await readBody(req);
      const entry: RawDelivery = { headers: { ...req.headers }, body, status: 0 };
      raw.push(entry);
      if (o.mode === 'steps') {
        entry.status = 200; // recorded only: the test applies it through the step functions
        return void res.writeHead(200, { 'content-length': '0' }).end();
      }
      const r = await runner.handleWebhook({ headers: req.headers, body });
      entry.status = r.status;
      if (r.status === 200) return void res.writeHead(200, { 'content-length': '0' }).end();
      return sendJson(res, r.status, r.body);
    }
    sendJson(res, 404, {});
  });
  sandbox.sign.registerClient({ clientId: 'session-dsap', jwksUrl: `${dsap.baseUrl}/jwks`, notificationUrl: `${dsap.baseUrl}/webhook` });
  return {
    sandbox, engine, tokens, store, dsap,
    get runner() {
      return runner;
    },
    async restartRunner(options) {
      await runner.close();
      runner = newRunner(options);
      return runner;
    }, webhookUrl: `${dsap.baseUrl}/webhook`, raw, steps, refused, hashes,
    newEngine: (overrides = {}) => createSigningEngine({ ...config(), ...overrides }),
    async close() {
      sandbox.phone.auto(false);
      await runner.close();
      await sandbox.close();
      await dsap.close();
    },
  };
}

/**
 * A persistent store whose write of a record `when` picks fails once (a process that died before the write, a store
 * hiccup); `crashes` counts the failures, `armed = true` allows one more.
 */
export class StoreFailingWrites extends MemorySessionStore {
  crashes = 0;
  armed = true;
  constructor(private readonly when: (record: SessionRecord) => boolean, private readonly message: string) {
    super();
  }

  override put(record: SessionRecord, expectedRevision: number | undefined): boolean {
    if (this.armed && this.when(record)) {
      this.armed = false;
      this.crashes++;
      throw new Error(this.message);
    }
    return super.put(record, expectedRevision);
  }
}

/** POST to the DSAP webhook as anyone could. */
export async function post(url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : new Uint8Array(body) });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

/** Wait until `check()` is true (polling; generous timeout: the machine is shared). */
export async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
