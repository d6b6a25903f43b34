import type * as http from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import QRCode from 'qrcode';
import { parseArgs } from 'node:util';
import { wantsHelp, type CliCommand } from '../command';
import { SingpassFlowsError, invalidInput, isSingpassFlowsError } from '../../errors';
import { generateClientKeys, loadSigningKey, publicKeySet } from '../../keys';
import {
  SigningApiClient, applySigningEvent, createWebhookVerifier, generateChallengeCode, generateNotificationToken,
  markHashSubmitted, newSigningSessionState, type CertificateEvent, type SignatureEvent, type SigningEvent,
} from '../../sign';
import { finalizeSignature, prepareSignature } from '../../pades';
import { addDocumentTimestamp, timestampSignature } from '../../pades/doc-timestamp';
import { addValidationDataWithSummary } from '../../pades/ltv';
import { verifyPdfSignatures, type PadesLevel } from '../../pades/verify';
import { buildChain } from '../../pki';
// The CLI (not the core) may start the sandbox: `sign` runs the whole session against a local stand-in.
import { startSandbox, type Sandbox } from '../../../sandbox';
import { listen, readBody, type RunningServer } from '../../../sandbox/http';

const LEVELS: PadesLevel[] = ['B-B', 'B-T', 'B-LT', 'B-LTA'];
const USERS = ['p256', 'p384', 'revoked'];

const HELP = `Usage: singpass-flows sign --in <file.pdf> --out <signed.pdf> [--level B-B|B-T|B-LT|B-LTA]
                           [--sandbox [--user p256|p384|revoked] [--root-out <root.pem>] | --config <file.json>]
                           [--doc-name <name>] [--reason <text>] [--location <text>]

Signs YOUR PDF through a complete Singpass document signing session and prints each step: create session,
QR scan, certificate webhook, prepare the PDF, submit the hash, approval, signature webhook, embed (PAdES),
signature timestamp, validation data (OCSP), document timestamp, verification. The input is never modified;
on any failure nothing is written.

Modes:
  --sandbox          (default) an in-process sandbox: signing API, national test CA with OCSP and TSA and a
                     simulated phone, all on 127.0.0.1. The result is signed by a TEST certificate.
  --config <file>    a signing service you are onboarded with (or a sandbox started with "singpass-flows
                     sandbox"). You scan the QR code with the Singpass app. JSON fields:
                       signApiBaseUrl   {dss_base_url}/api/v1
                       audience         assertion audience, if not the origin of signApiBaseUrl
                       clientId         your client ID
                       signingKey       your private signing JWK (its public part is at your registered key set URL)
                       serviceKeySetUrl the service's key set (dss_static_url/.well-known/keys.json)
                       listenPort       this CLI serves POST /webhook and GET /jwks on 127.0.0.1:<port>;
                                        your registered notification URL must reach it (tunnel / reverse proxy)
                       tsaUrl           RFC 3161 timestamp authority (needed for B-T and above)
                       trustedRoots     root CA files (PEM/DER), relative to the config file
                       domainName       your registered domain, sent with the hash
                       tenantId         optional

Options:
  --in <file>        the PDF to sign
  --out <file>       where to write the signed PDF
  --level <l>        B-B, B-T (+ signature timestamp), B-LT (+ certificates and OCSP in the DSS),
                     B-LTA (+ document timestamp). Default B-LTA.
  --user <u>         sandbox test user: p256 (default), p384, or revoked (B-LT/B-LTA then stop with OCSP_REVOKED
                     and nothing is written — the check a real deployment relies on)
  --doc-name <name>  document name shown in the Singpass app (default: the file name)
  --reason <text>    /Reason in the signature (default "Signed with Singpass")
  --location <text>  /Location in the signature
  --root-out <file>  sandbox mode: also write the sandbox root CA (PEM), to check the result later with
                     singpass-flows verify <signed.pdf> --root <file>
  -h, --help         show this help

Example:
  singpass-flows sign --in contract.pdf --out contract-signed.pdf --level B-LTA --root-out sandbox-root.pem`;

export interface SignCommandOptions {
  input: Buffer;
  documentName: string;
  level: PadesLevel;
  user: string;
  reason?: string;
  location?: string;
  log: (line: string) => void;
}

export interface SignCommandResult {
  pdf: Buffer;
  level: PadesLevel | null;
  valid: boolean;
  rootPem: string;
  signRef: string;
}

