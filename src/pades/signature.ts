/**
 * PAdES signatures from an externally signed hash (the Singpass signing flow): {@link prepareSignature} computes the
 * hash the user signs on the phone, {@link finalizeSignature} embeds the returned signature as CMS.
 */
import { createHash, type Hash } from 'node:crypto';
import { Clock, systemClock } from '../clock';
import { invalidInput } from '../errors';
import { checkPlacement, type SignaturePlacement } from './placement';
import { readSignatureImage } from './signature-image';
import { buildSignedAttributes, buildSignedData, checkSignature, messageDigestOf, readCertificateFields, revocationArchiveOf, signatureBytes } from './cms';
import { encodeRevocationArchive } from '../pki/revocation-archival';
import { name } from './pdf/objects';
import { pdfDate, textString } from './pdf/text';
import { open, type FileHandle } from 'node:fs/promises';
import { writeFileAtomicWith } from '../files';
import { PdfReader, fileByteSource } from './pdf/reader';
import { certificateView, type CertificateScope } from '../pki/certificate-view';
import { publicKeyOf } from '../pki/x509';
import {
  PreparedUpdate,
  SignatureUpdateInput,
  assembleSignedChunks,
  buildSignatureUpdate,
  buildUpdateBytes,
  checkOriginal,
  checkOriginalHashed,
  hashedUpdate,
  signedUpdate,
  checkPlaceholderBytes,
  checkPreparedUpdate,
  MAX_PLACEHOLDER_BYTES,
  stateInvalid,
} from './signature-update';

export interface PrepareSignatureOptions {
  /** The user's certificate (DER bytes, base64 DER as the signing service's webhook delivers it, or PEM). */
  certificate: Buffer | string;
  /** Intermediate CA certificates to embed in the CMS (optional). */
  chain?: (Buffer | string)[];
  /**
   * OCSP answers (OCSPResponse DER) of the check made before signing, e.g. the user certificate's: signed into the
   * signature as Adobe's revocation-information attribute (adbe-revocationInfoArchival), so the PDF shows the
   * certificate was good when it signed at every level, B-B included. B-LT's DSS is added as before.
   */
  ocspResponses?: Buffer[];
  /**
   * Signature field name; default "Signature<n>". Naming an existing *unsigned signature field* fills that field
   * (its own rectangle, with the default box or `appearance.lines`); any other existing name → `PDF_FIELD_EXISTS`.
   */
  fieldName?: string;
  reason?: string;
  location?: string;
  contactInfo?: string;
  /** Signer name shown by readers (/Name); defaults to none (readers show the certificate's name). */
  name?: string;
  /**
   * A visible signature box and where it goes (see {@link SignatureAppearance}); omitted → invisible signature.
   * `{}` puts the default box in the bottom-right corner of the last page.
   */
  appearance?: SignatureAppearance;
  /** An officer signing for a company: the entity and role, shown in the box. */
  signingFor?: { entity: string; role?: string };
  /** Bytes reserved for the CMS (default 32768: room for a chain and a timestamp). */
  placeholderBytes?: number;
  /** Time source for /M and the default appearance text. */
  clock?: Clock;
}

/**
 * The visible signature box: its place (a page and a rectangle or corner, or a form's empty signature field) and
 * what it shows. By default the signer's name from the certificate, "Signed with Singpass", the entity and role of
 * an officer signing for a company, the signing time in Singapore time and the reason.
 *
 * @example
 * { corner: 'bottom-right', page: 'last' }            // default size 210 × 72 points, 36 from the edges
 * { page: 2, rect: [350, 60, 560, 132] }               // default user space, PDF points
 * { field: 'Tenant signature' }                        // the form's own "Sign here" field
 * { nextEmptyField: true, image: pngBytes }            // several signers: each takes the next empty field
 */
export interface SignatureAppearance extends SignaturePlacement {
  /** Lines drawn instead of the default text (at most 20 of 200 characters). */
  lines?: string[];
  /** A PNG or JPEG (bytes or base64, at most 512 KB) drawn on the box's left. */
  image?: Buffer | string;
}

