/**
 * PdfOutput keeps text in one pending string until bytes follow: the output, its length and the marks of labelled
 * raw pieces must be exactly what writing each token as it came gave.
 */
import { PdfDict, PdfOutput, PdfRaw, PdfRef, PdfStream, PdfString, name } from '../../src/pades/pdf/objects';

describe('PdfOutput', () => {
  it('writes text and bytes in order, with the offsets of labelled pieces', () => {
    const out = new PdfOutput();
    const dict = new PdfDict()
      .set('Type', name('Sig'))
      .set('Contents', new PdfRaw(Buffer.from('<0000>', 'latin1'), 'contents'))
      .set('ByteRange', [0, 1, 2, 3])
      .set('Name', new PdfString(Buffer.from('a(b)'), false))
      .set('P', new PdfRef(7, 0));
    out.text('12 0 obj\n');
    out.object(dict);
    out.text('\nendobj\n');
    out.object(new PdfStream(new PdfDict().set('Filter', name('FlateDecode')), Buffer.from([0, 255, 10])));
    const bytes = out.toBuffer();
    const expected = Buffer.concat([
      Buffer.from('12 0 obj\n<</Type /Sig\n/Contents <0000>\n/ByteRange [0 1 2 3]\n/Name (a\\(b\\))\n/P 7 0 R\n>>\nendobj\n<</Filter /FlateDecode\n/Length 3\n>>\nstream\n', 'latin1'),
      Buffer.from([0, 255, 10]),
      Buffer.from('\nendstream', 'latin1'),
    ]);
    expect(bytes.toString('latin1')).toBe(expected.toString('latin1'));
    expect(out.length).toBe(bytes.length);
    const mark = out.marks.get('contents')!;
    expect(bytes.subarray(mark.start, mark.end).toString('latin1')).toBe('<0000>');
  });
});
