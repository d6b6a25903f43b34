/**
 * The whole B-B -> B-LTA chain against a PKI made entirely by OpenSSL (CA, a real `openssl ocsp` responder with a
 * delegated responder cert and root-signed answers, `openssl ts -reply` as TSA): no sandbox code involved.
 */
import { createPrivateKey } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readDss } from '../../src/pades';
import { addDocumentTimestamp } from '../../src/pades/doc-timestamp';
import { addValidationData, addValidationDataWithSummary } from '../../src/pades/ltv';
import { verifyPdfSignatures } from '../../src/pades/verify';
import { startOpensslCa, type OpensslCa } from '../pki/openssl-ca';
import { run, samplePdf, signToLevel } from './ltv-helpers';

let ca: OpensslCa;
beforeAll(async () => { ca = await startOpensslCa(); });
afterAll(async () => { await ca?.close(); });

const signer = (u: 'good' | 'revoked' | 'unknown' | 'later' | 'compromised') => ({ certDer: ca.users[u].der, privateKey: createPrivateKey(readFileSync(ca.users[u].key)), chain: [ca.intermediate.der] });

it('B-LTA with OpenSSL OCSP + TSA; every embedded OCSP answer verifies in openssl against the root', async () => {
  const before = ca.requests.ocsp;
  const stages = await signToLevel(await samplePdf(), signer('good'), 'B-LTA', { tsaUrl: `${ca.baseUrl}/tsa`, trustedRoots: [ca.root.der] });
  expect(ca.requests.ocsp - before).toBe(3); // user, intermediate (root-signed), TSA
  const dss = readDss(stages.blta!);
  expect(dss.ocsps).toHaveLength(3);
  expect(dss.certs.some((c) => c.equals(ca.ocspSigner.der))).toBe(true);
  writeFileSync(join(ca.dir, 'chain.pem'), readFileSync(ca.root.pem, 'utf8') + readFileSync(ca.intermediate.pem, 'utf8'));
  for (const [i, der] of dss.ocsps.entries()) {
    writeFileSync(join(ca.dir, `dss-ocsp${i}.der`), der);
    const { stdout, stderr } = await run('openssl', ['ocsp', '-respin', `dss-ocsp${i}.der`, '-resp_text', '-CAfile', 'chain.pem', '-verify_other', 'ocsp.crt'], { cwd: ca.dir });
    expect(stdout).toContain('Cert Status: good');
    expect(stderr).toContain('Response verify OK');
  }
  const report = await verifyPdfSignatures(stages.blta!, { trustedRoots: [ca.root.der] });
  expect(report).toMatchObject({ valid: true, level: 'B-LTA' });
});

it('revoked (openssl index R line) -> OCSP_REVOKED; never-issued serial -> OCSP_UNKNOWN', async () => {
  const tsaUrl = `${ca.baseUrl}/tsa`;
  const revoked = (await signToLevel(await samplePdf(), signer('revoked'), 'B-T', { tsaUrl, trustedRoots: [] })).bt!;
  await expect(addValidationData(revoked, { trustedRoots: [ca.root.der] })).rejects.toMatchObject({ code: 'OCSP_REVOKED', message: expect.stringContaining('2024-01-01') });
  const unknown = (await signToLevel(await samplePdf(), signer('unknown'), 'B-T', { tsaUrl, trustedRoots: [] })).bt!;
  await expect(addValidationData(unknown, { trustedRoots: [ca.root.der] })).rejects.toMatchObject({ code: 'OCSP_UNKNOWN' });
});

