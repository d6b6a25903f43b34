/** PDF text strings (ISO 32000 7.9.2.2) and dates (7.9.4). */
import { PdfString } from './objects';

/** Printable ASCII as a literal string, anything else as UTF-16BE with BOM. */
export function textString(s: string): PdfString {
  if (/^[\x20-\x7e]*$/.test(s)) return new PdfString(Buffer.from(s, 'latin1'));
  const utf16 = Buffer.from(s, 'utf16le');
  utf16.swap16();
  return new PdfString(Buffer.concat([Buffer.from([0xfe, 0xff]), utf16]), true);
}

export function decodeTextString(bytes: Buffer): string {
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) {
    const b = Buffer.from(bytes.subarray(2, 2 + ((bytes.length - 2) & ~1)));
    b.swap16();
    return b.toString('utf16le');
  }
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return bytes.subarray(3).toString('utf8');
  return bytes.toString('latin1'); // PDFDocEncoding is close enough to Latin-1 for names
}

/** `D:YYYYMMDDHHmmSSZ` in UTC. */
export function pdfDate(ms: number): PdfString {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const s = `D:${p(d.getUTCFullYear(), 4)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  return new PdfString(Buffer.from(s, 'latin1'));
}