/** Everything finalize needs, JSON-serialisable and small (the PDF itself is not in it). */
export interface PreparedSignature extends PreparedUpdate {
  format: 'singpass-flows/pades-signature@1';
  /** Same as the returned `documentHash` (hex): match it against the `doc_hash` of the signature webhook. */
  documentHash: string;
  /** DER SignedAttributes (base64), exactly the bytes whose SHA-256 is the document hash. */
  signedAttributes: string;
  /** Signer certificate DER (base64). */
  certificate: string;
  /** Intermediate certificates DER (base64). */
  chain: string[];
}

export interface PreparedSignatureResult {
  /** Hex SHA-256 of the DER SignedAttributes: what the signing API's hash endpoint receives. */
  documentHash: string;
  state: PreparedSignature;
}

/** An optional text of the signature dictionary (reason, location, contact, name): a string of at most 500 characters. */
export function checkSignatureText(field: string, v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length > 500) throw invalidInput(field, 'must be a string of at most 500 characters');
  return v;
}

/**
 * The signer's name for the box: the certificate's common name, with anything shaped like an NRIC/FIN taken out
 * (a Singpass certificate keeps it in serialNumber, but the box must never show it whatever a CA does).
 */
function subjectName(subject: () => string): string | undefined {
  let cn: string | undefined;
  try {
    cn = /(?:^|\n)CN=([^\n]+)/.exec(subject())?.[1];
  } catch {
    return undefined;
  }
  const clean = cn?.replace(/\b[STFGM]\d{7}[A-Z]\b/gi, '').replace(/\s+/g, ' ').trim();
  return clean || undefined;
}

function checkSigningFor(v: unknown): { entity: string; role?: string } | undefined {
  if (v === undefined) return undefined;
  const o = v as { entity?: unknown; role?: unknown };
  if (!o || typeof o !== 'object' || typeof o.entity !== 'string' || o.entity.length === 0 || o.entity.length > 300 || (o.role !== undefined && (typeof o.role !== 'string' || o.role.length > 100))) {
    throw invalidInput('signingFor', 'expected { entity (1–300 characters), role? (at most 100) }');
  }
  return { entity: o.entity, ...(o.role ? { role: o.role } : {}) };
}

/** Singapore time (UTC+8 all year: no daylight saving since 1982), e.g. "29 Nov 2026, 15:04:05 SGT". */
export function singaporeTime(ms: number): string {
  const d = new Date(ms + 8 * 3600_000);
  const p = (n: number) => String(n).padStart(2, '0');
  const month = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getUTCMonth()];
  return `${d.getUTCDate()} ${month} ${d.getUTCFullYear()}, ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} SGT`;
}

/** The default text of the box, the signer's name first. */
export function boxLines(o: { name?: string; time: number; reason?: string; location?: string; signingFor?: { entity: string; role?: string } }): string[] {
  return [
    o.name ?? 'Signer',
    'Signed with Singpass',
    ...(o.signingFor ? [`For ${o.signingFor.entity}${o.signingFor.role ? ` as ${o.signingFor.role}` : ''}`] : []),
    singaporeTime(o.time),
    ...(o.reason ? [`Reason: ${o.reason}`] : []),
    ...(o.location ? [`Location: ${o.location}`] : []),
  ];
}

/**
 * Adds an (empty) signature field to the PDF as an incremental update and returns the document hash the user must
 * sign, plus the state to keep until the signature arrives.
 *
 * @example
 * const { documentHash, state } = await prepareSignature(pdf, { certificate: userCertB64, reason: 'Approved' });
 * // submit documentHash to the signing API; store `state` (JSON) and the original pdf
 * const signed = await finalizeSignature(pdf, state, webhook.doc_hash_signature);
 */
export async function prepareSignature(pdf: Buffer, options: PrepareSignatureOptions): Promise<PreparedSignatureResult> {
  return prepareSignatureHashed(pdf, options);
}

