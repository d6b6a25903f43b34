import * as crypto from 'node:crypto';
import type * as http from 'node:http';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import QRCode from 'qrcode';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { wantsHelp, type CliCommand } from '../command';
import { isSingpassFlowsError } from '../../errors';
import { generateClientKeys, loadSigningKey, publicKeySet } from '../../keys';
import {
  SigningApiClient, applySigningEvent, createWebhookVerifier, generateChallengeCode, generateNotificationToken,
  markHashSubmitted, newSigningSessionState, renderQr, type CertificateEvent, type SignatureEvent, type SigningEvent,
} from '../../sign';
import { finalizeSignature, prepareSignature } from '../../pades';
import { addDocumentTimestamp, timestampSignature } from '../../pades/doc-timestamp';
import { addValidationData } from '../../pades/ltv';
import { verifyPdfSignatures, type PadesLevel } from '../../pades/verify';
// The CLI (not the core) may use the sandbox: the demo runs against a local stand-in of the services.
import { startSandbox, type Sandbox } from '../../../sandbox';
import { listen, readBody, type RunningServer } from '../../../sandbox/http';

const LEVELS: PadesLevel[] = ['B-B', 'B-T', 'B-LT', 'B-LTA'];
const USERS = ['p256', 'p384', 'revoked'];

const HELP = `Usage: singpass-flows demo [--level B-B|B-T|B-LT|B-LTA] [--user p256|p384|revoked] [--out <file.pdf>] [--no-qr]

Runs ONE complete Singpass document signing round trip on this machine, against the local sandbox (a stand-in
of the signing API, the national test CA with OCSP and TSA, and a simulated phone). Nothing leaves 127.0.0.1.

Steps: generate the DSAP's keys, serve its key set and webhook, register with the sandbox, create a session and
show its QR code, the phone scans, the certificate arrives on the webhook, a small PDF is prepared and its hash
submitted, the phone approves, the signature arrives on the webhook, it is verified with node:crypto, embedded in
the PDF (PAdES), extended to the chosen level and the result verified. Prints each step; exits 1 on any failure.

Options:
  --level <l>   PAdES level to reach: B-B, B-T (signature timestamp), B-LT (+ OCSP in the DSS),
                B-LTA (+ document timestamp). Default B-LTA.
  --user <u>    sandbox test user the phone signs as: p256 (default), p384, or revoked (fails at B-LT: the
                OCSP check refuses a revoked certificate — that is the point)
  --out <file>  write the signed PDF there
  --no-qr       do not draw the QR code in the terminal
  -h, --help    show this help

Example:
  singpass-flows demo --level B-LT --out signed.pdf`;

export interface DemoOptions {
  level: PadesLevel;
  user: string;
  out?: string;
  qr: boolean;
  log: (line: string) => void;
}

export interface DemoResult {
  signRef: string;
  level: PadesLevel | null;
  valid: boolean;
  pdf: Buffer;
}

/**
 * The scripted round trip behind `singpass-flows demo`, exported so tests drive it in-process. Throws on any
 * failure (with a SingpassFlowsError code where one applies); always closes what it started.
 */
