/**
 * Our OCSP client against the sandbox PKI whose AIA points at a real `openssl ocsp` responder (the shared
 * pki-tools wrapper). The full B-LTA chain against a real OpenSSL responder is in test/pades/ltv-openssl.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestPki, type TestPki } from '../../sandbox/pki';
import { fetchOcspResponse, ocspUrlOf } from '../../src/pki';
import { startOpensslOcspResponder, type OpensslOcspResponder } from '../helpers/pki-tools';

let dir: string;
let responder: OpensslOcspResponder;
let pki: TestPki;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ocsp-interop-'));
  responder = await startOpensslOcspResponder(undefined, dir);
  // No HTTP server for the PKI itself is needed here: only OCSP is exercised.
  pki = await createTestPki({ baseUrl: 'http://127.0.0.1:9', ocspUrl: responder.url, rsaUser: false });
  responder.setPki(pki);
});
afterAll(async () => {
  await responder?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('the AIA of the users points at the OpenSSL responder', () => {
  expect(ocspUrlOf(pki.users.p256.certDer)).toBe(responder.url);
});

it('good and revoked answers from openssl ocsp verify (delegated responder issued by the intermediate)', async () => {
  const before = responder.requests;
  const good = await fetchOcspResponse(pki.users.p256.certDer, pki.intermediate.certDer);
  expect(good.status).toBe('good');
  expect(good.responderCertificate.equals(pki.ocspSigners.intermediate.certDer)).toBe(true);
  const revoked = await fetchOcspResponse(pki.users.revoked.certDer, pki.intermediate.certDer);
  expect(revoked.status).toBe('revoked');
  expect(revoked.revokedAt).toBeInstanceOf(Date);
  expect(responder.requests - before).toBe(2);
});

it('a revocation made after start shows up (the index is rebuilt per request)', async () => {
  const u = await pki.issueUserCertificate({ curve: 'P-256', commonName: 'Later Revoked' });
  expect((await fetchOcspResponse(u.certDer, pki.intermediate.certDer)).status).toBe('good');
  pki.revoke(u.serialHex, 'keyCompromise');
  expect((await fetchOcspResponse(u.certDer, pki.intermediate.certDer)).status).toBe('revoked');
});

it('the intermediate itself: this responder only speaks for the intermediate CA, so its answer is refused', async () => {
  // The intermediate's AIA also names this responder; its answer is signed by the intermediate's delegated
  // responder, which the ROOT never authorised -> OCSP_FAILED (accepting it would let a sub-CA vouch for itself).
  await expect(fetchOcspResponse(pki.intermediate.certDer, pki.root.certDer)).rejects.toMatchObject({ code: 'OCSP_FAILED', message: expect.stringContaining('was not issued by the certificate\'s CA') });
});
