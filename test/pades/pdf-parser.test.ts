/** Unit tests of the PDF object parser/serialiser, the lazy reader and the DER helpers. */
import * as crypto from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { children, decodeOid, oid, readTlv, setOf } from '../../src/pades/der';
import { PdfDict, PdfName, PdfOutput, PdfRef, PdfStream, PdfString } from '../../src/pades/pdf/objects';
import { PdfParser } from '../../src/pades/pdf/parser';
import { PdfReader, decodeStream } from '../../src/pades/pdf/reader';
import { IncrementalUpdate } from '../../src/pades/pdf/writer';
import { decodeTextString, textString } from '../../src/pades/pdf/text';

const parse = (s: string | Buffer) => new PdfParser(Buffer.isBuffer(s) ? s : Buffer.from(s, 'latin1')).object();
const serialise = (o: Parameters<PdfOutput['object']>[0]) => {
  const out = new PdfOutput();
  out.object(o);
  return out.toBuffer().toString('latin1');
};

describe('object parser', () => {
  test('dictionary with every value type, comments and tight delimiters', () => {
    const d = parse('<</A 1/B -2.5/C[1 0 R(x)<41 42>]/D<</E true/F null>>%c\n/G#20H /H /I (a\\(b\\)\\n\\101\\\r\nc)>>') as PdfDict;
    expect(d).toBeInstanceOf(PdfDict);
    expect(d.get('A')).toBe(1);
    expect(d.get('B')).toBe(-2.5);
    const c = d.get('C') as unknown[];
    expect(c[0]).toEqual(new PdfRef(1, 0));
    expect((c[1] as PdfString).bytes.toString()).toBe('x');
    expect((c[2] as PdfString).bytes.toString()).toBe('AB');
    expect(((d.get('D') as PdfDict).get('E'))).toBe(true);
    expect(((d.get('D') as PdfDict).get('F'))).toBeNull();
    expect(d.get('G H')).toEqual(new PdfName('H'));
    expect((d.get('I') as PdfString).bytes.toString('latin1')).toBe('a(b)\nAc');
  });

  test('"1 2" is two numbers, "1 2 R" a reference', () => {
    expect(parse('[1 2]')).toEqual([1, 2]);
    expect(parse('[1 2 R 3]')).toEqual([new PdfRef(1, 2), 3]);
  });

  test('stream with an indirect /Length resolved through a callback, and a wrong /Length recovered', () => {
    const p = new PdfParser(Buffer.from('7 0 obj <</Length 9 0 R>>\nstream\nHELLO\nendstream endobj', 'latin1'));
    const o = p.indirectObject(() => 5).value as PdfStream;
    expect(o.data.toString()).toBe('HELLO');
    const q = new PdfParser(Buffer.from('7 0 obj <</Length 99>>\nstream\r\nHELLO\r\nendstream endobj', 'latin1'));
    expect((q.indirectObject().value as PdfStream).data.toString()).toBe('HELLO');
  });

  test('serialise → parse round trip keeps bytes of strings and names', () => {
    const bin = crypto.randomBytes(64);
    const d = new PdfDict([
      ['S', new PdfString(bin)],
      ['H', new PdfString(bin, true)],
      ['N', new PdfName('a b#(c)')],
      ['R', 0.1 + 0.2],
      ['A', [1, new PdfRef(3, 0), null, false]],
    ]);
    const back = parse(serialise(d)) as PdfDict;
    expect((back.get('S') as PdfString).bytes.equals(bin)).toBe(true);
    expect((back.get('H') as PdfString).bytes.equals(bin)).toBe(true);
    expect((back.get('N') as PdfName).name).toBe('a b#(c)');
    expect(back.get('R')).toBe(0.3);
    expect(back.get('A')).toEqual([1, new PdfRef(3, 0), null, false]);
  });

  test('text strings: ASCII literal, otherwise UTF-16BE with BOM', () => {
    expect(textString('Approved').hex).toBe(false);
    const t = textString('Tan Ah Kow 陈');
    expect(t.bytes.subarray(0, 2)).toEqual(Buffer.from([0xfe, 0xff]));
    expect(decodeTextString(t.bytes)).toBe('Tan Ah Kow 陈');
  });
});

