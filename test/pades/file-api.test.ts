/**
 * The file API (prepareSignatureFile, finalizeSignatureFile) against the Buffer API on the same inputs: the same
 * state, the same signed bytes, the same refusals. The reader behind it reads a file piecewise; with a window of a
 * few bytes every object runs past it, so the growing of windows is exercised on every fixture.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  finalizeSignature, finalizeSignatureFile, prepareSignature, prepareSignatureFile, verifyPdfSignatures, type PrepareSignatureOptions,
} from '../../src/pades';
import { buildUpdateBytes, type SignatureUpdateInput } from '../../src/pades/signature-update';
import { PdfReader, fileByteSource } from '../../src/pades/pdf/reader';
import { name } from '../../src/pades/pdf/objects';
import { fixture, SIGNABLE_FIXTURES, SYSTEM_PDFS } from '../fixtures/pdfs';
import { phoneSign, signPdf, stopPki, testPki, tmpDir } from './helpers';

afterAll(() => stopPki());

const ROOT = path.join(__dirname, '..', '..');
const REPO_PDFS = ['assets/samples/consent-form.pdf', 'assets/samples/tenancy-agreement.pdf', 'test/fixtures/session-records/v1/document.pdf'].map((f) => path.join(ROOT, f));
const startedAt = Date.now();
const clock = () => startedAt; // one /M and one default text for both APIs
const dir = tmpDir('file-api-');

/** An update's text with the fresh half of its /ID (random per update, as the PDF spec asks) blanked. */
const sameId = (latin1: string) => latin1.replace(/(\/ID\s*\[[\s\S]*?)<[0-9a-fA-F]{32}>(\s*\])/g, '$1<…>$2');
const updateText = (s: { update: { head: string; tail: string } }) => sameId(Buffer.from(s.update.head, 'base64').toString('latin1') + Buffer.from(s.update.tail, 'base64').toString('latin1'));

/** Every input: the signable fixtures, the repository's own PDFs, Debian's when present, and an already signed PDF. */
async function corpus(): Promise<Array<{ name: string; file: string; pdf: Buffer }>> {
  const out: Array<{ name: string; file: string; pdf: Buffer }> = [];
  const add = (label: string, pdf: Buffer) => {
    const file = path.join(dir, `${label.replace(/\W+/g, '-')}.pdf`);
    fs.writeFileSync(file, pdf);
    out.push({ name: label, file, pdf });
  };
  for (const f of SIGNABLE_FIXTURES) add(f, await fixture(f));
  for (const f of [...REPO_PDFS, ...SYSTEM_PDFS]) add(path.basename(f), fs.readFileSync(f));
  const pki = await testPki();
  add('signed once', await signPdf(await fixture('acroform'), pki.users.p256)); // a 64 KB /Contents in the newest update
  return out;
}

const variants: Array<[string, Partial<PrepareSignatureOptions>]> = [
  ['invisible', {}],
  ['visible on page 1', { appearance: { page: 1, rect: [40, 40, 240, 90] }, reason: 'Approved', location: 'Singapore' }],
];

describe.each(variants)('prepareSignatureFile (%s) gives prepareSignature\'s state, finalizeSignatureFile its bytes', (_v, extra) => {
  it('on every PDF of the corpus', async () => {
    const pki = await testPki();
    const options: PrepareSignatureOptions = { certificate: pki.users.p256.certDer, chain: [pki.intermediate.certDer], clock, ...extra };
    let signed = 0;
    for (const c of await corpus()) {
      let fromBuffer: Awaited<ReturnType<typeof prepareSignature>> | undefined;
      let bufferError: unknown;
      try {
        fromBuffer = await prepareSignature(c.pdf, options);
      } catch (e) {
        bufferError = e;
      }
      if (bufferError) {
        // refused alike (e.g. a visible box on a page a PDF does not have)
        await expect(prepareSignatureFile(c.file, options)).rejects.toMatchObject({ code: (bufferError as { code: string }).code, message: (bufferError as Error).message });
        continue;
      }
      const fromFile = await prepareSignatureFile(c.file, options);
      // The same state but for the update's fresh /ID, and what hashes it (the digest, the signed attributes)
      const { update: fu, documentHash: _fh, signedAttributes: _fa, ...fileRest } = fromFile.state;
      const { update: bu, documentHash: _bh, signedAttributes: _ba, ...bufferRest } = fromBuffer!.state;
      expect({ name: c.name, ...fileRest, update: updateText(fromFile.state), placeholder: fu.contentsBytes })
        .toEqual({ name: c.name, ...bufferRest, update: updateText(fromBuffer!.state), placeholder: bu.contentsBytes });
      // and its digest is the SHA-256 of the file and the update around the placeholder, computed here independently
      const digest = createHash('sha256').update(c.pdf).update(Buffer.from(fu.head, 'base64')).update(Buffer.from(fu.tail, 'base64')).digest();
      expect(Buffer.from(fromFile.state.signedAttributes, 'base64').includes(digest)).toBe(true);
      const sig = phoneSign(fromFile.state, pki.users.p256, fromFile.documentHash);
      const out = path.join(dir, `${c.name.replace(/\W+/g, '-')}-signed.pdf`);
      await finalizeSignatureFile(c.file, out, fromFile.state, sig);
      const written = fs.readFileSync(out);
      expect({ name: c.name, same: written.equals(await finalizeSignature(c.pdf, fromFile.state, sig)) }).toEqual({ name: c.name, same: true });
      const report = await verifyPdfSignatures(written, { trustedRoots: [pki.root.certDer], clock });
      expect({ name: c.name, valid: report.newest?.valid, field: report.newest?.fieldName }).toEqual({ name: c.name, valid: true, field: fromFile.state.fieldName });
      signed++;
    }
    expect(signed).toBeGreaterThanOrEqual(SIGNABLE_FIXTURES.length);
  });
});

