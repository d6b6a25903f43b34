/**
 * Form-level rules for adding a signature field in an incremental update: refuse what must not be signed
 * (encrypted files, DocMDP P=1 certified documents), keep field names unique, append the widget to the page's
 * /Annots and the AcroForm's /Fields (either may be an indirect array) and set /SigFlags 3.
 */
import { SingpassFlowsError, invalidInput } from '../errors';
import { PdfDict, PdfObject, PdfRef, PdfString, isName } from './pdf/objects';
import { PdfReader } from './pdf/reader';
import { IncrementalUpdate } from './pdf/writer';
import { decodeTextString } from './pdf/text';

/**
 * Preflight before a signing session is created: the PDF is readable (`PDF_INVALID`), not encrypted
 * (`PDF_ENCRYPTED`) and not certified "no changes" (`PDF_CERTIFIED_NO_CHANGES`), so the user is never asked to sign
 * something we cannot finish.
 */
export function checkSignablePdf(pdf: Buffer): void {
  if (!Buffer.isBuffer(pdf)) throw invalidInput('pdf', 'expected the PDF bytes');
  assertSignable(PdfReader.open(pdf));
}

/** Refuses encrypted PDFs and certified documents that allow no changes. */
export function assertSignable(reader: PdfReader): void {
  if (reader.trailer.get('Encrypt') !== undefined) {
    throw new SingpassFlowsError(
      'PDF_ENCRYPTED',
      'The PDF is encrypted or password-protected. Remove the protection (save an unprotected copy) before signing.',
      { retryable: false },
    );
  }
  const perms = reader.resolveDict(reader.catalog().get('Perms'));
  const docMdp = reader.resolveDict(perms?.get('DocMDP'));
  if (!docMdp) return;
  for (const ref of reader.resolveArray(docMdp.get('Reference')) ?? []) {
    const r = reader.resolveDict(ref);
    if (!r || !isName(reader.resolve(r.get('TransformMethod')), 'DocMDP')) continue;
    const p = reader.resolve(reader.resolveDict(r.get('TransformParams'))?.get('P'));
    if (p === 1) {
      throw new SingpassFlowsError(
        'PDF_CERTIFIED_NO_CHANGES',
        'The PDF is certified with "no changes allowed" (DocMDP P=1): any new signature would invalidate the ' +
          'certification. Sign the original, uncertified document instead.',
        { retryable: false },
      );
    }
  }
}

export interface FieldVisit {
  fullName: string;
  ref?: PdfRef;
  dict: PdfDict;
  /** Field type, inherited from ancestors when absent. */
  type?: string;
}

/** Every field in the AcroForm tree (terminal and non-terminal), with its fully qualified name. */
export function walkFields(reader: PdfReader): FieldVisit[] {
  const acro = reader.resolveDict(reader.catalog().get('AcroForm'));
  const out: FieldVisit[] = [];
  const seen = new Set<number>();
  const visit = (node: PdfObject, parentName: string, parentType: string | undefined, depth: number) => {
    if (depth > 64) return;
    if (node instanceof PdfRef) {
      if (seen.has(node.num)) return;
      seen.add(node.num);
    }
    const d = reader.resolveDict(node);
    if (!d) return;
    const t = reader.resolve(d.get('T'));
    const partial = t instanceof PdfString ? decodeTextString(t.bytes) : undefined;
    const fullName = partial === undefined ? parentName : parentName ? `${parentName}.${partial}` : partial;
    const ft = reader.resolve(d.get('FT'));
    const type = isName(ft) ? ft.name : parentType;
    if (partial !== undefined) out.push({ fullName, ref: node instanceof PdfRef ? node : undefined, dict: d, type });
    for (const kid of reader.resolveArray(d.get('Kids')) ?? []) visit(kid, fullName, type, depth + 1);
  };
  for (const f of reader.resolveArray(acro?.get('Fields')) ?? []) visit(f, '', undefined, 0);
  return out;
}

/** An existing, unsigned signature field that a new signature can fill. */
export interface EmptySignatureField {
  field: { ref: PdfRef; dict: PdfDict };
  widget: { ref: PdfRef; dict: PdfDict };
  page: { ref: PdfRef; dict: PdfDict };
  /** Normalised widget rectangle (may have zero size for invisible fields). */
  rect: [number, number, number, number];
}

function fieldExists(message: string): SingpassFlowsError {
  return new SingpassFlowsError('PDF_FIELD_EXISTS', message, { field: 'fieldName', retryable: false });
}

/**
 * Picks the field to sign: a free default name "Signature<n>", a new field with the caller's name, or — when the
 * caller names an existing signature field that is still unsigned (forms often ship one) — that field.
 * Any other existing name is refused (`PDF_FIELD_EXISTS`): signing must never overwrite a field.
 */
