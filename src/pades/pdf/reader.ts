/**
 * Lazy PDF reader: finds `startxref`, walks the cross-reference chain (classic tables, xref streams, hybrid
 * /XRefStm) and parses single objects on demand (also from object streams). It never parses the whole file, so
 * opening a 100 MB PDF costs about the size of its cross-reference data.
 */
import { readSync } from 'node:fs';
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

/** The bytes of a PDF read piecewise: its length and positioned reads (a file opened for reading). */
export interface PdfByteSource {
  readonly length: number;
  read(start: number, end: number): Buffer;
}

/** Positioned reads of an open file descriptor of `length` bytes. */
export function fileByteSource(fd: number, length: number): PdfByteSource {
  return {
    length,
    read(start, end) {
      const out = Buffer.allocUnsafe(end - start);
      let got = 0;
      while (got < out.length) {
        const n = readSync(fd, out, got, out.length - got, start + got);
        if (n === 0) throw pdfInvalid('the file ended while it was read (changed meanwhile?)');
        got += n;
      }
      return out;
    },
  };
}

/** First window read at an object's offset; grown eightfold while the object runs past it. */
const FIRST_WINDOW = 16 * 1024;
/** How far before the end `startxref` is looked for. */
const TAIL_BYTES = 65536;

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
  /** The file's length in bytes. */
  readonly length: number;
  private readonly cache = new Map<number, PdfObject>();
  private readonly objStreams = new Map<number, { buf: Buffer; offsets: Map<number, number> }>();

  /** `buf`: the whole file in memory; else `source` is read piecewise, only where the structure is. */
  private constructor(
    private readonly buf: Buffer | undefined,
    private readonly source: PdfByteSource | undefined,
    private readonly firstWindow = FIRST_WINDOW,
  ) {
    this.length = buf ? buf.length : source!.length;
  }

  static open(buf: Buffer): PdfReader {
    if (!Buffer.isBuffer(buf) || buf.length < 32) throw pdfInvalid('too short or not bytes');
    return new PdfReader(buf, undefined).init();
  }

  /**
   * A reader over a file it does not hold: the header, the tail, the cross-reference data and the objects asked for
   * are read where they are (a few KB for a typical document), so memory does not grow with the file. `firstWindow`:
   * bytes first read at an object (tests make it tiny, so that objects run past it).
   */
  static openSource(source: PdfByteSource, firstWindow = FIRST_WINDOW): PdfReader {
    if (source.length < 32) throw pdfInvalid('too short or not bytes');
    return new PdfReader(undefined, source, Math.max(1, firstWindow)).init();
  }

  /** Bytes `start`..`end`, clamped to the file. */
  bytes(start: number, end: number): Buffer {
    const e = Math.min(end, this.length);
    const s = Math.min(Math.max(0, start), e);
    return this.buf ? this.buf.subarray(s, e) : this.source!.read(s, e);
  }

  /** The file's last byte (an update starts on a new line). */
  lastByte(): number {
    return this.bytes(this.length - 1, this.length)[0];
  }

  /**
   * Runs `parse` on a parser at `offset`: over the whole buffer, or over a window of the file, grown while the object
   * runs past it. A cut window either reads the object as the whole file would, or fails and is grown: nothing is
   * read differently from a file held whole (a damaged object costs reads up to the end of the file).
   */
  private parseAt<T>(offset: number, parse: (p: PdfParser) => T): T {
    if (this.buf) return parse(new PdfParser(this.buf, offset));
    for (let size = this.firstWindow; ; size *= 8) {
      const end = Math.min(this.length, offset + size);
      const cut = end < this.length;
      const window = this.bytes(offset, end);
      try {
        return parse(new PdfParser(window, 0, window.length, { base: offset, cut }));
      } catch (e) {
        if (!cut || !(e instanceof PdfSyntaxError)) throw e;
      }
    }
  }

  private init(): this {
    const headBytes = this.bytes(0, 1024 + 12);
    const head = headBytes.indexOf('%PDF-', 0, 'latin1');
    if (head < 0 || head > 1024) throw pdfInvalid('no %PDF- header');
    this.version = /^%PDF-(\d\.\d)/.exec(headBytes.toString('latin1', head, head + 12))?.[1] ?? '';
    try {
      this.readXrefChain();
    } catch (e) {
      if (e instanceof SingpassFlowsError) throw e;
      throw pdfInvalid(e instanceof Error ? e.message : 'broken cross-reference data', e);
    }
    return this;
  }

  private readXrefChain(): void {
    const length = this.length;
    // Some producers (scanners, mail gateways) leave padding after %%EOF; look back a little further than 1 KiB.
    const tailStart = Math.max(0, length - TAIL_BYTES);
    const tail = this.bytes(tailStart, length);
    const idx = tail.lastIndexOf('startxref', tail.length, 'latin1');
    if (idx < 0) throw pdfInvalid('no startxref near the end of the file');
    const p = new PdfParser(tail, idx + 'startxref'.length, tail.length, { base: tailStart, cut: false });
    this.startxref = p.integer();
    const seen = new Set<number>();
    let offset: number | undefined = this.startxref;
    let first = true;
    while (offset !== undefined) {
      if (seen.has(offset) || offset < 0 || offset >= length) throw pdfInvalid('bad cross-reference offset');
      seen.add(offset);
      let trailer: PdfDict;
      if (this.parseAt(offset, (q) => q.peekKeyword('xref'))) {
        // read whole before any entry is kept: a window grown and parsed again adds nothing twice
        const table = this.parseAt(offset, (q) => readXrefTable(q));
        for (const [num, e] of table.rows) this.setEntry(num, e);
        trailer = table.trailer;
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

  private readXrefStream(offset: number, hybrid = false): PdfDict {
    const obj = this.parseAt(offset, (p) => p.indirectObject().value);
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
        const o = this.parseAt(e.offset, (p) => p.indirectObject(this.lengthResolver));
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

function readXrefTable(p: PdfParser): { rows: [number, XrefEntry][]; trailer: PdfDict } {
  const rows: [number, XrefEntry][] = [];
  p.expectKeyword('xref');
  for (;;) {
    if (p.peekKeyword('trailer')) break;
    const start = p.integer();
    const count = p.integer();
    for (let i = 0; i < count; i++) {
      // Fast path for the standard 20-byte row "oooooooooo ggggg n\r\n" (big tables dominate open time).
      p.skipWs();
      const row = fixedRow(p.buf, p.pos);
      if (row) {
        rows.push([start + i, row.type === 'n' ? { kind: 'n', offset: row.offset, gen: row.gen } : { kind: 'f' }]);
        p.pos += 18;
        continue;
      }
      const off = p.integer();
      const gen = p.integer();
      const t = p.regularToken();
      if (t === 'n') rows.push([start + i, { kind: 'n', offset: off, gen }]);
      else if (t === 'f') rows.push([start + i, { kind: 'f' }]);
      else throw new PdfSyntaxError('bad xref entry');
    }
  }
  p.expectKeyword('trailer');
  const t = p.object();
  if (!(t instanceof PdfDict)) throw new PdfSyntaxError('trailer is not a dictionary');
  return { rows, trailer: t };
}

function fixedRow(b: Buffer, pos: number): { offset: number; gen: number; type: 'n' | 'f' } | undefined {
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