const input: SignatureUpdateInput = { kind: 'Sig', fieldPrefix: 'Signature', placeholderBytes: 4096, entries: { Filter: name('Adobe.PPKLite') } };

it('a reader over the file in windows of 1 to 64 bytes builds the update the whole-buffer reader builds', async () => {
  for (const c of await corpus()) {
    const whole = buildUpdateBytes(PdfReader.open(c.pdf), input);
    const fd = fs.openSync(c.file, 'r');
    try {
      for (const window of [1, 7, 64]) {
        const piecewise = buildUpdateBytes(PdfReader.openSource(fileByteSource(fd, c.pdf.length), window), input);
        expect({ name: c.name, window, bytes: sameId(piecewise.bytes.toString('latin1')), byteRange: piecewise.byteRange })
          .toEqual({ name: c.name, window, bytes: sameId(whole.bytes.toString('latin1')), byteRange: whole.byteRange });
      }
    } finally {
      fs.closeSync(fd);
    }
  }
});

it('a PDF the Buffer API refuses is refused by the file API with the same code and words, in any window', async () => {
  const classic = await fixture('classic');
  const latin1 = classic.toString('latin1');
  const broken: Array<[string, Buffer]> = [
    ['truncated to half', classic.subarray(0, classic.length >> 1)],
    ['startxref beyond the end', Buffer.from(latin1.replace(/startxref\s+\d+/, 'startxref\n99999999'), 'latin1')],
    ['startxref pointing into an object', Buffer.from(latin1.replace(/startxref\s+\d+/, 'startxref\n20'), 'latin1')],
    ['garbage xref entries', Buffer.from(latin1.replace(/(xref\n0 \d+\n)([\s\S]*?)(trailer)/, (_m, a, e: string, t) => a + e.replace(/\d/g, '9') + t), 'latin1')],
    ['trailer without /Root', Buffer.from(latin1.replace('/Root 2 0 R', '/Xoot 2 0 R'), 'latin1')],
    ['the header only', Buffer.from('%PDF-1.7\n', 'latin1')],
  ];
  for (const [label, pdf] of broken) {
    const file = path.join(dir, `broken-${label.replace(/\W+/g, '-')}.pdf`);
    fs.writeFileSync(file, pdf);
    let expected: { code?: string; message?: string } = {};
    try {
      PdfReader.open(pdf);
      buildUpdateBytes(PdfReader.open(pdf), input);
    } catch (e) {
      expected = { code: (e as { code: string }).code, message: (e as Error).message };
    }
    expect({ label, refused: expected.code !== undefined }).toEqual({ label, refused: true });
    const fd = fs.openSync(file, 'r');
    try {
      for (const window of [1, 16, 16384]) {
        let got: { code?: string; message?: string } = {};
        try {
          buildUpdateBytes(PdfReader.openSource(fileByteSource(fd, pdf.length), window), input);
        } catch (e) {
          got = { code: (e as { code: string }).code, message: (e as Error).message };
        }
        expect({ label, window, ...got }).toEqual({ label, window, ...expected });
      }
    } finally {
      fs.closeSync(fd);
    }
  }
});

it('finalizeSignatureFile refuses another PDF than the prepared one (STATE_INVALID) and leaves no file behind', async () => {
  const pki = await testPki();
  const a = path.join(dir, 'a.pdf');
  const b = path.join(dir, 'b.pdf');
  fs.writeFileSync(a, await fixture('classic'));
  fs.writeFileSync(b, await fixture('xrefStream'));
  const { state, documentHash } = await prepareSignatureFile(a, { certificate: pki.users.p256.certDer });
  const sig = phoneSign(state, pki.users.p256, documentHash);
  const out = path.join(dir, 'refused-out.pdf');
  const before = fs.readdirSync(dir).sort();
  await expect(finalizeSignatureFile(b, out, state, sig)).rejects.toMatchObject({ code: 'STATE_INVALID' });
  await expect(finalizeSignatureFile(a, out, state, phoneSign(state, pki.users.p384))).rejects.toMatchObject({ code: 'SIGNATURE_INVALID' });
  expect(fs.readdirSync(dir).sort()).toEqual(before);
});

it('a file that cannot be opened is an INVALID_INPUT naming the argument', async () => {
  const pki = await testPki();
  const missing = path.join(dir, 'no-such.pdf');
  await expect(prepareSignatureFile(missing, { certificate: pki.users.p256.certDer })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'path' } });
  const a = path.join(dir, 'a-for-missing.pdf');
  fs.writeFileSync(a, await fixture('classic'));
  const { state, documentHash } = await prepareSignatureFile(a, { certificate: pki.users.p256.certDer });
  await expect(finalizeSignatureFile(missing, path.join(dir, 'x.pdf'), state, phoneSign(state, pki.users.p256, documentHash))).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'inPath' } });
});
