/**
 * Where a visible signature goes: a rectangle or a corner of a page (first, last or a number), or a form's empty
 * signature field. Corners are taken in the page as a viewer shows it (its CropBox, turned by /Rotate); a box placed
 * by corner steps aside from signatures already on the page, so each signer of one document gets their own place.
 */
import { invalidInput } from '../errors';
import { Rect, normaliseRect } from './appearance';
import { findPage, pageRefs, pageRotation, walkFields } from './acroform';
import { PdfDict, PdfRef, isName } from './pdf/objects';
import { PdfReader } from './pdf/reader';

export const CORNERS = ['bottom-right', 'bottom-left', 'top-right', 'top-left'] as const;
export type Corner = (typeof CORNERS)[number];

/** JSON-safe: it is kept in a signing session until the user's certificate arrives. */
export interface SignaturePlacement {
  /** 1-based page number, 'first' or 'last'. Default: the last page for a corner, page 1 for a rectangle. */
  page?: number | 'first' | 'last';
  /** The box in default user space (PDF points, origin at the MediaBox's origin). */
  rect?: Rect;
  /** A corner of the visible page (default bottom-right when no rect is given). */
  corner?: Corner;
  /** [width, height] of a box placed by corner (default [210, 72]). */
  size?: [number, number];
  /** Distance from the page edges for a corner (default 36: half an inch). */
  margin?: number;
  /** An existing empty signature field of the form, by its full name: it is filled, not duplicated. */
  field?: string;
  /** The form's first empty visible signature field (in page order); a corner when the form has none left. */
  nextEmptyField?: boolean;
}

export const DEFAULT_BOX_SIZE: [number, number] = [210, 72];
const GAP = 8;

/** Shape check of a placement given by a caller or read back from a stored session. */
export function checkPlacement(v: unknown, field = 'appearance'): SignaturePlacement {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw invalidInput(field, 'expected { page?, rect? | corner?, size?, margin? } or { field } or { nextEmptyField: true }');
  const o = v as Record<string, unknown>;
  const out: SignaturePlacement = {};
  if (o.page !== undefined) {
    if (o.page !== 'first' && o.page !== 'last' && !(typeof o.page === 'number' && Number.isInteger(o.page) && o.page >= 1)) {
      throw invalidInput(`${field}.page`, "must be a page number (1, 2, …), 'first' or 'last'");
    }
    out.page = o.page;
  }
  if (o.rect !== undefined) out.rect = normaliseRect(o.rect, `${field}.rect`);
  if (o.corner !== undefined) {
    if (!CORNERS.includes(o.corner as Corner)) throw invalidInput(`${field}.corner`, `must be one of ${CORNERS.join(', ')}`);
    if (out.rect) throw invalidInput(`${field}.corner`, 'give a rect or a corner, not both');
    out.corner = o.corner as Corner;
  }
  if (o.size !== undefined) {
    const s = o.size;
    if (!Array.isArray(s) || s.length !== 2 || s.some((n) => typeof n !== 'number' || !Number.isFinite(n) || n < 20 || n > 2000)) {
      throw invalidInput(`${field}.size`, 'must be [width, height] in points, each 20–2000');
    }
    out.size = [s[0] as number, s[1] as number];
  }
  if (o.margin !== undefined) {
    if (typeof o.margin !== 'number' || !Number.isFinite(o.margin) || o.margin < 0 || o.margin > 500) throw invalidInput(`${field}.margin`, 'must be 0–500 points');
    out.margin = o.margin;
  }
  if (o.field !== undefined) {
    if (typeof o.field !== 'string' || o.field.length === 0 || o.field.length > 200) throw invalidInput(`${field}.field`, 'must be the name of a signature field (1–200 characters)');
    out.field = o.field;
  }
  if (o.nextEmptyField !== undefined) {
    if (typeof o.nextEmptyField !== 'boolean') throw invalidInput(`${field}.nextEmptyField`, 'must be true or false');
    if (o.nextEmptyField) out.nextEmptyField = true;
  }
  if (out.field !== undefined && out.nextEmptyField) throw invalidInput(`${field}.field`, 'give a field name or nextEmptyField, not both');
  return out;
}