export function chooseField(
  reader: PdfReader,
  wanted: string | undefined,
  prefix = 'Signature',
): { fieldName: string; empty?: EmptySignatureField } {
  const fields = walkFields(reader);
  const used = new Set(fields.map((f) => f.fullName));
  if (wanted === undefined) {
    for (let n = 1; ; n++) if (!used.has(`${prefix}${n}`)) return { fieldName: `${prefix}${n}` };
  }
  if (typeof wanted !== 'string' || wanted.length === 0 || wanted.length > 200 || wanted.includes('.')) {
    throw invalidInput('fieldName', 'must be 1–200 characters without "."');
  }
  const existing = fields.find((f) => f.fullName === wanted);
  if (!existing) return { fieldName: wanted };
  if (existing.type !== 'Sig') {
    throw fieldExists(`The PDF already has a form field named "${wanted}" that is not a signature field. Choose another field name.`);
  }
  if (reader.resolve(existing.dict.get('V')) !== null) {
    throw fieldExists(`The signature field "${wanted}" is already signed. Choose another field name.`);
  }
  const widget = widgetOf(reader, existing);
  const page = widget && pageOfWidget(reader, widget);
  if (!existing.ref || !widget || !page) {
    throw fieldExists(`The empty signature field "${wanted}" cannot be filled (it has no single widget on a page). Choose another field name.`);
  }
  const r = (reader.resolveArray(widget.dict.get('Rect')) ?? []).map((v) => reader.resolve(v));
  const n = r.length === 4 && r.every((v) => typeof v === 'number') ? r : [0, 0, 0, 0];
  const rect: [number, number, number, number] = [Math.min(n[0], n[2]), Math.min(n[1], n[3]), Math.max(n[0], n[2]), Math.max(n[1], n[3])];
  return { fieldName: wanted, empty: { field: { ref: existing.ref, dict: existing.dict }, widget, page, rect } };
}

function widgetOf(reader: PdfReader, f: FieldVisit): { ref: PdfRef; dict: PdfDict } | undefined {
  if (isName(reader.resolve(f.dict.get('Subtype')), 'Widget') || !f.dict.has('Kids')) return f.ref && { ref: f.ref, dict: f.dict };
  const kids = reader.resolveArray(f.dict.get('Kids')) ?? [];
  const k = kids[0];
  const d = reader.resolveDict(k);
  return kids.length === 1 && k instanceof PdfRef && d && !d.has('T') ? { ref: k, dict: d } : undefined;
}

/** The widget's page: its /P when it is really listed there, else a walk of the page tree's /Annots. */
function pageOfWidget(reader: PdfReader, widget: { ref: PdfRef }): { ref: PdfRef; dict: PdfDict } | undefined {
  const lists = (d: PdfDict) => (reader.resolveArray(d.get('Annots')) ?? []).some((a) => a instanceof PdfRef && a.num === widget.ref.num);
  const pRef = reader.resolveDict(widget.ref)?.get('P');
  const p = reader.resolveDict(pRef);
  if (p && pRef instanceof PdfRef && lists(p)) return { ref: pRef, dict: p };
  const seen = new Set<number>();
  const walk = (node: PdfObject, depth: number): { ref: PdfRef; dict: PdfDict } | undefined => {
    if (depth > 64 || !(node instanceof PdfRef) || seen.has(node.num)) return undefined;
    seen.add(node.num);
    const d = reader.resolveDict(node);
    if (!d) return undefined;
    if (d.has('Kids')) {
      for (const kid of reader.resolveArray(d.get('Kids')) ?? []) {
        const hit = walk(kid, depth + 1);
        if (hit) return hit;
      }
      return undefined;
    }
    return lists(d) ? { ref: node, dict: d } : undefined;
  };
  return walk(reader.catalog().get('Pages') ?? null, 0);
}

/** Reference of the 1-based page `pageNumber`, walking the page tree with /Count to skip subtrees. */
export function findPage(reader: PdfReader, pageNumber: number): { ref: PdfRef; dict: PdfDict; count: number } {
  const root = reader.catalog().get('Pages');
  const rootDict = reader.resolveDict(root);
  const total = Number(reader.resolve(rootDict?.get('Count')) ?? 0);
  // No page tree (or a count that is not one) is the file's fault, not the page number's.
  if (!rootDict || !Number.isSafeInteger(total) || total < 1) throw new SingpassFlowsError('PDF_INVALID', 'The PDF has no readable pages (its page tree is missing or broken).', { retryable: false });
  if (!Number.isInteger(pageNumber) || pageNumber < 1 || pageNumber > total) {
    throw invalidInput('appearance.page', `must be a page number between 1 and ${total}`);
  }
  let node: PdfDict | undefined = rootDict;
  let n = pageNumber;
  for (let depth = 0; node && depth < 64; depth++) {
    let next: PdfDict | undefined;
    for (const kid of reader.resolveArray(node.get('Kids')) ?? []) {
      const kd = reader.resolveDict(kid);
      if (!kd) continue;
      if (isName(reader.resolve(kd.get('Type')), 'Pages') || kd.has('Kids')) {
        const c = Number(reader.resolve(kd.get('Count')) ?? 0);
        if (n <= c) {
          next = kd;
          break;
        }
        n -= c;
      } else if (--n === 0) {
        if (!(kid instanceof PdfRef)) break;
        return { ref: kid, dict: kd, count: total };
      }
    }
    node = next;
  }
  throw new SingpassFlowsError('PDF_INVALID', 'The PDF page tree is broken (page not found).', { retryable: false });
}

