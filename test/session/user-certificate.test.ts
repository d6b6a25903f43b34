/**
 * The certificate check before any hash, cold (the first certificate of its CA: the path is built) and warm (the
 * CA's path kept: the leaf's link and the OCSP answer read natively): the same verdict either way for a good, a
 * revoked, an unknown, an expired, a not-yet-valid, a self-signed and a foreign-CA certificate, and a tampered one.
 */
import { X509Certificate } from 'node:crypto';
import { createTestPki, OcspResponder, type TestPki } from '../../sandbox/pki';
import type { Fetch } from '../../src/http';
import { UserCertificateChecker } from '../../src/session/user-certificate';

let pki: TestPki;
let other: TestPki;
beforeAll(async () => {
  pki = await createTestPki({ baseUrl: 'http://127.0.0.1:9', rsaUser: false });
  other = await createTestPki({ baseUrl: 'http://127.0.0.1:9', rsaUser: false });
});

async function verdict(checker: UserCertificateChecker, der: Buffer): Promise<string> {
  try {
    const chain = await checker.check(der);
    return `good (${chain.length} certificates)`;
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

describe('UserCertificateChecker', () => {
  it('gives every certificate the same verdict with and without its CA\'s path kept', async () => {
    const responder = new OcspResponder(pki);
    const fetch: Fetch = async (_u, init) => new Response(new Uint8Array(await responder.respond(Buffer.from(init!.body as Uint8Array))), { status: 200 });
    const day = 86_400_000;
    const revoked = await pki.issueUserCertificate({ curve: 'P-256', commonName: 'Revoked Later' });
    pki.revoke(revoked.serialHex, 'keyCompromise');
    const tampered = Buffer.from(pki.users.p384.certDer);
    tampered[tampered.length - 10] ^= 0x01; // in the signature
    const cases: [string, Buffer, string][] = [
      ['good', pki.users.p256.certDer, 'good (3 certificates)'],
      ['good P-384', pki.users.p384.certDer, 'good (3 certificates)'],
      ['revoked', revoked.certDer, 'OCSP_REVOKED'],
      ['expired', (await pki.issueUserCertificate({ curve: 'P-256', commonName: 'Expired', notBefore: new Date(Date.now() - 3 * day), notAfter: new Date(Date.now() - day) })).certDer, 'CERTIFICATE_EXPIRED'],
      ['not yet valid', (await pki.issueUserCertificate({ curve: 'P-256', commonName: 'Later', notBefore: new Date(Date.now() + day), notAfter: new Date(Date.now() + 3 * day) })).certDer, 'CERTIFICATE_NOT_YET_VALID'],
      ['self-signed', (await pki.issueUserCertificate({ curve: 'P-256', commonName: 'Self', selfSigned: true })).certDer, 'CERTIFICATE_UNTRUSTED'],
      ['another CA\'s user', other.users.p256.certDer, 'CHAIN_INCOMPLETE'],
      ['signature tampered', tampered, 'CHAIN_INCOMPLETE'],
    ];
    const make = () => new UserCertificateChecker({ trustedRoots: [pki.root.certDer], intermediates: [pki.intermediate.certDer], fetch });
    const warm = make();
    expect(await verdict(warm, pki.users.p256.certDer)).toBe('good (3 certificates)');
    for (const [name, der, expected] of cases) {
      expect({ name, cold: await verdict(make(), der), warm: await verdict(warm, der) }).toEqual({ name, cold: expected, warm: expected });
    }
  });

  it('reports the chain by subject, leaf to root, for good and revoked certificates, again and again', async () => {
    const responder = new OcspResponder(pki);
    const fetch: Fetch = async (_u, init) => new Response(new Uint8Array(await responder.respond(Buffer.from(init!.body as Uint8Array))), { status: 200 });
    const checker = new UserCertificateChecker({ trustedRoots: [pki.root.certDer], intermediates: [pki.intermediate.certDer], fetch });
    const revoked = await pki.issueUserCertificate({ curve: 'P-256', commonName: 'Revoked Reported' });
    pki.revoke(revoked.serialHex, 'keyCompromise');
    // without the holder's NRIC (the serialNumber attribute): a report is not the place for it
    const subject = (der: Buffer) => new X509Certificate(der).subject.split('\n').filter((p) => !p.startsWith('serialNumber=')).join(', ');
    const cas = [subject(pki.intermediate.certDer), subject(pki.root.certDer)];
    for (let round = 0; round < 2; round++) {
      const good = await checker.report(pki.users.p256.certDer);
      expect({ status: good.status, chain: good.chain }).toEqual({ status: 'good', chain: [subject(pki.users.p256.certDer), ...cas] });
      const p384 = await checker.report(pki.users.p384.certDer);
      expect(p384.chain).toEqual([subject(pki.users.p384.certDer), ...cas]);
      const bad = await checker.report(revoked.certDer);
      expect({ status: bad.status, chain: bad.chain }).toEqual({ status: 'revoked', chain: [subject(revoked.certDer), ...cas] });
    }
  });
});
