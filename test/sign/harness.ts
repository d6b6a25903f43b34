import type * as http from 'node:http';
import { startSandbox, type Sandbox, type SandboxOptions, type SignService, type Phone } from '../../sandbox';
import { listen, readBody, sendJson, type RunningServer } from '../../sandbox/http';
import type { TestPki } from '../../sandbox/pki';
import { generateClientKeys, loadSigningKey, publicKeySet, type LoadedKey } from '../../src/keys';
import {
  SigningApiClient, createWebhookVerifier, type SigningApiConfig, type WebhookResult, type WebhookVerifier, type WebhookVerifierOptions,
} from '../../src/sign';

/** One webhook call as our DSAP saw it: what the verifier decided and what the sandbox got back. */
export interface Received {
  result: WebhookResult;
  at: number;
}

/**
 * The real sandbox (`startSandbox()`: signing service, phone, test CA) on 127.0.0.1 (port 0), and a DSAP built from OUR library: a key-set
 * endpoint serving `publicKeySet`, a webhook receiver answering with `createWebhookVerifier().handle()`, and a
 * `SigningApiClient`. Sessions' notification tokens are looked up by sign_ref, as a one-URL-for-all DSAP would.
 */
export interface Harness {
  sandbox: Sandbox;
  pki: TestPki;
  sign: SignService;
  phone: Phone;
  dsapServer: RunningServer;
  clientId: string;
  key: LoadedKey;
  apiBase: string;
  keysUrl: string;
  client: SigningApiClient;
  verifier: WebhookVerifier;
  /** sign_ref → client_notification_token (the DSAP's session store). */
  tokens: Map<string, string>;
  received: Received[];
  /** Number of GETs of our JWKS by the service. */
  jwksHits: { count: number };
  newClient(overrides?: Partial<SigningApiConfig>): SigningApiClient;
  /** Resolves once `n` webhook calls for `signRef` arrived (any outcome). */
  waitFor(n: number, signRef: string, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startHarness(opts: { verifier?: Partial<WebhookVerifierOptions>; sandbox?: SandboxOptions } = {}): Promise<Harness> {
  const sandbox = await startSandbox({ webhookRetryDelayMs: 20, webhookTimeoutMs: 2000, ...opts.sandbox });
  const { pki, sign, phone } = sandbox;
  const apiBase = sandbox.urls.signApi;
  const keysUrl = sandbox.urls.signKeys;

  const key = await loadSigningKey({ key: (await generateClientKeys()).signing });
  const verifier = createWebhookVerifier({ keySetUrl: keysUrl, ...opts.verifier });
  const tokens = new Map<string, string>();
  const received: Received[] = [];
  const jwksHits = { count: 0 };
  let waiters: Array<() => void> = [];
  const dsapServer = await listen(async (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => {
    if (url.pathname === '/jwks' && req.method === 'GET') {
      jwksHits.count++;
      return sendJson(res, 200, publicKeySet([key]));
    }
    if (url.pathname === '/webhook' && req.method === 'POST') {
      const result = await verifier.handle({ headers: req.headers, body: await readBody(req), expectedToken: (ref) => tokens.get(ref) });
      received.push({ result, at: Date.now() });
      const w = waiters;
      waiters = [];
      w.forEach((f) => f());
      if (result.response.status === 200) {
        res.writeHead(200, { 'content-length': '0' });
        return void res.end();
      }
      return sendJson(res, result.response.status, result.response.body);
    }
    sendJson(res, 404, {});
  });
  const clientId = 'dsap-under-test';
  sign.registerClient({ clientId, jwksUrl: `${dsapServer.baseUrl}/jwks`, notificationUrl: `${dsapServer.baseUrl}/webhook` });
  const newClient = (overrides: Partial<SigningApiConfig> = {}) => new SigningApiClient({ baseUrl: apiBase, clientId, signingKey: key, retry: { delayMs: 10 }, ...overrides });

  const refOf = (r: Received): string | undefined => r.result.event?.signRef;
  return {
    sandbox, pki, sign, phone, dsapServer, clientId, key, apiBase, keysUrl, verifier, tokens, received, jwksHits, newClient,
    client: newClient(),
    async waitFor(n, signRef, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      const mine = () => received.filter((r) => refOf(r) === signRef || (refOf(r) === undefined && signRef === '*'));
      while (mine().length < n) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${n} webhook calls for ${signRef} (got ${mine().length})`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, 200);
          waiters.push(() => { clearTimeout(t); r(); });
        });
      }
      return mine();
    },
    async close() {
      phone.auto(false);
      await sandbox.close();
      await dsapServer.close();
    },
  };
}
