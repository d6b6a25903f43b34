import type * as http from 'node:http';
import { X509Certificate, verify as cryptoVerify } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { wantsHelp, type CliCommand } from '../command';
import { SingpassFlowsError, isSingpassFlowsError } from '../../errors';
import { generateClientKeys, loadSigningKey, publicKeySet } from '../../keys';
import {
  SigningApiClient, applySigningEvent, createWebhookVerifier, generateChallengeCode, generateNotificationToken,
  markHashSubmitted, newSigningSessionState, type CertificateEvent, type SignatureEvent, type SigningEvent,
} from '../../sign';
import { finalizeSignature, prepareSignature } from '../../pades';
import { addDocumentTimestamp, timestampSignature } from '../../pades/doc-timestamp';
import { addValidationDataWithSummary } from '../../pades/ltv';
import { verifyPdfSignatures, type PadesLevel } from '../../pades/verify';
// The CLI (not the core) may start the sandbox: `sign` runs the whole session against a local stand-in.
import { startSandbox, type Sandbox } from '../../../sandbox';
import { listen, readBody, type RunningServer } from '../../../sandbox/http';

const LEVELS: PadesLevel[] = ['B-B', 'B-T', 'B-LT', 'B-LTA'];
const USERS = ['p256', 'p384', 'revoked'];

