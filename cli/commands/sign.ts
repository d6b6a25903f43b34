import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import QRCode from 'qrcode';
import { parseArgs } from 'node:util';
import { checkWritableFile, readUserFile, wantsHelp, type CliCommand } from '../command';
import { invalidInput, isSingpassFlowsError } from '../../src/errors';
import { requireHttpsUrl } from '../../src/http';
import { loadSigningKey, publicKeySet } from '../../src/keys';
import { SigningApiClient, checkAppLink } from '../../src/sign';
import type { PadesLevel } from '../../src/pades';
import type { FinishShortfall, SessionAppearance } from '../../src/session';
import { appearanceFromSettings } from '../../src/setup';
import { LEVELS, SANDBOX_USERS, runSigningSession, sandboxEnvironment, shortfallLine, stepLogger, type SessionOptions } from '../signing-session';
// The CLI (not the core) may start the sandbox: `sign` runs the whole session against a local stand-in.
import { startSandbox, type Sandbox } from '../../sandbox';
import { listen } from '../../sandbox/http';

const HELP = `Usage: singpass-flows sign --in <file.pdf> --out <signed.pdf> [--level B-B|B-T|B-LT|B-LTA]
                           [--sandbox [--user p256|p384|revoked] [--root-out <root.pem>] | --config <file.json>]
                           [--doc-name <name>] [--reason <text>] [--location <text>] [--app-link <url>]
                           [--page first|last|<n>] [--corner <corner> [--size <w,h>] | --rect <x1,y1,x2,y2>
                            | --field <name> | --next-empty-field | --invisible] [--image <file.png|jpg>]

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
  --user <u>         sandbox test user: p256 (default), p384, or one the DSAP must refuse when the certificate
                     arrives, before any hash is sent (nothing is written): revoked (OCSP_REVOKED), expired
                     (CERTIFICATE_EXPIRED), notyetvalid (CERTIFICATE_NOT_YET_VALID), untrusted
                     (CERTIFICATE_UNTRUSTED; the sandbox delivers these three unchecked on purpose)
  --doc-name <name>  document name shown in the Singpass app (default: the file name)
  --reason <text>    /Reason in the signature (default "Signed with Singpass")
  --location <text>  /Location in the signature
  --app-link <url>   your own app's registered app-claimed https link (at most 255 characters): the Singpass
                     app sends the user back there after approving (sent with the hash as app_launch_url)

Signature box (visible by default: the signer's name, "Signed with Singpass", the time in Singapore time and the
reason, in the bottom-right corner of the last page):
  --page <p>         first, last (default) or a page number
  --corner <c>       bottom-right (default), bottom-left, top-right or top-left of the page as shown
  --size <w,h>       the box's size in points (default 210,72)
  --rect <x1,y1,x2,y2>  the box in PDF points (origin at the page's bottom-left), instead of a corner
  --field <name>     fill the form's empty signature field of that name
  --next-empty-field fill the form's next empty signature field (a corner when there is none)
  --image <file>     a PNG or JPEG drawn on the box's left (a logo or a handwritten mark; at most 512 KB)
  --invisible        no box: the signature shows only in a signature panel (Adobe Reader)

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
  appLink?: string;
  /** The visible signature box; omitted: invisible. */
  appearance?: SessionAppearance;
  log: (line: string) => void;
}

export interface SignCommandResult {
  pdf: Buffer;
  level: PadesLevel | null;
  valid: boolean;
  rootPem: string;
  signRef: string;
  /** Finishing failed for good after the user signed: the PDF is at `level`, short of the one asked for. */
  missing?: FinishShortfall;
}

const BOX_FLAGS = ['rect', 'field', 'next-empty-field', 'invisible'] as const;

/** The box flags → the session's appearance (visible in the bottom-right corner of the last page by default). */
function appearanceFromFlags(str: (k: string) => string | undefined, values: Record<string, string | boolean | undefined>): SessionAppearance | undefined {
  const chosen = BOX_FLAGS.filter((f) => values[f] !== undefined && values[f] !== false);
  if (chosen.length > 1) throw new Error(`Give one of ${BOX_FLAGS.map((f) => `--${f}`).join(', ')}, not ${chosen.map((f) => `--${f}`).join(' and ')}.`);
  const placement = { rect: 'rect', field: 'field', 'next-empty-field': 'nextEmptyField', invisible: 'invisible' }[chosen[0] ?? ''] ?? 'corner';
  const image = str('image');
  return appearanceFromSettings({
    placement, page: str('page'), corner: str('corner'), size: str('size'), rect: str('rect'), field: str('field'),
    image: image !== undefined ? readUserFile(image, '--image') : undefined,
  }, { where: 'singpass-flows sign', fields: { 'appearance.page': '--page', 'appearance.corner': '--corner', 'appearance.size': '--size', 'appearance.rect': '--rect', 'appearance.field': '--field', 'appearance.image': '--image', appearance: '--corner' } });
}

/** How `sign` words the session steps (the demo words them its own way). */
function signNarrator(o: SignCommandOptions, mode: 'sandbox' | 'config'): SessionOptions['onStep'] {
  const say = stepLogger(o.log);
  return async (s) => {
    switch (s.step) {
      case 'listening':
        if (mode === 'config') o.log(`webhook listening at ${s.baseUrl}/webhook, key set at ${s.baseUrl}/jwks`);
        return;
      case 'created':
        say(`1/8 session ${s.signRef} created (QR payload ${s.qrPayload})`);
        if (mode === 'config') {
          o.log(await QRCode.toString(s.qrPayload, { type: 'terminal', small: true }));
          say('scan this QR code with the Singpass app (waiting for the certificate webhook)');
        }
        return;
      case 'certificate': return say(`2/8 QR scanned; certificate webhook: ${s.signer.name ?? 'the signer'}`);
      case 'prepared': return say(`3/8 PDF prepared (${s.inputBytes} bytes); document hash ${s.documentHash}`);
      case 'submitted':
        return say(`4/8 hash submitted as "${s.documentName}"; challenge code ${s.challengeCode}${mode === 'sandbox' ? '' : ' (check it matches the one in the app, then approve)'}`);
      case 'submitDeferred': return say(`4/8 the signing service cannot take the hash just now (${s.code}); the same hash is sent again at ${new Date(s.retryAt).toISOString()}`);
      case 'signature': return say('5/8 approved; signature webhook received');
      case 'finishDeferred': return say(`finishing paused: ${s.code} (${s.message}); the signature is kept and finishing runs again at ${new Date(s.retryAt).toISOString()}`);
      case 'embedded': return say(`6/8 signature checked and embedded${s.timestamped ? ' with a signature timestamp (B-T)' : ''}`);
      case 'validationData': {
        // Ours is always complete (else the step fails); earlier signatures by others may not be, which is not an error.
        const others = s.summary.perSignature.filter((x) => !x.complete).map((x) => `"${x.fieldName}" (${[...new Set(x.missing.map((m) => m.code))].join(', ')})`);
        return say(`7/8 validation data added (B-LT): ${s.summary.certificates} certificates, ${s.summary.ocspResponses} OCSP responses${others.length ? `; incomplete for earlier signature(s) ${others.join(', ')}` : ''}`);
      }
      case 'documentTimestamp': return say('7/8 document timestamp added (B-LTA)');
      case 'verified': {
        // Our signature (the newest) is what this session answers for; say so when the file as a whole does not verify.
        const ours = s.report.newest;
        return say(`8/8 verified: ${ours?.valid ? 'valid' : 'NOT valid'}, level ${ours?.level ?? 'none'}${ours && !s.report.valid ? ' (our signature; an earlier signature in the file does not verify here)' : ''}`);
      }
      default: return; // 'scanned', 'approved': the simulated phone's deliveries are not worth a line here
    }
  };
}

function sessionOptions(o: SignCommandOptions, mode: 'sandbox' | 'config'): SessionOptions {
  return {
    input: o.input, documentName: o.documentName, level: o.level, reason: o.reason ?? 'Signed with Singpass', location: o.location,
    ...(o.appLink ? { appLink: o.appLink } : {}),
    ...(o.appearance ? { appearance: o.appearance } : {}),
    onStep: signNarrator(o, mode),
  };
}

/**
 * The whole signing session behind `singpass-flows sign`, against an in-process sandbox. Exported so tests drive
 * it; throws (SingpassFlowsError where a code applies) and always closes what it started.
 */
export async function signWithSandbox(o: SignCommandOptions): Promise<SignCommandResult> {
  let sandbox: Sandbox | undefined;
  try {
    sandbox = await startSandbox({ webhookRetryDelayMs: 200 });
    o.log(`sandbox started at ${sandbox.baseUrl}`);
    const env = await sandboxEnvironment(sandbox, { clientId: 'cli-sign', user: o.user, domainName: 'cli.singpass-flows.local', tenantId: 'singpass-flows CLI' });
    const r = await runSigningSession(env, sessionOptions(o, 'sandbox'));
    return { ...r, rootPem: sandbox.pki.root.certPem };
  } finally {
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
  if (!c || typeof c !== 'object' || Array.isArray(c)) throw invalidInput('config', 'must be a JSON object');
  for (const f of ['signApiBaseUrl', 'clientId', 'serviceKeySetUrl', 'domainName'] as const) {
    if (typeof c[f] !== 'string' || !c[f]) throw invalidInput(`config.${f}`, 'is required');
  }
  // URLs checked here so the message names the setting (not a bare "<invalid URL>" later).
  for (const f of ['signApiBaseUrl', 'serviceKeySetUrl', 'tsaUrl', 'audience'] as const) {
    if (c[f] !== undefined) requireHttpsUrl(`config.${f}`, c[f], { allowLoopbackHttp: true });
  }
  for (const f of ['tenantId', 'tsaUrl', 'audience'] as const) {
    if (c[f] !== undefined && typeof c[f] !== 'string') throw invalidInput(`config.${f}`, 'must be text');
  }
  if (!c.signingKey || typeof c.signingKey !== 'object') throw invalidInput('config.signingKey', 'is required (the private signing JWK)');
  if (!Number.isInteger(c.listenPort) || c.listenPort! < 0 || c.listenPort! > 65535) throw invalidInput('config.listenPort', 'must be a port number');
  if (!Array.isArray(c.trustedRoots) || c.trustedRoots.length === 0 || !c.trustedRoots.every((f) => typeof f === 'string' && f)) {
    throw invalidInput('config.trustedRoots', 'needs a list of at least one root certificate file name');
  }
  return c as SignConfig;
}

/** `sign --config`: the same session against the service the config names; the user scans with their app. */
export async function signWithConfig(config: SignConfig, o: SignCommandOptions & { baseDir: string }): Promise<SignCommandResult> {
  let signingKey;
  try {
    signingKey = await loadSigningKey({ key: config.signingKey });
  } catch (e) {
    throw isSingpassFlowsError(e) ? invalidInput('config.signingKey', e.message) : e;
  }
  const trustedRoots = config.trustedRoots.map((f) => readUserFile(resolve(o.baseDir, f), 'config.trustedRoots'));
  const r = await runSigningSession({
    client: new SigningApiClient({ baseUrl: config.signApiBaseUrl, clientId: config.clientId, signingKey, audience: config.audience }),
    serviceKeySetUrl: config.serviceKeySetUrl,
    tsaUrl: config.tsaUrl,
    trustedRoots,
    domainName: config.domainName,
    tenantId: config.tenantId ?? 'singpass-flows CLI',
    publicKeys: publicKeySet([signingKey]),
    serveDsap: (handler) => listen(handler, config.listenPort),
  }, sessionOptions(o, 'config'));
  return { ...r, rootPem: '' };
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
          'app-link': { type: 'string' },
          page: { type: 'string' }, corner: { type: 'string' }, size: { type: 'string' }, rect: { type: 'string' }, field: { type: 'string' },
          'next-empty-field': { type: 'boolean' }, image: { type: 'string' }, invisible: { type: 'boolean' },
        },
      }));
    } catch (e) {
      console.error(`${(e as Error).message}\n\n${HELP}`);
      return 2;
    }
    const str = (k: string) => (typeof values[k] === 'string' ? values[k] : undefined);
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
    if (!SANDBOX_USERS.includes(user)) {
      console.error(`--user must be one of ${SANDBOX_USERS.join(', ')}`);
      return 2;
    }
    try {
      checkAppLink(str('app-link'));
    } catch (e) {
      console.error(`--app-link ${(e as Error).message.replace(/^appLink: /, '')}`);
      return 2;
    }
    let input: Buffer;
    try {
      input = readFileSync(str('in')!);
    } catch (e) {
      console.error(`Cannot read ${str('in')}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      return 2;
    }
    let appearance: SessionAppearance | undefined;
    try {
      appearance = appearanceFromFlags(str, values);
    } catch (e) {
      console.error(`${(e as Error).message}\n\n${HELP}`);
      return 2;
    }
    try {
      // Before any session exists: the user must never approve a signature that cannot be written.
      checkWritableFile(str('out')!, '--out');
      if (str('root-out')) checkWritableFile(str('root-out')!, '--root-out');
      const common = {
        input, level, user, documentName: str('doc-name') ?? basename(str('in')!), reason: str('reason'), location: str('location'),
        ...(str('app-link') ? { appLink: str('app-link') } : {}),
        ...(appearance ? { appearance } : {}),
        log: (l: string) => console.log(l),
      };
      const configFile = str('config');
      const result = configFile
        ? await signWithConfig(parseSignConfig(readUserFile(configFile, '--config').toString('utf8')), { ...common, baseDir: dirname(resolve(configFile)) })
        : await signWithSandbox(common);
      writeFileSync(resolve(str('out')!), result.pdf);
      if (str('root-out') && result.rootPem) writeFileSync(resolve(str('root-out')!), result.rootPem);
      console.log(`OK: ${resolve(str('out')!)} signed at PAdES ${result.level} (${result.pdf.length} bytes, session ${result.signRef})${str('root-out') ? `; sandbox root CA in ${resolve(str('root-out')!)}` : ''}`);
      // the user signed and the PDF is valid at its level: written, but a script asking for more must hear it
      if (result.missing) console.error(shortfallLine(result.missing, result.level));
      return 0;
    } catch (e) {
      console.error(`FAILED${isSingpassFlowsError(e) ? ` ${e.code}` : ''}: ${(e as Error)?.message ?? e}. Nothing was written.`);
      return 1;
    }
  },
};