function boxOf(reader: PdfReader, page: PdfDict, key: string): Rect | undefined {
  let node: PdfDict | undefined = page;
  for (let depth = 0; node && depth < 64; depth++) {
    const box = reader.resolveArray(node.get(key))?.map((v) => reader.resolve(v));
    if (box && box.length === 4 && box.every((v) => typeof v === 'number')) {
      const [a, b, c, d] = box;
      return [Math.min(a, c), Math.min(b, d), Math.max(a, c), Math.max(b, d)];
    }
    node = reader.resolveDict(node.get('Parent'));
  }
  return undefined;
}

/** What a viewer shows of the page: its CropBox (default: the MediaBox) clipped to the MediaBox. */
export function visibleBox(reader: PdfReader, page: PdfDict): Rect {
  const media = boxOf(reader, page, 'MediaBox') ?? [0, 0, 612, 792];
  const crop = boxOf(reader, page, 'CropBox') ?? media;
  const r: Rect = [Math.max(media[0], crop[0]), Math.max(media[1], crop[1]), Math.min(media[2], crop[2]), Math.min(media[3], crop[3])];
  return r[2] > r[0] && r[3] > r[1] ? r : media;
}

/** Rectangles of the signature widgets already on the page (filled or not). */
function signatureWidgetRects(reader: PdfReader, page: PdfDict): Rect[] {
  const out: Rect[] = [];
  for (const a of reader.resolveArray(page.get('Annots')) ?? []) {
    const d = reader.resolveDict(a);
    if (!d || !isName(reader.resolve(d.get('Subtype')), 'Widget')) continue;
    const ft = reader.resolve(d.get('FT')) ?? reader.resolve(reader.resolveDict(d.get('Parent'))?.get('FT'));
    if (!isName(ft, 'Sig')) continue;
    const r = (reader.resolveArray(d.get('Rect')) ?? []).map((v) => reader.resolve(v));
    if (r.length === 4 && r.every((v) => typeof v === 'number')) {
      const [a1, b1, c1, d1] = r;
      if (c1 !== a1 && d1 !== b1) out.push([Math.min(a1, c1), Math.min(b1, d1), Math.max(a1, c1), Math.max(b1, d1)]);
    }
  }
  return out;
}

/** Rotation by quarter turns between default user space (relative to `box`) and the page as shown. */
function viewerSpace(box: Rect, rotation: number) {
  const W = box[2] - box[0];
  const H = box[3] - box[1];
  const rot = (((Math.round(rotation / 90) * 90) % 360) + 360) % 360;
  const toViewer = (x: number, y: number): [number, number] => {
    const u = x - box[0];
    const v = y - box[1];
    return rot === 90 ? [v, W - u] : rot === 180 ? [W - u, H - v] : rot === 270 ? [H - v, u] : [u, v];
  };
  const fromViewer = (X: number, Y: number): [number, number] => {
    const [u, v] = rot === 90 ? [W - Y, X] : rot === 180 ? [W - X, H - Y] : rot === 270 ? [Y, H - X] : [X, Y];
    return [u + box[0], v + box[1]];
  };
  const rect = (f: (x: number, y: number) => [number, number], r: Rect): Rect => {
    const [a, b] = f(r[0], r[1]);
    const [c, d] = f(r[2], r[3]);
    return [Math.min(a, c), Math.min(b, d), Math.max(a, c), Math.max(b, d)];
  };
  const quarter = rot === 90 || rot === 270;
  return {
    width: quarter ? H : W,
    height: quarter ? W : H,
    toViewer: (r: Rect) => rect(toViewer, r),
    fromViewer: (r: Rect) => rect(fromViewer, r),
  };
}

const overlaps = (a: Rect, b: Rect) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];

export interface PlacedBox {
  page: { ref: PdfRef; dict: PdfDict; number: number };
  rect: Rect;
}

