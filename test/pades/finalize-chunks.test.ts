import { finalizeSignature, finalizeSignatureChunks, prepareSignature, listSignatures } from '../../src/pades';
import { fixture } from '../fixtures/pdfs';
import { phoneSign, stopPki, testPki } from './helpers';

afterAll(() => stopPki());

test('finalizeSignatureChunks: the original Buffer itself first (not copied), then the update; same bytes as finalizeSignature', async () => {
  const pki = await testPki();
  const pdf = await fixture('classic');
  const { documentHash, state } = await prepareSignature(pdf, { certificate: pki.users.p256.certDer, chain: [pki.intermediate.certDer] });
  const sig = phoneSign(state, pki.users.p256, documentHash);
  const chunks = await finalizeSignatureChunks(pdf, state, sig);
  expect(chunks[0]).toBe(pdf); // same object: no second copy of a large file
  const joined = Buffer.concat(chunks);
  expect(joined.length - pdf.length).toBeLessThan(80 * 1024);
  expect(joined.equals(await finalizeSignature(pdf, state, sig))).toBe(true);
  expect(listSignatures(joined).map((s) => s.type)).toEqual(['signature']);
});

test('finalizeSignatureChunks refuses a wrong signature like finalizeSignature does', async () => {
  const pki = await testPki();
  const pdf = await fixture('classic');
  const { state } = await prepareSignature(pdf, { certificate: pki.users.p256.certDer });
  const wrong = phoneSign(state, pki.users.p384);
  await expect(finalizeSignatureChunks(pdf, state, wrong)).rejects.toMatchObject({ code: 'SIGNATURE_INVALID' });
});
