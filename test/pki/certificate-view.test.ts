/**
 * The native certificate reading against pkijs on the same certificates (an OpenSSL-made CA and the sandbox's):
 * the same fields, the same "issued by" verdict for every pair, the same AIA OCSP URL; and the services'
 * certificates kept, a user's not.
 */
import { createTestPki, type TestPki } from '../../sandbox/pki';
import { CertificateScope, certificateView, viewCertificate, viewIssuedBy } from '../../src/pki/certificate-view';
import { isIssuedBy, nameDer, ocspUrlOf, parseCertificate, publicKeyBits, spkiDer } from '../../src/pki/x509';
import { startOpensslCa, type OpensslCa } from './openssl-ca';

let ca: OpensslCa;
let pki: TestPki;
beforeAll(async () => {
  ca = await startOpensslCa();
  pki = await createTestPki({ baseUrl: 'http://127.0.0.1:9' });
});
afterAll(async () => { await ca?.close(); });

function corpus(): { name: string; der: Buffer }[] {
  return [
    ...(['root', 'intermediate', 'intermediateNoCrlSign', 'ocspSigner', 'tsa'] as const).map((k) => ({ name: `openssl ${k}`, der: ca[k].der })),
    ...Object.entries(ca.users).map(([k, u]) => ({ name: `openssl user ${k}`, der: u.der })),
    ...(['root', 'intermediate', 'tsa'] as const).map((k) => ({ name: `sandbox ${k}`, der: pki[k].certDer })),
    { name: 'sandbox OCSP responder', der: pki.ocspSigners.intermediate.certDer },
    ...Object.entries(pki.users).map(([k, u]) => ({ name: `sandbox user ${k}`, der: u!.certDer })),
  ];
}

describe('viewCertificate', () => {
  it('reads the fields pkijs reads, byte for byte', () => {
    for (const c of corpus()) {
      const v = viewCertificate(c.der);
      const p = parseCertificate(c.der);
      expect({ name: c.name, tbs: v.tbs, alg: v.signatureAlgorithm, sig: v.signature, serial: v.serial, issuer: v.issuerName, subject: v.subjectName, spki: v.spki, bits: v.publicKeyBits, ocsp: v.ocspUrl })
        .toEqual({
          name: c.name, tbs: Buffer.from(p.tbsView), alg: p.signatureAlgorithm.algorithmId, sig: Buffer.from(p.signatureValue.valueBlock.valueHexView),
          serial: Buffer.from(p.serialNumber.valueBlock.valueHexView), issuer: nameDer(p.issuer), subject: nameDer(p.subject), spki: spkiDer(p), bits: publicKeyBits(p), ocsp: ocspUrlOf(p),
        });
    }
  });

  it('gives pkijs\'s "issued by" verdict for every pair of certificates', () => {
    const all = corpus();
    let issued = 0;
    for (const a of all) {
      for (const b of all) {
        const native = viewIssuedBy(viewCertificate(a.der), viewCertificate(b.der));
        expect({ cert: a.name, issuer: b.name, native }).toEqual({ cert: a.name, issuer: b.name, native: isIssuedBy(parseCertificate(a.der), parseCertificate(b.der)) });
        if (native) issued++;
      }
    }
    expect(issued).toBeGreaterThan(10);
  });

  it('refuses what is not one certificate', () => {
    for (const bad of [Buffer.from('not der'), Buffer.concat([ca.users.good.der, Buffer.from([0])]), ca.users.good.der.subarray(0, 100)]) {
      expect(() => viewCertificate(bad)).toThrow();
    }
  });

  it('keeps the services\' certificates (CAs, OCSP responders, TSAs), reads a user\'s afresh every time', () => {
    for (const der of [ca.root.der, ca.intermediate.der, ca.ocspSigner.der, ca.tsa.der]) expect(certificateView(der)).toBe(certificateView(der));
    expect(certificateView(ca.users.good.der)).not.toBe(certificateView(ca.users.good.der));
  });
});

describe('CertificateScope', () => {
  it('shares a user\'s view within the scope only, by the exact bytes', () => {
    const scope = new CertificateScope();
    const other = new CertificateScope();
    const user = ca.users.good.der;
    const view = certificateView(user, scope);
    expect(certificateView(Buffer.from(user), scope)).toBe(view); // the same bytes in another Buffer
    expect(certificateView(user, other)).not.toBe(view);
    expect(certificateView(user)).not.toBe(view);
    expect(certificateView(pki.users.p256.certDer, scope)).not.toBe(view);
    expect(scope.find(user)).toBe(view);
    expect(scope.find(Buffer.concat([user, Buffer.from([0])]))).toBeUndefined();
  });

  it('leaves the services\' certificates to the shared cache, and reads what it kept as a fresh view does', () => {
    const scope = new CertificateScope();
    expect(certificateView(ca.intermediate.der, scope)).toBe(certificateView(ca.intermediate.der));
    expect(scope.find(ca.intermediate.der)).toBeUndefined();
    for (const { der } of corpus()) {
      const kept = certificateView(der, scope);
      const fresh = viewCertificate(Buffer.from(der));
      for (const k of ['der', 'tbs', 'signature', 'serial', 'issuerName', 'subjectName', 'spki', 'publicKeyBits'] as const) expect(kept[k].equals(fresh[k])).toBe(true);
      expect([kept.signatureAlgorithm, kept.ocspUrl, kept.caIssuersUrl, kept.x509.subject]).toEqual([fresh.signatureAlgorithm, fresh.ocspUrl, fresh.caIssuersUrl, fresh.x509.subject]);
    }
  });
});
