import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keysCommand, FILES } from '../../cli/commands/keys';
import { loadEncryptionKey, loadSigningKey } from '../../src/keys';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  const log = jest.spyOn(console, 'log').mockImplementation((...a) => void out.push(a.join(' ')));
  const error = jest.spyOn(console, 'error').mockImplementation((...a) => void err.push(a.join(' ')));
  return { out, err, restore: () => { log.mockRestore(); error.mockRestore(); } };
}

describe('singpass-flows keys', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'sf-keys-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('--help prints usage and exits 0', async () => {
    const c = capture();
    try {
      expect(await keysCommand.run(['--help'])).toBe(0);
      expect(c.out.join('\n')).toContain('singpass-flows keys [--out <dir>]');
    } finally { c.restore(); }
  });

  it('--out writes loadable private JWKs (mode 600) and a public-only key set, and warns', async () => {
    const c = capture();
    try {
      expect(await keysCommand.run(['--out', dir])).toBe(0);
    } finally { c.restore(); }
    const sig = JSON.parse(readFileSync(join(dir, FILES.signing), 'utf8'));
    const enc = JSON.parse(readFileSync(join(dir, FILES.encryption), 'utf8'));
    const jwks = JSON.parse(readFileSync(join(dir, FILES.jwks), 'utf8'));
    expect(statSync(join(dir, FILES.signing)).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, FILES.encryption)).mode & 0o777).toBe(0o600);
    const s = await loadSigningKey({ key: sig });
    const e = await loadEncryptionKey({ key: enc });
    expect(s).toMatchObject({ alg: 'ES256', crv: 'P-256', use: 'sig' });
    expect(e).toMatchObject({ alg: 'ECDH-ES+A256KW', crv: 'P-256', use: 'enc' });
    expect(jwks.keys).toEqual([s.publicJwk, e.publicJwk]);
    expect(JSON.stringify(jwks)).not.toMatch(/"d"/);
    expect(c.err.join('\n')).toMatch(/secret/i);
  });

  it('refuses to overwrite existing keys without --force', async () => {
    writeFileSync(join(dir, FILES.signing), 'old');
    const c = capture();
    try {
      expect(await keysCommand.run(['--out', dir])).toBe(1);
      expect(readFileSync(join(dir, FILES.signing), 'utf8')).toBe('old');
      expect(await keysCommand.run(['--out', dir, '--force'])).toBe(0);
      expect(readFileSync(join(dir, FILES.signing), 'utf8')).toContain('"d"');
    } finally { c.restore(); }
  });

  it('--json without --out prints both private keys and the public set as JSON', async () => {
    const c = capture();
    try {
      expect(await keysCommand.run(['--json'])).toBe(0);
    } finally { c.restore(); }
    const doc = JSON.parse(c.out.join('\n'));
    expect(doc.signingKey.d).toEqual(expect.any(String));
    expect(doc.publicKeySet.keys.map((k: { use: string }) => k.use)).toEqual(['sig', 'enc']);
  });

  it('rejects unknown options with exit code 2', async () => {
    const c = capture();
    try {
      expect(await keysCommand.run(['--bogus'])).toBe(2);
    } finally { c.restore(); }
  });
});