/**
 * {@link prepareSignature}, given `pdfHash`: a running SHA-256 the caller fed exactly `pdf` (left unfinished), so the
 * file is not hashed a second time. For the session engine, which hashes the PDF to recognise it anyway.
 */
export async function prepareSignatureHashed(pdf: Buffer, options: PrepareSignatureOptions, pdfHash?: Hash): Promise<PreparedSignatureResult> {
  if (!Buffer.isBuffer(pdf)) throw invalidInput('pdf', 'expected the PDF bytes');
  return prepareWith(options, async (input) => buildSignatureUpdate(pdf, input, pdfHash));
}

/**
 * {@link prepareSignature} of the PDF in a file, streamed: its structure is read where it is (a few KB), then the
 * whole file once, in 1 MiB pieces, through the hash. Memory stays at a few MB whatever the file's size; the state is
 * the one {@link prepareSignature} returns for the same bytes (finalize with {@link finalizeSignatureFile}, or with
 * the Buffer API from the same file).
 */
export async function prepareSignatureFile(path: string, options: PrepareSignatureOptions): Promise<PreparedSignatureResult> {
  if (typeof path !== 'string' || path === '') throw invalidInput('path', 'expected the path of the PDF file');
  return prepareWith(options, async (input) => {
    const fh = await openInput(path, 'path');
    try {
      const { size } = await fh.stat();
      const built = buildUpdateBytes(PdfReader.openSource(fileByteSource(fh.fd, size)), input);
      const h = createHash('sha256');
      await readWhole(fh, size, (chunk) => void h.update(chunk));
      return hashedUpdate(built, h);
    } finally {
      await fh.close();
    }
  });
}

