/**
 * Finalizing into the signed file's own Buffer (the session engine's finish): the original is copied in first and the
 * copy is what is checked, so the signed file is exactly the bytes hashed; the /ByteRange digest computed on the way
 * is handed to the verification of that very Buffer, which must judge as it does when it hashes the file itself.
 */
import { createHash } from 'node:crypto';
import { finalizeSignature, listSignatures, prepareSignature, type PreparedSignature } from '../../src/pades';
import { byteRangeDigest } from '../../src/pades/list';
import { finalizeSignatureInto, signedFileFor } from '../../src/pades/signature';
import { verifyPdfSignatures, verifyPdfSignaturesIn } from '../../src/pades/verify';
import { CertificateScope } from '../../src/pki/certificate-view';
import { SIGNABLE_FIXTURES, fixture } from '../fixtures/pdfs';
import { phoneSign, stopPki, testPki } from './helpers';

afterAll(() => stopPki());

async function prepared(name: (typeof SIGNABLE_FIXTURES)[number]) {
  const pki = await testPki();
  const pdf = await fixture(name);
  const { state } = await prepareSignature(pdf, { certificate: pki.users.p256.certDer, chain: [pki.intermediate.certDer] });
  return { pki, pdf, state, signature: phoneSign(state, pki.users.p256) };
}

/** finalizeSignatureInto as the engine calls it: the copy hashed, then finalized into its Buffer. */
async function finalizeOwn(pdf: Buffer, state: PreparedSignature, signature: Buffer, scope?: CertificateScope) {
  const signed = signedFileFor(pdf, state)!;
  const h = createHash('sha256').update(signed.original);
  return { signed, ...(await finalizeSignatureInto(signed, state, signature, {}, h, scope)) };
}

describe('finalizeSignatureInto', () => {
  it.each(SIGNABLE_FIXTURES)('%s: the same signed file as finalizeSignature, in the Buffer it was given, with its /ByteRange digest', async (name) => {
    const { pdf, state, signature } = await prepared(name);
    const out = await finalizeOwn(pdf, state, signature, new CertificateScope());
    expect(out.pdf).toBe(out.signed.file);
    expect(out.pdf.equals(await finalizeSignature(pdf, state, signature))).toBe(true);
    const sig = listSignatures(out.pdf)[0]!;
    expect(sig.byteRange).toEqual(state.byteRange);
    expect(out.byteRangeDigest!.equals(byteRangeDigest(out.pdf, sig.byteRange))).toBe(true);
  });

  it('is made of the copy: the caller changing its PDF afterwards changes nothing in it', async () => {
    const { pdf, state, signature } = await prepared('classic');
    const mine = Buffer.from(pdf);
    const signed = signedFileFor(mine, state)!;
    const h = createHash('sha256').update(signed.original);
    mine[100] ^= 0xff;
    const out = await finalizeSignatureInto(signed, state, signature, {}, h);
    expect(out.pdf.subarray(0, pdf.length).equals(pdf)).toBe(true);
    expect((await verifyPdfSignatures(out.pdf)).signatures[0]!.integrity.digestMatches).toBe(true);
  });

  it('refuses a copy that is not the prepared original, and a wrong signature, as finalizeSignature does', async () => {
    const { pki, pdf, state, signature } = await prepared('classic');
    const other = Buffer.from(pdf);
    other[100] ^= 0xff;
    await expect(finalizeOwn(other, state, signature)).rejects.toMatchObject({ code: 'STATE_INVALID' });
    await expect(finalizeOwn(pdf, state, phoneSign(state, pki.users.p384), new CertificateScope())).rejects.toMatchObject({ code: 'SIGNATURE_INVALID' });
  });

  it('has no Buffer for a state finalize refuses', async () => {
    const { pdf, state } = await prepared('classic');
    expect(signedFileFor(pdf, { ...state, update: { ...state.update, contentsBytes: -1 } })).toBeUndefined();
    expect(signedFileFor(pdf, { ...state, update: { ...state.update, contentsBytes: 1 << 30 } })).toBeUndefined();
  });
});

describe('verifyPdfSignaturesIn with a known /ByteRange digest', () => {
  it.each(SIGNABLE_FIXTURES)('%s: the same report as hashing the file, intact and tampered', async (name) => {
    const { pki, pdf, state, signature } = await prepared(name);
    const scope = new CertificateScope();
    const out = await finalizeOwn(pdf, state, signature, scope);
    const options = { trustedRoots: [pki.root.certDer] };
    const known = { pdf: out.pdf, byteRange: state.byteRange, sha256: out.byteRangeDigest! };
    const plain = await verifyPdfSignatures(out.pdf, options);
    expect(plain.signatures[0]!.valid).toBe(true);
    expect(await verifyPdfSignaturesIn(out.pdf, options, { scope, known })).toEqual(plain);
    // A tampered copy of the signed file: the digest known for the intact Buffer is not its own, so it is hashed.
    const tampered = Buffer.from(out.pdf);
    tampered[Math.floor(pdf.length / 2)] ^= 0x01;
    const refused = await verifyPdfSignaturesIn(tampered, options, { scope, known });
    expect(refused).toEqual(await verifyPdfSignatures(tampered, options));
    expect(refused.signatures[0]!.problems).toContain('DIGEST_MISMATCH');
  });

  it('is used for exactly that Buffer and range: a wrong one there is a DIGEST_MISMATCH, ignored anywhere else', async () => {
    const { pki, pdf, state, signature } = await prepared('classic');
    const out = await finalizeOwn(pdf, state, signature);
    const options = { trustedRoots: [pki.root.certDer] };
    const wrong = Buffer.alloc(32, 7);
    const there = await verifyPdfSignaturesIn(out.pdf, options, { known: { pdf: out.pdf, byteRange: state.byteRange, sha256: wrong } });
    expect(there.signatures[0]!.problems).toContain('DIGEST_MISMATCH');
    const sameBytes = Buffer.from(out.pdf);
    expect((await verifyPdfSignaturesIn(sameBytes, options, { known: { pdf: out.pdf, byteRange: state.byteRange, sha256: wrong } })).signatures[0]!.valid).toBe(true);
    const otherRange = [state.byteRange[0], state.byteRange[1], state.byteRange[2], state.byteRange[3] - 1];
    expect((await verifyPdfSignaturesIn(out.pdf, options, { known: { pdf: out.pdf, byteRange: otherRange, sha256: wrong } })).signatures[0]!.valid).toBe(true);
  });
});
