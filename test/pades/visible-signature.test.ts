/**
 * Issue 38: a signature people can see. Every case is judged by tools we did not write: poppler renders the page
 * before and after (pixels change inside the box and nowhere else), pdffonts says the box's font is embedded,
 * pdfsig finds the signature valid, qpdf --check finds the file clean.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { deflateSync } from 'node:zlib';
import { PDFArray, PDFDocument, PDFName, PDFDict, PDFString, rgb } from 'pdf-lib';
import { listSignatures, type PrepareSignatureOptions } from '../../src/pades';
import { fixture } from '../fixtures/pdfs';
import { selfSignedSigner, signWithPdfsig, pdfsigSections } from './foreign-signer';
import { pdfsig, qpdfCheck, signPdf, stopPki, testPki, tmpDir } from './helpers';

const dir = tmpDir('visible');
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await stopPki();
});

let n = 0;
function write(bytes: Buffer): string {
  const f = path.join(dir, `f${++n}.pdf`);
  fs.writeFileSync(f, bytes);
  return f;
}

const DPI = 72; // one pixel per point: a box's rectangle reads directly in pixels

interface Gray {
  width: number;
  height: number;
  px: Buffer;
}

/** poppler's rendering of one page in grey (PGM). */
function render(file: string, page: number): Gray {
  const out = path.join(dir, `r${++n}`);
  execFileSync('pdftoppm', ['-gray', '-cropbox', '-r', String(DPI), '-f', String(page), '-l', String(page), '-singlefile', file, out]);
  const pgm = fs.readFileSync(`${out}.pgm`);
  const m = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(pgm.toString('latin1', 0, 40))!;
  return { width: Number(m[1]), height: Number(m[2]), px: pgm.subarray(m[0].length) };
}

/** Bounding box (pixels, origin top-left) of the pixels that differ, and how many. */
function changed(a: Gray, b: Gray): { count: number; box?: [number, number, number, number] } {
  expect([b.width, b.height]).toEqual([a.width, a.height]);
  let count = 0;
  let box: [number, number, number, number] | undefined;
  for (let y = 0; y < a.height; y++) {
    for (let x = 0; x < a.width; x++) {
      const i = y * a.width + x;
      if (a.px[i] === b.px[i]) continue;
      count++;
      box = box ? [Math.min(box[0], x), Math.min(box[1], y), Math.max(box[2], x), Math.max(box[3], y)] : [x, y, x, y];
    }
  }
  return { count, box };
}

/** The checks every visible case shares; returns the changed pixels' box on `page`. */
async function signedVisibly(original: Buffer, opts: Partial<PrepareSignatureOptions>, page: number, user?: 'p256' | 'rsa') {
  const pki = await testPki();
  const signed = await signPdf(original, pki.users[user ?? 'p256']!, opts);
  const before = write(original);
  const after = write(signed);
  expect(signed.subarray(0, original.length).equals(original)).toBe(true);
  const report = await pdfsig(after);
  expect(report).toContain('Signature is Valid.');
  const q = await qpdfCheck(after);
  expect(q).toContain('No syntax or stream encoding errors found');
  expect(q).not.toMatch(/WARNING|EXIT/);
  const fonts = execFileSync('pdffonts', [after]).toString();
  const ours = fonts.split('\n').filter((l) => l.includes('DejaVuSans'));
  expect(ours.length).toBeGreaterThan(0);
  for (const l of ours) expect(l).toMatch(/TrueType\s+WinAnsi\s+yes\s+yes/); // emb yes, sub yes
  const diff = changed(render(before, page), render(after, page));
  expect(diff.count).toBeGreaterThan(500);
  const text = execFileSync('pdftotext', ['-f', String(page), '-l', String(page), after, '-']).toString();
  return { signed, after, diff, text, report, render: render(after, page) };
}

