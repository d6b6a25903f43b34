/**
 * What was appended after a signature: validation data, document timestamps and later signatures are notes (that
 * is what B-LT, B-LTA and countersigning append); anything else changes the document and is the problem
 * NOT_COVERING_WHOLE_FILE, worded plainly. The changes are built by hand as incremental updates with the package's
 * own PDF writer, the way another tool would append them.
 */
import { startPkiServer, type RunningPkiServer } from '../../sandbox/pki';
import { signDigest } from '../../sandbox/phone';
import { finalizeSignature, prepareSignature } from '../../src/pades';
import { addDocumentTimestamp } from '../../src/pades/doc-timestamp';
import { findPage } from '../../src/pades/acroform';
import { addValidationData } from '../../src/pades/ltv';
import { PdfDict, PdfRef, PdfStream, PdfString, dict, name } from '../../src/pades/pdf/objects';
import { PdfReader } from '../../src/pades/pdf/reader';
import { verifyPdfSignatures, type SignatureVerification } from '../../src/pades/verify';
import { fixture, SIGNABLE_FIXTURES } from '../fixtures/pdfs';
import { appendUpdate, changePageContent, samplePdf, signToLevel, type Signer } from './ltv-helpers';

let server: RunningPkiServer;
let root: Buffer;
let tsaUrl: string;
let p256: Signer;
let p384: Signer;
/** B-LTA as the signing session makes it: signature, validation data, document timestamp, its validation data. */
let blta: Buffer;
let bt: Buffer;

beforeAll(async () => {
  server = await startPkiServer();
  const { pki } = server;
  root = pki.root.certDer;
  tsaUrl = `${server.baseUrl}/ca/tsa`;
  p256 = { certDer: pki.users.p256.certDer, privateKey: pki.users.p256.privateKey, chain: [pki.intermediate.certDer] };
  p384 = { certDer: pki.users.p384.certDer, privateKey: pki.users.p384.privateKey, chain: [pki.intermediate.certDer] };
  const stages = await signToLevel(await samplePdf(), p256, 'B-LTA', { tsaUrl, trustedRoots: [root] });
  bt = stages.bt!;
  blta = await addValidationData(stages.blta!, { trustedRoots: [root] });
});
afterAll(async () => { await server?.close(); });

const codes = (s: SignatureVerification) => s.notes.map((n) => n.code);

