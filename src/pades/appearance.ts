/**
 * A plain visible signature appearance: a thin border and a few lines of Helvetica text, auto-sized to the box.
 * Text is WinAnsi-encoded (characters outside Latin-1 become "?"), which needs no embedded font.
 */
import { invalidInput } from '../errors';
import { PdfOutput, PdfStream, PdfString, dict, name } from './pdf/objects';

export type Rect = [number, number, number, number];

/** Normalises and validates `[x1, y1, x2, y2]` (PDF points, origin bottom-left). */
export function normaliseRect(rect: unknown): Rect {
  if (!Array.isArray(rect) || rect.length !== 4 || rect.some((v) => typeof v !== 'number' || !Number.isFinite(v))) {
    throw invalidInput('appearance.rect', 'must be [x1, y1, x2, y2] in PDF points');
  }
  const [a, b, c, d] = rect as number[];
  const r: Rect = [Math.min(a, c), Math.min(b, d), Math.max(a, c), Math.max(b, d)];
  if (r[2] - r[0] < 10 || r[3] - r[1] < 10) throw invalidInput('appearance.rect', 'must be at least 10 × 10 points');
  return r;
}

function winAnsi(s: string): Buffer {
  return Buffer.from([...s].map((ch) => {
    const c = ch.codePointAt(0)!;
    return c >= 0x20 && c <= 0xff && !(c >= 0x7f && c < 0xa0) ? c : 0x3f;
  }));
}

/** Form XObject drawing `lines` inside a box of the rect's size. */
export function appearanceStream(rect: Rect, lines: string[], pageRotation = 0): PdfStream {
  const rw = rect[2] - rect[0];
  const rh = rect[3] - rect[1];
  // On a page shown rotated (/Rotate), draw in the viewer's orientation and map back with /Matrix so the text
  // reads upright; the box keeps the rectangle given in default user space.
  const rot = (((Math.round(pageRotation / 90) * 90) % 360) + 360) % 360;
  const quarter = rot === 90 || rot === 270;
  const w = quarter ? rh : rw;
  const h = quarter ? rw : rh;
  const matrix: Record<number, number[]> = { 90: [0, 1, -1, 0, h, 0], 180: [-1, 0, 0, -1, w, h], 270: [0, -1, 1, 0, 0, w] };
  const longest = Math.max(1, ...lines.map((l) => l.length));
  // Helvetica averages ~0.5 em per character; 1.2 line spacing.
  const size = Math.max(4, Math.min(10, (h - 6) / (Math.max(1, lines.length) * 1.2), (w - 6) / (longest * 0.5)));
  const out = new PdfOutput();
  out.text(`q 0 G 0.5 w 0.25 0.25 ${(w - 0.5).toFixed(2)} ${(h - 0.5).toFixed(2)} re S Q\n`);
  out.text(`BT 0 g /Helv ${size.toFixed(2)} Tf ${(size * 1.2).toFixed(2)} TL 3 ${(h - 3 - size).toFixed(2)} Td\n`);
  lines.forEach((line, i) => {
    if (i) out.text('T* ');
    out.object(new PdfString(winAnsi(line)));
    out.text(' Tj\n');
  });
  out.text('ET\n');
  const font = dict({ Type: name('Font'), Subtype: name('Type1'), BaseFont: name('Helvetica'), Encoding: name('WinAnsiEncoding') });
  return new PdfStream(
    dict({
      Type: name('XObject'),
      Subtype: name('Form'),
      BBox: [0, 0, w, h],
      Matrix: matrix[rot],
      Resources: dict({ Font: dict({ Helv: font }) }),
    }),
    out.toBuffer(),
  );
}

/** An empty appearance for invisible signatures (zero-size widgets still get /AP for PDF 2.0 readers). */
export function emptyAppearance(): PdfStream {
  return new PdfStream(dict({ Type: name('XObject'), Subtype: name('Form'), BBox: [0, 0, 0, 0] }), Buffer.alloc(0));
}
