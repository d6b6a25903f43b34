import { startPkiServer, type RunningPkiServer } from '../../sandbox/pki';
import { verifyPdfSignatures } from '../../src/pades/verify';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { appendDss, listSignatures, readDss } from '../../src/pades';
import { fetchOcspResponse } from '../../src/pki';
import { samplePdf, signToLevel, type SignedStages } from './ltv-helpers';

let server: RunningPkiServer;
let stages: SignedStages;
let bb: Buffer;
let root: Buffer;

beforeAll(async () => {
  server = await startPkiServer();
  const { pki } = server;
  root = pki.root.certDer;
  const tsaUrl = `${server.baseUrl}/ca/tsa`;
  const signer = { certDer: pki.users.p256.certDer, privateKey: pki.users.p256.privateKey, chain: [pki.intermediate.certDer] };
  stages = await signToLevel(await samplePdf(), signer, 'B-LTA', { tsaUrl, trustedRoots: [root] });
  bb = (await signToLevel(await samplePdf(), signer, 'B-B', { tsaUrl, trustedRoots: [] })).bb!;
});

afterAll(async () => { await server?.close(); });

describe('verifyPdfSignatures levels', () => {
  it.each([
    ['B-B', () => bb],
    ['B-T', () => stages.bt!],
    ['B-LT', () => stages.blt!],
    ['B-LTA', () => stages.blta!],
  ])('detects %s', async (level, pdf) => {
    const report = await verifyPdfSignatures(pdf(), { trustedRoots: [root] });
    expect(report.valid).toBe(true);
    expect(report.level).toBe(level);
    const sig = report.signatures.find((s) => s.type === 'signature')!;
    expect(sig.level).toBe(level);
    expect(sig.integrity.digestMatches).toBe(true);
    expect(sig.integrity.signatureValid).toBe(true);
    expect(sig.chain.trusted).toBe(true);
    expect(sig.signer).toEqual({ subject: expect.not.stringContaining('serialNumber='), name: 'TAN AH KOW', serialNumber: server.pki.users.p256.serialHex.toUpperCase().padStart(sig.signer!.serialNumber.length, '0') });
    expect(sig.timestamp?.valid ?? false).toBe(level !== 'B-B');
    expect(sig.revocationDataComplete).toBe(level === 'B-LT' || level === 'B-LTA');
  });

  it('reports the signature timestamp time, coverage and bytes appended after it', async () => {
    const report = await verifyPdfSignatures(stages.blta!, { trustedRoots: [root] });
    const [sig, dts] = report.signatures;
    expect(Math.abs(Date.parse(sig!.timestampTime!) - Date.now())).toBeLessThan(10 * 60_000);
    expect(sig!.integrity.coversWholeFile).toBe(false);
    expect(sig!.integrity.bytesAfter).toBe(stages.blta!.length - stages.bt!.length);
    expect(dts!.type).toBe('docTimestamp');
    expect(dts!.integrity).toEqual({ digestMatches: true, signatureValid: true, coversWholeFile: true, bytesAfter: 0, changedAfterSigning: false });
    expect(dts!.signer!.subject).toContain('Time Stamping');
    expect(report.dss.ocsps).toBe(3);
  });

  it('tampering one covered byte -> integrity failure (DIGEST_MISMATCH), not valid', async () => {
    const pdf = Buffer.from(stages.bt!);
    // a digit of the /CreationDate in the original revision's Info dictionary (covered, parse-neutral)
    const at = pdf.indexOf('/CreationDate (D:') + 18;
    expect(at).toBeGreaterThan(0);
    const target = at;
    pdf[target] ^= 0x01;
    const report = await verifyPdfSignatures(pdf, { trustedRoots: [root] });
    expect(report.valid).toBe(false);
    expect(report.signatures[0]!.integrity.digestMatches).toBe(false);
    expect(report.signatures[0]!.problems).toContain('DIGEST_MISMATCH');
    expect(report.signatures[0]!.level).toBeNull();
    expect(report.level).toBeNull();
  });

  it('changing the signature /Contents padding breaks only the document timestamp (it covers everything)', async () => {
    const pdf = Buffer.from(stages.blta!);
    const sig = listSignatures(pdf).find((s) => s.type === 'signature')!;
    const pad = sig.byteRange[2]! - 3; // inside the zero padding of the signature's hex string
    expect(pdf.toString('latin1', pad, pad + 1)).toBe('0');
    pdf.write('1', pad, 'latin1');
    const report = await verifyPdfSignatures(pdf, { trustedRoots: [root] });
    const [s1, d] = report.signatures;
    expect(s1!.integrity).toMatchObject({ digestMatches: true, signatureValid: true });
    expect(d!.integrity.digestMatches).toBe(false);
    expect(d!.problems).toContain('DIGEST_MISMATCH');
    expect(s1!.level).toBe('B-LT'); // the DSS is no longer protected by a valid document timestamp
    expect(report.valid).toBe(false);
    // The newest-signature verdict includes the document timestamps after it: a broken one makes it invalid too.
    expect(s1!.valid).toBe(true);
    expect(report.newest).toMatchObject({ index: 0, valid: false, level: 'B-LT', documentTimestamps: [1], problems: expect.arrayContaining(['DIGEST_MISMATCH']) });
  });

  it('another root -> CHAIN_UNTRUSTED; no roots -> chain reported, not trusted', async () => {
    const other = await startPkiServer();
    try {
      const report = await verifyPdfSignatures(stages.blt!, { trustedRoots: [other.pki.root.certDer] });
      expect(report.valid).toBe(false);
      expect(report.signatures[0]!.problems).toContain('CHAIN_UNTRUSTED');
      expect(report.signatures[0]!.level).toBeNull();
    } finally {
      await other.close();
    }
    const loose = await verifyPdfSignatures(stages.blt!);
    expect(loose.signatures[0]!.chain.trusted).toBe(false);
    expect(loose.signatures[0]!.chain.subjects).toHaveLength(3);
  });

  it('a revoked certificate with embedded revoked OCSP is reported CERT_REVOKED', async () => {
    // Build a B-T for the revoked user and add its (revoked) OCSP response by hand through appendDss.
    const { pki } = server;
    const bt = (await signToLevel(await samplePdf(), { certDer: pki.users.revoked.certDer, privateKey: pki.users.revoked.privateKey, chain: [pki.intermediate.certDer] }, 'B-T', { tsaUrl: `${server.baseUrl}/ca/tsa`, trustedRoots: [] })).bt!;
    const ocsp = await fetchOcspResponse(pki.users.revoked.certDer, pki.intermediate.certDer);
    expect(ocsp.status).toBe('revoked');
    const withDss = await appendDss(bt, { certs: [pki.intermediate.certDer], ocsps: [ocsp.der] });
    const report = await verifyPdfSignatures(withDss, { trustedRoots: [root] });
    expect(report.signatures[0]!.problems).toContain('CERT_REVOKED');
    expect(report.valid).toBe(false);
    expect(report.signatures[0]!.level).toBe('B-T');
  });

  it('pkijs SignedData.verify (an independent CMS implementation) agrees: intact -> true, tampered -> false', async () => {
    const check = async (pdf: Buffer): Promise<boolean> => {
      const [sig] = listSignatures(pdf);
      const [, l1, o2, l2] = sig!.byteRange as [number, number, number, number];
      const data = Buffer.concat([pdf.subarray(0, l1), pdf.subarray(o2, o2 + l2)]);
      const asn = asn1js.fromBER(new Uint8Array(sig!.contents));
      const sd = new pkijs.SignedData({ schema: new pkijs.ContentInfo({ schema: asn.result }).content });
      return sd.verify({ signer: 0, data: new Uint8Array(data).buffer, checkChain: false }).then((r) => r === true, () => false);
    };
    expect(await check(stages.blta!)).toBe(true);
    const bad = Buffer.from(stages.blta!);
    bad[bad.indexOf('/CreationDate (D:') + 18] ^= 1;
    expect(await check(bad)).toBe(false);
  });

  it('two signatures (P-256 then P-384), then B-LT: both verify, both get VRI entries and reach B-LT', async () => {
    const { pki } = server;
    const tsaUrl = `${server.baseUrl}/ca/tsa`;
    const first = (await signToLevel(await samplePdf(), { certDer: pki.users.p256.certDer, privateKey: pki.users.p256.privateKey, chain: [pki.intermediate.certDer] }, 'B-T', { tsaUrl, trustedRoots: [] })).bt!;
    const second = (await signToLevel(first, { certDer: pki.users.p384.certDer, privateKey: pki.users.p384.privateKey, chain: [pki.intermediate.certDer] }, 'B-LT', { tsaUrl, trustedRoots: [root] })).blt!;
    const report = await verifyPdfSignatures(second, { trustedRoots: [root] });
    expect(report.signatures.map((s) => [s.type, s.level, s.integrity.digestMatches && s.integrity.signatureValid])).toEqual([
      ['signature', 'B-LT', true],
      ['signature', 'B-LT', true],
    ]);
    expect(report).toMatchObject({ valid: true, level: 'B-LT', newest: { index: 1, valid: true, level: 'B-LT', documentTimestamps: [] } });
    const dss = readDss(second);
    expect(Object.keys(dss.vri).sort()).toEqual(listSignatures(second).map((s) => s.vriKey).sort());
    expect(dss.ocsps).toHaveLength(4); // two users, intermediate, TSA
  });

  it('a PDF without signatures gives an empty, invalid report', async () => {
    const report = await verifyPdfSignatures(await samplePdf());
    expect(report).toMatchObject({ valid: false, level: null, signatures: [] });
    expect(report.newest).toBeUndefined();
  });
});
