import type * as http from 'node:http';
import { SingpassFlowsError } from '../errors';
import { generateClientKeys, loadSigningKey, publicKeySet } from '../keys';
import {
  SigningApiClient, applySigningEvent, createWebhookVerifier, generateChallengeCode, generateNotificationToken,
  markHashSubmitted, newSigningSessionState, type CertificateEvent, type SignatureEvent, type SigningEvent, type SigningSession,
} from '../sign';
import { finalizeSignature, prepareSignature } from '../pades';
import { addDocumentTimestamp, timestampSignature } from '../pades/doc-timestamp';
import { addValidationDataWithSummary, type ValidationDataSummary } from '../pades/ltv';
import { verifyPdfSignatures, type PadesLevel, type PdfVerificationReport } from '../pades/verify';
import { buildChain } from '../pki';
// The CLI (not the core) may start the sandbox: `sign` and `demo` run the whole session against a local stand-in.
import type { Sandbox } from '../../sandbox';
import { listen, readBody, type RunningServer } from '../../sandbox/http';

/**
 * The DSAP side of one complete signing session, shared by `singpass-flows sign` and `singpass-flows demo`: serve the
 * key set and webhook, create the session, wait for the certificate, prepare the PDF, submit the hash, wait for the
 * signature, embed it, extend to the level and verify. Each command words the steps itself (see {@link SessionStep}).
 */

export const LEVELS: PadesLevel[] = ['B-B', 'B-T', 'B-LT', 'B-LTA'];
/** Sandbox test users the simulated phone can sign as. */
export const SANDBOX_USERS = ['p256', 'p384', 'revoked'];

type DsapHandler = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => Promise<void>;