/** Where a session runs: the sandbox (phone simulated) or a real/remote signing service from a config file. */
interface SessionEnvironment {
  client: SigningApiClient;
  /** Key set URL of the signing service (verifies webhook JWTs). */
  serviceKeySetUrl: string;
  tsaUrl?: string;
  trustedRoots: Buffer[];
  /** Intermediates to embed; when absent they are fetched via the user certificate's AIA. */
  intermediates?: Buffer[];
  domainName: string;
  tenantId: string;
  /** Attach the DSAP's webhook + key set handler; returns its base URL. */
  serveDsap(handler: (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => Promise<void>): Promise<void>;
  /** Sandbox only: drive the simulated phone. Otherwise the user scans the QR code with the Singpass app. */
  phone?: { scan(signRef: string): Promise<unknown>; approve(signRef: string): Promise<unknown> };
  /** Served at /jwks next to the webhook (what the DSAP registered as its key set URL). */
  publicKeys: { keys: unknown[] };
}

async function runSession(env: SessionEnvironment, o: SignCommandOptions): Promise<{ pdf: Buffer; level: PadesLevel | null; valid: boolean; signRef: string }> {
  let step = 0;
  const t0 = Date.now();
  const say = (text: string) => o.log(`[${String(++step).padStart(2)}] ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s  ${text}`);
  const verifier = createWebhookVerifier({ keySetUrl: env.serviceKeySetUrl });
  const tokens = new Map<string, string>();
  const inbox = new Inbox();
  await env.serveDsap(async (req, res, url) => {
    if (url.pathname === '/jwks' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify(env.publicKeys));
    }
    if (url.pathname === '/webhook' && req.method === 'POST') {
      const r = await verifier.handle({ headers: req.headers, body: await readBody(req, 1024 * 1024), expectedToken: (ref) => tokens.get(ref) });
      res.writeHead(r.response.status, { 'content-type': 'application/json' }).end(r.response.status === 200 ? '' : JSON.stringify(r.response.body));
      if (r.event && !r.duplicate) inbox.push(r.event);
      if (r.error) inbox.fail(new SingpassFlowsError(r.error.code, `webhook refused a delivery: ${r.error.message}`));
      return;
    }
    res.writeHead(404).end();
  });

  const clientNotificationToken = generateNotificationToken();
  const session = await env.client.createSession({ clientNotificationToken, tenantId: env.tenantId });
  tokens.set(session.signRef, clientNotificationToken);
  const challengeCode = generateChallengeCode();
  let state = newSigningSessionState(session, { challengeCode, clientNotificationToken });
  say(`1/8 session ${session.signRef} created (QR payload ${session.qrPayload})`);
  if (env.phone) {
    await env.phone.scan(session.signRef);
  } else {
    o.log(await QRCode.toString(session.qrPayload, { type: 'terminal', small: true }));
    say('scan this QR code with the Singpass app (waiting for the certificate webhook)');
  }
  const certEvent = (await inbox.next(session.signRef, 'certificate', env.phone ? 20_000 : 180_000)) as CertificateEvent;
  state = applySigningEvent(state, certEvent);
  say(`2/8 QR scanned; certificate webhook: ${certEvent.certificate.subject.replace(/\n/g, ', ')}`);

  // Intermediates to embed: given, or from the certificate's AIA (never the root: verifiers bring their own).
  const chain = env.intermediates ?? (await buildChain(certEvent.certificate.der, { trustedRoots: env.trustedRoots })).slice(1, -1);
  const { documentHash, state: prepared } = await prepareSignature(o.input, {
    certificate: certEvent.certificate.base64, chain, reason: o.reason ?? 'Signed with Singpass', location: o.location,
  });
  say(`3/8 PDF prepared (${o.input.length} bytes); document hash ${documentHash}`);

  await env.client.submitDocumentHash(session.signRef, { documentName: o.documentName, documentHash, challengeCode, nonce: certEvent.nonce, domainName: env.domainName });
  state = markHashSubmitted(state, documentHash);
  say(`4/8 hash submitted as "${o.documentName}"; challenge code ${challengeCode}${env.phone ? '' : ' (check it matches the one in the app, then approve)'}`);

  if (env.phone) await env.phone.approve(session.signRef);
  const sigEvent = (await inbox.next(session.signRef, 'signature', env.phone ? 20_000 : 180_000)) as SignatureEvent;
  state = applySigningEvent(state, sigEvent);
  say('5/8 approved; signature webhook received');

