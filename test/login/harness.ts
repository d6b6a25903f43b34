/** Test harness: sandbox providers + an RP key-set endpoint on one 127.0.0.1 server (port 0), and client factories. */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SingpassFlowsError, type ErrorCode } from '../../src/errors';
import { listen, mount, sendBytes, sendJson, readBody, type RunningServer, type SandboxService } from '../../sandbox/http';
import { createCorppassFapiProvider, createCorppassProvider, createSingpassProvider, type CorppassFapiProvider, type CorppassProvider, type ProviderOptions, type SingpassProvider } from '../../sandbox/login';
import { generateClientKeys, loadEncryptionKey, loadSigningKey, type LoadedKey, type EcSigningAlg } from '../../src/keys';
import { createCorppassClient, createCorppassFapiClient, createSingpassClient, keySetResponse, ProviderCache, InMemoryTransactionStore, type CorppassClientOptions, type CorppassFapiClientOptions, type SingpassClientOptions } from '../../src/login';

export const CLIENT_ID = 'rp-test-client';
/** Registered at the Corppass FAPI provider as a Myinfo Business app (CLIENT_ID is a Login app there). */
export const MIB_CLIENT_ID = 'rp-test-mib-client';

export interface Harness {
  server: RunningServer;
  baseUrl: string;
  corppass: CorppassProvider;
  corppassFapi: CorppassFapiProvider;
  singpass: SingpassProvider;
  signingKey: LoadedKey<EcSigningAlg>;
  encryptionKey: LoadedKey;
  redirectUri: string;
  /** What the RP key-set endpoint serves (mutable: rotation tests change it). */
  rpKeys: { keys: LoadedKey[] };
  /** form_post bodies the RP callback endpoint received. */
  formPosts: URLSearchParams[];
  close(): Promise<void>;
}

/** `corppass`: options of the sandbox Corppass provider (e.g. `issParameter: true`). */
export async function startHarness(opts: { corppass?: Partial<ProviderOptions> } = {}): Promise<Harness> {
  let handler: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> | void = () => undefined;
  const server = await listen((req, res, url) => handler(req, res, url));
  const baseUrl = server.baseUrl;
  const generated = await generateClientKeys();
  const signingKey = await loadSigningKey({ key: generated.signing });
  const encryptionKey = await loadEncryptionKey({ key: generated.encryption });
  const rpKeys = { keys: [signingKey, encryptionKey] as LoadedKey[] };
  const formPosts: URLSearchParams[] = [];
  const rp: SandboxService = {
    prefix: '/rp',
    async handle(req, res, url) {
      if (url.pathname === '/rp/jwks') {
        const r = keySetResponse(rpKeys.keys);
        return sendBytes(res, r.status, r.body, r.headers['content-type'], { 'cache-control': r.headers['cache-control'] });
      }
      if (url.pathname === '/rp/callback' && req.method === 'POST') {
        formPosts.push(new URLSearchParams((await readBody(req)).toString('utf8')));
        return sendJson(res, 200, { ok: true });
      }
      return sendJson(res, 404, { error: 'not found' });
    },
  };
  const corppass = createCorppassProvider({ ...opts.corppass, baseUrl });
  const singpass = createSingpassProvider({ baseUrl });
  const corppassFapi = createCorppassFapiProvider({ ...opts.corppass, baseUrl, prefix: undefined });
  handler = mount([corppass, corppassFapi, singpass, rp]);
  const redirectUri = `${baseUrl}/rp/callback`;
  for (const p of [corppass, corppassFapi, singpass]) p.registerClient({ clientId: CLIENT_ID, jwksUrl: `${baseUrl}/rp/jwks`, redirectUris: [redirectUri] });
  corppassFapi.registerClient({ clientId: MIB_CLIENT_ID, jwksUrl: `${baseUrl}/rp/jwks`, redirectUris: [redirectUri], appType: 'myinfo-business' });
  return { server, baseUrl, corppass, corppassFapi, singpass, signingKey, encryptionKey, redirectUri, rpKeys, formPosts, close: () => server.close() };
}

/** A Corppass client with its own discovery/key cache and transaction store (tests stay independent). */
export function corppassClient(h: Harness, extra: Partial<CorppassClientOptions> = {}) {
  return createCorppassClient({
    issuer: h.corppass.issuer, clientId: CLIENT_ID, signingKey: h.signingKey, decryptionKeys: [h.encryptionKey], redirectUri: h.redirectUri,
    allowInsecureLoopback: true, providerCache: new ProviderCache({ clock: extra.clock, fetch: extra.fetch }), transactionStore: new InMemoryTransactionStore(extra.clock), ...extra,
  });
}

/** A Corppass FAPI 2.0 client (Login app unless `appType` says otherwise), own caches as above. */
export function corppassFapiClient(h: Harness, extra: Partial<CorppassFapiClientOptions> = {}) {
  return createCorppassFapiClient({
    issuer: h.corppassFapi.issuer, clientId: extra.appType === 'myinfo-business' ? MIB_CLIENT_ID : CLIENT_ID, signingKey: h.signingKey, decryptionKeys: [h.encryptionKey], redirectUri: h.redirectUri,
    allowInsecureLoopback: true, providerCache: new ProviderCache({ clock: extra.clock, fetch: extra.fetch }), transactionStore: new InMemoryTransactionStore(extra.clock), ...extra,
  });
}

export function singpassClient(h: Harness, extra: Partial<SingpassClientOptions> = {}) {
  return createSingpassClient({
    issuer: h.singpass.issuer, clientId: CLIENT_ID, signingKey: h.signingKey, decryptionKeys: [h.encryptionKey], redirectUri: h.redirectUri,
    allowInsecureLoopback: true, providerCache: new ProviderCache({ clock: extra.clock, fetch: extra.fetch }), transactionStore: new InMemoryTransactionStore(extra.clock), ...extra,
  });
}

