/**
 * The OCSP answer of the check made before the hash is signed into the signature (adbe-revocationInfoArchival) at
 * every level: a B-T PDF, the B-B PDF of a finishing that failed for good, and a B-LTA PDF (whose DSS is added as
 * before). Our verifier and the CLI report it; pdfsig still says valid and trusted; openssl reads the attribute.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, samplePdf } from '../pades/ltv-helpers';
import { pdfsigSections } from '../pades/foreign-signer';
import { makeNssDb } from '../helpers/pki-tools';
import { formatReport } from '../../cli/commands/verify';
import { verifyPdfSignatures } from '../../src/pades/verify';
import { readRevocationArchive } from '../../src/pki/revocation-archival';
import { readSignedData } from '../../src/pki/signed-data';
import { listSignatures } from '../../src/pades/list';
import { OID } from '../../src/pki/oid';
import { startSessionHarness, until, type SessionHarness } from './harness';

let pdf: Buffer;
let dir: string;
let h: SessionHarness;
beforeAll(async () => {
  pdf = await samplePdf('Signed OCSP');
  dir = mkdtempSync(join(tmpdir(), 'signed-ocsp-'));
  h = await startSessionHarness();
});
afterAll(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

async function signedAt(documentName: string, level: 'B-T' | 'B-LTA'): Promise<{ pdf: Buffer; result: unknown }> {
  const s = await h.runner.start(pdf, { documentName, level });
  await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
  await until(() => h.sandbox.sign.session(s.signRef)?.state === 'hash_submitted', 'the hash');
  await h.sandbox.phone.approve(s.signRef);
  const out = await h.runner.outcome(s.signRef);
  expect(out.pdf).toBeDefined();
  return { pdf: out.pdf!, result: out.record.result };
}

/** The user's signature's adbe-revocationInfoArchival, read from the CMS in the PDF. */
function signedArchive(signed: Buffer): { ocsps: Buffer[]; crls: Buffer[] } | undefined {
  const sig = listSignatures(signed).find((s) => s.type === 'signature')!;
  const sd = readSignedData(sig.contents)!;
  const value = sd.signerInfos[0].signed.get(OID.adbeRevocationInfoArchival);
  return value ? readRevocationArchive(Buffer.from(value)) : undefined;
}

async function checkIndependently(signed: Buffer, name: string): Promise<void> {
  const file = join(dir, name);
  writeFileSync(file, signed);
  expect((await run('qpdf', ['--check', file])).stdout).toContain('No syntax or stream encoding errors found');
  const nss = await makeNssDb(join(dir, `nss-${name}`), h.sandbox.pki.root.certPem);
  const report = await run('pdfsig', ['-nssdir', `sql:${nss}`, file]).then((r) => r.stdout, (e: { stdout?: string }) => e.stdout ?? '');
  const sections = pdfsigSections(report);
  expect(sections[0]).toContain('Signature Validation: Signature is Valid.');
  expect(sections[0]).toContain('Certificate Validation: Certificate is Trusted.');
  // openssl sees the attribute among the signed ones
  const sig = listSignatures(signed).find((s) => s.type === 'signature')!;
  writeFileSync(`${file}.p7s`, sig.contents);
  const cms = (await run('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', `${file}.p7s`], { maxBuffer: 1 << 24 })).stdout;
  const signedAttrs = cms.slice(cms.indexOf('signedAttrs:'), cms.indexOf('signatureAlgorithm', cms.indexOf('signedAttrs:')));
  expect(signedAttrs).toContain('(1.2.840.113583.1.1.8)');
  expect(signedAttrs).toMatch(/cont \[ 1 \][\s\S]*Basic OCSP Response/);
}

function expectReportsGoodAnswer(report: Awaited<ReturnType<typeof verifyPdfSignatures>>, level: string): void {
  const sig = report.signatures.find((s) => s.type === 'signature')!;
  expect(sig).toMatchObject({ valid: true, level });
  expect(sig.signedRevocationInfo).toEqual({ ocsps: 1, crls: 0, signer: { status: 'good', producedAt: expect.any(String) } });
  // answered before the signature was timestamped (the check precedes the hash)
  if (sig.timestampTime) expect(Date.parse(sig.signedRevocationInfo!.signer!.producedAt)).toBeLessThanOrEqual(Date.parse(sig.timestampTime));
  expect(formatReport(report)).toContain('Signed with its revocation answer: certificate good');
}

it('B-T: the signature carries the OCSP answer of the pre-hash check; verify reports it; pdfsig valid', async () => {
  const { pdf: signed, result } = await signedAt('Bt with answer.pdf', 'B-T');
  expect(result).toEqual({ level: 'B-T', valid: true });
  expect(signedArchive(signed)?.ocsps).toHaveLength(1);
  const report = await verifyPdfSignatures(signed, { trustedRoots: [h.sandbox.pki.root.certDer] });
  expect(report.dss).toMatchObject({ ocsps: 0 }); // no DSS at B-T: the answer is in the signature
  expectReportsGoodAnswer(report, 'B-T');
  await checkIndependently(signed, 'bt.pdf');
}, 60_000);

it('B-B handed on when finishing fails for good (the TSA refuses): still carries the answer', async () => {
  h.sandbox.ca.failNext('tsa', 1000, 'badRequest');
  let out: { pdf: Buffer; result: unknown };
  try {
    out = await signedAt('Bb with answer.pdf', 'B-T');
  } finally {
    h.sandbox.ca.failNext('tsa', 0);
  }
  expect(out.result).toMatchObject({ level: 'B-B', valid: true, missing: { stage: 'embed', code: 'TSA_FAILED' } });
  expect(signedArchive(out.pdf)?.ocsps).toHaveLength(1);
  const report = await verifyPdfSignatures(out.pdf, { trustedRoots: [h.sandbox.pki.root.certDer] });
  expectReportsGoodAnswer(report, 'B-B');
  await checkIndependently(out.pdf, 'bb.pdf');
}, 60_000);

it('B-LTA: the DSS is added as before, the signed answer beside it', async () => {
  const { pdf: signed, result } = await signedAt('Blta with answer.pdf', 'B-LTA');
  expect(result).toEqual({ level: 'B-LTA', valid: true });
  const report = await verifyPdfSignatures(signed, { trustedRoots: [h.sandbox.pki.root.certDer] });
  expect(report.newest).toMatchObject({ valid: true, level: 'B-LTA' });
  expect(report.dss.ocsps).toBeGreaterThanOrEqual(2);
  expect(report.signatures.find((s) => s.type === 'signature')?.revocationDataComplete).toBe(true);
  expectReportsGoodAnswer(report, 'B-LTA');
}, 60_000);