describe('what was appended after a signature, in a valid file: notes, no problems', () => {
  it('our B-LTA: the signature notes validation data and the document timestamp; the timestamp notes its validation data', async () => {
    const report = await verifyPdfSignatures(blta, { trustedRoots: [root] });
    expect(report).toMatchObject({ valid: true, level: 'B-LTA' });
    const [sig, dts] = report.signatures;
    expect(sig).toMatchObject({ valid: true, problems: [], problemDetails: [], integrity: { coversWholeFile: false, changedAfterSigning: false } });
    expect(codes(sig!)).toEqual(['VALIDATION_DATA_ADDED', 'DOCUMENT_TIMESTAMP_ADDED']);
    expect(sig!.notes[0]!.text).toBe('Validation data (certificates and revocation answers) was added after this signature. This is what B-LT means; it does not change what was signed.');
    expect(sig!.notes[1]!.text).toMatch(/A document timestamp was added after this signature \("DocTimeStamp1"\)\. This is what B-LTA means/);
    expect(dts).toMatchObject({ type: 'docTimestamp', valid: true, problems: [], integrity: { changedAfterSigning: false } });
    expect(codes(dts!)).toEqual(['VALIDATION_DATA_ADDED']);
    expect(dts!.notes[0]!.text).toBe('Validation data (certificates and revocation answers) was added after this timestamp, so it can still be checked later. It does not change what was timestamped.');
    expect(report.newest).toMatchObject({ valid: true, problems: [], notes: expect.arrayContaining([expect.objectContaining({ code: 'DOCUMENT_TIMESTAMP_ADDED' })]) });
  });

  it('B-T: nothing appended, revocation data missing is a note (what B-T means), not a problem', async () => {
    const report = await verifyPdfSignatures(bt, { trustedRoots: [root] });
    expect(report.signatures[0]).toMatchObject({ valid: true, level: 'B-T', problems: [], integrity: { coversWholeFile: true, changedAfterSigning: false } });
    expect(codes(report.signatures[0]!)).toEqual(['REVOCATION_DATA_MISSING']);
  });

  it('two signatures, then validation data: the first notes the later signature by name and the validation data', async () => {
    const first = (await signToLevel(await samplePdf(), p256, 'B-T', { tsaUrl, trustedRoots: [] })).bt!;
    const second = (await signToLevel(first, p384, 'B-LT', { tsaUrl, trustedRoots: [root] })).blt!;
    const report = await verifyPdfSignatures(second, { trustedRoots: [root] });
    expect(report).toMatchObject({ valid: true, level: 'B-LT' });
    const [one, two] = report.signatures;
    expect(one).toMatchObject({ fieldName: 'Signature1', valid: true, problems: [], integrity: { changedAfterSigning: false } });
    expect(codes(one!)).toEqual(['VALIDATION_DATA_ADDED', 'LATER_SIGNATURE_ADDED']);
    expect(one!.notes[1]!.text).toBe('Another signature was added after this signature ("Signature2"). Signing again does not change what this signature covers.');
    expect(two).toMatchObject({ fieldName: 'Signature2', valid: true, problems: [] });
    expect(codes(two!)).toEqual(['VALIDATION_DATA_ADDED']);
  });

  it.each(SIGNABLE_FIXTURES)('signed twice, the %s fixture: the first signature notes the second, no problem', async (name) => {
    const first = (await signToLevel(await fixture(name), p256, 'B-B', { tsaUrl, trustedRoots: [] })).bb!;
    const second = (await signToLevel(first, p384, 'B-B', { tsaUrl, trustedRoots: [] })).bb!;
    const report = await verifyPdfSignatures(second, { trustedRoots: [root] });
    expect(report.signatures.map((s) => [s.problems, codes(s)])).toEqual([[[], ['LATER_SIGNATURE_ADDED']], [[], []]]);
    expect(report.valid).toBe(true);
  });

  it('empty signature fields of a form filled one after the other: a later signature, named', async () => {
    const pdf = await fixture('emptySignatureFields');
    const sign = async (input: Buffer, fieldName: string, who: Signer) => {
      const { documentHash, state } = await prepareSignature(input, { certificate: who.certDer, chain: who.chain, fieldName });
      return finalizeSignature(input, state, signDigest(Buffer.from(documentHash, 'hex'), who.privateKey));
    };
    const both = await sign(await sign(pdf, 'Sign here', p256), 'Witness', p384);
    const report = await verifyPdfSignatures(both, { trustedRoots: [root] });
    expect(report.valid).toBe(true);
    const first = report.signatures.find((s) => s.fieldName === 'Sign here')!;
    expect(first).toMatchObject({ problems: [], integrity: { changedAfterSigning: false } });
    expect(first.notes).toEqual([expect.objectContaining({ code: 'LATER_SIGNATURE_ADDED', text: expect.stringContaining('("Witness")') })]);
  });

  it('validation data in indirect DSS arrays (as other tools write them), grown by a later update: notes only', async () => {
    const { pki } = server;
    let certs: PdfRef | undefined;
    const first = appendUpdate(bt, (reader, update) => {
      certs = update.add([update.add(new PdfStream(new PdfDict(), pki.intermediate.certDer))]);
      const catalog = reader.catalog().clone().set('DSS', update.add(dict({ Type: name('DSS'), Certs: certs })));
      update.replace(reader.rootRef, catalog);
    });
    const grown = appendUpdate(first, (reader, update) => {
      update.replace(certs!, [...reader.resolveArray(certs)!, update.add(new PdfStream(new PdfDict(), pki.root.certDer))]);
    });
    const [sig] = (await verifyPdfSignatures(grown, { trustedRoots: [root] })).signatures;
    expect(sig).toMatchObject({ valid: true, problems: [], integrity: { changedAfterSigning: false } });
    expect(codes(sig!)).toContain('VALIDATION_DATA_ADDED');
  });

  it('document properties updated after signing (/Info written again): a note, still valid', async () => {
    const updated = appendUpdate(bt, (reader, update) => {
      // The writer keeps the trailer's /Info reference: a new version of that object is the update.
      const info = reader.trailer.get('Info');
      expect(info).toBeInstanceOf(PdfRef);
      update.replace(info as PdfRef, dict({ Title: new PdfString(Buffer.from('Renamed', 'latin1')) }));
    });
    const report = await verifyPdfSignatures(updated, { trustedRoots: [root] });
    expect(report.signatures[0]).toMatchObject({ valid: true, problems: [] });
    expect(codes(report.signatures[0]!)).toContain('DOCUMENT_INFO_UPDATED');
  });
});

