/**
 * The shared mechanics of signature and document-timestamp fields: one incremental update with a signature
 * dictionary whose /Contents is a zero-filled placeholder and whose /ByteRange covers everything else; the digest
 * of those bytes computed in one streaming pass; and the small, JSON-serialisable record needed to fill the
 * placeholder later (possibly after a restart) without keeping the PDF itself.
 */
import { createHash, type Hash } from 'node:crypto';
import { SingpassFlowsError, invalidInput } from '../errors';
import { attachField, assertSignable, chooseField, findPage, pageRotation, updateAcroForm } from './acroform';
import { Rect, appearanceStream, emptyAppearance } from './appearance';
import { SignaturePlacement, nextEmptySignatureField, placeBox } from './placement';
import { signatureFont } from './signature-font';
import type { SignatureImage } from './signature-image';
import { PdfObject, PdfRaw, dict, name } from './pdf/objects';
import { PdfReader } from './pdf/reader';
import { textString } from './pdf/text';
import { IncrementalUpdate } from './pdf/writer';

/** The part of a prepared state that describes the pending update (all JSON-safe). */
export interface PreparedUpdate {
  /** Size and SHA-256 (hex) of the input PDF, to refuse a different file at finalize. */
  original: { length: number; sha256: string };
  /** Update bytes before and after the /Contents placeholder (base64), and the reserved size in bytes. */
  update: { head: string; tail: string; contentsBytes: number };
  byteRange: [number, number, number, number];
  fieldName: string;
}

export const DEFAULT_PLACEHOLDER_BYTES = 32768;
const BYTE_RANGE_WIDTH = 10; // digits per number: files up to 9.3 GB

export const MAX_PLACEHOLDER_BYTES = 1_048_576;

export function checkPlaceholderBytes(v: unknown): number {
  if (v === undefined) return DEFAULT_PLACEHOLDER_BYTES;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 2048 || v > MAX_PLACEHOLDER_BYTES) {
    throw invalidInput('placeholderBytes', 'must be an integer between 2048 and 1048576');
  }
  return v;
}

/** `<000…>` with room for `bytes` bytes of hex. */
function placeholder(bytes: number): Buffer {
  const b = Buffer.alloc(bytes * 2 + 2, 0x30);
  b[0] = 0x3c;
  b[b.length - 1] = 0x3e;
  return b;
}

export interface SignatureUpdateInput {
  kind: 'Sig' | 'DocTimeStamp';
  /** Extra signature dictionary entries (/Filter, /SubFilter, /M, /Reason…). */
  entries: Record<string, PdfObject | undefined>;
  fieldName?: string;
  fieldPrefix: string;
  placeholderBytes: number;
  /**
   * Where the visible box goes; omitted → invisible, except that naming a form's visible empty signature field
   * (`fieldName`) fills it with `box`.
   */
  placement?: SignaturePlacement;
  /** What a visible box shows. */
  box?: { lines: string[]; image?: SignatureImage };
}

/**
 * Builds the update and returns its record plus the SHA-256 of the bytes the /ByteRange covers. `pdfHash`: a
 * running SHA-256 the caller has just fed exactly `pdf` (left unfinished and unchanged), so the file is not hashed
 * again here.
 */
export function buildSignatureUpdate(pdf: Buffer, input: SignatureUpdateInput, pdfHash?: Hash): { prepared: PreparedUpdate; digest: Buffer } {
  const built = buildUpdateBytes(PdfReader.open(pdf), input);
  return hashedUpdate(built, pdfHash ? pdfHash.copy() : createHash('sha256').update(pdf));
}

/** The update for the file a reader reads, its /ByteRange filled in: to be hashed after the original's bytes. */
export interface UpdateBytes {
  /** The original's length. */
  length: number;
  bytes: Buffer;
  /** Where the /Contents placeholder is in `bytes`. */
  contents: { start: number; end: number };
  byteRange: [number, number, number, number];
  fieldName: string;
  placeholderBytes: number;
}

