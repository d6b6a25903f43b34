/**
 * Lazy PDF reader: finds `startxref`, walks the cross-reference chain (classic tables, xref streams, hybrid
 * /XRefStm) and parses single objects on demand (also from object streams). It never parses the whole file, so
 * opening a 100 MB PDF costs about the size of its cross-reference data.
 */
import { inflateSync, constants as zlibConstants } from 'node:zlib';
import { SingpassFlowsError } from '../../errors';
import { PdfDict, PdfObject, PdfRef, PdfStream, isName } from './objects';
import { PdfParser, PdfSyntaxError } from './parser';

type XrefEntry = { kind: 'n'; offset: number; gen: number } | { kind: 'c'; stream: number; index: number } | { kind: 'f' };

export type XrefStyle = 'table' | 'stream';

export function pdfInvalid(reason: string, cause?: unknown): SingpassFlowsError {
  return new SingpassFlowsError(
    'PDF_INVALID',
    `The file is not a readable PDF (${reason}). If it opens in a PDF viewer, its structure may be damaged: save a ` +
      'fresh copy (or run "qpdf in.pdf repaired.pdf") and sign that.',
    { retryable: false },
    { cause },
  );
}

/** Decodes FlateDecode (with PNG/TIFF predictors) stream data; other filters are not needed for structure. */
export function decodeStream(stream: PdfStream): Buffer {
  const filter = stream.dict.get('Filter');
  const filters = Array.isArray(filter) ? filter : filter ? [filter] : [];
  const parmsRaw = stream.dict.get('DecodeParms');
  const parmsList = Array.isArray(parmsRaw) ? parmsRaw : [parmsRaw ?? null];
  let data = stream.data;
  filters.forEach((f, i) => {
    if (!isName(f, 'FlateDecode') && !isName(f, 'Fl')) throw pdfInvalid(`unsupported filter in a structural stream`);
    try {
      data = inflateSync(data);
    } catch {
      data = inflateSync(data, { finishFlush: zlibConstants.Z_SYNC_FLUSH });
    }
    const parms = parmsList[i];
    if (parms instanceof PdfDict) data = unpredict(data, parms);
  });
  return data;
}

function unpredict(data: Buffer, parms: PdfDict): Buffer {
  const predictor = Number(parms.get('Predictor') ?? 1);
  if (predictor < 10) return data; // 1 = none; TIFF 2 is not used for xref streams
  const colors = Number(parms.get('Colors') ?? 1);
  const bpc = Number(parms.get('BitsPerComponent') ?? 8);
  const columns = Number(parms.get('Columns') ?? 1);
  const bpp = Math.max(1, Math.ceil((colors * bpc) / 8));
  const rowLen = Math.ceil((colors * bpc * columns) / 8);
  const rows = Math.floor(data.length / (rowLen + 1));
  const out = Buffer.alloc(rows * rowLen);
  const prev = Buffer.alloc(rowLen);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (rowLen + 1)];
    const row = data.subarray(r * (rowLen + 1) + 1, (r + 1) * (rowLen + 1));
    const cur = out.subarray(r * rowLen, (r + 1) * rowLen);
    for (let i = 0; i < rowLen; i++) {
      const left = i >= bpp ? cur[i - bpp] : 0;
      const up = prev[i];
      const upLeft = i >= bpp ? prev[i - bpp] : 0;
      let v = row[i];
      if (type === 1) v += left;
      else if (type === 2) v += up;
      else if (type === 3) v += (left + up) >> 1;
      else if (type === 4) {
        const p = left + up - upLeft;
        const pa = Math.abs(p - left), pb = Math.abs(p - up), pc = Math.abs(p - upLeft);
        v += pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
      }
      cur[i] = v & 0xff;
    }
    cur.copy(prev);
  }
  return out;
}

export class PdfReader {
  readonly entries = new Map<number, XrefEntry>();
  /** Trailer of the newest section (for xref streams: the stream dictionary). */
  trailer!: PdfDict;
  /** Offset the final `startxref` points to (the /Prev of the next update). */
  startxref!: number;
  /** Style of the newest cross-reference section; an update must use the same. */
  xrefStyle!: XrefStyle;
  /** Highest object number + 1 over all sections. */
  size = 0;
  /** Header version, e.g. "1.7" or "2.0". */
  version = '';
  private readonly cache = new Map<number, PdfObject>();
  private readonly objStreams = new Map<number, { buf: Buffer; offsets: Map<number, number> }>();

  private constructor(readonly buf: Buffer) {}

