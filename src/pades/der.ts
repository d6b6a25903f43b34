/**
 * Minimal DER encoder/reader. CMS SignedAttributes must be byte-exact between prepare (what the phone signs) and
 * finalize (what is embedded), so they are assembled here by hand rather than round-tripped through an ASN.1
 * object model that might re-order or re-encode them.
 */

/** One decoded TLV: `start` is where the tag byte is, `contentStart`..`end` the value. */
export interface Tlv {
  tag: number;
  start: number;
  contentStart: number;
  end: number;
}

function encodeLength(len: number): Buffer {
  if (len < 0x80) return Buffer.from([len]);
  const bytes: number[] = [];
  for (let n = len; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** TLV with the given tag around the concatenated parts. */
export function tlv(tag: number, ...parts: Buffer[]): Buffer {
  const content = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), encodeLength(content.length), content]);
}

export const seq = (...parts: Buffer[]): Buffer => tlv(0x30, ...parts);
export const set = (...parts: Buffer[]): Buffer => tlv(0x31, ...parts);
export const octetString = (b: Buffer): Buffer => tlv(0x04, b);
export const nullValue = (): Buffer => Buffer.from([0x05, 0x00]);

/** Non-negative INTEGER from a small JS number. */
export function smallInteger(n: number): Buffer {
  const bytes: number[] = [];
  let v = n;
  do {
    bytes.unshift(v & 0xff);
    v = Math.floor(v / 256);
  } while (v > 0);
  if (bytes[0] & 0x80) bytes.unshift(0);
  return tlv(0x02, Buffer.from(bytes));
}

/** INTEGER from unsigned big-endian bytes (used for ECDSA r and s). */
export function unsignedInteger(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  let v = bytes.subarray(i);
  if (v[0] & 0x80) v = Buffer.concat([Buffer.from([0]), v]);
  return tlv(0x02, v);
}

const oidCache = new Map<string, Buffer>();

export function oid(dotted: string): Buffer {
  let enc = oidCache.get(dotted);
  if (!enc) oidCache.set(dotted, (enc = encodeOid(dotted)));
  return enc;
}

function encodeOid(dotted: string): Buffer {
  const arcs = dotted.split('.').map((a) => BigInt(a));
  const out: number[] = [];
  const first = arcs[0] * 40n + arcs[1];
  for (const arc of [first, ...arcs.slice(2)]) {
    const chunk: number[] = [];
    let v = arc;
    do {
      chunk.unshift(Number(v & 0x7fn));
      v >>= 7n;
    } while (v > 0n);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i] |= 0x80;
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** DER SET OF: elements sorted by their encodings (X.690 11.6). */
export function setOf(elements: Buffer[]): Buffer {
  const sorted = [...elements].sort((a, b) => {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const d = (a[i] ?? 0) - (b[i] ?? 0);
      if (d !== 0) return d;
    }
    return 0;
  });
  return set(...sorted);
}

/** Reads one TLV at `offset`; throws on truncation or indefinite length (DER has none). */
export function readTlv(buf: Buffer, offset = 0, limit = buf.length): Tlv {
  if (offset + 2 > limit) throw new RangeError('DER: truncated');
  const tag = buf[offset];
  if ((tag & 0x1f) === 0x1f) throw new RangeError('DER: multi-byte tags are not supported');
  let pos = offset + 1;
  const first = buf[pos++];
  let len: number;
  if (first < 0x80) len = first;
  else {
    const n = first & 0x7f;
    if (n === 0 || n > 4) throw new RangeError('DER: unsupported length');
    if (pos + n > limit) throw new RangeError('DER: truncated');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[pos++];
  }
  const end = pos + len;
  if (end > limit) throw new RangeError('DER: truncated');
  return { tag, start: offset, contentStart: pos, end };
}

/** The children of a constructed TLV. */
export function children(buf: Buffer, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let pos = parent.contentStart; pos < parent.end; ) {
    const t = readTlv(buf, pos, parent.end);
    out.push(t);
    pos = t.end;
  }
  return out;
}

export const bytesOf = (buf: Buffer, t: Tlv): Buffer => buf.subarray(t.start, t.end);
export const contentOf = (buf: Buffer, t: Tlv): Buffer => buf.subarray(t.contentStart, t.end);

/** Decodes an OBJECT IDENTIFIER's content to dotted form. */
export function decodeOid(content: Buffer): string {
  const arcs: bigint[] = [];
  let v = 0n;
  for (const byte of content) {
    v = (v << 7n) | BigInt(byte & 0x7f);
    if (!(byte & 0x80)) {
      arcs.push(v);
      v = 0n;
    }
  }
  const first = arcs.shift() ?? 0n;
  const a = first < 80n ? first / 40n : 2n;
  return [a, first - a * 40n, ...arcs].join('.');
}
