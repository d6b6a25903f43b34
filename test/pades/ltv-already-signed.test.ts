/**
 * Documents that are already signed by someone else, with another tool (poppler's pdfsig over NSS), before we add
 * our signature and take it to B-LT / B-LTA against the sandbox CA, OCSP responder and TSA. Ours must end complete;
 * theirs gets what can be obtained, the summary says what could not, and their signature stays intact.
 * Checked by pdfsig, qpdf and openssl as well as by our verifier.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { IssuedCert } from '../../sandbox/pki';
import { signDigest } from '../../sandbox/phone';
import { finalizeSignature, listSignatures, prepareSignature, readDss } from '../../src/pades';
import { addDocumentTimestamp, timestampSignature } from '../../src/pades/doc-timestamp';
import { addValidationDataWithSummary, type ValidationDataSummary } from '../../src/pades/ltv';
import { verifyPdfSignatures } from '../../src/pades/verify';
import { certDer, parseCertificate } from '../../src/pki/x509';
import { clearCrlCache } from '../../src/pki/crl';
import { startOpensslCa, type OpensslCa } from '../pki/openssl-ca';
import { extractSignatures, opensslCmsVerify, pdfsig, qpdfCheck, stopPki, testPki, tmpDir } from './helpers';
import { pdfsigSections, selfSignedSigner, signWithPdfsig, type ForeignSigner } from './foreign-signer';
import { samplePdf } from './ltv-helpers';

let dir: string;
beforeAll(() => { dir = tmpDir('already-signed'); });
afterAll(async () => {
  await stopPki();
  fs.rmSync(dir, { recursive: true, force: true });
});

const sandboxSigner = (u: IssuedCert, intermediatePem: string): ForeignSigner => ({ certPem: u.certPem, keyPem: u.privateKeyPem, chainPem: [intermediatePem] });

interface OnTop { bt: Buffer; blt: Buffer; lta: Buffer; ltSummary: ValidationDataSummary; ltaSummary: ValidationDataSummary }

/** Our engine on top of `pdf`: the sandbox user p256 signs (B-T), validation data (B-LT), document timestamp and its validation data (B-LTA), as the signing session does. */
async function signOnTop(pdf: Buffer, extra: { trustedRoots?: Buffer[] } = {}): Promise<OnTop> {
  const pki = await testPki();
  const tsaUrl = `${pki.baseUrl}/ca/tsa`;
  const trustedRoots = [pki.root.certDer, ...(extra.trustedRoots ?? [])];
  const { documentHash, state } = await prepareSignature(pdf, { certificate: pki.users.p256.certDer, chain: [pki.intermediate.certDer], reason: 'Countersigned', fieldName: 'Ours' });
  const bt = await finalizeSignature(pdf, state, signDigest(Buffer.from(documentHash, 'hex'), pki.users.p256.privateKey), { timestamp: timestampSignature(tsaUrl) });
  const lt = await addValidationDataWithSummary(bt, { trustedRoots, vri: true });
  const withDts = await addDocumentTimestamp(lt.pdf, { tsaUrl });
  const lta = await addValidationDataWithSummary(withDts, { trustedRoots });
  return { bt, blt: lt.pdf, lta: lta.pdf, ltSummary: lt.summary, ltaSummary: lta.summary };
}

function save(name: string, data: Buffer): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, data);
  return f;
}

/** Our signature complete and independently valid: pdfsig (valid + trusted), qpdf, openssl cms; our verifier's newest verdict. */
async function expectOursComplete(name: string, result: OnTop, foreign: Buffer): Promise<void> {
  const pki = await testPki();
  for (const [stage, pdf] of [['blt', result.blt], ['lta', result.lta]] as const) {
    const file = save(`${name}-${stage}.pdf`, pdf);
    // No byte the other tool wrote changed: every update of ours is appended after it.
    expect(pdf.subarray(0, foreign.length).equals(foreign)).toBe(true);
    expect(await qpdfCheck(file)).toContain('No syntax or stream encoding errors found');
    const sections = pdfsigSections(await pdfsig(file));
    expect(sections.length).toBe(stage === 'blt' ? 2 : 3);
    // The foreign signature: pdfsig still finds its digest and signature valid (whatever it thinks of its certificate).
    expect(sections[0]).toContain('Signature Field Name: Foreign');
    expect(sections[0]).toContain('Signature Validation: Signature is Valid.');
    expect(sections[1]).toContain('Signature Field Name: Ours');
    expect(sections[1]).toContain('Signature Validation: Signature is Valid.');
    expect(sections[1]).toContain('Certificate Validation: Certificate is Trusted.');
    const [, ours] = extractSignatures(pdf);
    const [ok, out] = await opensslCmsVerify(ours!, dir);
    expect({ ok, out }).toMatchObject({ ok: true });
  }
  // The DSS holds everything for our signature and both timestamps' TSA chain.
  const dss = readDss(result.lta);
  for (const c of [pki.users.p256, pki.intermediate, pki.root, pki.tsa]) expect(dss.certs.some((x) => x.equals(c.certDer))).toBe(true);
  const report = await verifyPdfSignatures(result.lta, { trustedRoots: [pki.root.certDer] });
  expect(report.newest).toMatchObject({ index: 1, fieldName: 'Ours', valid: true, level: 'B-LTA', documentTimestamps: [2] });
  expect(report.signatures[1]).toMatchObject({ fieldName: 'Ours', valid: true, level: 'B-LTA', revocationDataComplete: true });
  expect(report.signatures[2]).toMatchObject({ type: 'docTimestamp', valid: true });
  const lt = await verifyPdfSignatures(result.blt, { trustedRoots: [pki.root.certDer] });
  expect(lt.newest).toMatchObject({ valid: true, level: 'B-LT' });
}