/** The update's bytes for the PDF `reader` reads (only its structure is read, never the whole file). */
export function buildUpdateBytes(reader: PdfReader, input: SignatureUpdateInput): UpdateBytes {
  assertSignable(reader);
  const placement = input.placement;
  let wanted = input.fieldName;
  if (placement?.field !== undefined) wanted = placement.field;
  else if (placement?.nextEmptyField) wanted = nextEmptySignatureField(reader) ?? wanted;
  const { fieldName, empty } = chooseField(reader, wanted, input.fieldPrefix);
  if (placement?.field !== undefined && !empty) {
    throw invalidInput('appearance.field', `the PDF has no empty signature field named "${placement.field}"`);
  }
  const update = new IncrementalUpdate(reader);

  const zeros = '0'.repeat(BYTE_RANGE_WIDTH);
  const sigDict = dict({
    Type: name(input.kind),
    ...input.entries,
    ByteRange: new PdfRaw(Buffer.from(`[0 ${zeros} ${zeros} ${zeros}]`, 'latin1'), 'byteRange'),
    Contents: new PdfRaw(placeholder(input.placeholderBytes), 'contents'),
  });
  const sigRef = update.add(sigDict);
  // The box is drawn in this update, so the signature covers it.
  const drawBox = (rect: Rect, rotation: number) => {
    const font = signatureFont();
    const fontRef = font.addTo(update);
    const image = input.box?.image;
    const imageRef = image && { ref: image.addTo(update), width: image.width, height: image.height };
    return update.add(appearanceStream(rect, { lines: input.box?.lines ?? [], image: imageRef }, { ref: fontRef, metrics: font }, rotation));
  };

  if (empty) {
    // Fill the form's own signature field: keep its widget and rectangle, draw our box in it when visible (in place
    // of whatever "Sign here" appearance the form gave it).
    const [x1, y1, x2, y2] = empty.rect;
    const visible = x2 - x1 >= 10 && y2 - y1 >= 10;
    const apRef = visible ? drawBox(empty.rect, pageRotation(reader, empty.page.dict)) : update.add(emptyAppearance());
    const widget = empty.widget.dict.clone().set('AP', dict({ N: apRef }));
    widget.delete('AS');
    if (!widget.has('P')) widget.set('P', empty.page.ref);
    const flags = reader.resolve(widget.get('F'));
    // Print + Locked, and never Hidden or NoView on a box meant to be seen.
    widget.set('F', ((typeof flags === 'number' ? flags : 0) | 132) & ~(2 | 32));
    if (empty.widget.ref.num === empty.field.ref.num) {
      update.replace(empty.field.ref, widget.set('V', sigRef));
    } else {
      // /V belongs on the field; poppler (pdfsig, Okular, Evince) reads it from the lone kid widget instead, and
      // writes it there itself, so it goes on both (the widget's copy is ignored by other readers).
      update.replace(empty.widget.ref, widget.set('V', sigRef));
      update.replace(empty.field.ref, empty.field.dict.clone().set('V', sigRef));
    }
    updateAcroForm(reader, update);
  } else {
    const placed = placement ? placeBox(reader, placement) : undefined;
    const page = placed?.page ?? findPage(reader, 1) // an invisible widget goes on page 1;
    const apRef = placed ? drawBox(placed.rect, pageRotation(reader, page.dict)) : update.add(emptyAppearance());
    const widgetRef = update.add(
      dict({
        Type: name('Annot'),
        Subtype: name('Widget'),
        FT: name('Sig'),
        T: textString(fieldName),
        V: sigRef,
        F: 132, // Print + Locked
        P: page.ref,
        Rect: placed ? placed.rect : [0, 0, 0, 0],
        AP: dict({ N: apRef }),
      }),
    );
    attachField(reader, update, page, widgetRef);
  }
  const built = update.build();

  const bytes = built.bytes;
  const contents = built.marks.get('contents')!;
  const br = built.marks.get('byteRange')!;
  const length = reader.length;
  const a = length + contents.start;
  const b = length + contents.end;
  const c = length + bytes.length - b;
  const brText = `[0 ${a} ${b} ${c}`;
  bytes.write(brText.padEnd(br.end - br.start - 1, ' ') + ']', br.start, 'latin1');
  return { length, bytes, contents, byteRange: [0, a, b, c], fieldName, placeholderBytes: input.placeholderBytes };
}

/**
 * The prepared record and the digest of what the /ByteRange covers, from `h`: a running SHA-256 fed exactly the
 * original's bytes (one pass over the possibly huge file; the hash is copied to get the file's own SHA-256).
 */
export function hashedUpdate(u: UpdateBytes, h: Hash): { prepared: PreparedUpdate; digest: Buffer } {
  const { bytes, contents } = u;
  const originalSha256 = h.copy().digest('hex');
  h.update(bytes.subarray(0, contents.start)).update(bytes.subarray(contents.end));
  const digest = h.digest();
  return {
    digest,
    prepared: {
      original: { length: u.length, sha256: originalSha256 },
      update: {
        head: bytes.subarray(0, contents.start).toString('base64'),
        tail: bytes.subarray(contents.end).toString('base64'),
        contentsBytes: u.placeholderBytes,
      },
      byteRange: u.byteRange,
      fieldName: u.fieldName,
    },
  };
}

export function stateInvalid(reason: string): SingpassFlowsError {
  return new SingpassFlowsError('STATE_INVALID', `The prepared signing state is unusable: ${reason}`, { retryable: false });
}