const HELP = `singpass-flows sign --in <file.pdf> --out <signed.pdf> [--level B-B|B-T|B-LT|B-LTA] [--user p256|p384|revoked]
                    [--doc-name <name>] [--reason <text>] [--location <text>] [--root-out <root.pem>] [--sandbox]

Signs YOUR PDF through a complete Singpass document signing session against the local sandbox (signing API,
national test CA with OCSP and TSA, simulated phone), all on 127.0.0.1, and prints each step: create session,
phone scans the QR code, certificate webhook, prepare the PDF, submit the hash, phone approves, signature
webhook, embed (PAdES), signature timestamp, validation data (OCSP), document timestamp, verification.
The result is signed by a TEST certificate: use it to try flows and tools, not as a real signature.

Options:
  --in <file>        the PDF to sign (not modified)
  --out <file>       where to write the signed PDF
  --level <l>        B-B, B-T (+ signature timestamp), B-LT (+ certificates and OCSP in the DSS),
                     B-LTA (+ document timestamp). Default B-LTA.
  --user <u>         sandbox test user: p256 (default), p384, or revoked (B-LT/B-LTA then stop with OCSP_REVOKED
                     and nothing is written — the check a real deployment relies on)
  --doc-name <name>  document name shown in the Singpass app (default: the file name)
  --reason <text>    /Reason in the signature (default "Signed with Singpass")
  --location <text>  /Location in the signature
  --root-out <file>  also write the sandbox's root CA (PEM), to check the result later:
                     singpass-flows verify <signed.pdf> --root <file>
  --sandbox          use the in-process sandbox (the default and, for now, the only mode; signing against the
                     real service needs a public webhook — use the n8n / Node-RED nodes for that)
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

/**
 * The whole signing session behind `singpass-flows sign`, against an in-process sandbox. Exported so tests drive
 * it; throws (SingpassFlowsError where a code applies) and always closes what it started.
 */
export async function signWithSandbox(o: SignCommandOptions): Promise<SignCommandResult> {
  let step = 0;
  const t0 = Date.now();
  const say = (text: string) => o.log(`[${String(++step).padStart(2)}] ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s  ${text}`);
  let sandbox: Sandbox | undefined;
  let dsap: RunningServer | undefined;
  try {
    sandbox = await startSandbox({ webhookRetryDelayMs: 200 });
    say(`sandbox started at ${sandbox.baseUrl}`);

    // This CLI plays the DSAP: client keys, a key set URL and a webhook, all on 127.0.0.1.
    const keys = await generateClientKeys();
    const signingKey = await loadSigningKey({ key: keys.signing });
    const verifier = createWebhookVerifier({ keySetUrl: sandbox.urls.signKeys });
    const tokens = new Map<string, string>();
    const inbox = new Inbox();
    dsap = await listen(async (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => {
      if (url.pathname === '/jwks' && req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify(publicKeySet([signingKey])));
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
    const clientId = 'cli-sign';
    sandbox.sign.registerClient({ clientId, jwksUrl: `${dsap.baseUrl}/jwks`, notificationUrl: `${dsap.baseUrl}/webhook` });
    const client = new SigningApiClient({ baseUrl: sandbox.urls.signApi, clientId, signingKey });

    const clientNotificationToken = generateNotificationToken();
    const session = await client.createSession({ clientNotificationToken, tenantId: 'singpass-flows CLI' });
    tokens.set(session.signRef, clientNotificationToken);
    const challengeCode = generateChallengeCode();
    let state = newSigningSessionState(session, { challengeCode, clientNotificationToken });
    say(`1/8 session ${session.signRef} created (QR payload ${session.qrPayload})`);

    await sandbox.phone.scan(session.signRef, { user: o.user });
    const certEvent = (await inbox.next(session.signRef, 'certificate')) as CertificateEvent;
    state = applySigningEvent(state, certEvent);
    say(`2/8 phone scanned; certificate webhook: ${certEvent.certificate.subject.replace(/\n/g, ', ')}`);

    const { documentHash, state: prepared } = await prepareSignature(o.input, {
      certificate: certEvent.certificate.base64, chain: [sandbox.pki.intermediate.certDer],
      reason: o.reason ?? 'Signed with Singpass', location: o.location,
    });
    say(`3/8 PDF prepared (${o.input.length} bytes); document hash ${documentHash}`);

    await client.submitDocumentHash(session.signRef, { documentName: o.documentName, documentHash, challengeCode, nonce: certEvent.nonce, domainName: 'cli.singpass-flows.local' });
    state = markHashSubmitted(state, documentHash);
    say(`4/8 hash submitted as "${o.documentName}"; challenge code ${challengeCode}`);

    await sandbox.phone.approve(session.signRef);
    const sigEvent = (await inbox.next(session.signRef, 'signature')) as SignatureEvent;
    state = applySigningEvent(state, sigEvent);
    const key = new X509Certificate(certEvent.certificate.der).publicKey;
    if (!cryptoVerify('sha256', Buffer.from(prepared.signedAttributes, 'base64'), { key, dsaEncoding: 'der' }, Buffer.from(sigEvent.signature, 'hex'))) {
      throw new SingpassFlowsError('SIGNATURE_INVALID', 'The signature from the webhook does not verify with the user certificate');
    }
    say(`5/8 phone approved; signature webhook received and checked`);

    const tsaUrl = sandbox.urls.tsa;
    const roots = [sandbox.pki.root.certDer];
    let pdf = await finalizeSignature(o.input, prepared, sigEvent.signature, o.level === 'B-B' ? {} : { timestamp: timestampSignature(tsaUrl) });
    say(`6/8 signature embedded${o.level === 'B-B' ? '' : ' with a signature timestamp (B-T)'}`);
    if (o.level === 'B-LT' || o.level === 'B-LTA') {
      const r = await addValidationDataWithSummary(pdf, { trustedRoots: roots });
      pdf = r.pdf;
      say(`7/8 validation data added (B-LT): ${r.summary.certificates} certificates, ${r.summary.ocspResponses} OCSP responses`);
    }
    if (o.level === 'B-LTA') {
      pdf = await addDocumentTimestamp(pdf, { tsaUrl });
      // The document timestamp's own TSA chain gets its OCSP too, so the next renewal has what it needs.
      pdf = (await addValidationDataWithSummary(pdf, { trustedRoots: roots })).pdf;
      say('7/8 document timestamp added (B-LTA)');
    }
    const report = await verifyPdfSignatures(pdf, { trustedRoots: roots });
    say(`8/8 verified: ${report.valid ? 'valid' : 'NOT valid'}, level ${report.level ?? 'none'}`);
    if (!report.valid || report.level !== o.level) {
      throw new SingpassFlowsError('SIGNATURE_INVALID', `The signed PDF verifies as ${report.level ?? 'nothing'} (valid=${report.valid}); expected ${o.level}`);
    }
    return { pdf, level: report.level, valid: report.valid, rootPem: sandbox.pki.root.certPem, signRef: session.signRef };
  } finally {
    await dsap?.close();
    await sandbox?.close();
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
    if (str('config')) {
      console.error('--config (signing against the real Singpass service) is not supported by the CLI: the service must reach a public webhook. Use the n8n / Node-RED nodes, or --sandbox.');
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
      const result = await signWithSandbox({
        input, level, user, documentName: str('doc-name') ?? basename(str('in')!), reason: str('reason'), location: str('location'),
        log: (l) => console.log(l),
      });
      writeFileSync(resolve(str('out')!), result.pdf);
      if (str('root-out')) writeFileSync(resolve(str('root-out')!), result.rootPem);
      console.log(`OK: ${resolve(str('out')!)} signed at PAdES ${result.level} (${result.pdf.length} bytes, session ${result.signRef})${str('root-out') ? `; sandbox root CA in ${resolve(str('root-out')!)}` : ''}`);
      return 0;
    } catch (e) {
      console.error(`FAILED${isSingpassFlowsError(e) ? ` ${e.code}` : ''}: ${(e as Error)?.message ?? e}. Nothing was written.`);
      return 1;
    }
  },
};
