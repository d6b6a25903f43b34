import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import QRCode from 'qrcode';
import { checkWritableFile, wantsHelp, type CliCommand } from '../command';
import { isSingpassFlowsError } from '../../src/errors';
import { renderQr } from '../../src/sign';
import type { PadesLevel } from '../../src/pades';
import { LEVELS, SANDBOX_USERS, runSigningSession, sandboxEnvironment, shortfallLine, stepLogger, type SessionStep } from '../signing-session';
import type { FinishShortfall } from '../../src/session';
// The CLI (not the core) may use the sandbox: the demo runs against a local stand-in of the services.
import { startSandbox, type Sandbox } from '../../sandbox';
import { signSampleUnattended } from '../demo/auto';
import { DEMO_PORTS, packageRoot, startDemo, type RunningDemo } from '../demo/launcher';
import { formatReport } from './verify';
import { untilSignal } from '../../sandbox/server';

const DEFAULT_SIGNED_DIR = join(tmpdir(), 'singpass-flows-demo', 'signed');
/** The sample the --auto run signs (assets/samples). */
export const AUTO_SAMPLE = 'tenancy-agreement.pdf';

const HELP = `Usage: singpass-flows demo [--auto] [--sandbox-port <n>] [--node-red-port <n>] [--signed-dir <dir>]
       singpass-flows demo --cli [--level B-B|B-T|B-LT|B-LTA] [--user p256|p384|revoked|expired|notyetvalid|untrusted]
                                 [--out <file.pdf>] [--no-qr]

Shows Singpass document signing the way your users will see it, all on 127.0.0.1: the local sandbox (signing API,
test CA with OCSP and TSA, login providers, a phone simulator) and an embedded Node-RED running this package's
nodes with the signing example flow deployed against the sandbox. Prints three URLs:
  - the Node-RED editor (the flow that does the work),
  - the signing page the flow serves (pick a sample PDF or upload one, see the QR and challenge code, follow the
    session, download the signed PDF and read its verification report),
  - the phone page (the simulated Singpass app: scan, compare the challenge code, approve or reject).
Runs until Ctrl-C, which stops everything it started (the Node-RED user folder is temporary).

Options:
  --auto                 sign one sample document unattended (the phone approves by itself), print the signed
                         PDF's path and its verification summary, stop, exit 0 (1 on any failure)
  --sandbox-port <n>     sandbox port (default ${DEMO_PORTS.sandbox}; 0 picks a free one)
  --node-red-port <n>    Node-RED port (default ${DEMO_PORTS.nodeRed}; 0 picks a free one)
  --signed-dir <dir>     where the flow writes signed PDFs, results.jsonl and errors.jsonl
                         (default ${DEFAULT_SIGNED_DIR})
  --cli                  instead: the scripted command-line round trip (no Node-RED), printing every protocol step
  -h, --help             show this help

Options of --cli:
  --level <l>   PAdES level to reach: B-B, B-T (signature timestamp), B-LT (+ OCSP in the DSS),
                B-LTA (+ document timestamp). Default B-LTA.
  --user <u>    sandbox test user the phone signs as: p256 (default), p384, or one the DSAP refuses when the
                certificate arrives, before any hash is sent — that is the point: revoked (OCSP), expired,
                notyetvalid, untrusted (the sandbox delivers the last three unchecked on purpose)
  --out <file>  write the signed PDF there
  --no-qr       do not draw the QR code in the terminal

Examples:
  singpass-flows demo
  singpass-flows demo --auto --signed-dir ./signed
  singpass-flows demo --cli --level B-LT --out signed.pdf`;

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
  /** Finishing failed for good after the user signed: the PDF is at `level`, short of the one asked for. */
  missing?: FinishShortfall;
}

/**
 * The scripted round trip behind `singpass-flows demo`, exported so tests drive it in-process. Throws on any
 * failure (with a SingpassFlowsError code where one applies); always closes what it started.
 */
