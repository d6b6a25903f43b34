/**
 * Structure of the incremental update, checked with parsers we did not write (pdf-lib's reader, qpdf --json).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFNumber, PDFRef, PDFString, PDFHexString } from 'pdf-lib';
import { prepareSignature } from '../../src/pades';
import { fixture, SIGNABLE_FIXTURES, type FixtureName } from '../fixtures/pdfs';
import { signPdf, stopPki, testPki, tmpDir } from './helpers';

const dir = tmpDir('struct');
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await stopPki();
});

/** Style of the section the final startxref points to, read straight from the bytes. */
function lastSectionStyle(pdf: Buffer): 'table' | 'stream' {
  const text = pdf.toString('latin1');
  const off = Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(text)![1]);
  return text.startsWith('xref', off) ? 'table' : 'stream';
}

function fieldName(doc: PDFDocument, ref: PDFRef): string {
  const d = doc.context.lookup(ref, PDFDict);
  const t = d.get(PDFName.of('T'));
  return t instanceof PDFString || t instanceof PDFHexString ? t.decodeText() : '';
}

describe.each(SIGNABLE_FIXTURES)('%s', (name: FixtureName) => {
  test('update uses the same xref style, widget is on the page and in /Fields, /SigFlags 3, /Prev chains', async () => {
    const pki = await testPki();
    const original = await fixture(name);
    const signed = await signPdf(original, pki.users.p256, { fieldName: 'Signed by user' });
    expect(lastSectionStyle(signed)).toBe(lastSectionStyle(original));

    const before = await PDFDocument.load(original, { updateMetadata: false });
    const doc = await PDFDocument.load(signed, { updateMetadata: false });
    expect(doc.getPageCount()).toBe(before.getPageCount());
    const acro = doc.catalog.lookup(PDFName.of('AcroForm'), PDFDict);
    expect(acro.lookup(PDFName.of('SigFlags'), PDFNumber).asNumber()).toBe(3);
    const fields = acro.lookup(PDFName.of('Fields'), PDFArray);
    const names = fields.asArray().map((r) => fieldName(doc, r as PDFRef));
    const oldAcro = before.catalog.lookupMaybe(PDFName.of('AcroForm'), PDFDict);
    const oldNames = (oldAcro?.lookupMaybe(PDFName.of('Fields'), PDFArray)?.asArray() ?? []).map((r) => fieldName(before, r as PDFRef));
    expect(names).toEqual([...oldNames, 'Signed by user']);

    const widgetRef = fields.get(fields.size() - 1) as PDFRef;
    const page1 = doc.getPage(0).node;
    const annots = page1.lookup(PDFName.of('Annots'), PDFArray).asArray();
    const oldAnnots = before.getPage(0).node.lookupMaybe(PDFName.of('Annots'), PDFArray)?.asArray() ?? [];
    expect(annots.map(String)).toEqual([...oldAnnots.map(String), widgetRef.toString()]);
    const widget = doc.context.lookup(widgetRef, PDFDict);
    expect(widget.get(PDFName.of('FT'))).toBe(PDFName.of('Sig'));
    expect(widget.get(PDFName.of('P'))!.toString()).toBe(doc.getPage(0).ref.toString());
    const v = widget.lookup(PDFName.of('V'), PDFDict);
    expect(v.get(PDFName.of('SubFilter'))).toBe(PDFName.of('ETSI.CAdES.detached'));

    // qpdf sees one more revision's worth of objects and the trailer's /Prev is the original startxref
    const text = signed.subarray(original.length).toString('latin1');
    const origStartxref = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(original.toString('latin1'))![1];
    expect(text).toContain(`/Prev ${origStartxref}`);
    // no dictionary in the update repeats a key
    for (const m of text.matchAll(/<<([^<>]*)>>/g)) {
      const keys = [...m[1]!.matchAll(/\/([A-Za-z0-9]+) /g)].map((k) => k[1]);
      expect(new Set(keys).size).toBe(keys.length);
    }
  });
});

test('the existing indirect /Annots and /Fields arrays are rewritten in place (same object numbers)', async () => {
  const pki = await testPki();
  const original = await fixture('indirectArrays');
  const before = await PDFDocument.load(original);
  const annotsRef = before.getPage(0).node.get(PDFName.of('Annots')) as PDFRef;
  const signed = await signPdf(original, pki.users.p256);
  const doc = await PDFDocument.load(signed);
  expect(doc.getPage(0).node.get(PDFName.of('Annots'))!.toString()).toBe(annotsRef.toString());
  expect(doc.context.lookup(annotsRef, PDFArray).size()).toBe(2);
  const update = signed.subarray(original.length).toString('latin1');
  expect(update).toContain(`\n${annotsRef.objectNumber} 0 obj\n[`);
});

test('qpdf --json lists the signature field with its value', async () => {
  const pki = await testPki();
  const signed = await signPdf(await fixture('qpdfObjectStreams'), pki.users.p384, { fieldName: 'Approval' });
  const file = path.join(dir, 'json.pdf');
  fs.writeFileSync(file, signed);
  const json = JSON.parse(execFileSync('qpdf', ['--json', '--json-key=acroform', file]).toString());
  const f = json.acroform.fields.find((x: { fullname: string }) => x.fullname === 'Approval');
  expect(f).toMatchObject({ fieldtype: '/Sig', pageposfrom1: 1 });
  expect(json.acroform.hasacroform).toBe(true);
});

test('prepare does not modify its input; /M comes from the injected clock', async () => {
  const pki = await testPki();
  const pdf = await fixture('classic');
  const copy = Buffer.from(pdf);
  const a = await prepareSignature(pdf, { certificate: pki.users.p256.certDer, clock: () => 1_700_000_000_000 });
  const b = await prepareSignature(pdf, { certificate: pki.users.p256.certDer, clock: () => 1_700_000_000_000 });
  const c = await prepareSignature(pdf, { certificate: pki.users.p256.certDer, clock: () => 1_700_000_001_000 });
  expect(pdf.equals(copy)).toBe(true);
  expect(a.state.byteRange).toEqual(b.state.byteRange);
  expect(Buffer.from(a.state.update.head, 'base64').toString('latin1')).toContain('/M (D:20231114221320Z)');
  expect(c.documentHash).not.toBe(a.documentHash);
});
