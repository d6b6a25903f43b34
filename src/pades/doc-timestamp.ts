/**
 * Timestamps for PAdES: the signature timestamp hook (B-T) and the document timestamp (B-LTA). The PDF side lives
 * in `timestamp-field.ts`/`signature.ts`; this module only connects it to the TSA client.
 */
import { createHash } from 'node:crypto';
import { invalidInput } from '../errors';
import type { Fetch } from '../http';
import { requestTimestamp } from '../pki';
import { finalizeDocumentTimestamp, prepareDocumentTimestamp } from './timestamp-field';

export interface TsaOptions {
  /** RFC 3161 endpoint of the Time-Stamp Authority. */
  tsaUrl: string;
  fetch?: Fetch;
  timeoutMs?: number;
}

/**
 * Builds the `options.timestamp` hook of `finalizeSignature` (PAdES B-T): an RFC 3161 timestamp over SHA-256 of the
 * SignerInfo signature value, which finalize stores as the signatureTimeStampToken unsigned attribute.
 *
 * @example
 * const signed = await finalizeSignature(pdf, state, signature, { timestamp: timestampSignature({ tsaUrl }) });
 */
export function timestampSignature(options: TsaOptions | string): (signatureValue: Buffer) => Promise<Buffer> {
  const opts = typeof options === 'string' ? { tsaUrl: options } : options;
  if (!opts.tsaUrl) throw invalidInput('tsaUrl', 'a TSA URL is required for a signature timestamp');
  return (signatureValue: Buffer) =>
    requestTimestamp(createHash('sha256').update(signatureValue).digest(), { url: opts.tsaUrl, fetch: opts.fetch, timeoutMs: opts.timeoutMs });
}

/**
 * Appends a document timestamp (`/Type /DocTimeStamp`, `/SubFilter /ETSI.RFC3161`) covering the whole file so far:
 * the last step of PAdES B-LTA, normally after `addValidationData`. Returns the new PDF (input bytes + one update).
 *
 * @example
 * const lta = await addDocumentTimestamp(await addValidationData(signed), { tsaUrl });
 */
export async function addDocumentTimestamp(pdf: Buffer, options: TsaOptions & { fieldName?: string; placeholderBytes?: number }): Promise<Buffer> {
  if (!options?.tsaUrl) throw invalidInput('tsaUrl', 'a TSA URL is required for a document timestamp');
  const { digest, state } = await prepareDocumentTimestamp(pdf, { fieldName: options.fieldName, placeholderBytes: options.placeholderBytes });
  const token = await requestTimestamp(digest, { url: options.tsaUrl, fetch: options.fetch, timeoutMs: options.timeoutMs });
  return finalizeDocumentTimestamp(pdf, state, token);
}