/** The rect (user space, no rotation or crop) as pixels, origin top-left, given the page height. */
function pixelBox(rect: number[], pageHeight: number): [number, number, number, number] {
  return [rect[0]!, pageHeight - rect[3]!, rect[2]!, pageHeight - rect[1]!];
}

function inside(box: number[], outer: number[], slack = 1) {
  expect(box[0]).toBeGreaterThanOrEqual(outer[0]! - slack);
  expect(box[1]).toBeGreaterThanOrEqual(outer[1]! - slack);
  expect(box[2]).toBeLessThanOrEqual(outer[2]! + slack);
  expect(box[3]).toBeLessThanOrEqual(outer[3]! + slack);
}

describe('a plain PDF', () => {
  test('a rectangle on page 1: pixels change inside it and nowhere else; the box names the signer, never the NRIC', async () => {
    const pki = await testPki();
    const rect = [330, 60, 560, 140];
    const { diff, text, signed } = await signedVisibly(await fixture('classic'), { appearance: { page: 1, rect: rect as [number, number, number, number] }, reason: 'Approved' }, 1);
    inside(diff.box!, pixelBox(rect, 842));
    // The frame is drawn at the edge: the change reaches all four sides.
    expect(diff.box![0]).toBeLessThanOrEqual(rect[0]! + 1);
    expect(diff.box![2]).toBeGreaterThanOrEqual(rect[2]! - 2);
    const words = text.replace(/\s+/g, ' ');
    expect(pki.users.p256.subject).toContain('CN=TAN AH KOW');
    expect(words).toContain('TAN AH KOW');
    expect(words).toContain('Signed with Singpass');
    expect(words).toMatch(/\d{1,2} \w{3} \d{4}, \d\d:\d\d:\d\d SGT/);
    expect(words).toContain('Reason: Approved');
    expect(words).not.toMatch(/\b[STFGM]\d{7}[A-Z]\b/);
    const [sig] = listSignatures(signed);
    expect(sig).toMatchObject({ page: 1, rect, visible: true });
  });

  test('default placement: bottom-right corner of the last page', async () => {
    const { diff, render: r } = await signedVisibly(await fixture('manyPages'), { appearance: {} }, await pageCount(await fixture('manyPages')));
    // 36 points from the right and bottom edges, 210 × 72.
    inside(diff.box!, [r.width - 36 - 210, r.height - 36 - 72, r.width - 36, r.height - 36]);
  });

  test('invisible stays available: no appearance → nothing drawn, reported invisible', async () => {
    const pki = await testPki();
    const original = await fixture('classic');
    const signed = await signPdf(original, pki.users.p256, {});
    expect(changed(render(write(original), 1), render(write(signed), 1)).count).toBe(0);
    expect(listSignatures(signed)[0]).toMatchObject({ visible: false, rect: [0, 0, 0, 0] });
  });

  test('long text is wrapped and shrunk, never cut', async () => {
    const reason = 'Approval of the tenancy agreement for the unit at 1 Example Road #12-34 Singapore 123456 including all annexes';
    const name = 'Muhammad Abdul Rahman bin Ismail Tan Wei Ming Nur Aisyah';
    const { text, diff } = await signedVisibly(await fixture('classic'), { appearance: { page: 1, rect: [40, 40, 200, 100] }, reason, name }, 1);
    inside(diff.box!, pixelBox([40, 40, 200, 100], 842));
    const words = text.replace(/-\n/g, '').replace(/\s+/g, ' ');
    for (const w of [...name.split(' '), ...reason.split(' ')]) expect(words).toContain(w);
  });

  test('an officer signing for a company: entity and role in the box', async () => {
    const { text } = await signedVisibly(await fixture('classic'), { appearance: { page: 1, rect: [300, 60, 560, 160] }, signingFor: { entity: 'Example Holdings Pte. Ltd.', role: 'Director' } }, 1);
    expect(text.replace(/\s+/g, ' ')).toContain('For Example Holdings Pte. Ltd. as Director');
  });
});

async function pageCount(pdf: Buffer): Promise<number> {
  return (await PDFDocument.load(pdf)).getPageCount();
}

