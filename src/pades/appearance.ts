/**
 * The visible signature box: a light frame, an optional picture on the left and the lines of text beside it, in the
 * embedded signature font. Text is wrapped at word boundaries and shrunk until every line fits: never cut.
 */
import { invalidInput } from '../errors';
import { PdfOutput, PdfRef, PdfStream, PdfString, dict, name } from './pdf/objects';
import type { SignatureFont } from './signature-font';

export type Rect = [number, number, number, number];

/** Normalises and validates `[x1, y1, x2, y2]` (PDF points, origin bottom-left). */
export function normaliseRect(rect: unknown, field = 'appearance.rect'): Rect {
  if (!Array.isArray(rect) || rect.length !== 4 || rect.some((v) => typeof v !== 'number' || !Number.isFinite(v))) {
    throw invalidInput(field, 'must be [x1, y1, x2, y2] in PDF points');
  }
  const [a, b, c, d] = rect as number[];
  const r: Rect = [Math.min(a, c), Math.min(b, d), Math.max(a, c), Math.max(b, d)];
  if (r[2] - r[0] < 10 || r[3] - r[1] < 10) throw invalidInput(field, 'must be at least 10 × 10 points');
  return r;
}

/** What the box shows: its lines (the first, the signer's name, drawn larger) and an optional picture. */
export interface BoxContent {
  lines: string[];
  image?: { ref: PdfRef; width: number; height: number };
}

const PAD = 4;
const LEADING = 1.2;
const HEADING = 1.25;
const MAX_SIZE = 11;

/** `text` broken at spaces (or, for one word too long, between characters) into lines at most `width` wide. */
function wrap(font: SignatureFont, text: string, size: number, width: number): string[] {
  const out: string[] = [];
  let line = '';
  const push = (word: string) => {
    const next = line ? `${line} ${word}` : word;
    if (font.width(next) * size <= width) {
      line = next;
      return;
    }
    if (line) out.push(line);
    line = '';
    if (font.width(word) * size <= width) {
      line = word;
      return;
    }
    for (const ch of word) {
      if (line && font.width(line + ch) * size > width) {
        out.push(line);
        line = '';
      }
      line += ch;
    }
  };
  for (const word of text.split(/\s+/).filter(Boolean)) push(word);
  if (line || out.length === 0) out.push(line);
  return out;
}

interface Layout {
  size: number;
  rows: { text: string; size: number }[];
}

/** The largest text size at which the wrapped lines fit `width` × `height`. */
function layout(font: SignatureFont, lines: string[], width: number, height: number): Layout {
  let best: Layout | undefined;
  for (let size = MAX_SIZE; size >= 0.5; size -= 0.25) {
    const rows = lines.flatMap((l, i) => {
      const s = i === 0 ? size * HEADING : size;
      return wrap(font, l, s, width).map((text) => ({ text, size: s }));
    });
    best = { size, rows };
    const tall = rows.reduce((t, r) => t + r.size * LEADING, 0);
    const wide = Math.max(0, ...rows.map((r) => font.width(r.text) * r.size));
    if (tall <= height && wide <= width + 0.01) return best;
  }
  return best!;
}

/**
 * Form XObject for a box of the rect's size. On a page shown rotated (/Rotate), it draws in the viewer's
 * orientation and /Matrix maps back, so the text reads upright while the widget keeps its default-user-space rect.
 */
export function appearanceStream(rect: Rect, content: BoxContent, font: { ref: PdfRef; metrics: SignatureFont }, pageRotation = 0): PdfStream {
  const rw = rect[2] - rect[0];
  const rh = rect[3] - rect[1];
  const rot = (((Math.round(pageRotation / 90) * 90) % 360) + 360) % 360;
  const quarter = rot === 90 || rot === 270;
  const w = quarter ? rh : rw;
  const h = quarter ? rw : rh;
  const matrix: Record<number, number[]> = { 90: [0, 1, -1, 0, h, 0], 180: [-1, 0, 0, -1, w, h], 270: [0, -1, 1, 0, 0, w] };
  const f = (n: number) => n.toFixed(2);
  const out = new PdfOutput();
  // Grey only: a PDF/A file's output intent may be CMYK, and DeviceGray suits any.
  out.text(`q 0.975 g 0.4 G 0.75 w 0.375 0.375 ${f(w - 0.75)} ${f(h - 0.75)} re B Q\n`);
  let textX = PAD;
  const xobjects: Record<string, PdfRef> = {};
  const { image } = content;
  if (image) {
    const maxW = (w - 3 * PAD) * 0.35;
    const maxH = h - 2 * PAD;
    const scale = Math.min(maxW / image.width, maxH / image.height);
    const iw = image.width * scale;
    const ih = image.height * scale;
    out.text(`q ${f(iw)} 0 0 ${f(ih)} ${f(PAD + (maxW - iw) / 2)} ${f((h - ih) / 2)} cm /Im1 Do Q\n`);
    xobjects.Im1 = image.ref;
    textX = PAD * 2 + maxW;
  }
  const tw = w - textX - PAD;
  const th = h - 2 * PAD;
  const m = font.metrics;
  const { rows } = layout(m, content.lines, tw, th);
  const tall = rows.reduce((t, r) => t + r.size * LEADING, 0);
  // Centred vertically when there is room; each row's baseline sits its ascent below the previous row's bottom.
  let top = h - PAD - Math.max(0, (th - tall) / 2);
  out.text('BT 0.1 g\n');
  for (const row of rows) {
    const baseline = top - (row.size * (LEADING - (m.ascent - m.descent))) / 2 - m.ascent * row.size;
    out.text(`/F1 ${f(row.size)} Tf 1 0 0 1 ${f(textX)} ${f(baseline)} Tm `);
    out.object(new PdfString(m.encode(row.text)));
    out.text(' Tj\n');
    top -= row.size * LEADING;
  }
  out.text('ET\n');
  return new PdfStream(
    dict({
      Type: name('XObject'),
      Subtype: name('Form'),
      BBox: [0, 0, w, h],
      Matrix: matrix[rot],
      Resources: dict({ Font: dict({ F1: font.ref }), XObject: image ? dict(xobjects) : undefined }),
    }),
    out.toBuffer(),
  );
}

/** An empty appearance for invisible signatures (zero-size widgets still get /AP for PDF 2.0 readers). */
export function emptyAppearance(): PdfStream {
  return new PdfStream(dict({ Type: name('XObject'), Subtype: name('Form'), BBox: [0, 0, 0, 0] }), Buffer.alloc(0));
}
