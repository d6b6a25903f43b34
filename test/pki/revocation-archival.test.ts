/** adbe-revocationInfoArchival: the answers are written bit for bit and read back; prepare signs them in. */
import { createHash } from 'node:crypto';
import { encodeRevocationArchive, readRevocationArchive } from '../../src/pki/revocation-archival';
import { buildSignedAttributes, readCertificateFields, revocationArchiveOf } from '../../src/pades/cms';
import { prepareSignature } from '../../src/pades';
import { startSandbox, type Sandbox } from '../../sandbox';
import { fetchOcspResponse } from '../../src/pki';
import { samplePdf } from '../pades/ltv-helpers';

let sandbox: Sandbox;
let ocsp: Buffer;
let userCert: Buffer;
beforeAll(async () => {
  sandbox = await startSandbox();
  userCert = sandbox.pki.users.p256.certDer;
  ocsp = (await fetchOcspResponse(userCert, sandbox.pki.intermediate.certDer)).der;
});
afterAll(() => sandbox.close());

it('round trip: the OCSP answer comes back byte for byte under [1]', () => {
  const der = encodeRevocationArchive({ ocsps: [ocsp] });
  expect(der.subarray(0, 1)).toEqual(Buffer.from([0x30]));
  expect(readRevocationArchive(der)).toEqual({ ocsps: [ocsp], crls: [] });
  expect(der.includes(ocsp)).toBe(true);
});

it('refuses an answer that is not DER; reads nonsense as nothing', () => {
  expect(() => encodeRevocationArchive({ ocsps: [Buffer.from([0x30, 0x80, 0x00, 0x00])] })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  expect(() => encodeRevocationArchive({ ocsps: [ocsp.subarray(0, 20)] })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  expect(readRevocationArchive(Buffer.from([0x04, 0x01, 0x00]))).toBeUndefined();
});

it('signed attributes carry it as 1.2.840.113583.1.1.8; without it they are as before', () => {
  const cert = readCertificateFields(userCert);
  const digest = createHash('sha256').update('x').digest();
  const plain = buildSignedAttributes(digest, cert);
  const withAnswer = buildSignedAttributes(digest, cert, encodeRevocationArchive({ ocsps: [ocsp] }));
  expect(revocationArchiveOf(plain)).toBeUndefined();
  expect(readRevocationArchive(revocationArchiveOf(withAnswer)!)).toEqual({ ocsps: [ocsp], crls: [] });
  expect(withAnswer.length).toBeGreaterThan(plain.length + ocsp.length);
});

it('prepareSignature with ocspResponses: the document hash covers the answer; the state finalizes as before', async () => {
  const pdf = await samplePdf('Archive');
  const a = await prepareSignature(pdf, { certificate: userCert, clock: () => 1_800_000_000_000 });
  const b = await prepareSignature(pdf, { certificate: userCert, ocspResponses: [ocsp], clock: () => 1_800_000_000_000 });
  expect(b.documentHash).not.toBe(a.documentHash);
  expect(revocationArchiveOf(Buffer.from(b.state.signedAttributes, 'base64'))).toBeDefined();
  await expect(prepareSignature(pdf, { certificate: userCert, ocspResponses: ['x' as unknown as Buffer] })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
});