export async function runSigningDemo(options: DemoOptions): Promise<DemoResult> {
  const { log } = options;
  let step = 0;
  const t0 = Date.now();
  const say = (text: string) => log(`[${String(++step).padStart(2)}] ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s  ${text}`);
  let sandbox: Sandbox | undefined;
  let dsap: RunningServer | undefined;
  try {
    sandbox = await startSandbox({ webhookRetryDelayMs: 200 });
    say(`sandbox up at ${sandbox.baseUrl} (signing API ${sandbox.urls.signApi})`);

    // The DSAP: its keys, key set and webhook. The webhook answers at once and hands events over by sign_ref.
    const clientKeys = await generateClientKeys();
    const signingKey = await loadSigningKey({ key: clientKeys.signing });
    const verifier = createWebhookVerifier({ keySetUrl: sandbox.urls.signKeys });
    await verifier.warmUp(); // the service wants an immediate 200: have its key set before the first webhook
    const tokens = new Map<string, string>();
    const inbox = new EventInbox();
    dsap = await listen(async (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => {
      if (url.pathname === '/jwks' && req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
        return void res.end(JSON.stringify(publicKeySet([signingKey])));
      }
      if (url.pathname === '/webhook' && req.method === 'POST') {
        const result = await verifier.handle({ headers: req.headers, body: await readBody(req, 1024 * 1024), expectedToken: (ref) => tokens.get(ref) });
        if (result.response.status === 200) res.writeHead(200, { 'content-length': '0' }).end();
        else res.writeHead(result.response.status, { 'content-type': 'application/json' }).end(JSON.stringify(result.response.body));
        if (result.event && !result.duplicate) inbox.push(result.event);
        if (result.error) inbox.fail(`webhook refused a delivery: ${result.error.code}: ${result.error.message}`);
        return;
      }
      res.writeHead(404).end();
    });
    const clientId = 'demo-dsap';
    sandbox.sign.registerClient({ clientId, jwksUrl: `${dsap.baseUrl}/jwks`, notificationUrl: `${dsap.baseUrl}/webhook` });
    say(`DSAP "${clientId}": ES256 key ${signingKey.kid}, key set ${dsap.baseUrl}/jwks, webhook ${dsap.baseUrl}/webhook (service key set cached: ${verifier.keySet.url})`);

    const client = new SigningApiClient({ baseUrl: sandbox.urls.signApi, clientId, signingKey });
    const clientNotificationToken = generateNotificationToken();
    const session = await client.createSession({ clientNotificationToken, tenantId: 'Demo Tenant' });
    tokens.set(session.signRef, clientNotificationToken);
    const challengeCode = generateChallengeCode();
    let state = newSigningSessionState(session, { challengeCode, clientNotificationToken });
    const svg = await renderQr(session.qrPayload, { format: 'svg' });
    say(`session ${session.signRef} created, expires ${new Date(session.expiresAt * 1000).toISOString()}; QR payload ${session.qrPayload} (SVG ${svg.length} bytes); challenge code ${challengeCode}`);
    if (options.qr) log(await QRCode.toString(session.qrPayload, { type: 'terminal', small: true }));

    const scan = await sandbox.phone.scan(session.signRef, { user: options.user });
    say(`phone (user ${options.user}) scanned the QR code; certificate notification ${scan}`);
    const cert = (await inbox.next(session.signRef, 'certificate')) as CertificateEvent;
    state = applySigningEvent(state, cert);
    say(`webhook: certificate of "${cert.certificate.subject.replace(/\n/g, ', ')}" (${cert.certificate.publicKeyAlgorithm}, serial ${cert.certificate.serialNumber}), nonce received`);

    const pdf = await samplePdf(session.signRef);
    const { documentHash, state: prepared } = await prepareSignature(pdf, {
      certificate: cert.certificate.base64, chain: [sandbox.pki.intermediate.certDer], reason: 'Singpass flows demo', location: 'Singapore',
    });
    say(`PDF (${pdf.length} bytes) prepared with prepareSignature; document hash = SHA-256 of the CMS SignedAttributes = ${documentHash}`);

    await client.submitDocumentHash(session.signRef, { documentName: 'Demo agreement.pdf', documentHash, challengeCode, nonce: cert.nonce, domainName: 'demo.singpass-flows.local' });
    state = markHashSubmitted(state, documentHash);
    say('hash submitted (user now compares the challenge code in the app)');

    const approve = await sandbox.phone.approve(session.signRef);
    say(`phone approved and signed the hash; signature notification ${approve}`);
    const sig = (await inbox.next(session.signRef, 'signature')) as SignatureEvent;
    state = applySigningEvent(state, sig);
    if (state.status !== 'signed' || state.certificate !== undefined) throw new Error('session state did not end as signed without the certificate');

    const signedAttributes = Buffer.from(prepared.signedAttributes, 'base64');
    const userKey = new crypto.X509Certificate(cert.certificate.der).publicKey;
    const ok = crypto.verify('sha256', signedAttributes, { key: userKey, dsaEncoding: 'der' }, Buffer.from(sig.signature, 'hex'));
    if (!ok) throw new Error('the signature from the webhook does not verify over the SignedAttributes with the user certificate');
    say(`webhook: signature (${sig.signature.length / 2} bytes DER) verifies with node:crypto over the SignedAttributes`);

    const tsa = sandbox.urls.tsa;
    const roots = [sandbox.pki.root.certDer];
    const wantTimestamp = options.level !== 'B-B';
    let out = await finalizeSignature(pdf, prepared, sig.signature, wantTimestamp ? { timestamp: timestampSignature(tsa) } : {});
    say(`signature embedded (PAdES ETSI.CAdES.detached${wantTimestamp ? ' with a signature timestamp from the sandbox TSA' : ''})`);
    if (options.level === 'B-LT' || options.level === 'B-LTA') {
      out = await addValidationData(out, { trustedRoots: roots });
      say('validation data added (certificates + OCSP responses in the DSS)');
    }
    if (options.level === 'B-LTA') {
      out = await addValidationData(await addDocumentTimestamp(out, { tsaUrl: tsa }), { trustedRoots: roots });
      say('document timestamp added (and its validation data)');
    }
    const report = await verifyPdfSignatures(out, { trustedRoots: roots });
    // NOT_COVERING_WHOLE_FILE is expected once DSS / document timestamps follow the signature
    const problems = [...new Set(report.signatures.flatMap((s) => s.problems))].filter((p) => !(report.valid && p === 'NOT_COVERING_WHOLE_FILE'));
    say(`verified: valid=${report.valid}, level ${report.level ?? 'none'}, ${report.signatures.length} signature(s)/timestamp(s)${problems.length ? `, problems ${problems.join(', ')}` : ''}`);
    if (!report.valid || report.level !== options.level) throw new Error(`the signed PDF verifies as ${report.level ?? 'nothing'} (valid=${report.valid}), expected ${options.level}`);
    if (options.out) {
      writeFileSync(resolve(options.out), out);
      say(`signed PDF written to ${resolve(options.out)} (${out.length} bytes)`);
    }
    return { signRef: session.signRef, level: report.level, valid: report.valid, pdf: out };
  } finally {
    await dsap?.close();
    await sandbox?.close();
  }
}

/** Webhook events handed from the HTTP handler to the script, waited for by sign_ref and type. */
class EventInbox {
  private events: SigningEvent[] = [];
  private failure: string | undefined;
  private wake: (() => void) | undefined;

  push(e: SigningEvent): void {
    this.events.push(e);
    this.wake?.();
  }

  fail(reason: string): void {
    this.failure ??= reason;
    this.wake?.();
  }

  async next(signRef: string, type: SigningEvent['type'], timeoutMs = 15_000): Promise<SigningEvent> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const i = this.events.findIndex((e) => e.signRef === signRef);
      if (i >= 0) {
        const [e] = this.events.splice(i, 1);
        if (e.type === 'error') throw new Error(`the service reported an error: ${e.errorCode} ${e.message}`);
        if (e.type !== type) throw new Error(`expected a ${type} event, got ${e.type}`);
        return e;
      }
      if (this.failure) throw new Error(this.failure);
      if (Date.now() > until) throw new Error(`no ${type} webhook within ${timeoutMs / 1000} s`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, 250);
        this.wake = () => { clearTimeout(t); r(); };
      });
    }
  }
}

