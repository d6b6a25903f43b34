/**
 * What the incremental updates appended after a signature do. A signature covers the file up to the end of its own
 * revision; B-LT and B-LTA then append revisions of their own (validation data, a document timestamp), and other
 * people may sign after. Those are expected and do not change what was signed. Anything else appended (new page
 * content, an annotation, a filled form field, a removed object, bytes that are not a PDF update) does, and the
 * report must say so.
 *
 * The rule, per later revision, compares the objects it defines with the state just before it (object level, like
 * pyHanko's difference analysis, and at least as strict as its "LTA updates" plus signing):
 * - validation data: the catalog's /DSS (keys /Type /Certs /OCSPs /CRLs /VRI only), its arrays and /VRI entries;
 *   new objects reached from it (the DER streams);
 * - a signature or document timestamp: a new signature field (or an existing empty one filled: only /V /AP /F
 *   change), its widget added to a page's /Annots (only /Annots changes, entries only added), /Fields only gaining
 *   entries, /SigFlags, /DR, /DA on the AcroForm, the new objects the field reaches (signature dictionary,
 *   appearance). The field's /ByteRange must end where the revision ends: the later signer signed that revision;
 * - document information: the trailer's /Info and the catalog's /Metadata;
 * - the catalog may change only in /DSS, /AcroForm, /Extensions, /Metadata;
 * - object and cross-reference streams (containers) and objects rewritten unchanged.
 * Every other changed object is a change of the document. Not traced: an object that a signed object referenced
 * while it did not exist yet (a dangling reference) and that a later update defines; tracing it would mean reading
 * every object of the file.
 */
import { PdfDict, PdfObject, PdfRef, PdfStream, PdfString, isName } from './pdf/objects';
import { PdfReader } from './pdf/reader';
import { decodeTextString } from './pdf/text';

/** One thing a later update did. `changed` ones alter what the earlier signature covers. */
export type LaterUpdate =
  | { kind: 'signature'; fieldName?: string }
  | { kind: 'documentTimestamp'; fieldName?: string }
  | { kind: 'validationData' }
  | { kind: 'documentInfo' }
  | { kind: 'changed'; what: ChangeKind };

/**
 * - `page`: a page or what it draws (its content, resources) was changed;
 * - `annotation`: an annotation that is not a signature (a comment, a stamp, a drawing) was added to a page;
 * - `form`: a form field was filled in, changed, added or removed (other than by signing);
 * - `unreadable`: bytes that are not a readable PDF update were appended, or a signature does not reach the end of
 *   its own revision;
 * - `other`: any other part of the document.
 */
export type ChangeKind = 'page' | 'annotation' | 'form' | 'unreadable' | 'other';

type Entry = PdfReader['entries'] extends Map<number, infer E> ? E : never;

interface Revision {
  /** End offset (after %%EOF and its end-of-line). */
  end: number;
  reader: PdfReader;
}

const WS = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);

function onlyWhitespace(pdf: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!WS.has(pdf[i])) return false;
  return true;
}

/**
 * The revisions of `pdf` ending at or after `from`, oldest first: each `%%EOF` whose prefix opens as a PDF with a
 * cross-reference section of its own (a `%%EOF` inside a binary stream opens as the revision before it, and is
 * dropped).
 */
function revisionsFrom(pdf: Buffer, from: number): Revision[] {
  const out: Revision[] = [];
  let at = pdf.indexOf('%%EOF', Math.max(0, from - 8), 'latin1');
  while (at >= 0) {
    let end = at + 5;
    if (pdf[end] === 0x0d) end++;
    if (pdf[end] === 0x0a) end++;
    try {
      const reader = PdfReader.open(pdf.subarray(0, end));
      const last = out[out.length - 1];
      if (!last || reader.startxref !== last.reader.startxref) out.push({ end, reader });
    } catch {
      // not a revision end (or a damaged one): the bytes are judged with the next one
    }
    at = pdf.indexOf('%%EOF', at + 5, 'latin1');
  }
  return out;
}

/** Reads once, answers for every signature of the file. */
export class RevisionHistory {
  private revisions: Revision[] | undefined;
  private readonly analysed = new Map<number, LaterUpdate[]>();

  constructor(
    private readonly pdf: Buffer,
    /** The smallest signature end: revisions before it are never needed. */
    private readonly from: number,
  ) {}

