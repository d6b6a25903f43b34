import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoCommand } from '../../cli/commands/demo';
import { commands } from '../../cli/commands';
import { verifyPdfSignatures } from '../../src/pades/verify';

/** Run the command in-process, capturing what it prints. */
async function runDemo(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const log = jest.spyOn(console, 'log').mockImplementation((...a) => void out.push(a.join(' ')));
  const error = jest.spyOn(console, 'error').mockImplementation((...a) => void err.push(a.join(' ')));
  try {
    const code = await demoCommand.run(argv);
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'demo-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('singpass-flows demo --cli (the scripted round trip)', () => {
  it('is registered and has --help', async () => {
    expect(commands.map((c) => c.name)).toContain('demo');
    const r = await runDemo(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/--level B-B\|B-T\|B-LT\|B-LTA/);
    expect(r.out).toMatch(/--auto/);
  });

  it('B-LTA (default): every step printed, final OK, the written PDF is the verified one', async () => {
    const file = join(dir, 'signed.pdf');
    const r = await runDemo(['--cli', '--out', file, '--no-qr']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    for (const step of ['sandbox up', 'session', 'scanned', 'webhook: certificate', 'prepareSignature', 'hash submitted', 'approved', 'verifies with node:crypto', 'document timestamp', 'verified: valid=true, level B-LTA']) {
      expect(r.out).toContain(step);
    }
    // only real problems are problems: what B-LT/B-LTA appended after the signature is named in the notes
    expect(r.out).toMatch(/verified: valid=true, level B-LTA, 2 signature\(s\)\/timestamp\(s\), notes VALIDATION_DATA_ADDED, DOCUMENT_TIMESTAMP_ADDED$/m);
    expect(r.out).not.toContain('problems');
    expect(r.out).toMatch(/^OK: session \S+ signed at PAdES B-LTA/m);
    const pdf = readFileSync(file);
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const report = await verifyPdfSignatures(pdf); // no trust anchors here: integrity and structure only
    expect(report.signatures.map((s) => [s.type, s.integrity.signatureValid, s.integrity.digestMatches])).toEqual([['signature', true, true], ['docTimestamp', true, true]]);
  });

  it('B-B with the P-384 user and a terminal QR code', async () => {
    const r = await runDemo(['--cli', '--level', 'b-b', '--user', 'p384']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('EC P-384');
    expect(r.out).toContain('level B-B');
    expect(r.out).toMatch(/[▄▀█]/); // the QR code drawn with block characters
  });

  it('exits 1 with the error code when a step fails (revoked user at B-LT: OCSP refuses)', async () => {
    const r = await runDemo(['--cli', '--level', 'B-LT', '--user', 'revoked', '--no-qr']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^FAILED: OCSP_REVOKED/);
    expect(r.out).not.toMatch(/^OK/m);
  });

  it('exits 2 on bad options', async () => {
    expect((await runDemo(['--cli', '--level', 'B-X'])).code).toBe(2);
    expect((await runDemo(['--cli', '--user', 'nobody'])).code).toBe(2);
    expect((await runDemo(['--cli', '--bogus'])).code).toBe(2);
    expect((await runDemo(['--bogus'])).code).toBe(2);
    expect((await runDemo(['--node-red-port', '70000'])).code).toBe(2);
  });
});
