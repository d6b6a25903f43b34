/**
 * The shape check the native readers share: whatever asn1js (under pkijs) would refuse to decode, they refuse too,
 * so a native reading never accepts bytes the schema-driven one rejects.
 */
import { children, type Tlv } from '../pades/der';

/** Universal types asn1js refuses in constructed form. */
const PRIMITIVE_ONLY = new Set([1, 2, 5, 6, 9, 13, 14, 23, 24]);

/**
 * The whole tree is what the schema reading (asn1js) decodes without error, or stricter: every constructed element
 * whole, no constructed form of a primitive type, sane BIT STRINGs, OIDs, INTEGERs, BOOLEANs, NULLs and times. The
 * schema reading decodes every element (embedded attribute values such as a timestamp token included) and refuses
 * the whole structure when one is off; so must this, to accept no more than it does.
 */
export function wellFormed(buf: Buffer, t: Tlv): void {
  const universal = (t.tag & 0xc0) === 0;
  const n = t.tag & 0x1f;
  const len = t.end - t.contentStart;
  if (t.tag & 0x20) {
    if (universal && PRIMITIVE_ONLY.has(n)) throw new Error('not the shape asn1js decodes');
    for (const c of children(buf, t)) wellFormed(buf, c);
    return;
  }
  if (!universal) return;
  if (n === 0) throw new Error('not the shape asn1js decodes'); // [UNIVERSAL 0]: reserved (end-of-contents), refused by asn1js
  if (n === 8 || n === 11 || n === 16 || n === 17) throw new Error('not the shape asn1js decodes'); // constructed-only types in primitive form
  const first = buf[t.contentStart];
  if (n === 3 && (len === 0 || first > 7)) throw new Error('not the shape asn1js decodes');
  if (n === 6 && (len === 0 || (buf[t.end - 1] & 0x80) !== 0)) throw new Error('not the shape asn1js decodes');
  if ((n === 2 || n === 10) && len === 0) throw new Error('not the shape asn1js decodes');
  if (n === 1 && len !== 1) throw new Error('not the shape asn1js decodes');
  if (n === 5 && len !== 0) throw new Error('not the shape asn1js decodes');
  if ((n === 23 || n === 24) && !plainTime(buf.toString('latin1', t.contentStart, t.end), n === 23)) throw new Error('not the shape asn1js decodes');
}

/** UTCTime `YYMMDDHHMMSSZ` / GeneralizedTime `YYYYMMDDHHMMSS[.fff]Z` with every field in range. */
function plainTime(text: string, utc: boolean): boolean {
  const m = (utc ? /^\d\d(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z$/ : /^\d{4}(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(?:\.\d{1,3})?Z$/).exec(text);
  if (!m) return false;
  const [mo, d, h, mi, se] = m.slice(1, 6).map(Number) as [number, number, number, number, number];
  return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && se <= 59;
}
