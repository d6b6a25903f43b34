/**
 * The CRL client against an independent CA made with the OpenSSL CLI (`openssl ca -gencrl` behind a loopback HTTP
 * server, see openssl-ca.ts): users whose certificates name only a CRL Distribution Point, no OCSP responder.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { SingpassFlowsError } from '../../src/errors';
import { checkCrl, clearCrlCache, fetchCrlStatus } from '../../src/pki/crl';
import { crlUrlOf, crlUrlsOf, keyUsageAllows, ocspUrlOf, parseCertificate, revokedSince } from '../../src/pki/x509';
import { startOpensslCa, type OpensslCa } from './openssl-ca';

let ca: OpensslCa;
beforeAll(async () => { ca = await startOpensslCa(); });
afterAll(async () => { await ca?.close(); });
beforeEach(() => {
  clearCrlCache();
  Object.assign(ca.faults, { crl: 'ok', crlPem: false });
  ca.requests.crl = 0;
});

const status = (u: 'crlonly' | 'crlrevoked', opts: Parameters<typeof fetchCrlStatus>[2] = {}) => fetchCrlStatus(ca.users[u].der, ca.intermediate.der, opts);
const rejects = async (p: Promise<unknown>, message: RegExp): Promise<void> => {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(SingpassFlowsError);
  expect(e).toMatchObject({ code: 'CRL_FAILED', message: expect.stringMatching(message) });
};

it('crlUrlOf reads the CRL Distribution Point; these certificates name no OCSP responder', () => {
  expect(crlUrlOf(ca.users.crlonly.der)).toBe(ca.crlUrl);
  expect(crlUrlsOf(ca.users.crlonly.der)).toEqual([ca.crlUrl]);
  expect(ocspUrlOf(ca.users.crlonly.der)).toBeUndefined();
  expect(crlUrlOf(ca.users.good.der)).toBeUndefined();
});

it('good: the CRL verifies and does not list the certificate', async () => {
  const r = await status('crlonly');
  expect(r).toMatchObject({ status: 'good', url: ca.crlUrl, cached: false });
  expect(r.revokedAt).toBeUndefined();
  expect(r.nextUpdate!.getTime() - r.thisUpdate.getTime()).toBe(24 * 3600_000);
  // the bytes are the CRL OpenSSL made: it parses them back and names the intermediate as issuer
  const text = execFileSync('openssl', ['crl', '-inform', 'DER', '-noout', '-issuer'], { input: r.der }).toString();
  expect(text).toMatch(/CN ?= ?LTV Test Intermediate/);
});

it('revoked: the revocation date and reason from the CRL entry', async () => {
  const r = await status('crlrevoked');
  expect(r).toMatchObject({ status: 'revoked', reason: 'keyCompromise' });
  expect(r.revokedAt!.toISOString()).toBe('2024-01-01T00:00:00.000Z');
});

it('a PEM CRL is accepted too', async () => {
  ca.faults.crlPem = true;
  expect(await status('crlrevoked')).toMatchObject({ status: 'revoked' });
});

it('a CRL signed by another key under the same name is refused', async () => {
  ca.faults.crl = 'look-alike';
  await rejects(status('crlonly'), /signature does not verify with the key of "CN=LTV Test Intermediate/);
});

it("a CRL of another issuer (the root's) is refused", async () => {
  ca.faults.crl = 'root';
  await rejects(status('crlonly'), /issued by another CA/);
});

it('a CRL signed by a CA certificate whose key usage lacks cRLSign is refused, though its signature verifies', async () => {
  // same name and key as the intermediate: the user certificate and the CRL both verify with it
  const issuer = parseCertificate(ca.intermediateNoCrlSign.der);
  expect(keyUsageAllows(issuer, 'cRLSign')).toBe(false);
  expect(keyUsageAllows(issuer, 'keyCertSign')).toBe(true);
  expect(keyUsageAllows(parseCertificate(ca.intermediate.der), 'cRLSign')).toBe(true);
  const e = await fetchCrlStatus(ca.users.crlonly.der, ca.intermediateNoCrlSign.der).then(() => undefined, (err: unknown) => err);
  expect(e).toMatchObject({ code: 'CRL_FAILED', message: expect.stringMatching(/"CN=LTV Test Intermediate.*" is not allowed to sign CRLs \(its key usage lacks cRLSign\)/) });
  // the same CRL (now cached) with the intermediate whose key usage allows it
  expect(await status('crlonly')).toMatchObject({ status: 'good' });
});

it('keyUsageAllows: a certificate without keyUsage is not restricted; digitalSignature but not keyCertSign for a user', () => {
  const user = parseCertificate(ca.users.crlonly.der);
  expect(keyUsageAllows(user, 'digitalSignature')).toBe(true);
  expect(keyUsageAllows(user, 'nonRepudiation')).toBe(true);
  expect(keyUsageAllows(user, 'keyCertSign')).toBe(false);
  expect(keyUsageAllows(user, 'cRLSign')).toBe(false);
  const responder = parseCertificate(ca.ocspSigner.der); // keyUsage digitalSignature only
  expect(keyUsageAllows(responder, 'digitalSignature')).toBe(true);
  expect(keyUsageAllows(responder, 'nonRepudiation')).toBe(false);
  const lookalike = path.join(ca.dir, 'lookalike.crt'); // made with no keyUsage at all
  expect(execFileSync('openssl', ['x509', '-in', lookalike, '-noout', '-text']).toString()).not.toContain('X509v3 Key Usage');
  const unrestricted = parseCertificate(execFileSync('openssl', ['x509', '-in', lookalike, '-outform', 'DER']));
  expect(keyUsageAllows(unrestricted, 'cRLSign')).toBe(true);
  expect(keyUsageAllows(unrestricted, 'keyCertSign')).toBe(true);
});

it('a stale CRL (nextUpdate passed) is refused, unless freshness is not checked; one from the future too', async () => {
  const later = () => Date.now() + 2 * 24 * 3600_000;
  await rejects(status('crlonly', { clock: later }), /stale \(nextUpdate .* has passed\)/);
  expect(await status('crlonly', { clock: later, checkFreshness: false })).toMatchObject({ status: 'good' });
  await rejects(status('crlonly', { clock: () => Date.now() - 3600_000, cache: false }), /thisUpdate is in the future/);
});

it('garbage, HTTP 404 and an unreachable server are CRL_FAILED with the URL', async () => {
  ca.faults.crl = 'garbage';
  await rejects(status('crlonly'), /cannot be trusted: it is not a CRL/);
  ca.faults.crl = '404';
  await rejects(status('crlonly'), /answered HTTP 404/);
  await rejects(status('crlonly', { url: 'http://127.0.0.1:1/int.crl', timeoutMs: 2000 }), /could not be downloaded \(HTTP_NETWORK\)/);
  ca.faults.crl = 'ok';
  await rejects(status('crlonly', { maxBytes: 100 }), /could not be downloaded .*more than 100 bytes/);
  const noDp = fetchCrlStatus(ca.users.good.der, ca.intermediate.der);
  await rejects(noDp, /names no http\(s\) CRL distribution point/);
  expect(() => checkCrl(Buffer.from('junk'), parseCertificate(ca.users.crlonly.der), parseCertificate(ca.intermediate.der))).toThrow(/not a CRL/);
});

it('the CRL is cached per URL until its nextUpdate: one download for several checks, sequential or parallel', async () => {
  const [a, b] = await Promise.all([status('crlonly'), status('crlrevoked')]);
  expect([a.status, b.status]).toEqual(['good', 'revoked']);
  expect(await status('crlonly')).toMatchObject({ status: 'good', cached: true });
  expect(ca.requests.crl).toBe(1);
  // past its nextUpdate the cached CRL is not used: downloaded again
  await status('crlonly', { clock: () => Date.now() + 2 * 24 * 3600_000, checkFreshness: false });
  expect(ca.requests.crl).toBe(2);
  await status('crlonly', { cache: false });
  expect(ca.requests.crl).toBe(3);
});

it('an entry with an invalidity date (key compromised before the revocation) reports it as invalidSince', async () => {
  const revokedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
  ca.revoke('compromised', revokedAt, new Date('2024-06-01T00:00:00Z'));
  const r = await fetchCrlStatus(ca.users.compromised.der, ca.intermediate.der, { url: ca.crlUrl, cache: false });
  expect(r).toMatchObject({ status: 'revoked', revokedAt, invalidSince: new Date('2024-06-01T00:00:00Z') });
  expect(revokedSince(r)).toEqual(new Date('2024-06-01T00:00:00Z'));
  expect(revokedSince({ revokedAt })).toEqual(revokedAt);
});
