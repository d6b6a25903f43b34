import type * as crypto from 'node:crypto';
import type * as http from 'node:http';
import { listen, mount, readBody, sendJson, type RunningServer } from '../../sandbox/http';
import { createTestPki, type TestPki } from '../../sandbox/pki';
import { createSignService, type SignService, type SignServiceOptions } from '../../sandbox/sign';
import { createPhone, type Phone } from '../../sandbox/phone';
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
 * The real sandbox signing service + phone on 127.0.0.1 (port 0), and a DSAP built from OUR library: a key-set
 * endpoint serving `publicKeySet`, a webhook receiver answering with `createWebhookVerifier().handle()`, and a
 * `SigningApiClient`. Sessions' notification tokens are looked up by sign_ref, as a one-URL-for-all DSAP would.
 */
export interface Harness {
  pki: TestPki;
  sign: SignService;
  phone: Phone;
  server: RunningServer;
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

export async function startHarness(opts: { sign?: SignServiceOptions; verifier?: Partial<WebhookVerifierOptions> } = {}): Promise<Harness> {
  const pki = await createTestPki({ baseUrl: 'http://127.0.0.1:9', rsaUser: false });
  const sign = createSignService({ webhookRetryDelayMs: 20, webhookTimeoutMs: 2000, caCertificates: [pki.root.certDer, pki.intermediate.certDer], ...opts.sign });
  const phone = createPhone({ sign, users: pki.users as unknown as Record<string, { certDer: Buffer; privateKey: crypto.KeyObject }> });
  const server = await listen(mount([sign, phone]));
  sign.setBaseUrl(server.baseUrl);
  const apiBase = `${server.baseUrl}/sign/api/v1`;
  const keysUrl = `${server.baseUrl}/sign/static/.well-known/keys.json`;

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
    pki, sign, phone, server, dsapServer, clientId, key, apiBase, keysUrl, verifier, tokens, received, jwksHits, newClient,
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
      await phone.close?.();
      await sign.close?.();
      await server.close();
      await dsapServer.close();
    },
  };
}
