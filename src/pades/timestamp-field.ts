/**
 * Document timestamp fields (PAdES B-LTA, ISO 32000-2 12.8.5): a /DocTimeStamp signature whose /Contents is an
 * RFC 3161 TimeStampToken over the bytes its /ByteRange covers. The TSA call itself lives in `doc-timestamp.ts`.
 */
import { invalidInput } from '../errors';
import { checkTimestampToken } from '../pki/timestamp';
import { name } from './pdf/objects';
import {
  PreparedUpdate,
  assembleSigned,
  buildSignatureUpdate,
  checkOriginal,
  checkPlaceholderBytes,
  checkPreparedUpdate,
  stateInvalid,
} from './signature-update';

export interface PreparedDocumentTimestamp extends PreparedUpdate {
  format: 'singpass-flows/pades-doc-timestamp@1';
  /** Hex SHA-256 of the ByteRange bytes: the TSA's message imprint. */
  digest: string;
}

/**
 * Adds an empty /DocTimeStamp field and returns the SHA-256 digest to send to a TSA.
 *
 * @example
 * const { digest, state } = await prepareDocumentTimestamp(pdf);
 * const tst = await requestTimestamp(digest, { url });
 * const out = await finalizeDocumentTimestamp(pdf, state, tst);
 */
export async function prepareDocumentTimestamp(
  pdf: Buffer,
  opts: { fieldName?: string; placeholderBytes?: number } = {},
): Promise<{ digest: Buffer; state: PreparedDocumentTimestamp }> {
  if (!Buffer.isBuffer(pdf)) throw invalidInput('pdf', 'expected the PDF bytes');
  const { prepared, digest } = buildSignatureUpdate(pdf, {
    kind: 'DocTimeStamp',
    fieldPrefix: 'DocTimeStamp',
    fieldName: opts.fieldName,
    placeholderBytes: checkPlaceholderBytes(opts.placeholderBytes ?? 16384),
    entries: { Filter: name('Adobe.PPKLite'), SubFilter: name('ETSI.RFC3161') },
  });
  return { digest, state: { format: 'singpass-flows/pades-doc-timestamp@1', ...prepared, digest: digest.toString('hex') } };
}

/**
 * Embeds the TimeStampToken (ContentInfo DER) after checking its message imprint is the prepared digest.
 */
export async function finalizeDocumentTimestamp(pdf: Buffer, state: PreparedDocumentTimestamp, timeStampToken: Buffer): Promise<Buffer> {
  checkPreparedUpdate(state);
  if (state.format !== 'singpass-flows/pades-doc-timestamp@1' || typeof state.digest !== 'string' || !/^[0-9a-f]{64}$/.test(state.digest)) {
    throw stateInvalid('not a document timestamp state from prepareDocumentTimestamp.');
  }
  if (!Buffer.isBuffer(timeStampToken)) throw invalidInput('timeStampToken', 'expected the TimeStampToken DER bytes');
  const digest = Buffer.from(state.digest, 'hex');
  const parts = checkOriginal(pdf, state, digest);
  // One parser for timestamp tokens (src/pki): it accepts BER as real TSAs send it, checks the imprint against
  // this document's digest and the token's own signature before anything is written.
  checkTimestampToken(timeStampToken, { digest, hashAlgorithm: 'sha256' });
  return assembleSigned(pdf, state, parts, timeStampToken);
}
