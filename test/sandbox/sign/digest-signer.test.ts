import * as crypto from 'node:crypto';
import { signDigest, verifyDigest } from '../../../sandbox/phone/digest-signer';

// The oracle is node:crypto itself: a signature over sha256(data) made WITHOUT re-hashing must verify as an ordinary
// `ecdsa-with-SHA256` / `sha256WithRSAEncryption` signature over `data`.
describe('signDigest (phone signs the doc_hash without hashing it again)', () => {
  const data = crypto.randomBytes(200); // stands in for DER SignedAttributes
  const digest = crypto.createHash('sha256').update(data).digest();

  for (const namedCurve of ['P-256', 'P-384', 'P-521']) {
    it(`${namedCurve}: verifies with crypto.verify('sha256', data, {dsaEncoding:'der'})`, () => {
      const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve });
      for (let i = 0; i < 5; i++) {
        const sig = signDigest(digest, privateKey);
        expect(crypto.verify('sha256', data, { key: publicKey, dsaEncoding: 'der' }, sig)).toBe(true);
        expect(verifyDigest(digest, sig, publicKey)).toBe(true);
      }
    });
    it(`${namedCurve}: verifyDigest accepts node's own signatures and rejects wrong digests/keys`, () => {
      const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve });
      const other = crypto.generateKeyPairSync('ec', { namedCurve });
      const nodeSig = crypto.sign('sha256', data, { key: privateKey, dsaEncoding: 'der' });
      expect(verifyDigest(digest, nodeSig, publicKey)).toBe(true);
      const wrong = Buffer.from(digest);
      wrong[0] ^= 1;
      expect(verifyDigest(wrong, nodeSig, publicKey)).toBe(false);
      expect(verifyDigest(digest, nodeSig, other.publicKey)).toBe(false);
      expect(verifyDigest(digest, Buffer.from('3000', 'hex'), publicKey)).toBe(false);
    });
  }

  it.each([['P-256', 64], ['P-384', 96], ['P-521', 132]] as const)('%s raw r||s (what some devices send): %i bytes, verifies as ieee-p1363 and with verifyDigest', (namedCurve, size) => {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve });
    for (let i = 0; i < 5; i++) {
      const sig = signDigest(digest, privateKey, 'raw');
      expect(sig.length).toBe(size);
      expect(crypto.verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, sig)).toBe(true);
      expect(verifyDigest(digest, sig, publicKey)).toBe(true);
    }
    const nodeRaw = crypto.sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
    expect(verifyDigest(digest, nodeRaw, publicKey)).toBe(true);
    expect(verifyDigest(digest, nodeRaw.subarray(1), publicKey)).toBe(false);
  });

  it('RSA: PKCS#1 v1.5 over the DigestInfo verifies with crypto.verify', () => {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const sig = signDigest(digest, privateKey);
    expect(crypto.verify('sha256', data, publicKey, sig)).toBe(true);
    expect(verifyDigest(digest, sig, publicKey)).toBe(true);
    expect(verifyDigest(crypto.createHash('sha256').update('x').digest(), sig, publicKey)).toBe(false);
  });

  it('refuses a digest that is not 32 bytes', () => {
    const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(() => signDigest(Buffer.alloc(48), privateKey)).toThrow(/32 bytes/);
  });
});