  /** What was appended after a signature whose /ByteRange ends at `end` (empty when it covers the whole file). */
  after(end: number): LaterUpdate[] {
    const { pdf } = this;
    if (onlyWhitespace(pdf, end, pdf.length)) return [];
    this.revisions ??= revisionsFrom(pdf, this.from);
    const revs = this.revisions;
    const own = revs.findIndex((r) => r.end >= end);
    const out: LaterUpdate[] = [];
    if (own < 0) return [{ kind: 'changed', what: 'unreadable' }];
    // The signature must reach the end of its own revision: bytes of it left out are unsigned.
    if (!onlyWhitespace(pdf, end, revs[own].end)) out.push({ kind: 'changed', what: 'unreadable' });
    for (let i = own + 1; i < revs.length; i++) {
      let found = this.analysed.get(i);
      if (!found) {
        try {
          found = compareRevisions(revs[i - 1].reader, revs[i].reader, revs[i].end, pdf);
        } catch {
          // An object of the update cannot be read: nothing can say it only added validation data.
          found = [{ kind: 'changed', what: 'unreadable' }];
        }
        this.analysed.set(i, found);
      }
      out.push(...found);
    }
    if (!onlyWhitespace(pdf, revs[revs.length - 1].end, pdf.length)) out.push({ kind: 'changed', what: 'unreadable' });
    return out;
  }
}

function sameEntry(a: Entry | undefined, b: Entry | undefined): boolean {
  if (!a || !b) return a === b;
  if (a.kind === 'n' && b.kind === 'n') return a.offset === b.offset && a.gen === b.gen;
  if (a.kind === 'c' && b.kind === 'c') return a.stream === b.stream && a.index === b.index;
  return a.kind === b.kind;
}

const inUse = (e: Entry | undefined): boolean => e !== undefined && e.kind !== 'f';

/** Structural equality of parsed values (references by number and generation, strings by bytes). */
export function sameValue(a: PdfObject | undefined, b: PdfObject | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (a instanceof PdfRef) return b instanceof PdfRef && a.num === b.num && a.gen === b.gen;
  if (isName(a)) return isName(b) && a.name === b.name;
  if (a instanceof PdfString) return b instanceof PdfString && a.bytes.equals(b.bytes);
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  if (a instanceof PdfStream) return b instanceof PdfStream && sameValue(a.dict, b.dict) && a.data.equals(b.data);
  if (a instanceof PdfDict) {
    if (!(b instanceof PdfDict) || a.map.size !== b.map.size) return false;
    for (const [k, v] of a.map) if (!sameValue(v, b.get(k))) return false;
    return true;
  }
  return false;
}

/** Keys whose values differ between two dictionaries (missing on one side counts). */
function changedKeys(a: PdfDict | undefined, b: PdfDict | undefined): string[] {
  const keys = new Set([...(a?.map.keys() ?? []), ...(b?.map.keys() ?? [])]);
  return [...keys].filter((k) => !sameValue(a?.get(k), b?.get(k)));
}

const DSS_KEYS = new Set(['Type', 'Certs', 'OCSPs', 'CRLs', 'VRI']);
const VRI_ENTRY_KEYS = new Set(['Type', 'TU', 'TS', 'Cert', 'OCSP', 'CRL']);
const CATALOG_MAY_CHANGE = new Set(['DSS', 'AcroForm', 'Extensions', 'Metadata']);
const ACROFORM_MAY_CHANGE = new Set(['Fields', 'SigFlags', 'DR', 'DA']);
const FILLED_FIELD_MAY_CHANGE = new Set(['V', 'AP', 'F']);

/**
 * What revision `a` (ending at `end`) does to revision `b` before it. Each object `a` defines differently must be
 * explained by one of the allowed roles (see the module comment); the rest are changes of the document.
 */