/** The page and rectangle of a new visible signature field. */
export function placeBox(reader: PdfReader, placement: SignaturePlacement): PlacedBox {
  const total = findPage(reader, 1).count;
  const wanted = placement.page ?? (placement.rect ? 1 : 'last');
  const number = wanted === 'first' ? 1 : wanted === 'last' ? total : wanted;
  const page = findPage(reader, number);
  const visible = visibleBox(reader, page.dict);
  if (placement.rect) {
    const [x1, y1, x2, y2] = placement.rect;
    if (x1 >= visible[2] || x2 <= visible[0] || y1 >= visible[3] || y2 <= visible[1]) {
      throw invalidInput('appearance.rect', `is outside page ${number} (what it shows is [${visible.join(', ')}] in points)`);
    }
    return { page: { ...page, number }, rect: placement.rect };
  }
  const view = viewerSpace(visible, pageRotation(reader, page.dict));
  const margin = Math.min(placement.margin ?? 36, view.width / 4, view.height / 4);
  const w = Math.min((placement.size ?? DEFAULT_BOX_SIZE)[0], view.width - 2 * margin);
  const h = Math.min((placement.size ?? DEFAULT_BOX_SIZE)[1], view.height - 2 * margin);
  const corner = placement.corner ?? 'bottom-right';
  const right = corner.endsWith('right');
  const top = corner.startsWith('top');
  const taken = signatureWidgetRects(reader, page.dict).map(view.toViewer);
  // Rows away from the corner first, then columns: the second signer's box sits just above (or below) the first's.
  const cols = Math.max(1, Math.floor((view.width - 2 * margin + GAP) / (w + GAP)));
  const rows = Math.max(1, Math.floor((view.height - 2 * margin + GAP) / (h + GAP)));
  for (let c = 0; c < cols; c++) {
    for (let r = 0; r < rows; r++) {
      const x = right ? view.width - margin - w - c * (w + GAP) : margin + c * (w + GAP);
      const y = top ? view.height - margin - h - r * (h + GAP) : margin + r * (h + GAP);
      const candidate: Rect = [x, y, x + w, y + h];
      if (!taken.some((t) => overlaps(t, candidate))) return { page: { ...page, number }, rect: view.fromViewer(candidate) };
    }
  }
  // A page full of signatures: the corner itself (overlapping beats refusing a signer).
  const x = right ? view.width - margin - w : margin;
  const y = top ? view.height - margin - h : margin;
  return { page: { ...page, number }, rect: view.fromViewer([x, y, x + w, y + h]) };
}

/** Full name of the form's first empty signature field with a visible widget, by page then top to bottom. */
export function nextEmptySignatureField(reader: PdfReader): string | undefined {
  const empty = walkFields(reader).filter((f) => f.type === 'Sig' && reader.resolve(f.dict.get('V')) == null);
  if (empty.length === 0) return undefined;
  // A widget's page: its /P, or the page whose /Annots lists it (forms made by some tools leave /P out).
  const pages = pageRefs(reader);
  const pageIndex = new Map(pages.map((r, i) => [r.num, i + 1]));
  const listedOn = new Map<number, number>();
  pages.forEach((ref, i) => {
    for (const a of reader.resolveArray(reader.resolveDict(ref)?.get('Annots')) ?? []) if (a instanceof PdfRef) listedOn.set(a.num, i + 1);
  });
  let best: { name: string; page: number; top: number } | undefined;
  for (const f of empty) {
    const kids = reader.resolveArray(f.dict.get('Kids'));
    const widgetRef = kids ? (kids.length === 1 ? kids[0] : undefined) : f.ref;
    const widget = kids ? reader.resolveDict(widgetRef) : f.dict;
    if (!widget || (kids && widget.has('T'))) continue;
    const r = (reader.resolveArray(widget.get('Rect')) ?? []).map((v) => reader.resolve(v));
    if (r.length !== 4 || !r.every((v) => typeof v === 'number')) continue;
    const [a, b, c, d] = r;
    if (Math.abs(c - a) < 10 || Math.abs(d - b) < 10) continue;
    const p = widget.get('P');
    const page = (p instanceof PdfRef ? pageIndex.get(p.num) : undefined) ?? (widgetRef instanceof PdfRef ? listedOn.get(widgetRef.num) : undefined);
    if (page === undefined) continue;
    const top = Math.max(b, d);
    if (!best || page < best.page || (page === best.page && top > best.top)) best = { name: f.fullName, page, top };
  }
  return best?.name;
}
