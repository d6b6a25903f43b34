import { parseArgs } from 'node:util';
import { invalidInput } from '../../src/errors';
import type { CliCommand } from '../command';
import { wantsHelp } from '../command';
import type { Sandbox, SandboxOptions } from '../../sandbox';

const HELP = `Usage: singpass-flows sandbox [options]

Runs the local sandbox on 127.0.0.1 until Ctrl-C: the document signing API, a phone simulator (web page to scan,
approve or reject), the test CA with its OCSP responder and timestamp authority, and the Corppass/Singpass login
providers when installed. Prints every URL and the root certificate to trust. TEST ONLY — never use its
certificates or keys for anything real.

Options:
  --port <n>                 Port on 127.0.0.1 (default 5156; 0 picks a free port)
  --dir <path>               Keep the CA, service keys and registered DSAPs here across restarts (default .sandbox)
  --no-persist               Keep nothing on disk
  --auto-phone               The phone scans every new session and approves every hash by itself
  --auto-phone-user <name>   Test user for --auto-phone: p256 (default), p384, revoked
  --client-id <id>           Register a DSAP at start (with --jwks-url and --webhook-url)
  --jwks-url <url>           The DSAP's public key set URL (verifies its X-Dss-Assertion)
  --webhook-url <url>        The DSAP's webhook (receives the signed notifications)
  --audience <aud>           The one assertion "aud" this DSAP's calls must carry, as when the service gives a DSAP
                             its own value (default: the API base URL or its origin, both accepted)
  --session-ttl <seconds>    Signing session lifetime (default 120)
  --webhook-retry-delay-ms <n>  Delay between webhook attempts (default 2000)
  --login-client-id <id>     Register a login client (relying party) with Corppass, Corppass FAPI 2.0 and Singpass
                             at start (with --login-jwks-url and one or more --login-redirect-uri)
  --login-jwks-url <url>     The login client's public key set URL (client assertions, ID-token encryption key)
  --login-redirect-uri <url> A redirect URI of the login client (repeat for several)
  --corppass-iss             Corppass (legacy and FAPI 2.0) login redirects carry "iss" and discovery advertises it
                             (default off, like the real Corppass today)
  -h, --help                 Show this help

Example:
  singpass-flows sandbox --auto-phone --client-id my-dsap \\
    --jwks-url http://127.0.0.1:5678/webhook/jwks --webhook-url http://127.0.0.1:5678/webhook/singpass-sign`;

/** Parse the command line into sandbox options (exported for tests). */
export function parseSandboxArgs(argv: string[]): SandboxOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: 'string' },
      dir: { type: 'string' },
      'no-persist': { type: 'boolean' },
      'auto-phone': { type: 'boolean' },
      'auto-phone-user': { type: 'string' },
      'client-id': { type: 'string' },
      'jwks-url': { type: 'string' },
      'webhook-url': { type: 'string' },
      audience: { type: 'string' },
      'session-ttl': { type: 'string' },
      'webhook-retry-delay-ms': { type: 'string' },
      'login-client-id': { type: 'string' },
      'login-jwks-url': { type: 'string' },
      'login-redirect-uri': { type: 'string', multiple: true },
      'corppass-iss': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const int = (name: string, v: string | undefined, min: number, max: number): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < min || n > max) throw invalidInput(name, `--${name} must be a whole number from ${min} to ${max}`);
    return n;
  };
  const url = (name: string, v: string | undefined): string | undefined => {
    if (v === undefined) return undefined;
    try {
      const u = new URL(v);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
      return v;
    } catch {
      throw invalidInput(name, `--${name} must be an http(s) URL`);
    }
  };
  const opts: SandboxOptions = {
    port: int('port', values.port, 0, 65535) ?? 5156,
    dir: values['no-persist'] ? undefined : (values.dir ?? '.sandbox'),
    sessionTtlSeconds: int('session-ttl', values['session-ttl'], 10, 3600),
    webhookRetryDelayMs: int('webhook-retry-delay-ms', values['webhook-retry-delay-ms'], 0, 60000),
  };
  if (values['corppass-iss']) opts.corppassIssParameter = true;
  if (values['auto-phone'] || values['auto-phone-user']) opts.autoPhone = { user: values['auto-phone-user'] };
  const clientId = values['client-id'];
  const jwksUrl = url('jwks-url', values['jwks-url']);
  const webhookUrl = url('webhook-url', values['webhook-url']);
  if (clientId || jwksUrl || webhookUrl) {
    if (!clientId || !webhookUrl) throw invalidInput('client-id', 'registering a DSAP needs --client-id and --webhook-url (and --jwks-url for assertions)');
    opts.signClients = [{ clientId, jwksUrl, notificationUrl: webhookUrl, ...(values.audience ? { audience: values.audience } : {}) }];
  }
  const loginClientId = values['login-client-id'];
  const loginJwksUrl = url('login-jwks-url', values['login-jwks-url']);
  const redirectUris = (values['login-redirect-uri'] ?? []).map((v) => url('login-redirect-uri', v)!);
  if (loginClientId || loginJwksUrl || redirectUris.length) {
    if (!loginClientId || !loginJwksUrl || !redirectUris.length) {
      throw invalidInput('login-client-id', 'registering a login client needs --login-client-id, --login-jwks-url and at least one --login-redirect-uri');
    }
    opts.loginClients = [{ clientId: loginClientId, jwksUrl: loginJwksUrl, redirectUris }];
  }
  return opts;
}

/** Run the sandbox; `stop` replaces waiting for Ctrl-C (tests). */
export async function runSandboxCommand(argv: string[], io: { log?: (line: string) => void; stop?: (sb: Sandbox) => Promise<unknown> } = {}): Promise<number> {
  const opts = parseSandboxArgs(argv);
  // Loaded lazily (require, not import(): this package is CommonJS) so other commands do not load the PKI code.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { serveSandbox } = require('../../sandbox/server') as typeof import('../../sandbox/server');
  try {
    await serveSandbox(opts, io);
  } catch (e) {
    if ((e as NodeJS.ErrnoException)?.code === 'EADDRINUSE') {
      throw invalidInput('port', `port ${opts.port} is already in use on 127.0.0.1: stop the other process or pick another with --port`);
    }
    throw e;
  }
  return 0;
}

export const sandboxCommand: CliCommand = {
  name: 'sandbox',
  summary: 'Run the local sandbox (signing API, phone simulator, test CA with OCSP/TSA, login providers)',
  help: HELP,
  async run(argv) {
    if (wantsHelp(argv)) {
      console.log(HELP);
      return 0;
    }
    return runSandboxCommand(argv);
  },
};
