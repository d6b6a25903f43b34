/**
 * Append-only incremental update (ISO 32000 7.5.6): new and replaced objects after the original bytes, then a
 * cross-reference section in the same style as the newest existing one (classic table or xref stream) with /Prev.
 * Earlier bytes are never touched, so earlier signatures stay valid.
 */
import { randomBytes } from 'node:crypto';
import { PdfDict, PdfObject, PdfOutput, PdfRef, PdfStream, PdfString, name } from './objects';
import { PdfReader } from './reader';

export interface BuiltUpdate {
  /** The update bytes, to be appended to the original file. */
  bytes: Buffer;
  /** Offsets (relative to `bytes`) of labelled raw pieces. */
  marks: Map<string, { start: number; end: number }>;
}

export class IncrementalUpdate {
  private readonly objects = new Map<number, { gen: number; value: PdfObject }>();
  private nextNum: number;

  constructor(private readonly reader: PdfReader) {
    this.nextNum = Math.max(1, reader.size);
  }

  /** Adds a new indirect object and returns its reference. */
  add(value: PdfObject): PdfRef {
    const ref = new PdfRef(this.nextNum++, 0);
    this.objects.set(ref.num, { gen: 0, value });
    return ref;
  }

  /** Reserves a number now, for objects that reference each other; fill it with {@link replace}. */
  reserve(): PdfRef {
    return this.add(null);
  }

  /** Writes a new version of an existing object (same number and generation). */
  replace(ref: PdfRef, value: PdfObject): void {
    this.objects.set(ref.num, { gen: ref.gen, value });
  }

  build(): BuiltUpdate {
    const { reader } = this;
    const base = reader.length;
    const out = new PdfOutput();
    const last = reader.lastByte();
    if (last !== 0x0a && last !== 0x0d) out.text('\n');
    const offsets = new Map<number, { offset: number; gen: number }>();
    const nums = [...this.objects.keys()].sort((a, b) => a - b);
    for (const num of nums) {
      const { gen, value } = this.objects.get(num)!;
      offsets.set(num, { offset: base + out.length, gen });
      out.text(`${num} ${gen} obj\n`);
      out.object(value);
      out.text('\nendobj\n');
    }
    const trailer = new PdfDict();
    const prevId = reader.resolve(reader.trailer.get('ID'));
    const info = reader.trailer.get('Info');
    const id =
      Array.isArray(prevId) && prevId[0] instanceof PdfString ? [prevId[0], new PdfString(randomBytes(16), true)] : undefined;

    if (reader.xrefStyle === 'table') {
      const xrefOffset = base + out.length;
      out.text('xref\n');
      for (const [start, run] of runs(nums)) {
        out.text(`${start} ${run.length}\n`);
        for (const n of run) {
          const e = offsets.get(n)!;
          out.text(`${String(e.offset).padStart(10, '0')} ${String(e.gen).padStart(5, '0')} n\r\n`);
        }
      }
      trailer.set('Size', this.nextNum).set('Root', reader.rootRef);
      if (info) trailer.set('Info', info);
      if (id) trailer.set('ID', id);
      trailer.set('Prev', reader.startxref);
      out.text('trailer\n');
      out.object(trailer);
      out.text(`\nstartxref\n${xrefOffset}\n%%EOF\n`);
    } else {
      const xrefNum = this.nextNum++;
      const xrefOffset = base + out.length;
      offsets.set(xrefNum, { offset: xrefOffset, gen: 0 });
      const all = [...nums, xrefNum];
      let w1 = 1;
      while (2 ** (8 * w1) <= xrefOffset) w1++;
      const rows: Buffer[] = [];
      const index: number[] = [];
      for (const [start, run] of runs(all)) {
        index.push(start, run.length);
        for (const n of run) {
          const e = offsets.get(n)!;
          const row = Buffer.alloc(1 + w1 + 2);
          row[0] = 1;
          row.writeUIntBE(e.offset, 1, w1);
          row.writeUInt16BE(e.gen, 1 + w1);
          rows.push(row);
        }
      }
      trailer.set('Type', name('XRef')).set('Size', this.nextNum).set('Index', index).set('W', [1, w1, 2]);
      trailer.set('Root', reader.rootRef);
      if (info) trailer.set('Info', info);
      if (id) trailer.set('ID', id);
      trailer.set('Prev', reader.startxref);
      out.text(`${xrefNum} 0 obj\n`);
      out.object(new PdfStream(trailer, Buffer.concat(rows)));
      out.text(`\nendobj\nstartxref\n${xrefOffset}\n%%EOF\n`);
    }
    return { bytes: out.toBuffer(), marks: out.marks };
  }
}

/** Groups sorted numbers into contiguous runs: [start, numbers]. */
function runs(sorted: number[]): Array<[number, number[]]> {
  const result: Array<[number, number[]]> = [];
  for (const n of sorted) {
    const cur = result[result.length - 1];
    if (cur && cur[1][cur[1].length - 1] === n - 1) cur[1].push(n);
    else result.push([n, [n]]);
  }
  return result;
}
