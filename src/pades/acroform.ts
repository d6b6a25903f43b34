/**
 * Form-level rules for adding a signature field in an incremental update: refuse what must not be signed
 * (encrypted files, DocMDP P=1 certified documents), keep field names unique, append the widget to the page's
 * /Annots and the AcroForm's /Fields (either may be an indirect array) and set /SigFlags 3.
 */
import { SingpassFlowsError, invalidInput } from '../errors';
import { PdfDict, PdfObject, PdfRef, PdfString, isName, name } from './pdf/objects';
import { PdfReader } from './pdf/reader';
import { IncrementalUpdate } from './pdf/writer';
import { decodeTextString } from './pdf/text';

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

/** A free default name "Signature<n>", or the caller's name after checking it is valid and unused. */
export function chooseFieldName(reader: PdfReader, wanted: string | undefined, prefix = 'Signature'): string {
  const used = new Set(walkFields(reader).map((f) => f.fullName));
  if (wanted !== undefined) {
    if (typeof wanted !== 'string' || wanted.length === 0 || wanted.length > 200 || wanted.includes('.')) {
      throw invalidInput('fieldName', 'must be 1–200 characters without "."');
    }
    if (used.has(wanted)) {
      throw new SingpassFlowsError('PDF_FIELD_EXISTS', `The PDF already has a form field named "${wanted}". Choose another field name.`, {
        field: 'fieldName',
        retryable: false,
      });
    }
    return wanted;
  }
  for (let n = 1; ; n++) if (!used.has(`${prefix}${n}`)) return `${prefix}${n}`;
}

/** Reference of the 1-based page `pageNumber`, walking the page tree with /Count to skip subtrees. */
export function findPage(reader: PdfReader, pageNumber: number): { ref: PdfRef; dict: PdfDict; count: number } {
  const root = reader.catalog().get('Pages');
  const rootDict = reader.resolveDict(root);
  const total = Number(reader.resolve(rootDict?.get('Count')) ?? 0);
  if (!Number.isInteger(pageNumber) || pageNumber < 1 || pageNumber > total) {
    throw invalidInput('appearance.page', `must be a page number between 1 and ${total}`);
  }
  let node = rootDict;
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

  const catalog = reader.catalog();
  const acroRef = catalog.get('AcroForm');
  if (acroRef instanceof PdfRef && reader.resolveDict(acroRef)) {
    const acro = reader.resolveDict(acroRef)!.clone();
    appendToArray(reader, update, acro, 'Fields', widgetRef);
    acro.set('SigFlags', 3);
    update.replace(acroRef, acro);
    return;
  }
  const acro = acroRef instanceof PdfDict ? acroRef.clone() : new PdfDict();
  appendToArray(reader, update, acro, 'Fields', widgetRef);
  acro.set('SigFlags', 3);
  const newCatalog = catalog.clone();
  newCatalog.set('AcroForm', update.add(acro));
  update.replace(reader.rootRef, newCatalog);
}

export const sigFieldFlags = { print: 4, locked: 128 };
export const TYPE_SIG = name('Sig');
