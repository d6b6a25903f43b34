import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../cli';
import { startPkiServer, type RunningPkiServer } from '../../sandbox/pki';
import { addValidationData } from '../../src/pades/ltv';
import { changePageContent, samplePdf, signToLevel } from '../pades/ltv-helpers';

let dir: string;
let server: RunningPkiServer;
let out: string[];
let err: string[];
let bt: Buffer;
let blta: Buffer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cli-verify-'));
  server = await startPkiServer();
  const { pki } = server;
  writeFileSync(join(dir, 'root.pem'), pki.root.certPem);
  const signer = { certDer: pki.users.p256.certDer, privateKey: pki.users.p256.privateKey, chain: [pki.intermediate.certDer] };
  bt = (await signToLevel(await samplePdf(), signer, 'B-T', { tsaUrl: `${server.baseUrl}/ca/tsa`, trustedRoots: [] })).bt!;
  writeFileSync(join(dir, 'bt.pdf'), bt);
  const stages = await signToLevel(await samplePdf(), signer, 'B-LTA', { tsaUrl: `${server.baseUrl}/ca/tsa`, trustedRoots: [pki.root.certDer] });
  blta = await addValidationData(stages.blta!, { trustedRoots: [pki.root.certDer] });
  writeFileSync(join(dir, 'blta.pdf'), blta);
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

it('a valid B-LTA: what was appended after each signature is a note in plain words, never a problem', async () => {
  expect(await main(['verify', join(dir, 'blta.pdf'), '--root', join(dir, 'root.pem')])).toBe(0);
  const text = out.join('\n');
  expect(text).not.toContain('Problems');
  expect(text).not.toContain('NOT_COVERING_WHOLE_FILE');
  expect(text).toMatch(/Integrity: OK, \d+ bytes added after it, none changing the document/);
  expect(text).toContain('   Notes: VALIDATION_DATA_ADDED, DOCUMENT_TIMESTAMP_ADDED\n     - Validation data (certificates and revocation answers) was added after this signature. This is what B-LT means; it does not change what was signed.');
  expect(text).toContain('- A document timestamp was added after this signature ("DocTimeStamp1"). This is what B-LTA means');
  expect(text).toContain('Result: VALID (B-LTA)');
});

it('a B-T: revocation data not embedded is a note, not a problem', async () => {
  expect(await main(['verify', join(dir, 'bt.pdf'), '--root', join(dir, 'root.pem')])).toBe(0);
  expect(out.join('\n')).toContain('Notes: REVOCATION_DATA_MISSING');
  expect(out.join('\n')).not.toContain('Problems');
});

it('page content changed after signing: a problem, said plainly, exit 1', async () => {
  writeFileSync(join(dir, 'changed.pdf'), changePageContent(blta));
  expect(await main(['verify', join(dir, 'changed.pdf'), '--root', join(dir, 'root.pem')])).toBe(1);
  const text = out.join('\n');
  expect(text).toMatch(/Integrity: OK, but the document was CHANGED after it \(\d+ bytes added\)/);
  expect(text).toContain('   Problems: NOT_COVERING_WHOLE_FILE\n     - The document was changed after this signature was made: the content of a page was changed. What the PDF shows now may not be what was signed.');
  expect(text).toContain('Result: NOT VALID');
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
  expect(out.join('\n')).toContain('- The signed part of the document was altered after signing: it no longer matches the signature.');
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
