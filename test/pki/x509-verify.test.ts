/**
 * verifySignature remembers what it verified: a repeated check of the same bytes answers as the first did, and a
 * change to any input (signed bytes, signature, key, hash) is verified afresh and refused.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { OID, verifySignature } from '../../src/pki/x509';

const ECDSA_SHA384 = '1.2.840.10045.4.3.3';

function signer(namedCurve: string): { spki: Buffer; sign: (data: Buffer, hash?: string) => Buffer } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve });
  return {
    spki: publicKey.export({ format: 'der', type: 'spki' }),
    sign: (data, hash = 'sha256') => sign(hash, data, { key: privateKey, dsaEncoding: 'der' }),
  };
}

describe('verifySignature', () => {
  const a = signer('P-384');
  const b = signer('P-384');
  const data = Buffer.from('tbsResponseData: the bytes as signed');
  const sig = a.sign(data);

  it('verifies a good signature, and again from what it remembers', () => {
    expect(verifySignature(OID.ecdsaWithSha256, data, sig, a.spki)).toBe(true);
    expect(verifySignature(OID.ecdsaWithSha256, data, sig, a.spki)).toBe(true);
  });

  it('after a success, each changed input is refused: bytes, signature, key, hash', () => {
    expect(verifySignature(OID.ecdsaWithSha256, data, sig, a.spki)).toBe(true);
    const tampered = Buffer.from(data);
    tampered[0] ^= 1;
    expect(verifySignature(OID.ecdsaWithSha256, tampered, sig, a.spki)).toBe(false);
    expect(verifySignature(OID.ecdsaWithSha256, data, b.sign(data), a.spki)).toBe(false);
    expect(verifySignature(OID.ecdsaWithSha256, data, sig, b.spki)).toBe(false);
    expect(verifySignature(ECDSA_SHA384, data, sig, a.spki)).toBe(false);
  });

  it('the same bytes split differently between data and signature are not taken for a remembered pair', () => {
    expect(verifySignature(OID.ecdsaWithSha256, data, sig, a.spki)).toBe(true);
    // the signature's last byte moved to the front of the data: signature then data, concatenated, are the same bytes
    const moved = Buffer.concat([sig.subarray(sig.length - 1), data]);
    expect(verifySignature(OID.ecdsaWithSha256, moved, sig.subarray(0, sig.length - 1), a.spki)).toBe(false);
  });

  it('a failure is not remembered as a verdict: the good signature still verifies after a bad one', () => {
    const other = Buffer.from('other bytes');
    const good = a.sign(other);
    expect(verifySignature(OID.ecdsaWithSha256, other, b.sign(other), a.spki)).toBe(false);
    expect(verifySignature(OID.ecdsaWithSha256, other, good, a.spki)).toBe(true);
  });
});