describe('page geometry', () => {
  test.each([
    [1, 90],
    [2, 270],
  ])('a rotated page (page %d, /Rotate %d): the corner is the one the viewer sees, the text reads upright', async (page) => {
    const { diff, render: r, after } = await signedVisibly(await fixture('rotated'), { appearance: { page, corner: 'bottom-right' }, name: 'Tan Ah Kow' }, page);
    expect(r.width).toBeGreaterThan(r.height); // shown landscape
    inside(diff.box!, [r.width - 36 - 210, r.height - 36 - 72, r.width - 36, r.height - 36]);
    const html = execFileSync('pdftotext', ['-bbox', '-f', String(page), '-l', String(page), after, '-']).toString();
    const m = /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">Singpass<\/word>/.exec(html);
    expect(m).not.toBeNull();
    const [x1, y1, x2, y2] = m!.slice(1).map(Number);
    expect(x2! - x1!).toBeGreaterThan(2 * (y2! - y1!)); // horizontal as shown
  });

  test('a CropBox offset from the MediaBox: the corner is the visible page’s', async () => {
    const doc = await PDFDocument.load(await fixture('classic'));
    doc.getPage(0).setCropBox(100, 150, 400, 500); // x 100–500, y 150–650 of a 595 × 842 MediaBox
    const cropped = Buffer.from(await doc.save({ useObjectStreams: false }));
    const { diff, render: r, signed } = await signedVisibly(cropped, { appearance: { page: 1, corner: 'bottom-right' } }, 1);
    expect([r.width, r.height]).toEqual([400, 500]);
    inside(diff.box!, [400 - 36 - 210, 500 - 36 - 72, 400 - 36, 500 - 36]);
    expect(listSignatures(signed)[0]!.rect).toEqual([500 - 36 - 210, 150 + 36, 500 - 36, 150 + 36 + 72]);
  });
});

