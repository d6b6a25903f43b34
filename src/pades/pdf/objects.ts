/**
 * A small PDF object model, just enough to read the structure a signature touches (trailer, catalog, AcroForm,
 * pages) and to write an incremental update. Values keep their bytes (strings) so re-serialising an existing
 * dictionary does not alter it.
 */

export class PdfName {
  constructor(readonly name: string) {}
}

export class PdfRef {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}
  get key(): string {
    return `${this.num} ${this.gen}`;
  }
}

export class PdfString {
  constructor(
    readonly bytes: Buffer,
    readonly hex = false,
  ) {}
}

export class PdfDict {
  readonly map = new Map<string, PdfObject>();
  constructor(entries?: Iterable<[string, PdfObject]>) {
    if (entries) for (const [k, v] of entries) this.map.set(k, v);
  }
  get(key: string): PdfObject | undefined {
    return this.map.get(key);
  }
  set(key: string, value: PdfObject): this {
    this.map.set(key, value);
    return this;
  }
  has(key: string): boolean {
    return this.map.has(key);
  }
  delete(key: string): void {
    this.map.delete(key);
  }
  clone(): PdfDict {
    return new PdfDict(this.map);
  }
}

export class PdfStream {
  constructor(
    readonly dict: PdfDict,
    /** Encoded (still filtered) stream bytes. */
    readonly data: Buffer,
  ) {}
}

/**
 * Bytes written verbatim, with a label so the writer can report where they ended up (used for the /Contents and
 * /ByteRange placeholders that are patched or filled later).
 */
export class PdfRaw {
  constructor(
    readonly bytes: Buffer,
    readonly label?: string,
  ) {}
}

export type PdfObject = null | boolean | number | PdfName | PdfString | PdfRef | PdfDict | PdfObject[] | PdfStream | PdfRaw;

export const name = (n: string): PdfName => new PdfName(n);

export function isName(o: PdfObject | undefined, n?: string): o is PdfName {
  return o instanceof PdfName && (n === undefined || o.name === n);
}

export function dict(entries: Record<string, PdfObject | undefined>): PdfDict {
  const d = new PdfDict();
  for (const [k, v] of Object.entries(entries)) if (v !== undefined) d.set(k, v);
  return d;
}

// ---- serialisation -------------------------------------------------------------------------------------------

const DELIMS = new Set('()<>[]{}/%'.split('').map((c) => c.charCodeAt(0)));

function nameBytes(n: string): string {
  let out = '/';
  for (const byte of Buffer.from(n, 'latin1')) {
    if (byte < 0x21 || byte > 0x7e || byte === 0x23 || DELIMS.has(byte)) out += '#' + byte.toString(16).padStart(2, '0');
    else out += String.fromCharCode(byte);
  }
  return out;
}

export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError('PDF numbers must be finite');
  if (Number.isInteger(n)) return String(n);
  let s = n.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
  if (s === '-0') s = '0';
  return s;
}

function literalString(bytes: Buffer): Buffer {
  const out: number[] = [0x28];
  for (const b of bytes) {
    if (b === 0x28 || b === 0x29 || b === 0x5c) out.push(0x5c, b);
    else if (b === 0x0d) out.push(0x5c, 0x72);
    else out.push(b);
  }
  out.push(0x29);
  return Buffer.from(out);
}

/** A serialiser that records the offsets (relative to its own output) of labelled raw pieces. */
export class PdfOutput {
  private readonly chunks: Buffer[] = [];
  /** Text written since the last bytes, turned into one Buffer when bytes follow (a Buffer per token was most of
   * the writer's time). Latin-1: one byte per character, so `length` stays exact. */
  private pending = '';
  length = 0;
  readonly marks = new Map<string, { start: number; end: number }>();

  bytes(b: Buffer): void {
    this.flush();
    this.chunks.push(b);
    this.length += b.length;
  }
  text(s: string): void {
    this.pending += s;
    this.length += s.length;
  }
  private flush(): void {
    if (this.pending.length === 0) return;
    this.chunks.push(Buffer.from(this.pending, 'latin1'));
    this.pending = '';
  }

  object(o: PdfObject): void {
    if (o === null) this.text('null');
    else if (typeof o === 'boolean') this.text(o ? 'true' : 'false');
    else if (typeof o === 'number') this.text(formatNumber(o));
    else if (o instanceof PdfName) this.text(nameBytes(o.name));
    else if (o instanceof PdfRef) this.text(`${o.num} ${o.gen} R`);
    else if (o instanceof PdfString) this.bytes(o.hex ? Buffer.from(`<${o.bytes.toString('hex')}>`, 'latin1') : literalString(o.bytes));
    else if (o instanceof PdfRaw) {
      if (o.label) this.marks.set(o.label, { start: this.length, end: this.length + o.bytes.length });
      this.bytes(o.bytes);
    } else if (Array.isArray(o)) {
      this.text('[');
      o.forEach((v, i) => {
        if (i) this.text(' ');
        this.object(v);
      });
      this.text(']');
    } else if (o instanceof PdfDict) {
      this.text('<<');
      for (const [k, v] of o.map) {
        this.text(nameBytes(k) + ' ');
        this.object(v);
        this.text('\n');
      }
      this.text('>>');
    } else if (o instanceof PdfStream) {
      const d = o.dict.clone().set('Length', o.data.length);
      this.object(d);
      this.text('\nstream\n');
      this.bytes(o.data);
      this.text('\nendstream');
    }
  }

  toBuffer(): Buffer {
    this.flush();
    return Buffer.concat(this.chunks, this.length);
  }
}
