/**
 * The plain words of a verification report: what each problem means and the notes about what was appended after a
 * signature. Reports are read by people who build flows, not PDF experts, so each text says what happened and
 * whether it matters, without jargon where a word will do.
 */
import type { ChangeKind, LaterUpdate } from './revisions';
import type { PdfVerificationReport, VerificationNote, VerificationProblem } from './verify';

type Subject = 'signature' | 'docTimestamp';
const thisOne = (s: Subject) => (s === 'docTimestamp' ? 'this timestamp' : 'this signature');

const PROBLEM_TEXT: Record<VerificationProblem, string> = {
  BYTE_RANGE_INVALID: 'The signature does not say clearly which bytes it signed (its byte range is malformed).',
  CMS_INVALID: 'The signature data cannot be read: it is not a well-formed CMS signature.',
  DIGEST_MISMATCH: 'The signed part of the document was altered after signing: it no longer matches the signature.',
  SIGNATURE_INVALID: "The signature does not verify with the signer's certificate.",
  SIGNER_CERT_MISSING: "The signer's certificate is not in the signature, so it cannot be checked.",
  SIGNING_CERT_ATTR_MISSING: 'The signature does not name the certificate it was made with, as PAdES requires.',
  SIGNING_CERT_ATTR_MISMATCH: 'The certificate the signature names is not the one that made it.',
  CHAIN_INCOMPLETE: 'The certificates in the file do not lead up to a trusted root certificate.',
  CHAIN_UNTRUSTED: 'The certificate chain does not end at a trusted root certificate.',
  CERT_NOT_VALID_AT_SIGNING_TIME: "The signer's certificate was expired or not yet valid when the signature was made.",
  TIMESTAMP_INVALID: 'The timestamp cannot be read or does not verify.',
  TIMESTAMP_IMPRINT_MISMATCH: 'The timestamp was not made over this signature.',
  TSA_CHAIN_UNTRUSTED: "The timestamp authority's certificate is not trusted.",
  REVOCATION_DATA_MISSING: 'Revocation answers (OCSP or CRL) are not embedded for every certificate.',
  CERT_REVOKED: 'A certificate of this signature was revoked before the signature was made (or at a time that is not known).',
  CERT_REVOKED_AFTER_SIGNING: 'A certificate of this signature was revoked after the signature was made.',
  NOT_COVERING_WHOLE_FILE: 'The document was changed after it was signed.',
};

const CHANGE_TEXT: Record<ChangeKind, string> = {
  page: 'the content of a page was changed',
  annotation: 'a comment, stamp or drawing (annotation) was added to a page',
  form: 'a form field was filled in or changed',
  unreadable: 'bytes that are not a readable PDF update were added',
  other: 'other parts of the document were changed',
};

/** The plain-language text of a problem; `changes` details NOT_COVERING_WHOLE_FILE. */
export function problemText(code: VerificationProblem, subject: Subject = 'signature', changes: ChangeKind[] = []): string {
  if (code === 'NOT_COVERING_WHOLE_FILE') {
    const what = changes.length ? changes.map((c) => CHANGE_TEXT[c]).join('; ') : 'bytes were added that are not validation data, a timestamp or a signature';
    return `The document was changed after ${thisOne(subject)} was made: ${what}. What the PDF shows now may not be what was signed.`;
  }
  return PROBLEM_TEXT[code];
}

const quoted = (names: (string | undefined)[]) => {
  const known = [...new Set(names.filter((n): n is string => n !== undefined))];
  return known.length ? ` (${known.map((n) => `"${n}"`).join(', ')})` : '';
};

/** Notes for what was appended after a signature (the later updates that do not change what it signed). */
export function laterUpdateNotes(later: LaterUpdate[], subject: Subject): VerificationNote[] {
  const notes: VerificationNote[] = [];
  const one = thisOne(subject);
  if (later.some((u) => u.kind === 'validationData')) {
    notes.push({
      code: 'VALIDATION_DATA_ADDED',
      text: subject === 'docTimestamp'
        ? 'Validation data (certificates and revocation answers) was added after this timestamp, so it can still be checked later. It does not change what was timestamped.'
        : `Validation data (certificates and revocation answers) was added after ${one}. This is what B-LT means; it does not change what was signed.`,
    });
  }
  const sigs = later.filter((u) => u.kind === 'signature');
  if (sigs.length) {
    notes.push({
      code: 'LATER_SIGNATURE_ADDED',
      text: `${sigs.length > 1 ? 'Other signatures were' : 'Another signature was'} added after ${one}${quoted(sigs.map((s) => s.fieldName))}. Signing again does not change what ${one} covers.`,
    });
  }
  const dts = later.filter((u) => u.kind === 'documentTimestamp');
  if (dts.length) {
    notes.push({
      code: 'DOCUMENT_TIMESTAMP_ADDED',
      text: `${dts.length > 1 ? 'Document timestamps were' : 'A document timestamp was'} added after ${one}${quoted(dts.map((s) => s.fieldName))}. ${
        subject === 'docTimestamp' ? 'A later timestamp renews the archive (B-LTA); it does not change what was timestamped.' : 'This is what B-LTA means; it does not change what was signed.'}`,
    });
  }
  if (later.some((u) => u.kind === 'documentInfo')) {
    notes.push({
      code: 'DOCUMENT_INFO_UPDATED',
      text: `The document properties (title, author, dates) were updated after ${one}. They are not part of the pages.`,
    });
  }
  return notes;
}

export const REVOCATION_DATA_MISSING_NOTE: VerificationNote = {
  code: 'REVOCATION_DATA_MISSING',
  text: 'Revocation answers (OCSP or CRL) are not embedded for every certificate, so the file alone cannot show they were not revoked when it was signed. That is what B-T means; B-LT adds them.',
};

export const CERT_REVOKED_AFTER_SIGNING_NOTE: VerificationNote = {
  code: 'CERT_REVOKED_AFTER_SIGNING',
  text: 'A certificate of this signature was revoked later, after the time its timestamp proves it was signed. It was good when it was used, so the signature stays valid.',
};

/**
 * The problems of a report in one line for an error message, each with its field and plain words:
 * `: "Signature1": The document was changed after … (NOT_COVERING_WHOLE_FILE)`; empty when there is none.
 *
 * @example
 * if (!report.valid) throw new Error(`The PDF's signatures do not verify${problemSummary(report)}`);
 */
export function problemSummary(report: PdfVerificationReport): string {
  const parts = report.signatures.flatMap((s) => (s.problemDetails ?? []).map((p) => `"${s.fieldName}": ${p.text} (${p.code})`));
  return parts.length ? `: ${parts.join(' ')}` : '';
}
