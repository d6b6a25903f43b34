/**
 * Parses single PDF objects from a byte buffer at a given offset (no whole-file parse): tokens, dictionaries,
 * arrays, strings, references and streams, plus `n g obj` headers.
 */
import { PdfDict, PdfName, PdfObject, PdfRef, PdfStream, PdfString } from './objects';

const WS = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIM = new Set('()<>[]{}/%'.split('').map((c) => c.charCodeAt(0)));

export class PdfSyntaxError extends Error {}

/**
 * The parser ran into the end of a window of a file it was given piecewise (`cut`): the window is too small to tell,
 * so the reader parses again from more bytes. Never escapes the reader.
 */
export class PdfWindowTooSmall extends PdfSyntaxError {}

/** A parser over a window of a larger file: `base` is the window's offset (for messages), `cut` set when bytes follow. */
export interface PdfWindow {
  base: number;
  cut: boolean;
}

/** Resolves an indirect /Length of a stream while parsing. */
export type LengthResolver = (ref: PdfRef) => number | undefined;

export class PdfParser {
  pos: number;
  constructor(
    readonly buf: Buffer,
    pos = 0,
    private readonly end = buf.length,
    private readonly window: PdfWindow = { base: 0, cut: false },
  ) {
    this.pos = pos;
  }

  private fail(msg: string): never {
    throw new PdfSyntaxError(`${msg} at byte ${this.window.base + this.pos}`);
  }

  /** A token that runs to the end of a cut window may go on in the bytes after it. */
  private checkNotCut(): void {
    if (this.window.cut && this.pos >= this.end) throw new PdfWindowTooSmall('window too small');
  }

  skipWs(): void {
    const { buf } = this;
    while (this.pos < this.end) {
      const c = buf[this.pos];
      if (WS.has(c)) this.pos++;
      else if (c === 0x25) {
        while (this.pos < this.end && buf[this.pos] !== 0x0a && buf[this.pos] !== 0x0d) this.pos++;
      } else break;
    }
  }

  /** A bare keyword or number token (no delimiters). */
  regularToken(): string {
    this.skipWs();
    const start = this.pos;
    while (this.pos < this.end && !WS.has(this.buf[this.pos]) && !DELIM.has(this.buf[this.pos])) this.pos++;
    this.checkNotCut();
    return this.buf.toString('latin1', start, this.pos);
  }

  peekKeyword(kw: string): boolean {
    this.skipWs();
    const save = this.pos;
    const t = this.regularToken();
    this.pos = save;
    return t === kw;
  }

  expectKeyword(kw: string): void {
    const t = this.regularToken();
    if (t !== kw) this.fail(`expected "${kw}", found "${t.slice(0, 20)}"`);
  }

  integer(): number {
    const t = this.regularToken();
    if (!/^[+-]?\d+$/.test(t)) this.fail(`expected an integer, found "${t.slice(0, 20)}"`);
    return Number(t);
  }

