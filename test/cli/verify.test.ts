import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../cli';
import { startPkiServer, type RunningPkiServer } from '../../sandbox/pki';
import { samplePdf, signToLevel } from '../pades/ltv-helpers';

let dir: string;
let server: RunningPkiServer;
let out: string[];
let err: string[];
let bt: Buffer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cli-verify-'));
  server = await startPkiServer();
  const { pki } = server;
  writeFileSync(join(dir, 'root.pem'), pki.root.certPem);
  bt = (await signToLevel(await samplePdf(), { certDer: pki.users.p256.certDer, privateKey: pki.users.p256.privateKey, chain: [pki.intermediate.certDer] }, 'B-T', { tsaUrl: `${server.baseUrl}/ca/tsa`, trustedRoots: [] })).bt!;
  writeFileSync(join(dir, 'bt.pdf'), bt);
});
afterAll(async () => { await server?.close(); rmSync(dir, { recursive: true, force: true }); });
beforeEach(() => {
  out = []; err = [];
  jest.spyOn(console, 'log').mockImplementation((...a: unknown[]) => { out.push(a.join(' ')); });
  jest.spyOn(console, 'error').mockImplementation((...a: unknown[]) => { err.push(a.join(' ')); });
});
afterEach(() => jest.restoreAllMocks());

it('verify --help', async () => {
  expect(await main(['verify', '--help'])).toBe(0);
  expect(out.join('\n')).toContain('Usage: singpass-flows verify <file.pdf>');
});

it('prints a readable report: level, signer, timestamp, trust', async () => {
  expect(await main(['verify', join(dir, 'bt.pdf'), '--root', join(dir, 'root.pem')])).toBe(0);
  const text = out.join('\n');
  expect(text).toContain('level B-T');
  expect(text).toContain(`Signer: ${''}`);
  expect(text).toMatch(/Timestamp: \d{4}-\d\d-\d\dT/);
  expect(text).toContain('Integrity: OK, covers the whole file');
  expect(text).toContain('— trusted');
  expect(text).toContain('Result: VALID (B-T)');
});

it('without --root: chain not trusted, still exit 0 (nothing to judge trust against) and a warning', async () => {
  expect(await main(['verify', join(dir, 'bt.pdf')])).toBe(0);
  expect(out.join('\n')).toContain('NOT trusted');
  expect(err.join('\n')).toContain('No --root given');
});

it('a tampered file -> BROKEN, exit 1', async () => {
  const bad = Buffer.from(bt);
  bad[bad.indexOf('/CreationDate (D:') + 18] ^= 1;
  writeFileSync(join(dir, 'bad.pdf'), bad);
  expect(await main(['verify', join(dir, 'bad.pdf'), '--root', join(dir, 'root.pem')])).toBe(1);
  expect(out.join('\n')).toContain('Integrity: BROKEN');
  expect(out.join('\n')).toContain('DIGEST_MISMATCH');
  expect(out.join('\n')).toContain('Result: NOT VALID');
});

it('usage errors exit 2', async () => {
  expect(await main(['verify'])).toBe(2);
  expect(await main(['verify', 'a.pdf', 'b.pdf'])).toBe(2);
  expect(await main(['verify', 'a.pdf', '--bogus'])).toBe(2);
});

it('a missing PDF or root file is a coded INVALID_INPUT naming the file, exit 1', async () => {
  expect(await main(['verify', join(dir, 'nope.pdf')])).toBe(1);
  expect(err.join('\n')).toMatch(/Error INVALID_INPUT: FILE: cannot read ".*nope\.pdf": no such file/);
  err = [];
  expect(await main(['verify', join(dir, 'bt.pdf'), '--root', join(dir, 'missing-root.pem')])).toBe(1);
  expect(err.join('\n')).toMatch(/Error INVALID_INPUT: --root: cannot read ".*missing-root\.pem": no such file/);
});
