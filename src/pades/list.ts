/** Reading the signatures and document timestamps already in a PDF (for verification and LTV data). */
import { createHash } from 'node:crypto';
import { invalidInput } from '../errors';
import { readTlv } from './der';
import { pageRefs, walkFields } from './acroform';
import { PdfDict, PdfRef, PdfString, isName } from './pdf/objects';
import { PdfReader } from './pdf/reader';
import { decodeTextString } from './pdf/text';

export interface PdfSignatureInfo {
  fieldName: string;
  /** `docTimestamp` for /Type /DocTimeStamp (or SubFilter ETSI.RFC3161), else `signature`. */
  type: 'signature' | 'docTimestamp';
  filter?: string;
  subFilter?: string;
  /** [offset1, length1, offset2, length2]. */
  byteRange: number[];
  /** The CMS / TimeStampToken DER, cut at its DER length (never by stripping zeros). */
  contents: Buffer;
  /** The whole decoded /Contents string including the zero padding. */
  contentsRaw: Buffer;
  /** DSS /VRI key: upper-case hex SHA-1 of `contentsRaw`. */
  vriKey: string;
  /** Whether the ByteRange reaches the end of the file (false once later updates were appended). */
  coversWholeDocument: boolean;
  /** /M as written (PDF date string), /Reason, /Location, /Name when present. */
  signingTime?: string;
  reason?: string;
  location?: string;
  name?: string;
  /** 1-based page of the field's widget (when it is on a page). */
  page?: number;
  /** The widget's /Rect in default user space ([0, 0, 0, 0] for an invisible signature). */
  rect?: [number, number, number, number];
  /** Whether a viewer draws it: a widget on a page with an area, an appearance, and neither Hidden nor NoView. */
  visible: boolean;
}

interface PageIndex {
  /** Page object number → 1-based page number. */
  byPage: Map<number, number>;
  /** Annotation object number → the page number listing it in /Annots. */
  byAnnot: Map<number, number>;
}

function pageIndex(reader: PdfReader): PageIndex {
  const byPage = new Map<number, number>();
  const byAnnot = new Map<number, number>();
  pageRefs(reader).forEach((ref, i) => {
    byPage.set(ref.num, i + 1);
    for (const a of reader.resolveArray(reader.resolveDict(ref)?.get('Annots')) ?? []) if (a instanceof PdfRef) byAnnot.set(a.num, i + 1);
  });
  return { byPage, byAnnot };
}

/** Where the field's widget is and whether it shows (a field may be its own widget, or have one kid widget). */
function widgetPlace(reader: PdfReader, field: { ref?: PdfRef; dict: PdfDict }, pages: () => PageIndex): Pick<PdfSignatureInfo, 'page' | 'rect' | 'visible'> {
  const kids = reader.resolveArray(field.dict.get('Kids'));
  const ref = kids ? (kids.length === 1 ? kids[0] : undefined) : field.ref;
  const widget = kids ? reader.resolveDict(ref) : field.dict;
  if (!widget) return { visible: false };
  const r = (reader.resolveArray(widget.get('Rect')) ?? []).map((v) => reader.resolve(v));
  const rect = r.length === 4 && r.every((v) => typeof v === 'number') ? (r as [number, number, number, number]) : undefined;
  // Its /P, or the page whose /Annots lists it (some forms leave /P out).
  const p = widget.get('P');
  const page = (p instanceof PdfRef ? pages().byPage.get(p.num) : undefined) ?? (ref instanceof PdfRef ? pages().byAnnot.get(ref.num) : undefined);
  const flags = reader.resolve(widget.get('F'));
  const f = typeof flags === 'number' ? flags : 0;
  const hasAppearance = reader.resolveDict(widget.get('AP'))?.get('N') !== undefined;
  const visible = !!rect && Math.abs(rect[2] - rect[0]) > 0 && Math.abs(rect[3] - rect[1]) > 0 && page !== undefined && hasAppearance && (f & (2 | 32)) === 0;
  return { ...(page !== undefined ? { page } : {}), ...(rect ? { rect } : {}), visible };
}

/**
 * Every filled signature field (signatures and document timestamps), in file order.
 *
 * @example
 * for (const s of listSignatures(pdf)) console.log(s.fieldName, s.type, s.coversWholeDocument);
 */
export function listSignatures(pdf: Buffer): PdfSignatureInfo[] {
  const reader = PdfReader.open(pdf);
  const out: PdfSignatureInfo[] = [];
  let pages: PageIndex | undefined;
  const pageMap = () => (pages ??= pageIndex(reader));
  for (const f of walkFields(reader)) {
    if (f.type !== 'Sig') continue;
    const v = reader.resolveDict(f.dict.get('V'));
    if (!v) continue;
    const br = reader.resolveArray(v.get('ByteRange'));
    const contents = reader.resolve(v.get('Contents'));
    if (!br || br.length !== 4 || !br.every((n) => typeof n === 'number') || !(contents instanceof PdfString)) continue;
    const raw = contents.bytes;
    let der = raw;
    try {
      der = raw.subarray(0, readTlv(raw).end);
    } catch {
      // not DER: leave it whole, verification will report it
    }
    const str = (k: string) => {
      const s = reader.resolve(v.get(k));
      return s instanceof PdfString ? decodeTextString(s.bytes) : undefined;
    };
    const nm = (k: string) => {
      const s = reader.resolve(v.get(k));
      return isName(s) ? s.name : undefined;
    };
    const byteRange = br;
    const subFilter = nm('SubFilter');
    out.push({
      fieldName: f.fullName,
      type: nm('Type') === 'DocTimeStamp' || subFilter === 'ETSI.RFC3161' ? 'docTimestamp' : 'signature',
      filter: nm('Filter'),
      subFilter,
      byteRange,
      contents: der,
      contentsRaw: raw,
      vriKey: createHash('sha1').update(raw).digest('hex').toUpperCase(),
      coversWholeDocument: byteRange[2] + byteRange[3] === pdf.length,
      signingTime: str('M'),
      reason: str('Reason'),
      location: str('Location'),
      name: str('Name'),
      ...widgetPlace(reader, f, pageMap),
    });
  }
  return out.sort((a, b) => a.byteRange[1] - b.byteRange[1]);
}

/**
 * Index (in {@link listSignatures} order) of the newest signature, document timestamps not counted; -1 when there is
 * none. Signatures are appended, so the newest is the last one in file order: after signing, it is ours.
 */
export function newestSignatureIndex(signatures: readonly Pick<PdfSignatureInfo, 'type'>[]): number {
  for (let i = signatures.length - 1; i >= 0; i--) if (signatures[i].type === 'signature') return i;
  return -1;
}

/** Digest of the bytes a /ByteRange covers (streamed, no copy). */
export function byteRangeDigest(pdf: Buffer, byteRange: number[], algorithm = 'sha256'): Buffer {
  if (byteRange.length % 2 !== 0) throw invalidInput('byteRange', 'must have an even number of entries');
  const h = createHash(algorithm);
  for (let i = 0; i < byteRange.length; i += 2) {
    const start = byteRange[i];
    const len = byteRange[i + 1];
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(len) || start < 0 || len < 0 || start + len > pdf.length) {
      throw invalidInput('byteRange', 'points outside the file');
    }
    h.update(pdf.subarray(start, start + len));
  }
  return h.digest();
}