function compareRevisions(b: PdfReader, a: PdfReader, end: number, pdf: Buffer): LaterUpdate[] {
  const found: LaterUpdate[] = [];
  /** Adds what the update did, once (a field is seen from /Fields and from the page's /Annots). */
  const record = (u: LaterUpdate) => {
    const key = (x: LaterUpdate) => `${x.kind} ${'fieldName' in x ? x.fieldName : ''}`;
    if (!found.some((f) => key(f) === key(u))) found.push(u);
  };
  const changes = new Set<ChangeKind>();
  const changed = new Set<number>();
  /** Written again unchanged: no change, but it says what the update was for (a DSS saved again as it was). */
  const rewritten = new Set<number>();
  for (const [num, ea] of a.entries) {
    const eb = b.entries.get(num);
    if (sameEntry(ea, eb)) continue;
    if (!inUse(ea)) {
      if (inUse(eb)) changes.add('other'); // an object deleted after signing
      continue;
    }
    // Rewritten but identical (some writers save unchanged objects again): not a change.
    if (inUse(eb) && sameValue(b.getObject(num), a.getObject(num))) {
      rewritten.add(num);
      continue;
    }
    changed.add(num);
  }
  for (const [num, eb] of b.entries) if (inUse(eb) && !a.entries.has(num)) changes.add('other');
  const isNew = (num: number) => !inUse(b.entries.get(num));

  const explained = new Set<number>();
  const descended = new Set<number>();
  /**
   * Marks the new objects reachable from `o` as explained. It stops at objects that existed before, except those
   * already allowed to change in their role (a DSS array written again with more entries): their new entries count.
   */
  const claim = (o: PdfObject | undefined, depth = 0): void => {
    if (depth > 64 || o === undefined || o === null) return;
    if (o instanceof PdfRef) {
      if (!changed.has(o.num) || descended.has(o.num) || !(isNew(o.num) || explained.has(o.num))) return;
      explained.add(o.num);
      descended.add(o.num);
      claim(a.getObject(o.num), depth + 1);
    } else if (Array.isArray(o)) for (const v of o) claim(v, depth + 1);
    else if (o instanceof PdfDict) for (const v of o.map.values()) claim(v, depth + 1);
    else if (o instanceof PdfStream) claim(o.dict, depth + 1);
  };
  const refNum = (o: PdfObject | undefined) => (o instanceof PdfRef ? o.num : undefined);
  /** An existing object with a role: explained when it changed. */
  const allow = (o: PdfObject | undefined) => {
    const n = refNum(o);
    if (n !== undefined && changed.has(n) && !isNew(n)) explained.add(n);
  };
  /** A new object with a role, itself only (what it references is judged on its own). */
  const adopt = (o: PdfObject | undefined) => {
    const n = refNum(o);
    if (n !== undefined && changed.has(n) && isNew(n)) explained.add(n);
  };

  // Containers: object streams and cross-reference streams hold or index objects, each judged on its own.
  for (const num of changed) {
    if (!isNew(num)) continue;
    const o = a.getObject(num);
    if (o instanceof PdfStream && (isName(o.dict.get('Type'), 'ObjStm') || isName(o.dict.get('Type'), 'XRef'))) explained.add(num);
  }

  // The catalog: only /DSS, /AcroForm, /Extensions, /Metadata may change (and encryption may not be added).
  const catB = b.catalog();
  const catA = a.catalog();
  if (!sameValue(b.trailer.get('Encrypt'), a.trailer.get('Encrypt'))) changes.add('other');
  if (changedKeys(catB, catA).some((k) => !CATALOG_MAY_CHANGE.has(k))) changes.add('other');
  else {
    allow(b.rootRef);
    adopt(a.rootRef);
    claim(catA.get('Extensions'));
  }

  // Document information.
  const refChanged = (o: PdfObject | undefined) => refNum(o) !== undefined && changed.has(refNum(o)!);
  if (refChanged(b.trailer.get('Info')) || !sameValue(b.trailer.get('Info'), a.trailer.get('Info'))) {
    allow(b.trailer.get('Info'));
    claim(a.trailer.get('Info'));
    record({ kind: 'documentInfo' });
  }
  if (refChanged(catA.get('Metadata')) || !sameValue(catB.get('Metadata'), catA.get('Metadata'))) {
    const meta = a.resolve(catA.get('Metadata'));
    if (meta === null || (meta instanceof PdfStream && isName(meta.dict.get('Type'), 'Metadata'))) {
      allow(catB.get('Metadata'));
      claim(catA.get('Metadata'));
      record({ kind: 'documentInfo' });
    }
  }

  // Validation data: the DSS, its arrays and VRI entries (existing ones may grow), new DER streams.
  const dssB = b.resolveDict(catB.get('DSS'));
  const dssA = a.resolveDict(catA.get('DSS'));
  if (dssA) {
    const before = explained.size;
    const vriB = b.resolveDict(dssB?.get('VRI'));
    const vriA = a.resolveDict(dssA.get('VRI'));
    allow(catB.get('DSS'));
    allow(dssB?.get('VRI'));
    for (const k of ['Certs', 'OCSPs', 'CRLs']) allow(dssB?.get(k));
    for (const old of vriB?.map.values() ?? []) {
      allow(old);
      for (const k of ['Cert', 'OCSP', 'CRL']) allow(b.resolveDict(old)?.get(k));
    }
    claim(catA.get('DSS'));
    for (const v of dssA.map.values()) claim(v);
    const resaved = [catB.get('DSS'), ...(dssB?.map.values() ?? [])].some((v) => refNum(v) !== undefined && rewritten.has(refNum(v)!));
    if (explained.size > before || resaved || !sameValue(catB.get('DSS'), catA.get('DSS'))) {
      // A DSS only holds validation data: other keys, or VRI entries with other keys, are something else.
      const vriOk = [...(vriA?.map.values() ?? [])].every((e) => {
        const d = a.resolveDict(e);
        return d !== undefined && [...d.map.keys()].every((k) => VRI_ENTRY_KEYS.has(k));
      });
      if ([...dssA.map.keys()].some((k) => !DSS_KEYS.has(k)) || !vriOk) changes.add('other');
      else record({ kind: 'validationData' });
    }
  }

  // Signatures and document timestamps: new signature fields, or existing empty ones filled.
  const signatureIn = (field: PdfDict, name: string | undefined): LaterUpdate | undefined => {
    const v = a.resolveDict(field.get('V'));
    const br = a.resolveArray(v?.get('ByteRange'));
    if (!v || !br || br.length !== 4 || !br.every((n) => typeof n === 'number')) return undefined;
    const sigEnd = Number(br[2]) + Number(br[3]);
    // The later signer signed this revision: its ByteRange reaches the revision's end.
    if (sigEnd > end || !onlyWhitespace(pdf, sigEnd, end)) return undefined;
    const dts = isName(v.get('Type'), 'DocTimeStamp') || isName(v.get('SubFilter'), 'ETSI.RFC3161');
    return { kind: dts ? 'documentTimestamp' : 'signature', ...(name !== undefined ? { fieldName: name } : {}) };
  };
  const nameOf = (d: PdfDict, reader: PdfReader): string | undefined => {
    const parts: string[] = [];
    let cur: PdfDict | undefined = d;
    for (let i = 0; cur && i < 32; i++) {
      const t = reader.resolve(cur.get('T'));
      if (t instanceof PdfString) parts.unshift(decodeTextString(t.bytes));
      cur = reader.resolveDict(cur.get('Parent'));
    }
    return parts.length ? parts.join('.') : undefined;
  };
  const fieldType = (d: PdfDict | undefined, reader: PdfReader): string | undefined => {
    let cur = d;
    for (let i = 0; cur && i < 32; i++) {
      const ft = reader.resolve(cur.get('FT'));
      if (isName(ft)) return ft.name;
      cur = reader.resolveDict(cur.get('Parent'));
    }
    return undefined;
  };
  /** A new signature field (or widget of one): explained with what it reaches when it carries a signature of this revision. */
  const newSignatureField = (ref: PdfObject): boolean => {
    const d = a.resolveDict(ref);
    if (!d || fieldType(d, a) !== 'Sig') return false;
    // The terminal field carries /V: the dictionary itself, or its parent for a kid widget.
    const field = d.has('V') ? d : a.resolveDict(d.get('Parent')) ?? d;
    const sig = signatureIn(field, nameOf(field, a));
    if (!sig) return false;
    record(sig);
    claim(ref);
    if (field !== d) claim(d.get('Parent'));
    return true;
  };
  /** Items of `arrA` not in `arrB`; undefined when one of `arrB` was removed. */
  const additions = (arrB: PdfObject[] | undefined, arrA: PdfObject[] | undefined): PdfObject[] | undefined => {
    const old = arrB ?? [];
    const now = arrA ?? [];
    if (!old.every((o) => now.some((n) => sameValue(o, n)))) return undefined;
    return now.filter((n) => !old.some((o) => sameValue(o, n)));
  };

  // The AcroForm: /Fields only gains signature fields; /SigFlags, /DR, /DA may change.
  const acroB = b.resolveDict(catB.get('AcroForm'));
  const acroA = a.resolveDict(catA.get('AcroForm'));
  if (!sameValue(catB.get('AcroForm'), catA.get('AcroForm')) || changedKeys(acroB, acroA).length || refChanged(acroA?.get('Fields'))) {
    if (changedKeys(acroB, acroA).some((k) => !ACROFORM_MAY_CHANGE.has(k))) changes.add('form');
    else {
      const added = additions(b.resolveArray(acroB?.get('Fields')), a.resolveArray(acroA?.get('Fields')));
      if (!added) changes.add('form');
      else {
        for (const f of added) if (!newSignatureField(f)) changes.add('form');
        allow(catB.get('AcroForm'));
        allow(acroB?.get('Fields'));
        adopt(catA.get('AcroForm'));
        adopt(acroA?.get('Fields'));
        for (const k of ['DR', 'DA']) claim(acroA?.get(k));
      }
    }
  }

  // The rest of the changed objects that existed before: pages gaining signature widgets, empty signature
  // fields being filled, indirect /Annots arrays; anything else is a change of the document.
  let pages: PageIndex | undefined;
  for (const num of changed) {
    if (explained.has(num) || isNew(num)) continue;
    const ob = b.getObject(num);
    const oa = a.getObject(num);
    if (ob instanceof PdfDict && oa instanceof PdfDict && isName(ob.get('Type'), 'Page')) {
      const keys = changedKeys(ob, oa);
      if (keys.some((k) => k !== 'Annots')) { changes.add('page'); continue; }
      annotsAdded(b.resolveArray(ob.get('Annots')), a.resolveArray(oa.get('Annots')), num);
      continue;
    }
    if (ob instanceof PdfDict && oa instanceof PdfDict && fieldType(ob, b) === 'Sig' && b.resolve(ob.get('V')) === null) {
      const field = oa.has('V') ? oa : a.resolveDict(oa.get('Parent'));
      const sig = field && signatureIn(field, nameOf(field, a));
      if (changedKeys(ob, oa).some((k) => !FILLED_FIELD_MAY_CHANGE.has(k)) || !sig) { changes.add('form'); continue; }
      record(sig);
      explained.add(num);
      claim(oa.get('V'));
      claim(oa.get('AP'));
      continue;
    }
    if (Array.isArray(ob) && Array.isArray(oa)) {
      pages ??= pageIndex(b);
      if (pages.annots.has(num)) { annotsAdded(ob, oa, num); continue; }
    }
    pages ??= pageIndex(b);
    const pageTree = ob instanceof PdfDict && (isName(ob.get('Type'), 'Pages') || isName(ob.get('Type'), 'Page'));
    changes.add(pages.drawn.has(num) || pageTree ? 'page' : fieldType(ob instanceof PdfDict ? ob : undefined, b) ? 'form' : 'other');
  }
  function annotsAdded(arrB: PdfObject[] | undefined, arrA: PdfObject[] | undefined, num: number): void {
    const added = additions(arrB, arrA);
    if (!added) { changes.add('annotation'); return; }
    for (const an of added) {
      const d = a.resolveDict(an);
      if (d && isName(d.get('Subtype'), 'Widget') && fieldType(d, a) === 'Sig' && newSignatureField(an)) continue;
      if (d && isName(d.get('Subtype'), 'Widget')) changes.add('form');
      else changes.add('annotation');
    }
    explained.add(num);
  }
  // New objects nothing allowed reaches were added for something else; when a change was found already they are
  // most likely its parts (a page's new content stream), so they are not counted twice.
  if (changes.size === 0 && [...changed].some((num) => isNew(num) && !explained.has(num))) changes.add('other');
  for (const what of changes) found.push({ kind: 'changed', what });
  return found;
}

interface PageIndex {
  /** Object numbers of indirect /Annots arrays of pages. */
  annots: Set<number>;
  /** Object numbers of what pages draw directly: content streams (and arrays of them) and resource dictionaries. */
  drawn: Set<number>;
}

/** Walks the page tree of a revision (only when a changed object needs it: for large files it reads every page). */
function pageIndex(r: PdfReader): PageIndex {
  const annots = new Set<number>();
  const drawn = new Set<number>();
  const seen = new Set<number>();
  const visit = (node: PdfObject | undefined, depth: number) => {
    if (depth > 64 || !(node instanceof PdfRef) || seen.has(node.num)) return;
    seen.add(node.num);
    const d = r.resolveDict(node);
    if (!d) return;
    for (const k of ['Annots', 'Contents', 'Resources']) {
      const v = d.get(k);
      if (v instanceof PdfRef) (k === 'Annots' ? annots : drawn).add(v.num);
      if (k === 'Contents') for (const c of r.resolveArray(v) ?? []) if (c instanceof PdfRef) drawn.add(c.num);
    }
    for (const kid of r.resolveArray(d.get('Kids')) ?? []) visit(kid, depth + 1);
  };
  visit(r.catalog().get('Pages'), 0);
  return { annots, drawn };
}