/**
 * Play the browser headlessly: GET the authorization URL (no redirects followed) and return where the provider
 * sends the user back — the Location URL, or for form_post the posted parameters.
 */
export async function authorize(url: string, opts: { user?: string; action?: string } = {}): Promise<string | URLSearchParams> {
  const u = new URL(url);
  if (opts.user) u.searchParams.set('sandbox_user', opts.user);
  if (opts.action) u.searchParams.set('sandbox_action', opts.action);
  const res = await fetch(u, { redirect: 'manual' });
  if (res.status === 302 || res.status === 303) return res.headers.get('location')!;
  const text = await res.text();
  if (res.status === 200 && text.includes('<form')) {
    const params = new URLSearchParams();
    for (const m of text.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) params.append(decodeHtml(m[1]), decodeHtml(m[2]));
    return params;
  }
  throw new Error(`authorize: unexpected HTTP ${res.status}: ${text.slice(0, 300)}`);
}

function decodeHtml(s: string): string {
  return s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))).replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>');
}

/** Endpoints called since `from` (sequence number), in order. */
export function endpointsSince(p: { requests(): Array<{ seq: number; endpoint: string }> }, from: number): string[] {
  return p.requests().filter((r) => r.seq > from).map((r) => r.endpoint);
}

/**
 * What every "reject" conformance case checks: `run` fails with a SingpassFlowsError whose code is one of `codes`;
 * no endpoint in `forbidden` was called after `from` (the failing step itself may be, from item 21 on, where the
 * refusal comes after the call); no redirect was followed; and the message and details a workflow would log carry
 * none of `secrets()` (asked after the run, which fills in the transaction).
 */
export async function expectCleanRefusal(run: Promise<unknown>, o: {
  provider: { requests(): Array<{ seq: number; endpoint: string }> };
  from: number;
  item: number;
  codes: ErrorCode[];
  forbidden: string[];
  secrets: () => Array<string | undefined>;
}): Promise<void> {
  const err = await run.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(SingpassFlowsError);
  const e = err as SingpassFlowsError;
  if (!o.codes.includes(e.code)) throw new Error(`got ${e.code}: ${e.message}`);
  const called = endpointsSince(o.provider, o.from);
  // The failing step is the last protocol step reached: nothing beyond it.
  const failedAt = called.length ? called[called.length - 1] : 'none';
  for (const ep of o.forbidden) {
    if (ep !== failedAt || o.item < 21) expect({ failedAt, called, forbidden: ep, present: called.includes(ep) }).toMatchObject({ present: false });
  }
  expect(called).not.toContain('redirectSink');
  // Nothing secret in the error a workflow would log.
  const logged = JSON.stringify({ m: e.message, d: e.details });
  for (const secret of o.secrets()) {
    if (secret) expect(logged).not.toContain(secret);
  }
}

export function lastSeq(p: { requests(): Array<{ seq: number }> }): number {
  const r = p.requests();
  return r.length ? r[r.length - 1].seq : 0;
}

/** MockPass 4.3.4 running in-process, with our client keys served at the RP key-set URL it reads from the env. */
export interface MockPassPeer {
  /** `http://127.0.0.1:<port>`: MockPass derives its issuer from the Host header, so never use localhost. */
  baseUrl: string;
  signingKey: LoadedKey<EcSigningAlg>;
  encryptionKey: LoadedKey;
  /** Stops MockPass and the key-set server, restores the env variable and the console. */
  close(): Promise<void>;
}

/**
 * Start MockPass on 127.0.0.1 (port 0) with fresh client keys; `jwksEnv` is the variable MockPass reads the RP key-set
 * URL from (`CP_RP_JWKS_ENDPOINT` for Corppass, `SP_RP_JWKS_ENDPOINT` for Singpass). MockPass logs requests,
 * including tokens, through the console: it is silenced until `close()`.
 */
export async function startMockPass(jwksEnv: 'CP_RP_JWKS_ENDPOINT' | 'SP_RP_JWKS_ENDPOINT'): Promise<MockPassPeer> {
  const quiet = (['log', 'warn', 'debug', 'info', 'error'] as const).map((m) => jest.spyOn(console, m).mockImplementation(() => undefined));
  const generated = await generateClientKeys();
  const signingKey = await loadSigningKey({ key: generated.signing });
  const encryptionKey = await loadEncryptionKey({ key: generated.encryption });
  const rpServer = await listen((_req, res) => {
    const r = keySetResponse([signingKey, encryptionKey]);
    sendBytes(res, r.status, r.body, r.headers['content-type']);
  });
  const savedEnv = process.env[jwksEnv];
  process.env[jwksEnv] = `${rpServer.baseUrl}/jwks`;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { app } = require('@opengovsg/mockpass/app') as { app: { listen(port: number, host: string, cb: () => void): Server } };
  let mockpass!: Server;
  await new Promise<void>((resolve) => { mockpass = app.listen(0, '127.0.0.1', resolve); });
  return {
    baseUrl: `http://127.0.0.1:${(mockpass.address() as AddressInfo).port}`,
    signingKey,
    encryptionKey,
    async close() {
      await new Promise<void>((resolve) => { mockpass.closeAllConnections?.(); mockpass.close(() => resolve()); });
      await rpServer.close();
      if (savedEnv === undefined) delete process.env[jwksEnv];
      else process.env[jwksEnv] = savedEnv;
      quiet.forEach((s) => s.mockRestore());
    },
  };
}
