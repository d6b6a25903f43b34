/**
 * The font of the visible signature box: a WinAnsi subset of DejaVu Sans shipped in assets/fonts (made once by
 * scripts/make-signature-font.sh), embedded as a simple TrueType font with /Widths. Embedding keeps a PDF/A input
 * PDF/A and makes every viewer draw the same box; a simple font needs no /ToUnicode for Latin-1 names.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { PdfRef, PdfStream, dict, name } from './pdf/objects';
import type { IncrementalUpdate } from './pdf/writer';

const FONT_FILE = join('assets', 'fonts', 'DejaVuSans-WinAnsi.ttf');
/** Six capitals and "+": how a PDF says the embedded program is a subset. */
const BASE_FONT = 'SPFLWS+DejaVuSans';

/** WinAnsiEncoding's 0x80–0x9F (PDF 32000 Annex D); 0 where the code is unused. */
const WIN_ANSI_80 = [
  0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017d, 0,
  0, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0, 0x017e, 0x0178,
];

/** Unicode code point of WinAnsi code `c` (32–255), or 0 when unused. */
function unicodeOf(c: number): number {
  if (c >= 0x80 && c < 0xa0) return WIN_ANSI_80[c - 0x80];
  return c === 0x7f ? 0 : c;
}

const CODE_OF = new Map<number, number>();
for (let c = 32; c <= 255; c++) if (unicodeOf(c)) CODE_OF.set(unicodeOf(c), c);

export interface SignatureFont {
  /** Width of `text` at size 1 (in text space units). */
  width(text: string): number;
  /** The WinAnsi bytes to show `text`; characters the font lacks lose their accents, or become "?". */
  encode(text: string): Buffer;
  /** Ascent and descent (negative) at size 1. */
  ascent: number;
  descent: number;
  /** Adds the font (dictionary, descriptor, font program) to the update; returns the font dictionary. */
  addTo(update: IncrementalUpdate): PdfRef;
}

interface TrueTypeMetrics {
  unitsPerEm: number;
  bbox: number[];
  ascent: number;
  descent: number;
  capHeight: number;
  /** Advance width (font units) per WinAnsi code 32–255. */
  advances: number[];
}

/** The few tables a simple font's dictionary needs: head, hhea, hmtx, OS/2 and the (3,1) format 4 cmap. */
function readTrueType(ttf: Buffer): TrueTypeMetrics {
  const tables = new Map<string, number>();
  for (let i = 0, n = ttf.readUInt16BE(4); i < n; i++) tables.set(ttf.toString('latin1', 12 + i * 16, 16 + i * 16), ttf.readUInt32BE(20 + i * 16));
  const at = (tag: string) => {
    const o = tables.get(tag);
    if (o === undefined) throw new Error(`font lacks the ${tag} table`);
    return o;
  };
  const head = at('head');
  const hhea = at('hhea');
  const hmtx = at('hmtx');
  const os2 = at('OS/2');
  const numberOfHMetrics = ttf.readUInt16BE(hhea + 34);
  const advanceOf = (glyph: number) => ttf.readUInt16BE(hmtx + 4 * Math.min(glyph, numberOfHMetrics - 1));
  const cmap = at('cmap');
  let sub = -1;
  for (let i = 0, n = ttf.readUInt16BE(cmap + 2); i < n; i++) {
    const rec = cmap + 4 + i * 8;
    if (ttf.readUInt16BE(rec) === 3 && ttf.readUInt16BE(rec + 2) === 1) sub = cmap + ttf.readUInt32BE(rec + 4);
  }
  if (sub < 0 || ttf.readUInt16BE(sub) !== 4) throw new Error('font lacks a Windows Unicode (format 4) cmap');
  const segs = ttf.readUInt16BE(sub + 6) / 2;
  const ends = sub + 14;
  const starts = ends + segs * 2 + 2;
  const deltas = starts + segs * 2;
  const offsets = deltas + segs * 2;
  const glyphOf = (u: number): number => {
    for (let s = 0; s < segs; s++) {
      if (u > ttf.readUInt16BE(ends + s * 2)) continue;
      const start = ttf.readUInt16BE(starts + s * 2);
      if (u < start) return 0;
      const delta = ttf.readUInt16BE(deltas + s * 2);
      const ro = ttf.readUInt16BE(offsets + s * 2);
      if (ro === 0) return (u + delta) & 0xffff;
      const g = ttf.readUInt16BE(offsets + s * 2 + ro + (u - start) * 2);
      return g === 0 ? 0 : (g + delta) & 0xffff;
    }
    return 0;
  };
  const advances: number[] = [];
  for (let c = 32; c <= 255; c++) {
    const u = unicodeOf(c);
    const g = u ? glyphOf(u) : 0;
    advances.push(g ? advanceOf(g) : 0);
  }
  return {
    unitsPerEm: ttf.readUInt16BE(head + 18),
    bbox: [ttf.readInt16BE(head + 36), ttf.readInt16BE(head + 38), ttf.readInt16BE(head + 40), ttf.readInt16BE(head + 42)],
    ascent: ttf.readInt16BE(hhea + 4),
    descent: ttf.readInt16BE(hhea + 6),
    capHeight: ttf.readUInt16BE(os2) >= 2 ? ttf.readInt16BE(os2 + 88) : ttf.readInt16BE(hhea + 4),
    advances,
  };
}