  const tsaUrl = env.tsaUrl;
  if (o.level !== 'B-B' && !tsaUrl) throw new SingpassFlowsError('INVALID_INPUT', `Level ${o.level} needs a TSA: set "tsaUrl" in the config file`, { field: 'tsaUrl' });
  // finalizeSignature checks the signature against the certificate over the SignedAttributes before embedding.
  let pdf = await finalizeSignature(o.input, prepared, sigEvent.signature, o.level === 'B-B' ? {} : { timestamp: timestampSignature(tsaUrl!) });
  say(`6/8 signature checked and embedded${o.level === 'B-B' ? '' : ' with a signature timestamp (B-T)'}`);
  const roots = env.trustedRoots;
  if (o.level === 'B-LT' || o.level === 'B-LTA') {
    const r = await addValidationDataWithSummary(pdf, { trustedRoots: roots });
    pdf = r.pdf;
    say(`7/8 validation data added (B-LT): ${r.summary.certificates} certificates, ${r.summary.ocspResponses} OCSP responses`);
  }
  if (o.level === 'B-LTA') {
    pdf = await addDocumentTimestamp(pdf, { tsaUrl: tsaUrl! });
    // The document timestamp's own TSA chain gets its OCSP too, so the next renewal has what it needs.
    pdf = (await addValidationDataWithSummary(pdf, { trustedRoots: roots })).pdf;
    say('7/8 document timestamp added (B-LTA)');
  }
  const report = await verifyPdfSignatures(pdf, { trustedRoots: roots });
  say(`8/8 verified: ${report.valid ? 'valid' : 'NOT valid'}, level ${report.level ?? 'none'}`);
  if (!report.valid || report.level !== o.level) {
    throw new SingpassFlowsError('SIGNATURE_INVALID', `The signed PDF verifies as ${report.level ?? 'nothing'} (valid=${report.valid}); expected ${o.level}`);
  }
  return { pdf, level: report.level, valid: report.valid, signRef: session.signRef };
}

/**
 * The whole signing session behind `singpass-flows sign`, against an in-process sandbox. Exported so tests drive
 * it; throws (SingpassFlowsError where a code applies) and always closes what it started.
 */
export async function signWithSandbox(o: SignCommandOptions): Promise<SignCommandResult> {
  let sandbox: Sandbox | undefined;
  let dsap: RunningServer | undefined;
  try {
    sandbox = await startSandbox({ webhookRetryDelayMs: 200 });
    o.log(`sandbox started at ${sandbox.baseUrl}`);
    const sb = sandbox;
    const keys = await generateClientKeys();
    const signingKey = await loadSigningKey({ key: keys.signing });
    const clientId = 'cli-sign';
    const r = await runSession({
      client: new SigningApiClient({ baseUrl: sb.urls.signApi, clientId, signingKey }),
      serviceKeySetUrl: sb.urls.signKeys,
      tsaUrl: sb.urls.tsa,
      trustedRoots: [sb.pki.root.certDer],
      intermediates: [sb.pki.intermediate.certDer],
      domainName: 'cli.singpass-flows.local',
      tenantId: 'singpass-flows CLI',
      publicKeys: publicKeySet([signingKey]),
      async serveDsap(handler) {
        dsap = await listen(handler);
        sb.sign.registerClient({ clientId, jwksUrl: `${dsap.baseUrl}/jwks`, notificationUrl: `${dsap.baseUrl}/webhook` });
      },
      phone: { scan: (ref) => sb.phone.scan(ref, { user: o.user }), approve: (ref) => sb.phone.approve(ref) },
    }, o);
    return { ...r, rootPem: sb.pki.root.certPem };
  } finally {
    await dsap?.close();
    await sandbox?.close();
  }
}

/** `--config` file: a signing service (real staging, or a sandbox started with `singpass-flows sandbox`). */
export interface SignConfig {
  /** `{dss_base_url}/api/v1`. */
  signApiBaseUrl: string;
  /** Assertion audience when it is not the origin of signApiBaseUrl (the sandbox: `<origin>/sign`). */
  audience?: string;
  clientId: string;
  /** The DSAP's private signing JWK (the one whose public part is at the registered key set URL). */
  signingKey: Record<string, unknown>;
  /** The signing service's key set URL (`dss_static_url/.well-known/keys.json`). */
  serviceKeySetUrl: string;
  /** Where this CLI listens for the webhook and serves `/jwks` (127.0.0.1; put your tunnel/proxy in front). */
  listenPort: number;
  tsaUrl?: string;
  /** Trusted root certificate files (PEM/DER). */
  trustedRoots: string[];
  /** `domain_name` sent with the hash (your registered domain). */
  domainName: string;
  tenantId?: string;
}

export function parseSignConfig(text: string): SignConfig {
  let c: Partial<SignConfig>;
  try {
    c = JSON.parse(text) as Partial<SignConfig>;
  } catch {
    throw invalidInput('config', 'is not valid JSON');
  }
  for (const f of ['signApiBaseUrl', 'clientId', 'serviceKeySetUrl', 'domainName'] as const) {
    if (typeof c[f] !== 'string' || !c[f]) throw invalidInput(`config.${f}`, 'is required');
  }
  if (!c.signingKey || typeof c.signingKey !== 'object') throw invalidInput('config.signingKey', 'is required (the private signing JWK)');
  if (!Number.isInteger(c.listenPort) || c.listenPort! < 0 || c.listenPort! > 65535) throw invalidInput('config.listenPort', 'must be a port number');
  if (!Array.isArray(c.trustedRoots) || c.trustedRoots.length === 0) throw invalidInput('config.trustedRoots', 'needs at least one root certificate file');
  return c as SignConfig;
}