describe('a PDF signed by another tool with a self-signed certificate (its chain can never be completed)', () => {
  let foreign: Buffer;
  let result: OnTop;
  let signerPem: string;

  beforeAll(async () => {
    const signer = await selfSignedSigner(dir);
    signerPem = signer.certPem;
    foreign = await signWithPdfsig(await samplePdf('Already signed elsewhere'), signer, dir, { fieldName: 'Foreign' });
    result = await signOnTop(foreign);
  });

  it('pdfsig made the fixture: its signature is valid and its certificate not trusted by our root', async () => {
    const [section] = pdfsigSections(await pdfsig(save('foreign-self.pdf', foreign)));
    expect(section).toContain('Signature Validation: Signature is Valid.');
    expect(section).not.toContain('Certificate is Trusted.');
    expect(listSignatures(foreign).map((s) => s.fieldName)).toEqual(['Foreign']);
  });

  it('the summary says what could not be obtained for the foreign signature, and ours is complete', () => {
    for (const summary of [result.ltSummary, result.ltaSummary]) {
      expect(summary.complete).toBe(false);
      expect(summary.perSignature[0]).toEqual({
        fieldName: 'Foreign', type: 'signature', required: false, complete: false,
        missing: [{ code: 'CHAIN_UNTRUSTED', certificate: expect.stringContaining('CN=Other Tool Signer'), message: expect.stringContaining('not one of the trusted roots') }],
      });
      expect(summary.perSignature[1]).toEqual({ fieldName: 'Ours', type: 'signature', required: true, complete: true, missing: [] });
    }
    expect(result.ltaSummary.perSignature[2]).toMatchObject({ type: 'docTimestamp', required: true, complete: true, missing: [] });
  });

  it('our signature and timestamps are complete and valid in pdfsig, qpdf and openssl; the foreign one is untouched', async () => {
    await expectOursComplete('self', result, foreign);
  });

  it('the foreign certificate is stored (what could be obtained); the whole-file verdict stays false, the newest one true', async () => {
    const pki = await testPki();
    const foreignDer = certDer(parseCertificate(Buffer.from(signerPem.replace(/-----[^-]+-----|\s/g, ''), 'base64')));
    expect(readDss(result.lta).certs.some((c) => c.equals(foreignDer))).toBe(true);
    const report = await verifyPdfSignatures(result.lta, { trustedRoots: [pki.root.certDer] });
    expect(report.valid).toBe(false);
    expect(report.level).toBeNull();
    expect(report.signatures[0]).toMatchObject({ fieldName: 'Foreign', valid: false, level: null, problems: expect.arrayContaining(['CHAIN_UNTRUSTED']) });
    expect(report.signatures[0]!.integrity).toMatchObject({ digestMatches: true, signatureValid: true });
  });

  it("requireComplete: 'all' keeps the old refusal (CHAIN_INCOMPLETE, nothing written); field names pick exactly those", async () => {
    const pki = await testPki();
    await expect(addValidationDataWithSummary(result.bt, { trustedRoots: [pki.root.certDer], requireComplete: 'all' })).rejects.toMatchObject({ code: 'CHAIN_INCOMPLETE' });
    await expect(addValidationDataWithSummary(result.bt, { trustedRoots: [pki.root.certDer], requireComplete: ['Foreign'] })).rejects.toMatchObject({ code: 'CHAIN_INCOMPLETE' });
    const onlyOurs = await addValidationDataWithSummary(result.bt, { trustedRoots: [pki.root.certDer], requireComplete: ['Ours'] });
    expect(onlyOurs.summary.perSignature.map((s) => [s.fieldName, s.required, s.complete])).toEqual([['Foreign', false, false], ['Ours', true, true]]);
    await expect(addValidationDataWithSummary(result.bt, { requireComplete: ['Nope'] })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('"Nope"') });
    await expect(addValidationDataWithSummary(result.bt, { requireComplete: 'newest-only' as never })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('requireComplete') });
  });
});

