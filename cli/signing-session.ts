import type * as http from 'node:http';
import { SingpassFlowsError } from '../src/errors';
import { generateClientKeys, loadSigningKey, publicKeySet } from '../src/keys';
import { SigningApiClient, createNotificationTokens, type SignatureEvent } from '../src/sign';
import { randomToken } from '../src/secrets';
import type { PadesLevel, PdfVerificationReport } from '../src/pades';
import { PADES_LEVELS, createSessionRunner, createSigningEngine, type FinishShortfall, type SessionAppearance, type SessionStep as EngineStep } from '../src/session';
// The CLI (not the core) may start the sandbox: `sign` and `demo` run the whole session against a local stand-in.
import type { Sandbox } from '../sandbox';
import { listen, readBody, type RunningServer } from '../sandbox/http';

/**
 * The CLI side of one signing session, shared by `singpass-flows sign` and `singpass-flows demo`: serve the DSAP's
 * key set and webhook on loopback, and let the session engine's runner (src/session, the same one the n8n and
 * Node-RED nodes use) drive the session. Each command words the steps itself (see {@link SessionStep}).
 */

export const LEVELS: readonly PadesLevel[] = PADES_LEVELS;
/**
 * Sandbox test users the simulated phone can sign as. `expired`, `notyetvalid` and `untrusted` are delivered by a
 * sandbox that skips the checks the real service makes, to show the DSAP refusing them before any hash is sent.
 */
export const SANDBOX_USERS = ['p256', 'p384', 'revoked', 'expired', 'notyetvalid', 'untrusted'];
const UNCHECKED_USERS = ['expired', 'notyetvalid', 'untrusted'];

type DsapHandler = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => Promise<void>;

/** Where a session runs: the sandbox (phone simulated) or a real/remote signing service from a config file. */
export interface SessionEnvironment {
  client: SigningApiClient;
  /** Key set URL of the signing service (verifies webhook JWTs). */
  serviceKeySetUrl: string;
  tsaUrl?: string;
  trustedRoots: Buffer[];
  /** Intermediates known in advance; when absent they are fetched (once) via the user certificate's AIA. */
  intermediates?: Buffer[];
  domainName: string;
  tenantId: string;
  /** Start the DSAP's webhook + key set server with this handler; the session closes it when done. */
  serveDsap(handler: DsapHandler): Promise<RunningServer>;
  /** Sandbox only: drive the simulated phone. Otherwise the user scans the QR code with the Singpass app. */
  phone?: { scan(signRef: string): Promise<unknown>; approve(signRef: string): Promise<unknown> };
  /** Served at /jwks next to the webhook (what the DSAP registered as its key set URL). */
  publicKeys: { keys: unknown[] };
}

/** What happened, in order: the engine's steps plus the CLI's own (server up, simulated phone). */
export type SessionStep =
  | { step: 'listening'; baseUrl: string; keySetUrl: string }
  /** Sandbox only: the simulated phone scanned (its delivery result). */
  | { step: 'scanned'; delivery: unknown }
  /** Sandbox only: the simulated phone approved (its delivery result). */
  | { step: 'approved'; delivery: unknown }
  /** The signature was checked against the certificate over the SignedAttributes, then embedded. */
  | { step: 'embedded'; event: SignatureEvent; timestamped: boolean }
  | Exclude<EngineStep, { step: 'embedded' }>;

export interface SessionOptions {
  /** The PDF to sign (checked before the session is created). */
  input: Buffer;
  documentName: string;
  level: PadesLevel;
  reason: string;
  location?: string;
  /** The DSAP's own app link the Singpass app returns the user to (sent with the hash). */
  appLink?: string;
  /** The visible signature box (omitted: invisible). */
  appearance?: SessionAppearance;
  onStep(step: SessionStep): void | Promise<void>;
}

export interface SessionResult {
  pdf: Buffer;
  level: PadesLevel | null;
  valid: boolean;
  signRef: string;
  report?: PdfVerificationReport;
  /** Set when finishing failed for good after the user signed: the PDF is at `level`, short of the one asked for. */
  missing?: FinishShortfall;
}

/** The line that says a signed PDF is short of the level asked for, and why. */
export function shortfallLine(missing: FinishShortfall, level: PadesLevel | null): string {
  return `WARNING: signed at ${level ?? 'no level'}, not ${missing.requested}: ${missing.code}: ${missing.message}`;
}

/** `[ n]   t.t s  text`: the numbered, timed step lines both commands print. */
export function stepLogger(log: (line: string) => void): (text: string) => void {
  let step = 0;
  const t0 = Date.now();
  return (text) => log(`[${String(++step).padStart(2)}] ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s  ${text}`);
}

/**
 * Runs one session to its end through the engine's runner; throws (SingpassFlowsError with the session's error
 * code) when it did not end with a signed PDF at the level asked for, and closes the DSAP server.
 */
