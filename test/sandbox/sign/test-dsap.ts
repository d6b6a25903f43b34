import * as crypto from 'node:crypto';
import * as http from 'node:http';
import { SignJWT, createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { listen, readBody, sendJson, type RunningServer } from '../../../sandbox/http';

/**
 * A tiny DSAP written for the sandbox tests with jose directly (no src/ imports): it publishes its key set, receives
 * webhooks (records them, answers with a programmable status), verifies the webhook JWTs against the service's key
 * set, and calls the API with fresh `X-Dss-Assertion` JWTs.
 */
export interface ReceivedWebhook {
  authorization?: string;
  token: string;
  claims: JWTPayload & Record<string, unknown>;
  kid: string;
}

export interface TestDsap {
  clientId: string;
  url: string;
  jwksUrl: string;
  webhookUrl: string;
  /** Public keys served at jwksUrl (mutable: tests swap them). */
  jwks: { keys: JWK[] };
  privateKey: CryptoKey;
  kid: string;
  /** Status answers for the next webhook calls (FIFO); then 200. */
  webhookStatuses: number[];
  received: ReceivedWebhook[];
  /** Resolves when `n` webhooks have been received (for one sign_ref when given). */
  waitFor(n: number, signRef?: string, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  assertion(overrides?: AssertionOverrides): Promise<string>;
  call(path: string, body: unknown, init?: { headers?: Record<string, string>; assertion?: string | null }): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export interface AssertionOverrides {
  header?: Record<string, unknown>;
  claims?: Record<string, unknown>;
  key?: CryptoKey | crypto.KeyObject;
  alg?: string;
}

export async function startTestDsap(opts: { clientId?: string; apiBase: string; audience: string; keysUrl: string }): Promise<TestDsap> {
  const clientId = opts.clientId ?? `dsap-${crypto.randomBytes(4).toString('hex')}`;
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = `k-${crypto.randomBytes(4).toString('hex')}`;
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid, use: 'sig', alg: 'ES256' } as JWK] };
  const serviceKeys = createRemoteJWKSet(new URL(opts.keysUrl), { cooldownDuration: 0 });
  const received: ReceivedWebhook[] = [];
  const waiters: (() => void)[] = [];
  const dsap = {} as TestDsap;
  const server: RunningServer = await listen(async (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => {
    if (url.pathname === '/jwks') return sendJson(res, 200, dsap.jwks);
    if (url.pathname === '/webhook' && req.method === 'POST') {
      const body = JSON.parse((await readBody(req)).toString('utf8')) as { token: string };
      const { payload, protectedHeader } = await jwtVerify(body.token, serviceKeys, { algorithms: ['ES256'] });
      received.push({ authorization: req.headers.authorization, token: body.token, claims: payload as ReceivedWebhook['claims'], kid: protectedHeader.kid as string });
      waiters.splice(0).forEach((w) => w());
      const status = dsap.webhookStatuses.shift() ?? 200;
      res.writeHead(status, { 'content-length': '0' });
      return void res.end();
    }
    sendJson(res, 404, {});
  });
  Object.assign(dsap, {
    clientId,
    url: server.baseUrl,
    jwksUrl: `${server.baseUrl}/jwks`,
    webhookUrl: `${server.baseUrl}/webhook`,
    jwks,
    privateKey,
    kid,
    webhookStatuses: [],
    received,
    async waitFor(n: number, signRef?: string, timeoutMs = 10000) {
      const until = Date.now() + timeoutMs;
      const mine = () => received.filter((w) => signRef === undefined || w.claims.sign_ref === signRef);
      while (mine().length < n) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${n} webhooks (got ${mine().length})`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
      return mine().slice(0, n);
    },
    async assertion(o: AssertionOverrides = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: clientId, sub: clientId, aud: opts.audience, iat: now, exp: now + 60, jti: crypto.randomUUID(), ...o.claims })
        .setProtectedHeader({ alg: o.alg ?? 'ES256', typ: 'JWT', kid, ...o.header } as never)
        .sign(o.key ?? privateKey);
    },
    async call(path: string, body: unknown, init: { headers?: Record<string, string>; assertion?: string | null } = {}) {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...init.headers };
      if (init.assertion !== null) headers['x-dss-assertion'] = init.assertion ?? (await dsap.assertion());
      const res = await fetch(`${opts.apiBase}${path}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    close: () => server.close(),
  });
  return dsap;
}
