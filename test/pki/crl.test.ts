/**
 * The CRL client against an independent CA made with the OpenSSL CLI (`openssl ca -gencrl` behind a loopback HTTP
 * server, see openssl-ca.ts): users whose certificates name only a CRL Distribution Point, no OCSP responder.
 */
import { execFileSync } from 'node:child_process';
import { SingpassFlowsError } from '../../src/errors';
import { checkCrl, clearCrlCache, fetchCrlStatus } from '../../src/pki/crl';
import { crlUrlOf, crlUrlsOf, ocspUrlOf, parseCertificate } from '../../src/pki/x509';
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