describe('the document changed after signing: NOT_COVERING_WHOLE_FILE is a problem, said plainly', () => {
  it('new page content after the B-LTA: the signature and the document timestamp are no longer valid', async () => {
    const changed = changePageContent(blta);
    const report = await verifyPdfSignatures(changed, { trustedRoots: [root] });
    expect(report.valid).toBe(false);
    const [sig, dts] = report.signatures;
    for (const s of [sig!, dts!]) {
      expect(s.integrity).toMatchObject({ digestMatches: true, signatureValid: true, changedAfterSigning: true });
      expect(s).toMatchObject({ valid: false, problems: ['NOT_COVERING_WHOLE_FILE'] });
    }
    expect(sig!.problemDetails).toEqual([{
      code: 'NOT_COVERING_WHOLE_FILE',
      text: 'The document was changed after this signature was made: the content of a page was changed. What the PDF shows now may not be what was signed.',
    }]);
    expect(dts!.problemDetails[0]!.text).toContain('changed after this timestamp was made');
    // What was appended before the change still reads as notes.
    expect(codes(sig!)).toEqual(['VALIDATION_DATA_ADDED', 'DOCUMENT_TIMESTAMP_ADDED']);
    expect(report.newest).toMatchObject({ valid: false, problems: ['NOT_COVERING_WHOLE_FILE'] });
  });

  it('the signed content stream rewritten in place (same object number): a page change', async () => {
    const changed = appendUpdate(bt, (reader, update) => {
      // pdf-lib writes /Contents as an array of streams: rewrite the first one
      const contents = reader.resolveArray(findPage(reader, 1).dict.get('Contents'))?.[0] ?? findPage(reader, 1).dict.get('Contents');
      expect(contents).toBeInstanceOf(PdfRef);
      update.replace(contents as PdfRef, new PdfStream(new PdfDict(), Buffer.from('BT /F1 18 Tf 72 700 Td (Something else) Tj ET', 'latin1')));
    });
    const [sig] = (await verifyPdfSignatures(changed, { trustedRoots: [root] })).signatures;
    expect(sig).toMatchObject({ valid: false, problems: ['NOT_COVERING_WHOLE_FILE'] });
    expect(sig!.problemDetails[0]!.text).toContain('the content of a page was changed');
  });

  it('a change between the signature and the document timestamp: the signature has the problem, the timestamp (which covers it) does not', async () => {
    const changed = await addDocumentTimestamp(changePageContent(bt), { tsaUrl });
    const report = await verifyPdfSignatures(changed, { trustedRoots: [root] });
    const [sig, dts] = report.signatures;
    expect(sig).toMatchObject({ valid: false, problems: ['NOT_COVERING_WHOLE_FILE'] });
    expect(codes(sig!)).toEqual(['DOCUMENT_TIMESTAMP_ADDED', 'REVOCATION_DATA_MISSING']);
    // (its TSA chain is not embedded in this file: no validation data was added, so it is judged on that alone)
    expect(dts).toMatchObject({ integrity: { digestMatches: true, coversWholeFile: true, changedAfterSigning: false } });
    expect(dts!.problems).not.toContain('NOT_COVERING_WHOLE_FILE');
  });

  it('a page change hidden in a validation-data update is still a change', async () => {
    const ltPlus = appendUpdate(bt, (reader, update) => {
      const catalog = reader.catalog().clone();
      catalog.set('DSS', update.add(dict({ Type: name('DSS'), Certs: [update.add(new PdfStream(new PdfDict(), root))] })));
      update.replace(reader.rootRef, catalog);
      const page = findPage(reader, 1);
      update.replace(page.ref, page.dict.clone().set('Rotate', 90));
    });
    const [sig] = (await verifyPdfSignatures(ltPlus, { trustedRoots: [root] })).signatures;
    expect(sig).toMatchObject({ valid: false, problems: ['NOT_COVERING_WHOLE_FILE'] });
    expect(codes(sig!)).toContain('VALIDATION_DATA_ADDED');
    expect(sig!.problemDetails[0]!.text).toContain('the content of a page was changed');
  });

  it('a signed object listed in the DSS and then rewritten is not validation data: a change', async () => {
    const contents = (reader: PdfReader) => (reader.resolveArray(findPage(reader, 1).dict.get('Contents'))?.[0] ?? findPage(reader, 1).dict.get('Contents')) as PdfRef;
    const listed = appendUpdate(bt, (reader, update) => {
      // (in a VRI entry: the verifier reads /Certs as certificates, which a content stream is not)
      const vri = dict({ ['0'.repeat(40)]: dict({ Cert: [contents(reader)] }) });
      const catalog = reader.catalog().clone().set('DSS', update.add(dict({ Type: name('DSS'), VRI: vri })));
      update.replace(reader.rootRef, catalog);
    });
    const rewritten = appendUpdate(listed, (reader, update) => {
      update.replace(contents(reader), new PdfStream(new PdfDict(), Buffer.from('BT /F1 18 Tf 72 700 Td (Something else) Tj ET', 'latin1')));
    });
    const [sig] = (await verifyPdfSignatures(rewritten, { trustedRoots: [root] })).signatures;
    expect(sig).toMatchObject({ valid: false, problems: ['NOT_COVERING_WHOLE_FILE'] });
    expect(sig!.problemDetails[0]!.text).toContain('the content of a page was changed');
  });

  it('an annotation added to the page (a comment over the text)', async () => {
    const annotated = appendUpdate(bt, (reader, update) => {
      const page = findPage(reader, 1);
      const annot = update.add(dict({ Type: name('Annot'), Subtype: name('FreeText'), Rect: [72, 690, 400, 720], Contents: new PdfString(Buffer.from('VOID', 'latin1')), DA: new PdfString(Buffer.from('/Helv 12 Tf', 'latin1')) }));
      const annots = reader.resolveArray(page.dict.get('Annots')) ?? [];
      const annotsRef = page.dict.get('Annots');
      if (annotsRef instanceof PdfRef) update.replace(annotsRef, [...annots, annot]);
      else update.replace(page.ref, page.dict.clone().set('Annots', [...annots, annot]));
    });
    const [sig] = (await verifyPdfSignatures(annotated, { trustedRoots: [root] })).signatures;
    expect(sig).toMatchObject({ valid: false, problems: ['NOT_COVERING_WHOLE_FILE'] });
    expect(sig!.problemDetails[0]!.text).toContain('a comment, stamp or drawing (annotation) was added to a page');
  });

  it('a "signature" field added without a signature over its own update is not a signature: a form change', async () => {
    const fake = appendUpdate(bt, (reader, update) => {
      const page = findPage(reader, 1);
      const v = update.add(dict({ Type: name('Sig'), Filter: name('Adobe.PPKLite'), ByteRange: [0, 10, 20, 30], Contents: new PdfString(Buffer.alloc(8), true) }));
      const widget = update.add(dict({ Type: name('Annot'), Subtype: name('Widget'), FT: name('Sig'), T: new PdfString(Buffer.from('Fake', 'latin1')), V: v, Rect: [0, 0, 0, 0], P: page.ref }));
      const annots = reader.resolveArray(page.dict.get('Annots')) ?? [];
      const annotsRef = page.dict.get('Annots');
      if (annotsRef instanceof PdfRef) update.replace(annotsRef, [...annots, widget]);
      else update.replace(page.ref, page.dict.clone().set('Annots', [...annots, widget]));
      const acroRef = reader.catalog().get('AcroForm') as PdfRef;
      const acro = reader.resolveDict(acroRef)!.clone();
      acro.set('Fields', [...(reader.resolveArray(acro.get('Fields')) ?? []), widget]);
      update.replace(acroRef, acro);
    });
    const sig = (await verifyPdfSignatures(fake, { trustedRoots: [root] })).signatures.find((s) => s.fieldName === 'Signature1');
    expect(sig).toMatchObject({ valid: false, problems: ['NOT_COVERING_WHOLE_FILE'] });
    expect(sig!.problemDetails[0]!.text).toContain('a form field was filled in or changed');
    expect(codes(sig!)).not.toContain('LATER_SIGNATURE_ADDED');
  });

  it('bytes that are not a PDF update appended after the end', async () => {
    const junk = Buffer.concat([bt, Buffer.from('\nthis is not a PDF update\n', 'latin1')]);
    const [sig] = (await verifyPdfSignatures(junk, { trustedRoots: [root] })).signatures;
    expect(sig).toMatchObject({ valid: false, problems: ['NOT_COVERING_WHOLE_FILE'] });
    expect(sig!.problemDetails[0]!.text).toContain('bytes that are not a readable PDF update were added');
    // Whitespace after %%EOF (some producers pad) is nothing.
    const padded = Buffer.concat([bt, Buffer.from('\r\n\n  ', 'latin1')]);
    expect((await verifyPdfSignatures(padded, { trustedRoots: [root] })).signatures[0]).toMatchObject({ valid: true, problems: [] });
  });
});
