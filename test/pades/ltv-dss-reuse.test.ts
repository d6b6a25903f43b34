/**
 * B-LTA adds validation data twice (after the signature timestamp, then after the document timestamp). The second
 * time, what the /DSS already holds is reused while still suitable; only the document timestamp's TSA chain is asked
 * again. Counted at the sandbox OCSP responder itself, over real HTTP.
 */
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { startPkiServer, type RunningPkiServer } from '../../sandbox/pki';
import { signDigest } from '../../sandbox/phone';
import { finalizeSignature, prepareSignature, readDss } from '../../src/pades';
import { addDocumentTimestamp, timestampSignature } from '../../src/pades/doc-timestamp';
import { addValidationDataWithSummary } from '../../src/pades/ltv';
import { verifyPdfSignatures } from '../../src/pades/verify';
import { samplePdf } from './ltv-helpers';

let server: RunningPkiServer;
beforeAll(async () => { server = await startPkiServer(); });
afterAll(async () => { await server?.close(); });
afterEach(() => jest.restoreAllMocks()); // a failed test must not leave its responder spy for the next one

/** Serial numbers (lower-case hex, no leading zeros) the responder was asked about, sorted. */
function askedSerials(calls: unknown[][]): string[] {
  return calls.flatMap(([der]) => {
    const req = new pkijs.OCSPRequest({ schema: asn1js.fromBER(new Uint8Array(der as Buffer)).result });
    return req.tbsRequest.requestList.map((r) => Buffer.from(r.reqCert.serialNumber.valueBlock.valueHexView).toString('hex').replace(/^0+/, ''));
  }).sort();
}
const norm = (serials: string[]) => serials.map((s) => s.replace(/^0+/, '')).sort();

it('B-LTA: the second validation-data step asks only about the document timestamp\'s TSA chain; a renewal right after asks nothing', async () => {
  const { pki } = server;
  const tsaUrl = `${server.baseUrl}/ca/tsa`;
  const trustedRoots = [pki.root.certDer];
  const respond = jest.spyOn(server.service.ocsp, 'respond');

  // One PDF for prepare and finalize: pdf-lib stamps the creation time, so two calls a second apart differ.
  const pdf = await samplePdf();
  const { documentHash, state } = await prepareSignature(pdf, { certificate: pki.users.p256.certDer, chain: [pki.intermediate.certDer] });
  const bt = await finalizeSignature(pdf, state, signDigest(Buffer.from(documentHash, 'hex'), pki.users.p256.privateKey), { timestamp: timestampSignature(tsaUrl) });
  const lt = await addValidationDataWithSummary(bt, { trustedRoots });
  expect(askedSerials(respond.mock.calls)).toEqual(norm([pki.users.p256.serialHex, pki.intermediate.serialHex, pki.tsa.serialHex]));
  expect(lt.summary).toMatchObject({ ocspFetched: 3, ocspReused: 0, ocspResponses: 3 });

  // Answers must not predate the timestamp they vouch for (compared in whole seconds, as OCSP/TSA times are):
  // let the document timestamp fall in a later second than the answers already stored.
  await new Promise((r) => setTimeout(r, 1020 - (Date.now() % 1000)));
  respond.mockClear();
  const withDts = await addDocumentTimestamp(lt.pdf, { tsaUrl });
  const lta = await addValidationDataWithSummary(withDts, { trustedRoots });
  // The TSA certificate and its issuer now vouch for the newer document timestamp: asked again. The signer's answer,
  // fresh and after its signature timestamp, is reused.
  expect(askedSerials(respond.mock.calls)).toEqual(norm([pki.intermediate.serialHex, pki.tsa.serialHex]));
  expect(lta.summary).toMatchObject({ ocspFetched: 2, ocspReused: 1, ocspResponses: 3, complete: true });
  expect(readDss(lta.pdf).ocsps).toHaveLength(5); // 3 from B-LT + 2 new; the reused one is not stored twice

  const report = await verifyPdfSignatures(lta.pdf, { trustedRoots });
  expect(report).toMatchObject({ valid: true, level: 'B-LTA', newest: { valid: true, level: 'B-LTA' } });
  expect(report.signatures.map((s) => s.revocationDataComplete)).toEqual([true, true]);

  // Nothing newer to vouch for: everything comes from the DSS.
  respond.mockClear();
  const again = await addValidationDataWithSummary(lta.pdf, { trustedRoots });
  expect(respond).not.toHaveBeenCalled();
  expect(again.summary).toMatchObject({ ocspFetched: 0, ocspReused: 3, complete: true });
  respond.mockRestore();
});

it('a signer revoked after the B-LT step: its stored good answer (after the signature timestamp) still proves the signature and is kept; only the TSA chain is asked', async () => {
  const { pki } = server;
  const tsaUrl = `${server.baseUrl}/ca/tsa`;
  const user = await pki.issueUserCertificate({ curve: 'P-256', commonName: 'Reuse Then Revoked' });
  const pdf = await samplePdf();
  const { documentHash, state } = await prepareSignature(pdf, { certificate: user.certDer, chain: [pki.intermediate.certDer] });
  const bt = await finalizeSignature(pdf, state, signDigest(Buffer.from(documentHash, 'hex'), user.privateKey), { timestamp: timestampSignature(tsaUrl) });
  const lt = await addValidationDataWithSummary(bt, { trustedRoots: [pki.root.certDer] });
  pki.revoke(user.serialHex, 'keyCompromise');
  const respond = jest.spyOn(server.service.ocsp, 'respond');
  await new Promise((r) => setTimeout(r, 1020 - (Date.now() % 1000)));
  const withDts = await addDocumentTimestamp(lt.pdf, { tsaUrl });
  // The stored "good" answer for the user is not older than the signature timestamp it vouches for, so it is reused:
  // a revocation after the proven signing time does not invalidate the signature. The TSA chain is asked again.
  const lta = await addValidationDataWithSummary(withDts, { trustedRoots: [pki.root.certDer] });
  expect(askedSerials(respond.mock.calls)).toEqual(norm([pki.intermediate.serialHex, pki.tsa.serialHex]));
  expect(lta.summary.complete).toBe(true);
  respond.mockRestore();
});