async function samplePdf(signRef: string): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  page.drawText('Singpass flows - demo agreement', { x: 72, y: 760, size: 18, font });
  page.drawText(`Signing session ${signRef} (sandbox, TEST ONLY)`, { x: 72, y: 730, size: 11, font });
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

export const demoCommand: CliCommand = {
  name: 'demo',
  summary: 'run one complete document signing round trip against the local sandbox and print each step',
  help: HELP,
  async run(argv) {
    if (wantsHelp(argv)) {
      console.log(HELP);
      return 0;
    }
    let values: { level?: string; user?: string; out?: string; 'no-qr'?: boolean };
    try {
      ({ values } = parseArgs({ args: argv, options: { level: { type: 'string' }, user: { type: 'string' }, out: { type: 'string' }, 'no-qr': { type: 'boolean' } }, strict: true, allowPositionals: false }));
    } catch (e) {
      console.error(`${(e as Error).message}\n\n${HELP}`);
      return 2;
    }
    const level = (values.level ?? 'B-LTA').toUpperCase() as PadesLevel;
    if (!LEVELS.includes(level)) {
      console.error(`--level must be one of ${LEVELS.join(', ')}`);
      return 2;
    }
    const user = values.user ?? 'p256';
    if (!USERS.includes(user)) {
      console.error(`--user must be one of ${USERS.join(', ')}`);
      return 2;
    }
    const started = Date.now();
    try {
      const result = await runSigningDemo({ level, user, out: values.out, qr: !values['no-qr'], log: (l) => console.log(l) });
      console.log(`OK: session ${result.signRef} signed at PAdES ${result.level} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return 0;
    } catch (e) {
      const code = isSingpassFlowsError(e) ? `${e.code}: ` : '';
      console.error(`FAILED: ${code}${(e as Error)?.message ?? e}`);
      return 1;
    }
  },
};