/** Shape check of a stored record (it may come back from a database or a workflow variable). */
export function checkPreparedUpdate(s: unknown): asserts s is PreparedUpdate {
  const o = s as Partial<PreparedUpdate> | null;
  const isNum = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (
    !o ||
    typeof o !== 'object' ||
    !o.original ||
    !isNum(o.original.length) ||
    typeof o.original.sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(o.original.sha256) ||
    !o.update ||
    typeof o.update.head !== 'string' ||
    typeof o.update.tail !== 'string' ||
    !isNum(o.update.contentsBytes) ||
    !Array.isArray(o.byteRange) ||
    o.byteRange.length !== 4 ||
    !o.byteRange.every(isNum) ||
    typeof o.fieldName !== 'string'
  ) {
    throw stateInvalid('missing or malformed fields (pass the state exactly as prepare returned it).');
  }
}

/**
 * Confirms `pdf` is the prepared input and that the stored update still hashes to `expectedDigest` (so a
 * corrupted state is refused instead of producing a broken signature). Streams once over the file, or not at all
 * given `pdfHash` (a running SHA-256 the caller has just fed exactly `pdf`, left unfinished and unchanged).
 */
export function checkOriginal(pdf: Buffer, p: PreparedUpdate, expectedDigest: Buffer, pdfHash?: Hash): CheckedUpdate {
  if (!Buffer.isBuffer(pdf)) throw invalidInput('pdf', 'expected the PDF bytes');
  return checkOriginalHashed(pdf.length, pdfHash ? pdfHash.copy() : createHash('sha256').update(pdf), p, expectedDigest);
}

/** The stored update's parts, and the digest of original || head || tail this check computed (equal to the expected one). */
export interface CheckedUpdate {
  head: Buffer;
  tail: Buffer;
  digest: Buffer;
}

/** {@link checkOriginal} from the original's length and a running SHA-256 of all its bytes (which it finishes). */
export function checkOriginalHashed(length: number, h: Hash, p: PreparedUpdate, expectedDigest: Buffer): CheckedUpdate {
  const head = Buffer.from(p.update.head, 'base64');
  const tail = Buffer.from(p.update.tail, 'base64');
  if (length !== p.original.length || h.copy().digest('hex') !== p.original.sha256) {
    throw stateInvalid('the PDF given to finalize is not the one that was prepared (pass the same original file).');
  }
  const a = length + head.length;
  const b = a + p.update.contentsBytes * 2 + 2;
  const [z, ba, bb, bc] = p.byteRange;
  if (z !== 0 || ba !== a || bb !== b || bc !== tail.length) throw stateInvalid('the byte range does not match the stored update.');
  const digest = h.update(head).update(tail).digest();
  if (!digest.equals(expectedDigest)) throw stateInvalid('the stored update does not match its digest (state was altered).');
  return { head, tail, digest };
}

/** original || head || <hex(contents) zero-padded> || tail; PDF_PLACEHOLDER_TOO_SMALL when it does not fit. */
export function assembleSigned(pdf: Buffer, p: PreparedUpdate, parts: { head: Buffer; tail: Buffer }, contents: Buffer): Buffer {
  return Buffer.concat(assembleSignedChunks(pdf, p, parts, contents));
}

/**
 * The signed file as ordered chunks: the caller's original bytes (the same Buffer, not copied), then the update with
 * the filled /Contents. Writing them in order to a file or an upload stream keeps memory at the file size plus a
 * few KB, where concatenating would need a second copy of the whole file.
 */
export function assembleSignedChunks(pdf: Buffer, p: PreparedUpdate, parts: { head: Buffer; tail: Buffer }, contents: Buffer): Buffer[] {
  return [pdf, ...signedUpdate(p, parts, contents)];
}

/** The update with the filled /Contents, as the chunks that follow the original; PDF_PLACEHOLDER_TOO_SMALL when it does not fit. */
export function signedUpdate(p: PreparedUpdate, parts: { head: Buffer; tail: Buffer }, contents: Buffer): Buffer[] {
  if (contents.length > p.update.contentsBytes) {
    throw new SingpassFlowsError(
      'PDF_PLACEHOLDER_TOO_SMALL',
      `The signature (${contents.length} bytes) does not fit the ${p.update.contentsBytes} bytes reserved in the PDF. ` +
        `Prepare again with a larger placeholderBytes (e.g. ${Math.ceil((contents.length * 1.5) / 1024) * 1024}).`,
      { retryable: false, needed: contents.length, reserved: p.update.contentsBytes },
    );
  }
  const hex = Buffer.from(`<${contents.toString('hex').padEnd(p.update.contentsBytes * 2, '0')}>`, 'latin1');
  return [parts.head, hex, parts.tail];
}