export async function runSigningDemo(options: DemoOptions): Promise<DemoResult> {
  const { log } = options;
  const say = stepLogger(log);
  let sandbox: Sandbox | undefined;
  try {
    sandbox = await startSandbox({ webhookRetryDelayMs: 200 });
    say(`sandbox up at ${sandbox.baseUrl} (signing API ${sandbox.urls.signApi})`);
    const clientId = 'demo-dsap';
    const env = await sandboxEnvironment(sandbox, { clientId, user: options.user, domainName: 'demo.singpass-flows.local', tenantId: 'Demo Tenant' });
    const narrate = async (s: SessionStep): Promise<void> => {
      switch (s.step) {
        case 'listening':
          return say(`DSAP "${clientId}": ES256 key ${env.signingKeyId}, key set ${s.baseUrl}/jwks, webhook ${s.baseUrl}/webhook (service key set cached: ${s.keySetUrl})`);
        case 'created': {
          const svg = await renderQr(s.qrPayload, { format: 'svg' });
          say(`session ${s.signRef} created, expires ${new Date(s.expiresAt * 1000).toISOString()}; QR payload ${s.qrPayload} (SVG ${svg.length} bytes); challenge code ${s.challengeCode}`);
          if (options.qr) log(await QRCode.toString(s.qrPayload, { type: 'terminal', small: true }));
          return;
        }
        case 'scanned': return say(`phone (user ${options.user}) scanned the QR code; certificate notification ${String(s.delivery)}`);
        case 'certificate': return say(`webhook: certificate of "${s.signer.name ?? 'the signer'}" (${s.publicKeyAlgorithm}), nonce received`);
        case 'prepared':
          return say(`PDF (${s.inputBytes} bytes) prepared with prepareSignature; document hash = SHA-256 of the CMS SignedAttributes = ${s.documentHash}`);
        case 'submitted': return say('hash submitted (user now compares the challenge code in the app)');
        case 'submitDeferred': return say(`hash call failed temporarily (${s.code}, attempt ${s.attempts}): the session stays at the save point; the same hash is sent again at ${new Date(s.retryAt).toISOString()}`);
        case 'finishDeferred': return say(`finishing failed temporarily at ${s.stage} (${s.code}, attempt ${s.attempts}): the signature is kept in the record; finishing runs again at ${new Date(s.retryAt).toISOString()}`);
        case 'approved': return say(`phone approved and signed the hash; signature notification ${String(s.delivery)}`);
        case 'embedded':
          // finalizeSignature verified it (node:crypto, over the SignedAttributes, with the user certificate) before embedding
          say(`webhook: signature (${s.event.signature.length / 2} bytes DER) verifies with node:crypto over the SignedAttributes`);
          return say(`signature embedded (PAdES ETSI.CAdES.detached${s.timestamped ? ' with a signature timestamp from the sandbox TSA' : ''})`);
        case 'validationData': return say('validation data added (certificates + OCSP responses in the DSS)');
        case 'documentTimestamp': return say('document timestamp added (and its validation data)');
        case 'verified': {
          const { report } = s;
          // Problems are real ones only; what B-LT/B-LTA appended after the signature is in the notes.
          const problems = [...new Set(report.signatures.flatMap((x) => x.problems))];
          const notes = [...new Set(report.signatures.flatMap((x) => x.notes.map((n) => n.code)))];
          return say(`verified: valid=${report.valid}, level ${report.level ?? 'none'}, ${report.signatures.length} signature(s)/timestamp(s)${problems.length ? `, problems ${problems.join(', ')}` : ''}${notes.length ? `, notes ${notes.join(', ')}` : ''}`);
        }
        default: return; // 'signature': worded once it is checked and embedded
      }
    };
    const r = await runSigningSession(env, {
      input: samplePdf(), documentName: 'Demo agreement.pdf', level: options.level, reason: 'Singpass flows demo', location: 'Singapore',
      // visible, as a signer expects to see it: bottom-right of the last page
      appearance: {}, onStep: narrate,
    });
    if (options.out) {
      writeFileSync(resolve(options.out), r.pdf);
      say(`signed PDF written to ${resolve(options.out)} (${r.pdf.length} bytes)`);
    }
    return { signRef: r.signRef, level: r.level, valid: r.valid, pdf: r.pdf, ...(r.missing ? { missing: r.missing } : {}) };
  } finally {
    await sandbox?.close();
  }
}

/** The round trip signs a sample the package ships (assets/samples), so the CLI needs no PDF library at run time. */
function samplePdf(): Buffer {
  return readFileSync(join(packageRoot(), 'assets', 'samples', 'consent-form.pdf'));
}