it('a certificate revoked AFTER the time its signature timestamp proves: B-LT and B-LTA complete, and the verifier keeps the signature valid (CERT_REVOKED_AFTER_SIGNING); without a timestamp the same revocation counts', async () => {
  const tsaUrl = `${ca.baseUrl}/tsa`;
  const bt = (await signToLevel(await samplePdf(), signer('later'), 'B-T', { tsaUrl, trustedRoots: [] })).bt!;
  const bb = (await signToLevel(await samplePdf(), signer('later'), 'B-B', { tsaUrl, trustedRoots: [] })).bb!;
  const genTime = new Date((await verifyPdfSignatures(bt)).signatures[0]!.timestampTime!);
  await new Promise((r) => setTimeout(r, 1100)); // the index has whole seconds: revoke strictly after genTime
  const revokedAt = new Date();
  ca.revoke('later', revokedAt);

  const lt = await addValidationDataWithSummary(bt, { trustedRoots: [ca.root.der] });
  expect(lt.summary).toMatchObject({ complete: true, ocspFetched: 3 });
  // openssl reads the embedded answer about the user as revoked, at the time we set (after the timestamp)
  const dss = readDss(lt.pdf);
  const texts = await Promise.all(dss.ocsps.map(async (der, i) => {
    writeFileSync(join(ca.dir, `later-ocsp${i}.der`), der);
    return (await run('openssl', ['ocsp', '-respin', `later-ocsp${i}.der`, '-resp_text', '-noverify'], { cwd: ca.dir })).stdout;
  }));
  expect(texts.filter((t) => t.includes('Cert Status: revoked'))).toHaveLength(1);
  expect(revokedAt.getTime()).toBeGreaterThan(genTime.getTime());

  const lta = await addValidationDataWithSummary(await addDocumentTimestamp(lt.pdf, { tsaUrl }), { trustedRoots: [ca.root.der] });
  expect(lta.summary.complete).toBe(true);
  const report = await verifyPdfSignatures(lta.pdf, { trustedRoots: [ca.root.der] });
  expect(report.signatures[0]).toMatchObject({ valid: true, level: 'B-LTA', revocationDataComplete: true, problems: [] });
  expect(report.signatures[0]!.notes.map((n) => n.code)).toEqual(['VALIDATION_DATA_ADDED', 'DOCUMENT_TIMESTAMP_ADDED', 'CERT_REVOKED_AFTER_SIGNING']);
  expect(report).toMatchObject({ valid: true, level: 'B-LTA' });

  // B-B: nothing proves the signature was made before the revocation
  const bbLt = await addValidationDataWithSummary(bb, { trustedRoots: [ca.root.der], requireComplete: [] });
  expect(bbLt.summary.perSignature[0]!.missing).toEqual([expect.objectContaining({ code: 'OCSP_REVOKED', certificate: expect.stringContaining('CN=User later') })]);
  const bbReport = await verifyPdfSignatures(bbLt.pdf, { trustedRoots: [ca.root.der] });
  expect(bbReport.signatures[0]).toMatchObject({ valid: false, problems: expect.arrayContaining(['CERT_REVOKED']) });
});

it('revoked after the timestamp but with an invalidity date before it (key compromised earlier): CERT_REVOKED, not excused', async () => {
  const tsaUrl = `${ca.baseUrl}/tsa`;
  const bt = (await signToLevel(await samplePdf(), signer('compromised'), 'B-T', { tsaUrl, trustedRoots: [] })).bt!;
  await new Promise((r) => setTimeout(r, 1100));
  ca.revoke('compromised', new Date(), new Date('2024-06-01T00:00:00Z'));
  const lt = await addValidationDataWithSummary(bt, { trustedRoots: [ca.root.der], requireComplete: [] });
  expect(lt.summary.perSignature[0]!.missing).toEqual([expect.objectContaining({ code: 'OCSP_REVOKED', certificate: expect.stringContaining('CN=User compromised') })]);
  // openssl shows the invalidity date in the embedded answer
  const texts = await Promise.all(readDss(lt.pdf).ocsps.map(async (der, i) => {
    writeFileSync(join(ca.dir, `compromised-ocsp${i}.der`), der);
    return (await run('openssl', ['ocsp', '-respin', `compromised-ocsp${i}.der`, '-resp_text', '-noverify'], { cwd: ca.dir })).stdout;
  }));
  expect(texts.find((t) => t.includes('Cert Status: revoked'))).toMatch(/Invalidity Date:\s*\n?\s*Jun  1 00:00:00 2024 GMT/);
  const report = await verifyPdfSignatures(lt.pdf, { trustedRoots: [ca.root.der] });
  expect(report.signatures[0]).toMatchObject({ valid: false, revocationDataComplete: false, problems: expect.arrayContaining(['CERT_REVOKED']) });
});