test('FlateDecode with PNG Up predictor (as qpdf writes xref streams)', () => {
  const rows = [Buffer.from([1, 0, 0, 10, 0]), Buffer.from([1, 0, 0, 20, 0]), Buffer.from([2, 0, 5, 0, 1])];
  const enc: number[] = [];
  let prev = Buffer.alloc(5);
  for (const r of rows) {
    enc.push(2, ...r.map((b, i) => (b - prev[i]! + 256) & 255));
    prev = r;
  }
  const s = new PdfStream(
    new PdfDict([
      ['Filter', new PdfName('FlateDecode')],
      ['DecodeParms', new PdfDict([['Predictor', 12], ['Columns', 5]])],
    ]),
    deflateSync(Buffer.from(enc)),
  );
  expect(decodeStream(s)).toEqual(Buffer.concat(rows));
});

describe('reader and incremental writer', () => {
  const minimal = () => {
    const objs = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>'];
    let body = '%PDF-1.4\n';
    const offs: number[] = [];
    objs.forEach((o, i) => {
      offs.push(body.length);
      body += `${i + 1} 0 obj\n${o}\nendobj\n`;
    });
    const xref = body.length;
    body += `xref\n0 4\n0000000000 65535 f \n${offs.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
    body += `trailer\n<< /Size 4 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF`;
    return Buffer.from(body, 'latin1');
  };

  test('reads objects lazily through the classic table', () => {
    const r = PdfReader.open(minimal());
    expect(r.xrefStyle).toBe('table');
    expect(r.size).toBe(4);
    expect(r.catalog().get('Pages')).toEqual(new PdfRef(2, 0));
    expect((r.resolveDict(new PdfRef(3, 0))!.get('MediaBox'))).toEqual([0, 0, 10, 10]);
  });

  test('an update replaces and adds objects; a reader of the result sees the new versions', () => {
    const pdf = minimal();
    const r = PdfReader.open(pdf);
    const u = new IncrementalUpdate(r);
    const added = u.add(new PdfDict([['Hello', new PdfString(Buffer.from('world'))]]));
    u.replace(new PdfRef(3, 0), r.resolveDict(new PdfRef(3, 0))!.clone().set('Extra', added));
    const out = Buffer.concat([pdf, u.build().bytes]);
    const r2 = PdfReader.open(out);
    expect(r2.size).toBe(5);
    const page = r2.resolveDict(new PdfRef(3, 0))!;
    expect(page.get('Extra')).toEqual(added);
    expect((r2.resolveDict(added)!.get('Hello') as PdfString).bytes.toString()).toBe('world');
    expect(r2.trailer.get('Prev')).toBe(r.startxref);
    expect(out.subarray(0, pdf.length).equals(pdf)).toBe(true);
  });

  test('garbage and loops in /Prev → PDF_INVALID', () => {
    const loop = Buffer.from('%PDF-1.4\nxref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 1 /Root 1 0 R /Prev 9 >>\nstartxref\n9\n%%EOF', 'latin1');
    expect(() => PdfReader.open(loop)).toThrow(expect.objectContaining({ code: 'PDF_INVALID' }));
    expect(() => PdfReader.open(Buffer.alloc(100))).toThrow(expect.objectContaining({ code: 'PDF_INVALID' }));
  });
});

describe('DER', () => {
  test('OIDs round trip, including large arcs', () => {
    for (const o of ['1.2.840.113549.1.9.16.2.47', '2.16.840.1.101.3.4.2.1', '2.999.1065.1.2', '1.2.840.10045.4.3.2']) {
      const enc = oid(o);
      expect(decodeOid(enc.subarray(2))).toBe(o);
    }
    expect(oid('1.2.840.113549.1.9.16.2.47').toString('hex')).toBe('060b2a864886f70d010910022f');
  });
  test('SET OF is sorted by encoding and parses back', () => {
    const a = Buffer.from('0403020202', 'hex');
    const b = Buffer.from('0401ff', 'hex');
    const c = Buffer.from('040101', 'hex');
    const s = setOf([a, b, c]);
    const kids = children(s, readTlv(s)).map((t) => s.subarray(t.start, t.end).toString('hex'));
    expect(kids).toEqual(['040101', '0401ff', '0403020202']);
  });
  test('truncated input is refused', () => {
    expect(() => readTlv(Buffer.from('3005020101', 'hex'))).toThrow(RangeError);
  });
});