/** The package's assets folder, from src/pades (tests) or dist/src/pades (the built package). */
function fontPath(): string {
  for (let dir = __dirname, i = 0; i < 6; i++, dir = dirname(dir)) {
    if (existsSync(join(dir, FONT_FILE))) return join(dir, FONT_FILE);
  }
  // Not the user's doing: the installed package is incomplete.
  throw new Error(`The signature font (${FONT_FILE}) is missing from the package; reinstall it.`);
}

let loaded: SignatureFont | undefined;

/** The signature box font, read from the package once. */
export function signatureFont(): SignatureFont {
  loaded ??= makeFont(readFileSync(fontPath()));
  return loaded;
}

function makeFont(ttf: Buffer): SignatureFont {
  const m = readTrueType(ttf);
  const per1000 = (v: number) => Math.round((v * 1000) / m.unitsPerEm);
  const widths = m.advances.map(per1000);
  const codeOf = (ch: string): number => {
    const c = CODE_OF.get(ch.codePointAt(0)!);
    if (c !== undefined && widths[c - 32] > 0) return c;
    const plain = ch.normalize('NFKD').replace(/\p{M}/gu, '');
    const p = plain.length === 1 ? CODE_OF.get(plain.codePointAt(0)!) : undefined;
    return p !== undefined && widths[p - 32] > 0 ? p : 0x3f;
  };
  const encode = (text: string) => Buffer.from([...text.replace(/\s/g, ' ')].map(codeOf));
  let program: Buffer | undefined;
  return {
    ascent: m.ascent / m.unitsPerEm,
    descent: m.descent / m.unitsPerEm,
    encode,
    width: (text) => encode(text).reduce((w, c) => w + widths[c - 32], 0) / 1000,
    addTo(update) {
      program ??= deflateSync(ttf);
      const file = update.add(new PdfStream(dict({ Filter: name('FlateDecode'), Length1: ttf.length }), program));
      const descriptor = update.add(
        dict({
          Type: name('FontDescriptor'),
          FontName: name(BASE_FONT),
          Flags: 32, // nonsymbolic: the WinAnsi codes go through the font's (3,1) cmap
          FontBBox: m.bbox.map(per1000),
          ItalicAngle: 0,
          Ascent: per1000(m.ascent),
          Descent: per1000(m.descent),
          CapHeight: per1000(m.capHeight),
          StemV: 80,
          FontFile2: file,
        }),
      );
      return update.add(
        dict({
          Type: name('Font'),
          Subtype: name('TrueType'),
          BaseFont: name(BASE_FONT),
          FirstChar: 32,
          LastChar: 255,
          Widths: widths,
          Encoding: name('WinAnsiEncoding'),
          FontDescriptor: descriptor,
        }),
      );
    },
  };
}