describe('forms and several signers', () => {
  test('an empty signature field named: filled, not duplicated', async () => {
    const original = await fixture('emptySignatureFields');
    const { diff, signed } = await signedVisibly(original, { appearance: { field: 'Sign here' } }, 1);
    inside(diff.box!, pixelBox([50, 50, 250, 110], 842));
    const sigs = listSignatures(signed);
    expect(sigs.map((s) => [s.fieldName, s.page, s.visible])).toEqual([['Sign here', 1, true]]);
    const fields = (await PDFDocument.load(signed)).getForm().getFields().map((f) => f.getName());
    expect(fields.sort()).toEqual(['Sign here', 'Witness']);
  });

  test('a form with appearances of its own: the "Sign here" drawing gives way to the box, the filled text field stays as it was', async () => {
    const doc = await PDFDocument.load(await fixture('classic'));
    const page = doc.getPage(0);
    const form = doc.getForm();
    const name = form.createTextField('Tenant name');
    name.setText('Tan Ah Kow');
    name.addToPage(page, { x: 50, y: 300, width: 200, height: 24 });
    const ctx = doc.context;
    // a "Sign here" placeholder: the field's own appearance, a grey box with a cross
    const ap = ctx.register(ctx.stream('0.8 g 0 0 220 70 re f 0 G 2 w 10 10 m 210 60 l S', { Type: 'XObject', Subtype: 'Form', BBox: [0, 0, 220, 70] }));
    const sig = ctx.register(ctx.obj({ Type: 'Annot', Subtype: 'Widget', FT: 'Sig', T: PDFString.of('Sign here'), Rect: [330, 60, 550, 130], F: 4, P: page.ref, AP: { N: ap } }));
    page.node.lookup(PDFName.of('Annots'), PDFArray).push(sig);
    form.acroForm.addField(sig);
    const original = Buffer.from(await doc.save({ useObjectStreams: false }));
    const { diff, signed, text } = await signedVisibly(original, { appearance: { field: 'Sign here' } }, 1);
    inside(diff.box!, pixelBox([330, 60, 550, 130], 842));
    expect(text).toContain('Tan Ah Kow'); // the text field's own appearance, unchanged
    expect(listSignatures(signed).map((x) => [x.fieldName, x.visible])).toEqual([['Sign here', true]]);
  });

  test('a field name the form does not have → INVALID_INPUT naming appearance.field', async () => {
    const pki = await testPki();
    await expect(signPdf(await fixture('emptySignatureFields'), pki.users.p256, { appearance: { field: 'Nope' } })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'appearance.field' },
    });
  });

  test('two signers taking the next empty field each: both fields filled, both valid', async () => {
    const pki = await testPki();
    const once = await signPdf(await fixture('emptySignatureFields'), pki.users.p256, { appearance: { nextEmptyField: true } });
    const { signed, report } = await signedVisibly(once, { appearance: { nextEmptyField: true } }, 2, 'rsa');
    expect(listSignatures(signed).map((s) => [s.fieldName, s.page, s.visible])).toEqual([
      ['Sign here', 1, true],
      ['Witness', 2, true],
    ]);
    const sections = pdfsigSections(report);
    expect(sections).toHaveLength(2);
    for (const s of sections) expect(s).toContain('Signature Validation: Signature is Valid.');
  });

  test('two signers with the default placement: two boxes that do not overlap, both valid', async () => {
    const pki = await testPki();
    const original = await fixture('classic');
    const once = await signPdf(original, pki.users.p256, { appearance: {} });
    const last = await pageCount(original);
    const { signed, report, diff } = await signedVisibly(once, { appearance: {} }, last, 'rsa');
    expect(listSignatures(signed).map((s) => s.page)).toEqual([last, last]);
    const [a, b] = listSignatures(signed).map((s) => s.rect!);
    expect(a![2] <= b![0] || b![2] <= a![0] || a![3] <= b![1] || b![3] <= a![1]).toBe(true);
    // The second box is drawn where it was put: inside its own rect only.
    inside(diff.box!, pixelBox(b!, 842));
    const sections = pdfsigSections(report);
    expect(sections).toHaveLength(2);
    for (const s of sections) expect(s).toContain('Signature Validation: Signature is Valid.');
  });
});

describe('documents others made', () => {
  test('a PDF/A input keeps its identification and embeds every font it uses', async () => {
    const pdfa = await pdfaFixture();
    const { signed, after } = await signedVisibly(pdfa, { appearance: {} }, 1);
    const fonts = execFileSync('pdffonts', [after]).toString().split('\n').slice(2).filter(Boolean);
    expect(fonts.length).toBeGreaterThan(0);
    for (const l of fonts) expect(l).toMatch(/\s+yes\s+yes\s+(yes|no)\s+\d+\s+\d+\s*$/); // emb yes
    // The catalog still points at the same XMP (which still says PDF/A-2B) and keeps its output intent.
    const catalogOf = (file: string) => {
      const root = /\/Root (\d+) 0 R/.exec(execFileSync('qpdf', ['--show-object=trailer', file]).toString())![1]!;
      return execFileSync('qpdf', [`--show-object=${root}`, file]).toString();
    };
    const metaRef = (c: string) => /\/Metadata (\d+ \d+ R)/.exec(c)?.[1];
    const before = catalogOf(write(pdfa));
    const afterCatalog = catalogOf(after);
    expect(metaRef(afterCatalog)).toBeDefined();
    expect(metaRef(afterCatalog)).toBe(metaRef(before));
    expect(afterCatalog).toContain('/OutputIntents');
    const xmp = execFileSync('qpdf', [`--show-object=${metaRef(afterCatalog)!.split(' ')[0]}`, '--raw-stream-data', after]).toString();
    expect(xmp).toContain('<pdfaid:part>2</pdfaid:part>');
    expect(signed.length).toBeGreaterThan(pdfa.length);
  });

  test('a PDF already signed by another tool keeps its signature', async () => {
    const signer = await selfSignedSigner(dir);
    const foreign = await signWithPdfsig(await fixture('classic'), signer, dir, { fieldName: 'Foreign' });
    const { report } = await signedVisibly(foreign, { appearance: { page: 1, rect: [330, 60, 560, 140] } }, 1);
    const sections = pdfsigSections(report);
    expect(sections).toHaveLength(2);
    expect(sections[0]).toContain('Signature Field Name: Foreign');
    expect(sections[0]).toContain('Signature Validation: Signature is Valid.');
    expect(sections[1]).toContain('Signature Validation: Signature is Valid.');
  });
});