export const demoCommand: CliCommand = {
  name: 'demo',
  summary: 'the signing demo: sandbox + Node-RED with the signing example flow, a signing page and a phone page (--cli: the scripted round trip)',
  help: HELP,
  async run(argv) {
    if (wantsHelp(argv)) {
      console.log(HELP);
      return 0;
    }
    if (argv.includes('--cli')) return runCliDemo(argv.filter((a) => a !== '--cli'));
    let values: { auto?: boolean; 'sandbox-port'?: string; 'node-red-port'?: string; 'signed-dir'?: string };
    try {
      ({ values } = parseArgs({ args: argv, options: { auto: { type: 'boolean' }, 'sandbox-port': { type: 'string' }, 'node-red-port': { type: 'string' }, 'signed-dir': { type: 'string' } }, strict: true, allowPositionals: false }));
    } catch (e) {
      console.error(`${(e as Error).message}\n\n${HELP}`);
      return 2;
    }
    const ports: number[] = [];
    for (const [opt, def] of [['sandbox-port', DEMO_PORTS.sandbox], ['node-red-port', DEMO_PORTS.nodeRed]] as const) {
      const v = values[opt];
      const n = v === undefined ? def : Number(v);
      if (v !== undefined && (!/^\d+$/.test(v) || n > 65535)) {
        console.error(`--${opt} must be a whole number from 0 to 65535`);
        return 2;
      }
      ports.push(n);
    }
    return runNodeRedDemo({ sandboxPort: ports[0], nodeRedPort: ports[1], signedDir: resolve(values['signed-dir'] ?? DEFAULT_SIGNED_DIR), auto: values.auto === true });
  },
};

/** The Node-RED demo; resolves with the exit code once stopped (Ctrl-C, or the end of the --auto run). */
export async function runNodeRedDemo(o: { sandboxPort: number; nodeRedPort: number; signedDir: string; auto: boolean; log?: (l: string) => void; stop?: (demo: RunningDemo) => Promise<unknown> }): Promise<number> {
  const log = o.log ?? ((l: string) => console.log(l));
  let demo: RunningDemo;
  try {
    demo = await startDemo({ sandboxPort: o.sandboxPort, nodeRedPort: o.nodeRedPort, signedDir: o.signedDir, autoPhone: o.auto });
  } catch (e) {
    console.error(`FAILED to start the demo: ${isSingpassFlowsError(e) ? `${e.code}: ` : ''}${(e as Error)?.message ?? e}`);
    return 1;
  }
  try {
    if (o.auto) {
      log(`Sandbox ${demo.urls.sandbox} and Node-RED ${demo.nodeRedVersion} ${demo.urls.editor} running the signing example flow.`);
      const r = await signSampleUnattended(demo, { sample: AUTO_SAMPLE, log });
      log(formatReport(r.report));
      log(`Signed PDF: ${r.file}`);
      log(`Check it again later: npx singpass-flows verify ${r.file} --root ${demo.rootCertPath}`);
      if (!r.report.valid) {
        console.error('FAILED: the signed PDF does not verify');
        return 1;
      }
      log(`OK: ${AUTO_SAMPLE} signed at PAdES ${r.report.level} (session ${r.signRef})`);
      return 0;
    }
    log([
      `Singpass signing demo (TEST ONLY, everything on 127.0.0.1; Node-RED ${demo.nodeRedVersion})`,
      '',
      `  Signing page     ${demo.urls.signingPage}     <- start here: sign in, pick a sample PDF, sign it`,
      `  Sign-in          user ${demo.signIn.user}, password ${demo.signIn.password}     <- this run's only; the page refuses anyone else`,
      `  Phone page       ${demo.urls.phone}     <- the simulated Singpass app: scan, compare the code, approve`,
      `  Node-RED editor  ${demo.urls.editor}     <- the flow behind the signing page`,
      `  Sandbox          ${demo.urls.sandbox}`,
      '',
      `Signed PDFs go to ${demo.signedDir} (this run's test root CA: ${demo.rootCertPath})`,
      'Press Ctrl-C to stop.',
    ].join('\n'));
    await (o.stop ? o.stop(demo) : untilSignal());
    return 0;
  } catch (e) {
    console.error(`FAILED: ${isSingpassFlowsError(e) ? `${e.code}: ` : ''}${(e as Error)?.message ?? e}`);
    return 1;
  } finally {
    await demo.stop();
    log('Demo stopped.');
  }
}

async function runCliDemo(argv: string[]): Promise<number> {
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
  if (!SANDBOX_USERS.includes(user)) {
    console.error(`--user must be one of ${SANDBOX_USERS.join(', ')}`);
    return 2;
  }
  const started = Date.now();
  try {
    if (values.out) checkWritableFile(values.out, '--out');
    const result = await runSigningDemo({ level, user, out: values.out, qr: !values['no-qr'], log: (l) => console.log(l) });
    console.log(`OK: session ${result.signRef} signed at PAdES ${result.level} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (result.missing) console.error(shortfallLine(result.missing, result.level));
    return 0;
  } catch (e) {
    const code = isSingpassFlowsError(e) ? `${e.code}: ` : '';
    console.error(`FAILED: ${code}${(e as Error)?.message ?? e}`);
    return 1;
  }
}