/** Appends `item` to the array held at `dict[key]`, rewriting the indirect array or returning true when the
 *  (cloned) dictionary itself changed. */
function appendToArray(reader: PdfReader, update: IncrementalUpdate, dict: PdfDict, key: string, item: PdfRef): boolean {
  const v = dict.get(key);
  if (v instanceof PdfRef) {
    const arr = reader.resolveArray(v);
    if (arr) {
      update.replace(v, [...arr, item]);
      return false;
    }
  }
  const arr = Array.isArray(v) ? v : [];
  dict.set(key, [...arr, item]);
  return true;
}

/**
 * Adds the widget/field `widgetRef` to the page and to the AcroForm (created when absent), with /SigFlags 3.
 */
export function attachField(reader: PdfReader, update: IncrementalUpdate, page: { ref: PdfRef; dict: PdfDict }, widgetRef: PdfRef): void {
  const pageDict = page.dict.clone();
  if (appendToArray(reader, update, pageDict, 'Annots', widgetRef)) update.replace(page.ref, pageDict);

  updateAcroForm(reader, update, widgetRef);
}

/** Sets /SigFlags 3 on the AcroForm (created when absent) and appends `newField` to its /Fields when given. */
export function updateAcroForm(reader: PdfReader, update: IncrementalUpdate, newField?: PdfRef): void {
  const catalog = reader.catalog();
  const acroRef = catalog.get('AcroForm');
  if (acroRef instanceof PdfRef && reader.resolveDict(acroRef)) {
    const acro = reader.resolveDict(acroRef)!.clone();
    if (newField) appendToArray(reader, update, acro, 'Fields', newField);
    acro.set('SigFlags', 3);
    update.replace(acroRef, acro);
    return;
  }
  const acro = acroRef instanceof PdfDict ? acroRef.clone() : new PdfDict();
  if (newField) appendToArray(reader, update, acro, 'Fields', newField);
  acro.set('SigFlags', 3);
  const newCatalog = catalog.clone();
  newCatalog.set('AcroForm', update.add(acro));
  update.replace(reader.rootRef, newCatalog);
}


/** The page's effective /Rotate (inherited through /Parent), in degrees. */
export function pageRotation(reader: PdfReader, page: PdfDict): number {
  let node: PdfDict | undefined = page;
  for (let depth = 0; node && depth < 64; depth++) {
    const r = reader.resolve(node.get('Rotate'));
    if (typeof r === 'number') return r;
    node = reader.resolveDict(node.get('Parent'));
  }
  return 0;
}

/** The page's effective /MediaBox (inherited), normalised, or undefined when missing/malformed. */
export function pageMediaBox(reader: PdfReader, page: PdfDict): [number, number, number, number] | undefined {
  let node: PdfDict | undefined = page;
  for (let depth = 0; node && depth < 64; depth++) {
    const box = reader.resolveArray(node.get('MediaBox'))?.map((v) => reader.resolve(v));
    if (box && box.length === 4 && box.every((v) => typeof v === 'number')) {
      const [a, b, c, d] = box;
      return [Math.min(a, c), Math.min(b, d), Math.max(a, c), Math.max(b, d)];
    }
    node = reader.resolveDict(node.get('Parent'));
  }
  return undefined;
}

/** Every page object in page order, in one walk of the page tree. */
export function pageRefs(reader: PdfReader): PdfRef[] {
  const out: PdfRef[] = [];
  const seen = new Set<number>();
  const walk = (node: PdfObject, depth: number) => {
    if (depth > 64 || !(node instanceof PdfRef) || seen.has(node.num)) return;
    seen.add(node.num);
    const d = reader.resolveDict(node);
    if (!d) return;
    if (d.has('Kids') || isName(reader.resolve(d.get('Type')), 'Pages')) {
      for (const kid of reader.resolveArray(d.get('Kids')) ?? []) walk(kid, depth + 1);
    } else out.push(node);
  };
  walk(reader.catalog().get('Pages') ?? null, 0);
  return out;
}