  static open(buf: Buffer): PdfReader {
    if (!Buffer.isBuffer(buf) || buf.length < 32) throw pdfInvalid('too short or not bytes');
    const r = new PdfReader(buf);
    const head = buf.indexOf('%PDF-', 0, 'latin1');
    if (head < 0 || head > 1024) throw pdfInvalid('no %PDF- header');
    r.version = /^%PDF-(\d\.\d)/.exec(buf.toString('latin1', head, head + 12))?.[1] ?? '';
    try {
      r.readXrefChain();
    } catch (e) {
      if (e instanceof SingpassFlowsError) throw e;
      throw pdfInvalid(e instanceof Error ? e.message : 'broken cross-reference data', e);
    }
    return r;
  }

  private readXrefChain(): void {
    const { buf } = this;
    // Some producers (scanners, mail gateways) leave padding after %%EOF; look back a little further than 1 KiB.
    const tailStart = Math.max(0, buf.length - 65536);
    const idx = buf.lastIndexOf('startxref', buf.length, 'latin1');
    if (idx < 0 || idx < tailStart) throw pdfInvalid('no startxref near the end of the file');
    const p = new PdfParser(buf, idx + 'startxref'.length);
    this.startxref = p.integer();
    const seen = new Set<number>();
    let offset: number | undefined = this.startxref;
    let first = true;
    while (offset !== undefined) {
      if (seen.has(offset) || offset < 0 || offset >= buf.length) throw pdfInvalid('bad cross-reference offset');
      seen.add(offset);
      const q = new PdfParser(buf, offset);
      let trailer: PdfDict;
      if (q.peekKeyword('xref')) {
        trailer = this.readXrefTable(q);
        if (first) this.xrefStyle = 'table';
        const stm = trailer.get('XRefStm');
        if (typeof stm === 'number' && !seen.has(stm)) {
          seen.add(stm);
          this.readXrefStream(stm, true);
        }
      } else {
        trailer = this.readXrefStream(offset);
        if (first) this.xrefStyle = 'stream';
      }
      if (first) this.trailer = trailer;
      first = false;
      const size = trailer.get('Size');
      if (typeof size === 'number') this.size = Math.max(this.size, size);
      const prev = trailer.get('Prev');
      offset = typeof prev === 'number' ? prev : undefined;
    }
    if (!(this.trailer.get('Root') instanceof PdfRef)) throw pdfInvalid('trailer has no /Root');
  }

  private setEntry(num: number, e: XrefEntry, overrideFree = false): void {
    // Newest section first: the first entry seen for an object wins (a hybrid file's /XRefStm may fill in entries
    // its own table marks free).
    const had = this.entries.get(num);
    if (!had || (overrideFree && had.kind === 'f')) this.entries.set(num, e);
    if (e.kind !== 'f') this.size = Math.max(this.size, num + 1);
  }

  private readXrefTable(p: PdfParser): PdfDict {
    p.expectKeyword('xref');
    for (;;) {
      if (p.peekKeyword('trailer')) break;
      const start = p.integer();
      const count = p.integer();
      for (let i = 0; i < count; i++) {
        // Fast path for the standard 20-byte row "oooooooooo ggggg n\r\n" (big tables dominate open time).
        p.skipWs();
        const row = this.fixedRow(p.pos);
        if (row) {
          if (row.type === 'n') this.setEntry(start + i, { kind: 'n', offset: row.offset, gen: row.gen });
          else this.setEntry(start + i, { kind: 'f' });
          p.pos += 18;
          continue;
        }
        const off = p.integer();
        const gen = p.integer();
        const t = p.regularToken();
        if (t === 'n') this.setEntry(start + i, { kind: 'n', offset: off, gen });
        else if (t === 'f') this.setEntry(start + i, { kind: 'f' });
        else throw new PdfSyntaxError('bad xref entry');
      }
    }
    p.expectKeyword('trailer');
    const t = p.object();
    if (!(t instanceof PdfDict)) throw new PdfSyntaxError('trailer is not a dictionary');
    return t;
  }

  private fixedRow(pos: number): { offset: number; gen: number; type: 'n' | 'f' } | undefined {
    const b = this.buf;
    if (pos + 18 > b.length || b[pos + 10] !== 0x20 || b[pos + 16] !== 0x20) return undefined;
    const t = b[pos + 17];
    if (t !== 0x6e && t !== 0x66) return undefined;
    let offset = 0;
    let gen = 0;
    for (let i = 0; i < 10; i++) {
      const d = b[pos + i] - 0x30;
      if (d < 0 || d > 9) return undefined;
      offset = offset * 10 + d;
    }
    for (let i = 11; i < 16; i++) {
      const d = b[pos + i] - 0x30;
      if (d < 0 || d > 9) return undefined;
      gen = gen * 10 + d;
    }
    return { offset, gen, type: t === 0x6e ? 'n' : 'f' };
  }