describe('a PDF signed by another tool whose chain is complete but whose certificate is revoked', () => {
  let foreign: Buffer;
  let result: OnTop;

  beforeAll(async () => {
    const pki = await testPki();
    foreign = await signWithPdfsig(await samplePdf('Signed by a since-revoked key'), sandboxSigner(pki.users.revoked, pki.intermediate.certPem), dir, { fieldName: 'Foreign' });
    result = await signOnTop(foreign);
  });

  it('the summary reports OCSP_REVOKED for the foreign signer; the signed revocation answer is kept as evidence', async () => {
    const pki = await testPki();
    const foreignEntry = result.ltSummary.perSignature[0]!;
    expect(foreignEntry).toMatchObject({ fieldName: 'Foreign', required: false, complete: false });
    // named by its subject without the serialNumber, which carries the NRIC
    expect(pki.users.revoked.subject).toMatch(/, serialNumber=S\d{7}[A-Z]$/);
    expect(foreignEntry.missing).toEqual([{ code: 'OCSP_REVOKED', certificate: 'C=SG, CN=REVOKED TEST USER', message: expect.stringContaining('revoked since') }]);
    expect(result.ltSummary.perSignature[1]).toMatchObject({ fieldName: 'Ours', complete: true });
    const report = await verifyPdfSignatures(result.lta, { trustedRoots: [pki.root.certDer] });
    expect(report.signatures[0]!.problems).toContain('CERT_REVOKED');
    expect(report.valid).toBe(false);
  });

  it('pdfsig sees the foreign signature as intact but revoked, ours as valid and trusted', async () => {
    const [section] = pdfsigSections(await pdfsig(save('revoked-lta.pdf', result.lta)));
    expect(section).toContain('Signature Validation: Signature is Valid.');
    expect(section).toContain('Certificate has been Revoked.');
    await expectOursComplete('revoked', result, foreign);
  });
});

describe('a PDF signed by another tool whose chain is complete but whose OCSP responder is unreachable', () => {
  let foreign: Buffer;
  let result: OnTop;
  let otherRoot: Buffer;
  let noResponder: ValidationDataSummary;

  beforeAll(async () => {
    // Another CA made by OpenSSL: it serves its certificates and OCSP until we close it, after the foreign signing.
    const ca = await startOpensslCa();
    otherRoot = ca.root.der;
    try {
      const signer = (u: 'good' | 'noaia') => ({ certPem: fs.readFileSync(ca.users[u].pem, 'utf8'), keyPem: fs.readFileSync(ca.users[u].key, 'utf8'), chainPem: [fs.readFileSync(ca.intermediate.pem, 'utf8')] });
      foreign = await signWithPdfsig(await samplePdf('Signed under another CA'), signer('good'), dir, { fieldName: 'Foreign' });
      // A signer certificate without AIA (no OCSP URL), while that CA is still up; nothing required (empty list).
      const noAia = await signWithPdfsig(await samplePdf('Signed without AIA'), signer('noaia'), dir, { fieldName: 'NoAia' });
      noResponder = (await addValidationDataWithSummary(noAia, { trustedRoots: [otherRoot], requireComplete: [] })).summary;
    } finally {
      await ca.close();
    }
    result = await signOnTop(foreign, { trustedRoots: [otherRoot] });
  });

  it('a certificate naming no OCSP responder is reported OCSP_NO_RESPONDER; its issuer still gets its answer', () => {
    expect(noResponder.perSignature).toEqual([{
      fieldName: 'NoAia', type: 'signature', required: false, complete: false,
      missing: [{ code: 'OCSP_NO_RESPONDER', certificate: expect.stringContaining('CN=User noaia'), message: expect.stringContaining('no AIA OCSP URL') }],
    }]);
    expect(noResponder).toMatchObject({ ocspFetched: 1, ocspResponses: 1, complete: false });
  });

  it('the summary reports OCSP_FAILED for each certificate of the foreign chain; the chain itself is complete and stored', () => {
    const entry = result.ltSummary.perSignature[0]!;
    expect(entry).toMatchObject({ fieldName: 'Foreign', required: false, complete: false });
    expect(entry.missing.map((m) => [m.code, m.certificate])).toEqual([
      ['OCSP_FAILED', expect.stringContaining('CN=User good')],
      ['OCSP_FAILED', expect.stringContaining('CN=LTV Test Intermediate')],
    ]);
    expect(entry.missing[0]!.message).toMatch(/could not be reached/);
    expect(readDss(result.lta).certs.some((c) => c.equals(otherRoot))).toBe(true);
  });

  it('our signature is complete and valid; the foreign one is untouched', async () => {
    await expectOursComplete('unreachable', result, foreign);
  });
});