export async function runSigningSession(env: SessionEnvironment, o: SessionOptions): Promise<SessionResult> {
  const engine = createSigningEngine({
    client: env.client, serviceKeySetUrl: env.serviceKeySetUrl,
    // One secret per CLI run: the tokens only need to be recognisable by this process's webhook.
    notificationTokens: createNotificationTokens({ secret: randomToken() }),
    trustedRoots: env.trustedRoots, intermediates: env.intermediates, tsaUrl: env.tsaUrl, domainName: env.domainName, tenantId: env.tenantId,
  });
  await engine.verifier.warmUp(); // the service wants an immediate 200: have its key set before the first webhook
  let signature: SignatureEvent | undefined;
  // A simulated phone that cannot act (e.g. the sandbox refuses to scan) ends the CLI run at once, not at expiry.
  let phoneFailed!: (e: unknown) => void;
  const phoneFailure = new Promise<never>((_, reject) => (phoneFailed = reject));
  phoneFailure.catch(() => undefined);
  const phoneStep = async (step: 'scanned' | 'approved', act: () => Promise<unknown>): Promise<void> => {
    let delivery: unknown;
    try {
      delivery = await act();
    } catch (e) {
      return phoneFailed(new SingpassFlowsError('SIGN_REQUEST_REJECTED', `The simulated phone could not act: ${(e as Error)?.message ?? e}`));
    }
    await o.onStep({ step, delivery });
  };
  const runner = createSessionRunner({
    engine,
    async onStep(signRef, s) {
      if (s.step === 'signature') signature = s.event;
      if (s.step === 'embedded') return o.onStep({ ...s, event: signature! });
      if (s.step === 'ended') return;
      await o.onStep(s);
      // The simulated phone acts on what the page shows; its deliveries are answered while we wait here.
      if (s.step === 'created' && env.phone) await phoneStep('scanned', () => env.phone!.scan(signRef));
      if (s.step === 'submitted' && env.phone) await phoneStep('approved', () => env.phone!.approve(signRef));
    },
  });
  const dsap = await env.serveDsap(async (req, res, url) => {
    if (url.pathname === '/jwks' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
      return void res.end(JSON.stringify(env.publicKeys));
    }
    if (url.pathname === '/webhook' && req.method === 'POST') {
      // A refused delivery (forged, foreign token, garbage, key not yet fetchable) is answered and ignored: the
      // session keeps waiting for the genuine one until its own deadline.
      const r = await runner.handleWebhook({ headers: req.headers, body: await readBody(req, 1024 * 1024) });
      if (r.status === 200) return void res.writeHead(200, { 'content-length': '0' }).end();
      return void res.writeHead(r.status, { 'content-type': 'application/json' }).end(JSON.stringify(r.body));
    }
    res.writeHead(404).end();
  });
  try {
    await o.onStep({ step: 'listening', baseUrl: dsap.baseUrl, keySetUrl: engine.verifier.keySet.url });
    const started = await runner.start(o.input, {
      documentName: o.documentName, level: o.level, reason: o.reason, location: o.location, ...(o.appLink ? { appLink: o.appLink } : {}), ...(o.appearance ? { appearance: o.appearance } : {}),
    });
    const { record, pdf, report } = await Promise.race([runner.outcome(started.signRef), phoneFailure]);
    if (record.error || !pdf || !record.result) {
      throw new SingpassFlowsError((record.error?.code ?? 'STATE_INVALID') as never, record.error?.message ?? `The session ended ${record.state.status}`);
    }
    return { pdf, level: record.result.level, valid: record.result.valid, signRef: started.signRef, report, ...(record.result.missing ? { missing: record.result.missing } : {}) };
  } finally {
    await runner.close();
    await dsap.close();
  }
}

/** A sandbox-side environment: fresh DSAP keys, registered with the sandbox as `clientId`, the phone simulated. */
export async function sandboxEnvironment(
  sandbox: Sandbox,
  o: { clientId: string; user: string; domainName: string; tenantId: string },
): Promise<SessionEnvironment & { signingKeyId: string }> {
  const keys = await generateClientKeys();
  const signingKey = await loadSigningKey({ key: keys.signing });
  // The real service refuses these users itself; the sandbox delivers them so the DSAP's own check shows.
  if (UNCHECKED_USERS.includes(o.user)) sandbox.sign.faults.skipUserCertificateChecks(true);
  return {
    client: new SigningApiClient({ baseUrl: sandbox.urls.signApi, clientId: o.clientId, signingKey }),
    signingKeyId: signingKey.kid,
    serviceKeySetUrl: sandbox.urls.signKeys,
    tsaUrl: sandbox.urls.tsa,
    trustedRoots: [sandbox.pki.root.certDer],
    intermediates: [sandbox.pki.intermediate.certDer],
    domainName: o.domainName,
    tenantId: o.tenantId,
    publicKeys: publicKeySet([signingKey]),
    async serveDsap(handler) {
      const dsap = await listen(handler);
      sandbox.sign.registerClient({ clientId: o.clientId, jwksUrl: `${dsap.baseUrl}/jwks`, notificationUrl: `${dsap.baseUrl}/webhook` });
      return dsap;
    },
    phone: { scan: (ref) => sandbox.phone.scan(ref, { user: o.user }), approve: (ref) => sandbox.phone.approve(ref) },
  };
}
