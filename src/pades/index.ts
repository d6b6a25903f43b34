/**
 * PAdES for the Singpass signing flow: prepare a PDF and the hash the user signs, embed the returned signature,
 * and the lower-level pieces LTV builds on (DSS, document timestamps, listing signatures).
 * Everything works on PDF bytes with append-only incremental updates; earlier bytes are never changed.
 */
export { prepareSignature, finalizeSignature, finalizeSignatureChunks, prepareSignatureFile, finalizeSignatureFile } from './signature';
export { checkSignablePdf } from './acroform';
export type { PrepareSignatureOptions, PreparedSignature, PreparedSignatureResult, FinalizeSignatureOptions, SignatureAppearance } from './signature';
export { checkPlacement, CORNERS } from './placement';
export type { SignaturePlacement, Corner } from './placement';
export { prepareDocumentTimestamp, finalizeDocumentTimestamp } from './timestamp-field';
export type { PreparedDocumentTimestamp } from './timestamp-field';
export { appendDss, readDss } from './dss';
export type { DssData, DssEntry } from './dss';
export { listSignatures, byteRangeDigest, newestSignatureIndex } from './list';
export type { PdfSignatureInfo } from './list';
export type { PreparedUpdate } from './signature-update';
// LTV, document timestamps and verification (they build on the modules above, imported directly: no cycle).
export * from './ltv';
export * from './doc-timestamp';
export * from './verify';
export { problemSummary } from './report-words';