/** The /DSS /CRLs streams (decoded) as qpdf reads them: a parser we did not write. */
function qpdfDssCrls(file: string): Buffer[] {
  const json = JSON.parse(execFileSync('qpdf', ['--json=2', '--json-key=qpdf', '--json-stream-data=inline', '--decode-level=generalized', file], { maxBuffer: 64 << 20 }).toString());
  const objects = json.qpdf[1] as Record<string, { value?: Record<string, unknown>; stream?: { data?: string } }>;
  const deref = (v: unknown): { value?: unknown; stream?: { data?: string } } => (typeof v === 'string' && / R$/.test(v) ? objects[`obj:${v}`]! : { value: v });
  const root = deref((objects['trailer']!.value as Record<string, unknown>)['/Root']).value as Record<string, unknown>;
  const dss = deref(root['/DSS']).value as Record<string, unknown> | undefined;
  const crls = (dss ? deref(dss['/CRLs']).value : undefined) as unknown[] | undefined;
  return (crls ?? []).map((ref) => Buffer.from(deref(ref).stream!.data!, 'base64'));
}

describe('a PDF signed by another tool whose CA publishes only a CRL (no OCSP responder)', () => {
  let ca: OpensslCa;
  let foreign: Buffer;
  let result: OnTop;
  let revoked: ValidationDataSummary;
  let revokedPdf: Buffer;

  beforeAll(async () => {
    clearCrlCache();
    // Another CA made by OpenSSL, up while validation data is gathered: its users name a CRL, no OCSP responder.
    ca = await startOpensslCa();
    const signer = (u: 'crlonly' | 'crlrevoked') => ({ certPem: fs.readFileSync(ca.users[u].pem, 'utf8'), keyPem: fs.readFileSync(ca.users[u].key, 'utf8'), chainPem: [fs.readFileSync(ca.intermediate.pem, 'utf8')] });
    foreign = await signWithPdfsig(await samplePdf('Signed under a CRL-only CA'), signer('crlonly'), dir, { fieldName: 'Foreign' });
    result = await signOnTop(foreign, { trustedRoots: [ca.root.der] });
    const signedRevoked = await signWithPdfsig(await samplePdf('Signed with a key its CA revoked'), signer('crlrevoked'), dir, { fieldName: 'Revoked' });
    const lt = await addValidationDataWithSummary(signedRevoked, { trustedRoots: [ca.root.der], requireComplete: [] });
    revoked = lt.summary;
    revokedPdf = lt.pdf;
  });
  afterAll(async () => { await ca?.close(); });

  it('the foreign signer gets its CA\'s CRL: nothing missing; the B-LTA step reuses the CRL from the /DSS', () => {
    expect(result.ltSummary.perSignature[0]).toEqual({ fieldName: 'Foreign', type: 'signature', required: false, complete: true, missing: [] });
    expect(result.ltSummary).toMatchObject({ complete: true, crls: 1, crlFetched: 1, crlReused: 0 });
    expect(result.ltaSummary).toMatchObject({ complete: true, crls: 1, crlFetched: 0, crlReused: 1 });
    expect(ca.requests.crl).toBe(1);
  });

  it('qpdf finds the CRL in /DSS /CRLs, and openssl verifies it was signed by the foreign intermediate', () => {
    for (const [stage, pdf] of [['blt', result.blt], ['lta', result.lta]] as const) {
      const crls = qpdfDssCrls(save(`crl-${stage}.pdf`, pdf));
      expect(crls).toHaveLength(1);
      const crlFile = save(`crl-${stage}.crl`, crls[0]!);
      const out = execFileSync('openssl', ['crl', '-inform', 'DER', '-in', crlFile, '-CAfile', ca.intermediate.pem, '-noout', '-issuer'], { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
      expect(out).toMatch(/CN ?= ?LTV Test Intermediate/);
    }
  });

  it('our verifier finds the foreign signature\'s revocation data complete (from the CRL); ours stays complete and valid', async () => {
    const report = await verifyPdfSignatures(result.lta, { trustedRoots: [(await testPki()).root.certDer, ca.root.der] });
    expect(report.dss.crls).toBe(1);
    expect(report.signatures[0]).toMatchObject({ fieldName: 'Foreign', revocationDataComplete: true, valid: true });
    expect(report.signatures[0]!.problems).not.toContain('CERT_REVOKED');
    await expectOursComplete('crl', result, foreign);
  });

  it('a certificate the CRL lists as revoked is reported CRL_REVOKED; the CRL is stored as evidence and our verifier sees the revocation', async () => {
    expect(revoked.perSignature).toEqual([{
      fieldName: 'Revoked', type: 'signature', required: false, complete: false,
      missing: [{ code: 'CRL_REVOKED', certificate: expect.stringContaining('CN=User crlrevoked'), message: expect.stringContaining('revoked according to its CA\'s CRL since 2024-01-01T00:00:00.000Z (keyCompromise)') }],
    }]);
    expect(revoked).toMatchObject({ crls: 1, complete: false });
    const report = await verifyPdfSignatures(revokedPdf, { trustedRoots: [ca.root.der] });
    expect(report.signatures[0]).toMatchObject({ revocationDataComplete: false, valid: false, problems: expect.arrayContaining(['CERT_REVOKED']) });
  });

  it('an unusable CRL (here: signed by a look-alike key) is CRL_FAILED in the summary, never a failure of the call', async () => {
    clearCrlCache();
    ca.faults.crl = 'look-alike';
    try {
      const { summary } = await addValidationDataWithSummary(foreign, { trustedRoots: [ca.root.der], requireComplete: [] });
      expect(summary.perSignature[0]!.missing).toEqual([{ code: 'CRL_FAILED', certificate: expect.stringContaining('CN=User crlonly'), message: expect.stringContaining('signature does not verify') }]);
      expect(summary.crls).toBe(0);
    } finally {
      ca.faults.crl = 'ok';
    }
  });
});

describe('a PDF signed by another tool whose certificate names an OCSP responder and a CRL, with the responder down', () => {
  let ca: OpensslCa;
  let foreign: Buffer;

  beforeAll(async () => {
    clearCrlCache();
    ca = await startOpensslCa();
    const signer = { certPem: fs.readFileSync(ca.users.both.pem, 'utf8'), keyPem: fs.readFileSync(ca.users.both.key, 'utf8'), chainPem: [fs.readFileSync(ca.intermediate.pem, 'utf8')] };
    foreign = await signWithPdfsig(await samplePdf('Signed under a CA with OCSP and CRL'), signer, dir, { fieldName: 'Foreign' });
    ca.faults.ocspDown = true; // both responders: the user's (/ocsp) and the intermediate's (/ocsp-root)
  });
  afterAll(async () => { await ca?.close(); });
  beforeEach(() => { clearCrlCache(); ca.requests.crl = 0; ca.requests.ocsp = 0; });

  it('the signer\'s status comes from the CRL instead (stored in /DSS, our verifier agrees); the intermediate, which names no CRL, stays OCSP_FAILED', async () => {
    const { pdf, summary } = await addValidationDataWithSummary(foreign, { trustedRoots: [ca.root.der], requireComplete: [] });
    expect(summary.perSignature[0]!.missing.map((m) => [m.code, m.certificate])).toEqual([['OCSP_FAILED', expect.stringContaining('CN=LTV Test Intermediate')]]);
    expect(summary).toMatchObject({ crls: 1, crlFetched: 1, ocspResponses: 0 });
    expect(ca.requests).toMatchObject({ ocsp: 2, crl: 1 });
    const crls = qpdfDssCrls(save('both-ocsp-down.pdf', pdf));
    expect(crls).toHaveLength(1);
    const report = await verifyPdfSignatures(pdf, { trustedRoots: [ca.root.der] });
    expect(report.dss.crls).toBe(1);
    expect(report.signatures[0]!.problems).not.toContain('CERT_REVOKED');
  });

  it('with the CRL unusable as well, the signer is OCSP_FAILED and the message gives both reasons', async () => {
    ca.faults.crl = '404';
    try {
      const { summary } = await addValidationDataWithSummary(foreign, { trustedRoots: [ca.root.der], requireComplete: [] });
      const signer = summary.perSignature[0]!.missing.find((m) => m.certificate?.includes('CN=User both'));
      expect(signer).toMatchObject({ code: 'OCSP_FAILED', message: expect.stringMatching(/OCSP responder at .* answered HTTP 503; its CRL could not be used either: .*HTTP 404/) });
      expect(summary.crls).toBe(0);
    } finally {
      ca.faults.crl = 'ok';
    }
  });
});
