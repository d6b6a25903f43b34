import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { wantsHelp, type CliCommand } from '../command';
import { generateClientKeys } from '../../src/keys';

export const FILES = { signing: 'signing.private.jwk.json', encryption: 'encryption.private.jwk.json', jwks: 'jwks.json' } as const;

const HELP = `Usage: singpass-flows keys [--out <dir>] [--json] [--force]

Generate this client's keys for Singpass / Corppass onboarding: a signing key (ES256, P-256) for client assertions
and an encryption key (ECDH-ES+A256KW, P-256) that ID tokens and userinfo are encrypted to, as private JWKs, plus
the public key set (JWKS) to register with the provider or serve at your JWKS URL.

Options:
  --out <dir>  write ${FILES.signing}, ${FILES.encryption} and ${FILES.jwks} into <dir>
               (private files are created readable by you only); without --out everything is printed
  --json       print machine-readable JSON (with --out: the file paths and the public key set only)
  --force      overwrite existing files in <dir>
  -h, --help   show this help

The two *.private.jwk.json files are SECRETS: put them in your n8n / Node-RED credentials, never in a repository,
a workflow export or a ticket. Only ${FILES.jwks} is public.

Example:
  singpass-flows keys --out ./singpass-keys`;

export const keysCommand: CliCommand = {
  name: 'keys',
  summary: 'generate client signing + encryption keys (private JWKs) and the public JWKS to register',
  help: HELP,
  async run(argv) {
    if (wantsHelp(argv)) {
      console.log(HELP);
      return 0;
    }
    let values: { out?: string; json?: boolean; force?: boolean };
    try {
      ({ values } = parseArgs({ args: argv, options: { out: { type: 'string' }, json: { type: 'boolean' }, force: { type: 'boolean' } }, strict: true, allowPositionals: false }));
    } catch (e) {
      console.error(`${(e as Error).message}\n\n${HELP}`);
      return 2;
    }
    const keys = await generateClientKeys();
    const warning = 'Keep the private keys secret: store them only in your workflow credentials. Register only the public key set (jwks.json).';
    if (!values.out) {
      const doc = { signingKey: keys.signing, encryptionKey: keys.encryption, publicKeySet: keys.publicKeySet };
      console.log(JSON.stringify(doc, null, 2));
      console.error(warning);
      return 0;
    }
    const dir = resolve(values.out);
    const paths = { signing: join(dir, FILES.signing), encryption: join(dir, FILES.encryption), jwks: join(dir, FILES.jwks) };
    const existing = Object.values(paths).filter((p) => existsSync(p));
    if (existing.length && !values.force) {
      console.error(`Refusing to overwrite ${existing.join(', ')} (keys registered with a provider would stop working). Use --force to replace them.`);
      return 1;
    }
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(paths.signing, JSON.stringify(keys.signing, null, 2) + '\n', { mode: 0o600 });
    writeFileSync(paths.encryption, JSON.stringify(keys.encryption, null, 2) + '\n', { mode: 0o600 });
    writeFileSync(paths.jwks, JSON.stringify(keys.publicKeySet, null, 2) + '\n', { mode: 0o644 });
    // `mode` only applies to new files; an overwritten file (--force) keeps its old mode unless we set it.
    chmodSync(paths.signing, 0o600);
    chmodSync(paths.encryption, 0o600);
    if (values.json) {
      console.log(JSON.stringify({ files: paths, publicKeySet: keys.publicKeySet }, null, 2));
    } else {
      console.log(`Wrote\n  ${paths.signing}   (PRIVATE)\n  ${paths.encryption}   (PRIVATE)\n  ${paths.jwks}   (public: register this / serve it at your JWKS URL)`);
    }
    console.error(warning);
    return 0;
  },
};