  private readXrefStream(offset: number, hybrid = false): PdfDict {
    const obj = new PdfParser(this.buf, offset).indirectObject().value;
    if (!(obj instanceof PdfStream) || !isName(obj.dict.get('Type'), 'XRef')) throw new PdfSyntaxError('startxref does not point to xref data');
    const data = decodeStream(obj);
    const w = obj.dict.get('W');
    if (!Array.isArray(w) || w.length < 3 || w.some((x) => typeof x !== 'number')) throw new PdfSyntaxError('bad /W');
    const [w0, w1, w2] = w as number[];
    const size = Number(obj.dict.get('Size'));
    const index = (obj.dict.get('Index') as number[] | undefined) ?? [0, size];
    const rowLen = w0 + w1 + w2;
    const field = (pos: number, len: number, dflt: number) => {
      if (len === 0) return dflt;
      let v = 0;
      for (let i = 0; i < len; i++) v = v * 256 + data[pos + i];
      return v;
    };
    let pos = 0;
    for (let i = 0; i + 1 < index.length; i += 2) {
      const start = Number(index[i]);
      const count = Number(index[i + 1]);
      for (let j = 0; j < count && pos + rowLen <= data.length; j++, pos += rowLen) {
        const type = field(pos, w0, 1);
        const a = field(pos + w0, w1, 0);
        const b = field(pos + w0 + w1, w2, 0);
        if (type === 1) this.setEntry(start + j, { kind: 'n', offset: a, gen: b }, hybrid);
        else if (type === 2) this.setEntry(start + j, { kind: 'c', stream: a, index: b }, hybrid);
        else if (type === 0) this.setEntry(start + j, { kind: 'f' });
      }
    }
    return obj.dict;
  }

  private lengthResolver = (ref: PdfRef): number | undefined => {
    const v = this.getObject(ref.num);
    return typeof v === 'number' ? v : undefined;
  };

  /** The object with this number (null when free or missing, as the PDF spec says). */
  getObject(num: number): PdfObject {
    if (this.cache.has(num)) return this.cache.get(num)!;
    const e = this.entries.get(num);
    let value: PdfObject = null;
    try {
      if (e?.kind === 'n') {
        const p = new PdfParser(this.buf, e.offset);
        const o = p.indirectObject(this.lengthResolver);
        if (o.num !== num) throw new PdfSyntaxError(`object ${num} not at its xref offset`);
        value = o.value;
      } else if (e?.kind === 'c') {
        value = this.fromObjectStream(e.stream, num);
      }
    } catch (err) {
      if (err instanceof SingpassFlowsError) throw err;
      throw pdfInvalid(`cannot read object ${num}: ${err instanceof Error ? err.message : String(err)}`, err);
    }
    this.cache.set(num, value);
    return value;
  }

  private fromObjectStream(streamNum: number, num: number): PdfObject {
    let os = this.objStreams.get(streamNum);
    if (!os) {
      const s = this.getObject(streamNum);
      if (!(s instanceof PdfStream)) throw new PdfSyntaxError(`object stream ${streamNum} missing`);
      const buf = decodeStream(s);
      const n = Number(s.dict.get('N'));
      const first = Number(s.dict.get('First'));
      const p = new PdfParser(buf);
      const offsets = new Map<number, number>();
      for (let i = 0; i < n; i++) {
        const on = p.integer();
        offsets.set(on, first + p.integer());
      }
      os = { buf, offsets };
      this.objStreams.set(streamNum, os);
    }
    const at = os.offsets.get(num);
    if (at === undefined) throw new PdfSyntaxError(`object ${num} not in its object stream`);
    return new PdfParser(os.buf, at).object();
  }

  /** Follows references until a direct value. */
  resolve(o: PdfObject | undefined): PdfObject {
    let v: PdfObject | undefined = o;
    for (let i = 0; i < 32 && v instanceof PdfRef; i++) v = this.getObject(v.num);
    return v ?? null;
  }

  resolveDict(o: PdfObject | undefined): PdfDict | undefined {
    const v = this.resolve(o);
    return v instanceof PdfDict ? v : v instanceof PdfStream ? v.dict : undefined;
  }

  resolveArray(o: PdfObject | undefined): PdfObject[] | undefined {
    const v = this.resolve(o);
    return Array.isArray(v) ? v : undefined;
  }

  get rootRef(): PdfRef {
    return this.trailer.get('Root') as PdfRef;
  }

  catalog(): PdfDict {
    const c = this.resolveDict(this.rootRef);
    if (!c) throw pdfInvalid('catalog missing');
    return c;
  }
}