/** `sign --config`: the same session against the service the config names; the user scans with their app. */
export async function signWithConfig(config: SignConfig, o: SignCommandOptions & { baseDir: string }): Promise<SignCommandResult> {
  const signingKey = await loadSigningKey({ key: config.signingKey as never });
  const trustedRoots = config.trustedRoots.map((f) => readFileSync(resolve(o.baseDir, f)));
  let dsap: RunningServer | undefined;
  try {
    const r = await runSession({
      client: new SigningApiClient({ baseUrl: config.signApiBaseUrl, clientId: config.clientId, signingKey, audience: config.audience }),
      serviceKeySetUrl: config.serviceKeySetUrl,
      tsaUrl: config.tsaUrl,
      trustedRoots,
      domainName: config.domainName,
      tenantId: config.tenantId ?? 'singpass-flows CLI',
      publicKeys: publicKeySet([signingKey]),
      async serveDsap(handler) {
        dsap = await listen(handler, config.listenPort);
        o.log(`webhook listening at ${dsap.baseUrl}/webhook, key set at ${dsap.baseUrl}/jwks`);
      },
    }, o);
    return { ...r, rootPem: '' };
  } finally {
    await dsap?.close();
  }
}

/** Webhook events handed from the HTTP handler to the script, awaited by sign_ref and type. */
class Inbox {
  private events: SigningEvent[] = [];
  private failure: Error | undefined;
  private waiters: (() => void)[] = [];

  push(e: SigningEvent): void { this.events.push(e); this.wakeAll(); }
  fail(e: Error): void { this.failure ??= e; this.wakeAll(); }
  private wakeAll(): void { for (const w of this.waiters.splice(0)) w(); }

  async next(signRef: string, type: SigningEvent['type'], timeoutMs = 20_000): Promise<SigningEvent> {
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

export const signCommand: CliCommand = {
  name: 'sign',
  summary: 'sign a PDF through a full signing session against the local sandbox (PAdES B-B..B-LTA)',
  help: HELP,
  async run(argv) {
    if (wantsHelp(argv)) {
      console.log(HELP);
      return 0;
    }
    let values: Record<string, string | boolean | undefined>;
    try {
      ({ values } = parseArgs({
        args: argv, strict: true, allowPositionals: false,
        options: {
          in: { type: 'string' }, out: { type: 'string' }, level: { type: 'string' }, user: { type: 'string' }, 'doc-name': { type: 'string' },
          reason: { type: 'string' }, location: { type: 'string' }, 'root-out': { type: 'string' }, sandbox: { type: 'boolean' }, config: { type: 'string' },
        },
      }));
    } catch (e) {
      console.error(`${(e as Error).message}\n\n${HELP}`);
      return 2;
    }
    const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
    if (!str('in') || !str('out')) {
      console.error(`--in and --out are required.\n\n${HELP}`);
      return 2;
    }
    const level = (str('level') ?? 'B-LTA').toUpperCase() as PadesLevel;
    if (!LEVELS.includes(level)) {
      console.error(`--level must be one of ${LEVELS.join(', ')}`);
      return 2;
    }
    const user = str('user') ?? 'p256';
    if (!USERS.includes(user)) {
      console.error(`--user must be one of ${USERS.join(', ')}`);
      return 2;
    }
    let input: Buffer;
    try {
      input = readFileSync(str('in')!);
    } catch (e) {
      console.error(`Cannot read ${str('in')}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      return 2;
    }
    try {
      const common = {
        input, level, user, documentName: str('doc-name') ?? basename(str('in')!), reason: str('reason'), location: str('location'),
        log: (l: string) => console.log(l),
      };
      const configFile = str('config');
      const result = configFile
        ? await signWithConfig(parseSignConfig(readFileSync(configFile, 'utf8')), { ...common, baseDir: dirname(resolve(configFile)) })
        : await signWithSandbox(common);
      writeFileSync(resolve(str('out')!), result.pdf);
      if (str('root-out') && result.rootPem) writeFileSync(resolve(str('root-out')!), result.rootPem);
      console.log(`OK: ${resolve(str('out')!)} signed at PAdES ${result.level} (${result.pdf.length} bytes, session ${result.signRef})${str('root-out') ? `; sandbox root CA in ${resolve(str('root-out')!)}` : ''}`);
      return 0;
    } catch (e) {
      console.error(`FAILED${isSingpassFlowsError(e) ? ` ${e.code}` : ''}: ${(e as Error)?.message ?? e}. Nothing was written.`);
      return 1;
    }
  },
};