describe('names outside Latin-1', () => {
  // The simple WinAnsi font cannot show Han or Tamil characters: that needs a Type0/CIDFontType2 font with /ToUnicode
  // and a per-document CJK subset (docs/signature-box.md, "Left out").
  it.todo('a name in Chinese characters is drawn with an embedded CJK subset');
});

describe('a picture in the box', () => {
  test('a PNG with transparency is drawn on the left of the text', async () => {
    const { diff, signed } = await signedVisibly(await fixture('classic'), { appearance: { page: 1, rect: [300, 60, 560, 150], image: redDotPng() } }, 1);
    inside(diff.box!, pixelBox([300, 60, 560, 150], 842));
    expect(signed.toString('latin1')).toContain('/SMask');
  });

  test('a JPEG (base64) is drawn as it is', async () => {
    const src = write(await fixture('classic'));
    execFileSync('pdftoppm', ['-jpeg', '-r', '10', '-singlefile', src, path.join(dir, 'pic')]);
    const jpeg = fs.readFileSync(path.join(dir, 'pic.jpg'));
    const { diff, signed } = await signedVisibly(await fixture('classic'), { appearance: { page: 1, rect: [300, 60, 560, 150], image: jpeg.toString('base64') } }, 1);
    inside(diff.box!, pixelBox([300, 60, 560, 150], 842));
    expect(signed.toString('latin1')).toContain('/DCTDecode');
  });

  test('not a PNG or JPEG → INVALID_INPUT naming appearance.image', async () => {
    const pki = await testPki();
    await expect(signPdf(await fixture('classic'), pki.users.p256, { appearance: { image: Buffer.from('GIF89a') } })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'appearance.image' },
    });
  });
});

/** A 40 × 40 RGBA PNG: a red disc on transparency. */
function redDotPng(): Buffer {
  const size = 40;
  const rows: number[] = [];
  for (let y = 0; y < size; y++) {
    rows.push(0);
    for (let x = 0; x < size; x++) {
      const inDisc = (x - 20) ** 2 + (y - 20) ** 2 < 18 ** 2;
      rows.push(200, 30, 40, inDisc ? 255 : 0);
    }
  }
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.from(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

/** A PDF/A-2B-identified file without text (so no font to embed): XMP with pdfaid and an output intent. */
async function pdfaFixture(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  page.drawRectangle({ x: 50, y: 700, width: 300, height: 80, color: rgb(0.2, 0.4, 0.6) });
  const xmp = `<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"><pdfaid:part>2</pdfaid:part><pdfaid:conformance>B</pdfaid:conformance></rdf:Description>
</rdf:RDF></x:xmpmeta><?xpacket end="w"?>`;
  const ctx = doc.context;
  const meta = ctx.register(ctx.stream(Buffer.from(xmp, 'utf8'), { Type: 'Metadata', Subtype: 'XML' }));
  doc.catalog.set(PDFName.of('Metadata'), meta);
  // An output intent naming sRGB (no ICC profile shipped here: the identification is what this case checks).
  const intent = ctx.obj({ Type: 'OutputIntent', S: 'GTS_PDFA1', OutputConditionIdentifier: PDFString.of('sRGB IEC61966-2.1') }) as PDFDict;
  doc.catalog.set(PDFName.of('OutputIntents'), ctx.obj([intent]));
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}