/** Where a session runs: the sandbox (phone simulated) or a real/remote signing service from a config file. */
export interface SessionEnvironment {
  client: SigningApiClient;
  /** Key set URL of the signing service (verifies webhook JWTs). */
  serviceKeySetUrl: string;
  tsaUrl?: string;
  trustedRoots: Buffer[];
  /** Intermediates to embed; when absent they are fetched via the user certificate's AIA. */
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

/** What happened, in order; the command turns each into its own output. */
export type SessionStep =
  | { step: 'listening'; baseUrl: string; keySetUrl: string }
  | { step: 'created'; session: SigningSession; challengeCode: string }
  /** Sandbox only: the simulated phone scanned (its delivery result). */
  | { step: 'scanned'; delivery: unknown }
  | { step: 'certificate'; event: CertificateEvent }
  | { step: 'prepared'; inputBytes: number; documentHash: string }
  | { step: 'submitted'; documentName: string; challengeCode: string }
  /** Sandbox only: the simulated phone approved (its delivery result). */
  | { step: 'approved'; delivery: unknown }
  | { step: 'signature'; event: SignatureEvent }
  /** The signature was checked against the certificate over the SignedAttributes, then embedded. */
  | { step: 'embedded'; event: SignatureEvent; timestamped: boolean }
  | { step: 'validationData'; summary: ValidationDataSummary }
  | { step: 'documentTimestamp' }
  | { step: 'verified'; report: PdfVerificationReport };

export interface SessionOptions {
  /** The PDF to sign, or a function making it once the session exists (the demo prints the sign_ref in it). */
  input: Buffer | ((signRef: string) => Promise<Buffer>);
  documentName: string;
  level: PadesLevel;
  reason: string;
  location?: string;
  onStep(step: SessionStep): void | Promise<void>;
}

export interface SessionResult {
  pdf: Buffer;
  level: PadesLevel | null;
  valid: boolean;
  signRef: string;
}

/** `[ n]   t.t s  text`: the numbered, timed step lines both commands print. */
export function stepLogger(log: (line: string) => void): (text: string) => void {
  let step = 0;
  const t0 = Date.now();
  return (text) => log(`[${String(++step).padStart(2)}] ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s  ${text}`);
}

/** Runs one session to the end; throws (SingpassFlowsError where a code applies) and closes the DSAP server. */
export async function runSigningSession(env: SessionEnvironment, o: SessionOptions): Promise<SessionResult> {
  const verifier = createWebhookVerifier({ keySetUrl: env.serviceKeySetUrl });
  await verifier.warmUp(); // the service wants an immediate 200: have its key set before the first webhook
  const tokens = new Map<string, string>();
  const inbox = new Inbox();
  const dsap = await env.serveDsap(async (req, res, url) => {
    if (url.pathname === '/jwks' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
      return void res.end(JSON.stringify(env.publicKeys));
    }
    if (url.pathname === '/webhook' && req.method === 'POST') {
      const r = await verifier.handle({ headers: req.headers, body: await readBody(req, 1024 * 1024), expectedToken: (ref) => tokens.get(ref) });
      if (r.response.status === 200) res.writeHead(200, { 'content-length': '0' }).end();
      else res.writeHead(r.response.status, { 'content-type': 'application/json' }).end(JSON.stringify(r.response.body));
      if (r.event && !r.duplicate) inbox.push(r.event);
      if (r.error) inbox.fail(new SingpassFlowsError(r.error.code, `webhook refused a delivery: ${r.error.message}`));
      return;
    }
    res.writeHead(404).end();
  });
  try {
    await o.onStep({ step: 'listening', baseUrl: dsap.baseUrl, keySetUrl: verifier.keySet.url });
    const waitMs = env.phone ? 20_000 : 180_000; // a person scanning and approving takes longer than the simulator

    const clientNotificationToken = generateNotificationToken();
    const session = await env.client.createSession({ clientNotificationToken, tenantId: env.tenantId });
    tokens.set(session.signRef, clientNotificationToken);
    const challengeCode = generateChallengeCode();
    let state = newSigningSessionState(session, { challengeCode, clientNotificationToken });
    await o.onStep({ step: 'created', session, challengeCode });
    if (env.phone) await o.onStep({ step: 'scanned', delivery: await env.phone.scan(session.signRef) });
    const certEvent = (await inbox.next(session.signRef, 'certificate', waitMs)) as CertificateEvent;
    state = applySigningEvent(state, certEvent);
    await o.onStep({ step: 'certificate', event: certEvent });

    // Intermediates to embed: given, or from the certificate's AIA (never the root: verifiers bring their own).
    const chain = env.intermediates ?? (await buildChain(certEvent.certificate.der, { trustedRoots: env.trustedRoots })).slice(1, -1);
    const input = typeof o.input === 'function' ? await o.input(session.signRef) : o.input;
    const { documentHash, state: prepared } = await prepareSignature(input, {
      certificate: certEvent.certificate.base64, chain, reason: o.reason, location: o.location,
    });
    await o.onStep({ step: 'prepared', inputBytes: input.length, documentHash });

    await env.client.submitDocumentHash(session.signRef, { documentName: o.documentName, documentHash, challengeCode, nonce: certEvent.nonce, domainName: env.domainName });
    state = markHashSubmitted(state, documentHash);
    await o.onStep({ step: 'submitted', documentName: o.documentName, challengeCode });

    if (env.phone) await o.onStep({ step: 'approved', delivery: await env.phone.approve(session.signRef) });
    const sigEvent = (await inbox.next(session.signRef, 'signature', waitMs)) as SignatureEvent;
    state = applySigningEvent(state, sigEvent);
    if (state.status !== 'signed' || state.certificate !== undefined) throw new Error('session state did not end as signed without the certificate');
    await o.onStep({ step: 'signature', event: sigEvent });

    const tsaUrl = env.tsaUrl;
    if (o.level !== 'B-B' && !tsaUrl) throw new SingpassFlowsError('INVALID_INPUT', `Level ${o.level} needs a TSA: set "tsaUrl" in the config file`, { field: 'tsaUrl' });
    // finalizeSignature checks the signature against the certificate over the SignedAttributes before embedding.
    const timestamped = o.level !== 'B-B';
    let pdf = await finalizeSignature(input, prepared, sigEvent.signature, timestamped ? { timestamp: timestampSignature(tsaUrl!) } : {});
    await o.onStep({ step: 'embedded', event: sigEvent, timestamped });
    const roots = env.trustedRoots;
    if (o.level === 'B-LT' || o.level === 'B-LTA') {
      const r = await addValidationDataWithSummary(pdf, { trustedRoots: roots });
      pdf = r.pdf;
      await o.onStep({ step: 'validationData', summary: r.summary });
    }
    if (o.level === 'B-LTA') {
      pdf = await addDocumentTimestamp(pdf, { tsaUrl: tsaUrl! });
      // The document timestamp's own TSA chain gets its OCSP too, so the next renewal has what it needs.
      pdf = (await addValidationDataWithSummary(pdf, { trustedRoots: roots })).pdf;
      await o.onStep({ step: 'documentTimestamp' });
    }
    const report = await verifyPdfSignatures(pdf, { trustedRoots: roots });
    await o.onStep({ step: 'verified', report });
    if (!report.valid || report.level !== o.level) {
      throw new SingpassFlowsError('SIGNATURE_INVALID', `The signed PDF verifies as ${report.level ?? 'nothing'} (valid=${report.valid}); expected ${o.level}`);
    }
    return { pdf, level: report.level, valid: report.valid, signRef: session.signRef };
  } finally {
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

/** Webhook events handed from the HTTP handler to the script, awaited by sign_ref and type. */
class Inbox {
  private events: SigningEvent[] = [];
  private failure: Error | undefined;
  private waiters: (() => void)[] = [];

  push(e: SigningEvent): void { this.events.push(e); this.wakeAll(); }
  fail(e: Error): void { this.failure ??= e; this.wakeAll(); }
  private wakeAll(): void { for (const w of this.waiters.splice(0)) w(); }

  async next(signRef: string, type: SigningEvent['type'], timeoutMs: number): Promise<SigningEvent> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const i = this.events.findIndex((e) => e.signRef === signRef);
      if (i >= 0) {
        const e = this.events.splice(i, 1)[0]!;
        if (e.type === 'error') throw new SingpassFlowsError('SIGN_REQUEST_REJECTED', `The signing session ended with an error: ${e.errorCode} ${e.message}`);
        if (e.type !== type) throw new SingpassFlowsError('WEBHOOK_EVENT_UNKNOWN', `Expected a ${type} webhook, got ${e.type}`);
        return e;
      }
      if (this.failure) throw this.failure;
      if (Date.now() > until) throw new SingpassFlowsError('HTTP_TIMEOUT', `No ${type} webhook within ${timeoutMs / 1000} s`);
      await new Promise<void>((r) => { const t = setTimeout(r, 250); this.waiters.push(() => { clearTimeout(t); r(); }); });
    }
  }
}