  object(resolveLength?: LengthResolver): PdfObject {
    this.skipWs();
    if (this.pos >= this.end) this.fail('unexpected end of data');
    const c = this.buf[this.pos];
    if (c === 0x2f) return this.name();
    if (c === 0x28) return this.literalString();
    if (c === 0x5b) {
      this.pos++;
      const arr: PdfObject[] = [];
      for (;;) {
        this.skipWs();
        if (this.pos >= this.end) this.fail('unterminated array');
        if (this.buf[this.pos] === 0x5d) {
          this.pos++;
          return arr;
        }
        arr.push(this.object(resolveLength));
      }
    }
    if (c === 0x3c) {
      if (this.buf[this.pos + 1] === 0x3c) return this.dictOrStream(resolveLength);
      return this.hexString();
    }
    const save = this.pos;
    const tok = this.regularToken();
    if (tok === '') this.fail(`unexpected character "${String.fromCharCode(c)}"`);
    if (tok === 'true') return true;
    if (tok === 'false') return false;
    if (tok === 'null') return null;
    if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(tok)) {
      // "n g R"?
      if (/^\d+$/.test(tok)) {
        const after = this.pos;
        const gen = this.regularToken();
        if (/^\d+$/.test(gen)) {
          const r = this.regularToken();
          if (r === 'R') return new PdfRef(Number(tok), Number(gen));
        }
        this.pos = after;
      }
      return Number(tok);
    }
    this.pos = save;
    this.fail(`unexpected token "${tok.slice(0, 20)}"`);
  }

  private name(): PdfName {
    this.pos++; // '/'
    const bytes: number[] = [];
    while (this.pos < this.end) {
      const c = this.buf[this.pos];
      if (WS.has(c) || DELIM.has(c)) break;
      if (c === 0x23 && this.pos + 2 < this.end) {
        const h = this.buf.toString('latin1', this.pos + 1, this.pos + 3);
        if (/^[0-9a-fA-F]{2}$/.test(h)) {
          bytes.push(parseInt(h, 16));
          this.pos += 3;
          continue;
        }
      }
      bytes.push(c);
      this.pos++;
    }
    this.checkNotCut();
    return new PdfName(Buffer.from(bytes).toString('latin1'));
  }

  private literalString(): PdfString {
    const { buf } = this;
    this.pos++;
    const out: number[] = [];
    let depth = 1;
    while (this.pos < this.end) {
      const c = buf[this.pos++];
      if (c === 0x5c) {
        const n = buf[this.pos++];
        const map: Record<number, number> = { 0x6e: 10, 0x72: 13, 0x74: 9, 0x62: 8, 0x66: 12, 0x28: 0x28, 0x29: 0x29, 0x5c: 0x5c };
        if (n in map) out.push(map[n]);
        else if (n >= 0x30 && n <= 0x37) {
          let v = n - 0x30;
          for (let i = 0; i < 2 && buf[this.pos] >= 0x30 && buf[this.pos] <= 0x37; i++) v = v * 8 + (buf[this.pos++] - 0x30);
          out.push(v & 0xff);
        } else if (n === 0x0d) {
          if (buf[this.pos] === 0x0a) this.pos++;
        } else if (n !== 0x0a) out.push(n);
      } else if (c === 0x28) {
        depth++;
        out.push(c);
      } else if (c === 0x29) {
        if (--depth === 0) return new PdfString(Buffer.from(out));
        out.push(c);
      } else out.push(c);
    }
    this.fail('unterminated string');
  }

  private hexString(): PdfString {
    const close = this.buf.indexOf(0x3e, this.pos);
    if (close < 0 || close >= this.end) this.fail('unterminated hex string');
    let hex = this.buf.toString('latin1', this.pos + 1, close).replace(/[\s\0]+/g, '');
    this.pos = close + 1;
    if (!/^[0-9a-fA-F]*$/.test(hex)) this.fail('bad hex string');
    if (hex.length % 2) hex += '0';
    return new PdfString(Buffer.from(hex, 'hex'), true);
  }

  private dictOrStream(resolveLength?: LengthResolver): PdfDict | PdfStream {
    this.pos += 2;
    const d = new PdfDict();
    for (;;) {
      this.skipWs();
      if (this.pos >= this.end) this.fail('unterminated dictionary');
      if (this.buf[this.pos] === 0x3e && this.buf[this.pos + 1] === 0x3e) {
        this.pos += 2;
        break;
      }
      if (this.buf[this.pos] !== 0x2f) this.fail('expected a name key in dictionary');
      const key = this.name().name;
      d.set(key, this.object(resolveLength));
    }
    const save = this.pos;
    if (this.peekKeyword('stream')) {
      this.expectKeyword('stream');
      if (this.buf[this.pos] === 0x0d) this.pos++;
      if (this.buf[this.pos] === 0x0a) this.pos++;
      const start = this.pos;
      let len: number | undefined;
      const l = d.get('Length');
      if (typeof l === 'number') len = l;
      else if (l instanceof PdfRef && resolveLength) len = resolveLength(l);
      // Trust /Length only when "endstream" follows it; otherwise search (broken writers exist).
      const endsAt = (n: number) => {
        const p = new PdfParser(this.buf, start + n, this.end, this.window);
        return p.peekKeyword('endstream') ? p : undefined;
      };
      // In a cut window, /Length pointing past it (or no endstream in it) is decided from more bytes.
      if (this.window.cut && len !== undefined && len >= 0 && start + len >= this.end) throw new PdfWindowTooSmall('window too small');
      if (len !== undefined && len >= 0 && start + len <= this.end && endsAt(len)) {
        this.pos = start + len;
      } else {
        const idx = this.buf.indexOf('endstream', start, 'latin1');
        if ((idx < 0 || idx > this.end) && this.window.cut) throw new PdfWindowTooSmall('window too small');
        if (idx < 0 || idx > this.end) this.fail('stream without endstream');
        let e = idx;
        if (this.buf[e - 1] === 0x0a) e--;
        if (this.buf[e - 1] === 0x0d) e--;
        len = e - start;
        this.pos = start + len;
      }
      const data = this.buf.subarray(start, start + len);
      this.expectKeyword('endstream');
      return new PdfStream(d, data);
    }
    this.pos = save;
    return d;
  }

  /** Parses `num gen obj <object> [endobj]` at the current position. */
  indirectObject(resolveLength?: LengthResolver): { num: number; gen: number; value: PdfObject } {
    const num = this.integer();
    const gen = this.integer();
    this.expectKeyword('obj');
    const value = this.object(resolveLength);
    return { num, gen, value };
  }
}