/** The input file opened for reading; a typed INVALID_INPUT naming the field when it cannot be. */
async function openInput(file: string, field: string): Promise<FileHandle> {
  try {
    return await open(file, 'r');
  } catch (e) {
    throw invalidInput(field, `cannot be opened for reading (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

/** Reads the file's `size` bytes in order, in 1 MiB pieces (one buffer, reused: `each` must be done with a piece when it returns). */
async function readWhole(fh: FileHandle, size: number, each: (chunk: Buffer) => Promise<void> | void): Promise<void> {
  const piece = Buffer.allocUnsafe(Math.min(size, 1 << 20));
  for (let pos = 0; pos < size; ) {
    const { bytesRead } = await fh.read(piece, 0, Math.min(piece.length, size - pos), pos);
    if (bytesRead === 0) throw invalidInput('pdf', 'the file ended before its size while it was read (changed meanwhile?)');
    await each(piece.subarray(0, bytesRead));
    pos += bytesRead;
  }
}

async function writeAll(fh: FileHandle, chunk: Buffer): Promise<void> {
  for (let at = 0; at < chunk.length; ) at += (await fh.write(chunk, at, chunk.length - at)).bytesWritten;
}

/** Everything prepare does around the update: options checked, the field's entries, the signed attributes. */
async function prepareWith(options: PrepareSignatureOptions, build: (input: SignatureUpdateInput) => Promise<{ prepared: PreparedUpdate; digest: Buffer }>): Promise<PreparedSignatureResult> {
  if (!options || typeof options !== 'object') throw invalidInput('options', 'expected an options object');
  const cert = readCertificateFields(options.certificate, 'certificate');
  const chain = (options.chain ?? []).map((c, i) => readCertificateFields(c, `chain[${i}]`).der);
  if (options.ocspResponses !== undefined && (!Array.isArray(options.ocspResponses) || !options.ocspResponses.every((o) => Buffer.isBuffer(o)))) {
    throw invalidInput('ocspResponses', 'expected OCSP responses as DER bytes');
  }
  const archive = options.ocspResponses?.length ? encodeRevocationArchive({ ocsps: options.ocspResponses }) : undefined;
  const clock = options.clock ?? systemClock;
  const reason = checkSignatureText('reason', options.reason);
  const location = checkSignatureText('location', options.location);
  const contactInfo = checkSignatureText('contactInfo', options.contactInfo);
  const signerName = checkSignatureText('name', options.name);
  const now = clock();

  const checkLines = (lines: unknown): string[] => {
    if (!Array.isArray(lines) || lines.length > 20 || lines.some((l) => typeof l !== 'string' || l.length > 200)) {
      throw invalidInput('appearance.lines', 'must be at most 20 strings of at most 200 characters');
    }
    return lines as string[];
  };
  const signingFor = checkSigningFor(options.signingFor);
  let placement: SignaturePlacement | undefined;
  let custom: string[] | undefined;
  let image;
  if (options.appearance !== undefined) {
    placement = checkPlacement(options.appearance);
    if (options.appearance.lines !== undefined) custom = checkLines(options.appearance.lines);
    if (options.appearance.image !== undefined) image = readSignatureImage(options.appearance.image);
  }
  // Lazily: the subject is only parsed when a box is drawn.
  const lines = () =>
    custom ??
    boxLines({ name: signerName ?? subjectName(() => cert.subject()), time: now, reason, location, signingFor });

  const { prepared, digest } = await build({
    kind: 'Sig',
    fieldPrefix: 'Signature',
    fieldName: options.fieldName,
    placeholderBytes: checkPlaceholderBytes(options.placeholderBytes),
    placement,
    box: placement !== undefined || options.fieldName !== undefined ? { lines: lines(), image } : undefined,
    entries: {
      Filter: name('Adobe.PPKLite'),
      SubFilter: name('ETSI.CAdES.detached'),
      M: pdfDate(now),
      Name: signerName !== undefined ? textString(signerName) : undefined,
      Reason: reason !== undefined ? textString(reason) : undefined,
      Location: location !== undefined ? textString(location) : undefined,
      ContactInfo: contactInfo !== undefined ? textString(contactInfo) : undefined,
    },
  });
  const signedAttrs = buildSignedAttributes(digest, cert, archive);
  const documentHash = createHash('sha256').update(signedAttrs).digest('hex');
  return {
    documentHash,
    state: {
      format: 'singpass-flows/pades-signature@1',
      documentHash,
      ...prepared,
      signedAttributes: signedAttrs.toString('base64'),
      certificate: cert.der.toString('base64'),
      chain: chain.map((c) => c.toString('base64')),
    },
  };
}

export interface FinalizeSignatureOptions {
  /**
   * Returns an RFC 3161 TimeStampToken (ContentInfo DER) over the given signature value, for PAdES B-T. pades'
   * `timestampSignature(tsaUrl)` builds one.
   */
  timestamp?: (signatureValue: Buffer) => Promise<Buffer>;
}

function checkState(state: unknown): asserts state is PreparedSignature {
  checkPreparedUpdate(state);
  const s = state as Partial<PreparedSignature>;
  if (
    s.format !== 'singpass-flows/pades-signature@1' ||
    typeof s.signedAttributes !== 'string' ||
    typeof s.documentHash !== 'string' ||
    typeof s.certificate !== 'string' ||
    !Array.isArray(s.chain) ||
    !s.chain.every((c) => typeof c === 'string')
  ) {
    throw stateInvalid('not a signature state from prepareSignature.');
  }
}

/**
 * Verifies the user's signature over the prepared hash, wraps it in a detached CMS SignedData (PAdES
 * ETSI.CAdES.detached, optionally with a signature timestamp) and returns the signed PDF: the original bytes
 * unchanged plus one incremental update.
 *
 * @param pdf the same original PDF given to {@link prepareSignature}
 * @param signature hex or bytes: ECDSA DER (raw r||s accepted) or RSA PKCS#1 v1.5
 */
export async function finalizeSignature(
  pdf: Buffer,
  state: PreparedSignature,
  signature: string | Buffer,
  options: FinalizeSignatureOptions = {},
): Promise<Buffer> {
  return Buffer.concat(await finalizeSignatureChunks(pdf, state, signature, options));
}

/**
 * {@link finalizeSignature} for large files: the signed PDF as ordered chunks — your original Buffer (not copied),
 * then the few-KB update carrying the signature. Write them in order (e.g. `stream.write` each, or
 * `fs.promises.writeFile(path, Readable.from(chunks))`) so peak memory stays at the file size plus a few KB.
 */
export async function finalizeSignatureChunks(
  pdf: Buffer,
  state: PreparedSignature,
  signature: string | Buffer,
  options: FinalizeSignatureOptions = {},
): Promise<Buffer[]> {
  return finalizeSignatureHashed(pdf, state, signature, options);
}

/**
 * {@link finalizeSignatureChunks}, given `pdfHash`: a running SHA-256 the caller has just fed exactly `pdf` (left
 * unfinished), so the original is checked without hashing it again.
 */
export async function finalizeSignatureHashed(
  pdf: Buffer,
  state: PreparedSignature,
  signature: string | Buffer,
  options: FinalizeSignatureOptions = {},
  pdfHash?: Hash,
): Promise<Buffer[]> {
  const signing = readSigningState(state);
  const parts = checkOriginal(pdf, state, signing.messageDigest, pdfHash);
  return assembleSignedChunks(pdf, state, parts, await signedCms(signing, signature, options));
}

/** The Buffer of a signed file with the original copied in first: see {@link signedFileFor}. */
export interface SignedFileBuffer {
  /** Sized for the original plus the update the state describes. */
  file: Buffer;
  /** The copy of the original: its first bytes. */
  original: Buffer;
}

/**
 * The Buffer of the signed file, sized from the prepared state, with `pdf` copied in first. A caller that hashes
 * `original` (the copy) and finalizes with {@link finalizeSignatureInto} holds a signed file made of exactly the
 * bytes it hashed: nobody else holds this Buffer, whatever becomes of `pdf`. Undefined for a state finalize would
 * refuse.
 */
export function signedFileFor(pdf: Buffer, state: PreparedUpdate): SignedFileBuffer | undefined {
  try {
    checkPreparedUpdate(state);
  } catch {
    return undefined;
  }
  const u = state.update;
  if (u.contentsBytes > MAX_PLACEHOLDER_BYTES) return undefined;
  const file = Buffer.allocUnsafe(pdf.length + Buffer.byteLength(u.head, 'base64') + u.contentsBytes * 2 + 2 + Buffer.byteLength(u.tail, 'base64'));
  pdf.copy(file, 0);
  return { file, original: file.subarray(0, pdf.length) };
}

/**
 * {@link finalizeSignatureHashed} into `signed` (from {@link signedFileFor}), `pdfHash` being the caller's running
 * SHA-256 of `signed.original`. Returns the signed file and, when it was assembled in `signed.file`, the digest of
 * its /ByteRange as checked on the way (the original's hash continued over the update's head and tail).
 * `scope`: the certificates' views shared with the caller's next checks (the signer's key imported once).
 */
export async function finalizeSignatureInto(
  signed: SignedFileBuffer,
  state: PreparedSignature,
  signature: string | Buffer,
  options: FinalizeSignatureOptions,
  pdfHash: Hash,
  scope?: CertificateScope,
): Promise<{ pdf: Buffer; byteRangeDigest?: Buffer }> {
  const signing = readSigningState(state, scope);
  const parts = checkOriginal(signed.original, state, signing.messageDigest, pdfHash);
  const update = signedUpdate(state, parts, await signedCms(signing, signature, options));
  let at = signed.original.length;
  if (update.reduce((n, c) => n + c.length, at) !== signed.file.length) return { pdf: Buffer.concat([signed.original, ...update]) };
  for (const chunk of update) at += chunk.copy(signed.file, at);
  return { pdf: signed.file, byteRangeDigest: parts.digest };
}

/**
 * {@link finalizeSignature} from the original PDF in a file to the signed PDF in another, streamed: the original is
 * read once, hashed as it is copied to a temporary file beside `outPath`, checked against the state, then the
 * update with the signature is appended and the file renamed to `outPath` (fsynced, mode 0600: a crash leaves the old
 * `outPath` or the new one, never a part). Memory stays at a few MB whatever the file's size.
 */
export async function finalizeSignatureFile(
  inPath: string,
  outPath: string,
  state: PreparedSignature,
  signature: string | Buffer,
  options: FinalizeSignatureOptions = {},
): Promise<void> {
  if (typeof inPath !== 'string' || inPath === '') throw invalidInput('inPath', 'expected the path of the original PDF');
  if (typeof outPath !== 'string' || outPath === '') throw invalidInput('outPath', 'expected the path to write the signed PDF to');
  const signing = readSigningState(state);
  const input = await openInput(inPath, 'inPath');
  try {
    const { size } = await input.stat();
    await writeFileAtomicWith(outPath, async (out) => {
      const h = createHash('sha256');
      await readWhole(input, size, async (chunk) => {
        h.update(chunk);
        await writeAll(out, chunk);
      });
      const parts = checkOriginalHashed(size, h, state, signing.messageDigest);
      for (const chunk of signedUpdate(state, parts, await signedCms(signing, signature, options))) await writeAll(out, chunk);
    });
  } finally {
    await input.close();
  }
}

interface SigningState {
  state: PreparedSignature;
  signedAttrs: Buffer;
  messageDigest: Buffer;
  cert: ReturnType<typeof readCertificateFields>;
}

/**
 * The state checked and read: its signed attributes, their message digest, the certificate they belong to (its key
 * taken from its view in `scope` when given, so the caller's later checks import it no more).
 */
function readSigningState(state: PreparedSignature, scope?: CertificateScope): SigningState {
  checkState(state);
  const signedAttrs = Buffer.from(state.signedAttributes, 'base64');
  let messageDigest: Buffer | undefined;
  let cert;
  try {
    messageDigest = messageDigestOf(signedAttrs);
    cert = readCertificateFields(state.certificate, 'state.certificate');
  } catch {
    throw stateInvalid('its signed attributes or certificate cannot be read.');
  }
  if (!messageDigest) throw stateInvalid('its signed attributes have no message digest.');
  if (createHash('sha256').update(signedAttrs).digest('hex') !== state.documentHash.toLowerCase()) {
    throw stateInvalid('its document hash does not match its signed attributes.');
  }
  if (!buildSignedAttributes(messageDigest, cert, revocationArchiveOf(signedAttrs)).equals(signedAttrs)) {
    throw stateInvalid('its signed attributes do not belong to its certificate.');
  }
  if (scope) cert = { ...cert, publicKey: scopedKey(cert, scope) };
  return { state, signedAttrs, messageDigest, cert };
}

/** The key from the certificate's view in `scope`; from the certificate itself when it has no plain-DER view. */
function scopedKey(cert: ReturnType<typeof readCertificateFields>, scope: CertificateScope): () => ReturnType<typeof publicKeyOf> {
  return () => {
    let spki: Buffer;
    try {
      spki = certificateView(cert.der, scope).spki;
    } catch {
      return cert.publicKey();
    }
    return publicKeyOf(spki);
  };
}

/** The user's signature checked over the signed attributes, timestamped when asked, wrapped in the CMS SignedData. */
async function signedCms({ state, signedAttrs, cert }: SigningState, signature: string | Buffer, options: FinalizeSignatureOptions): Promise<Buffer> {
  const sig = checkSignature(signedAttrs, signatureBytes(signature), cert);
  let timeStampToken: Buffer | undefined;
  if (options.timestamp) timeStampToken = await options.timestamp(sig.value);
  return buildSignedData({
    signedAttrs,
    signer: cert,
    chain: state.chain.map((c) => Buffer.from(c, 'base64')),
    signature: sig,
    timeStampToken,
  });
}
