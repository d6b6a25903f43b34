import { parseArgs } from 'node:util';
import { readUserFile, wantsHelp, type CliCommand } from '../command';
import { verifyPdfSignatures, type PdfVerificationReport } from '../../src/pades';

const HELP = `Usage: singpass-flows verify <file.pdf> [--root <root.pem>]... [--json]

Check every signature and document timestamp in a PDF: integrity (the signed bytes are unchanged and the
signature verifies), the certificate chain, the trusted time from timestamps, whether revocation data for every
certificate is embedded, and the PAdES level reached (B-B, B-T, B-LT, B-LTA). Works offline: only what the file
carries and the roots you give are used.

"Problems" are real: a signature with one is not valid (for example NOT_COVERING_WHOLE_FILE: the document was
changed after it was signed). "Notes" are worth knowing but wrong with nothing: validation data, document
timestamps and later signatures appended after a signature (what B-LT, B-LTA and countersigning do), revocation
data not embedded (what B-T means), a certificate revoked only after the signature was made.

Options:
  --root <file>  trusted root certificate (PEM or DER; repeatable). Without it, chains are shown but not trusted.
                 For the sandbox: the root at <sandbox>/ca/root.crt (or root-ca.pem in the sandbox --dir).
  --json         print the full report as JSON
  -h, --help     show this help

Exit code: 0 when every signature is intact (and, with --root, trusted), 1 otherwise, 2 for usage errors.

Example:
  singpass-flows verify signed.pdf --root root-ca.pem`;

/** Human-readable report lines (kept separate so tests and the sign command can reuse it). */
export function formatReport(r: PdfVerificationReport): string {
  const lines: string[] = [];
  if (r.signatures.length === 0) return 'No signatures found.';
  for (const [i, s] of r.signatures.entries()) {
    lines.push(`#${i + 1} ${s.type === 'docTimestamp' ? 'Document timestamp' : 'Signature'} "${s.fieldName}"${s.level ? ` — level ${s.level}` : ''}`);
    lines.push(`   ${placeLine(s)}`);
    if (s.signer) lines.push(`   ${s.type === 'docTimestamp' ? 'TSA' : 'Signer'}: ${s.signer.subject} (serial ${s.signer.serialNumber})`);
    if (s.timestampTime) lines.push(`   Timestamp: ${s.timestampTime}${s.timestamp?.valid === false ? ' (INVALID)' : ''}`);
    else if (s.claimedSigningTime) lines.push(`   Claimed signing time (not proven): ${s.claimedSigningTime}`);
    lines.push(`   Integrity: ${s.integrity.digestMatches && s.integrity.signatureValid ? 'OK' : 'BROKEN'}${integrityTail(s)}`);
    lines.push(`   Chain: ${s.chain.subjects.length ? s.chain.subjects.join(' <- ') : '(none)'} — ${s.chain.trusted ? 'trusted' : 'NOT trusted'}`);
    lines.push(`   Revocation data embedded: ${s.revocationDataComplete ? 'yes' : 'no'}`);
    if (s.signedRevocationInfo) lines.push(`   Signed with its revocation answer: ${signedAnswer(s.signedRevocationInfo)}`);
    // Codes first (stable, searchable), then the plain words, one line each.
    if (s.problems.length) {
      lines.push(`   Problems: ${s.problems.join(', ')}`);
      for (const p of s.problemDetails ?? []) lines.push(`     - ${p.text}`);
    }
    if (s.notes?.length) {
      lines.push(`   Notes: ${s.notes.map((n) => n.code).join(', ')}`);
      for (const n of s.notes) lines.push(`     - ${n.text}`);
    }
  }
  lines.push(`DSS: ${r.dss.certs} certificates, ${r.dss.ocsps} OCSP responses, ${r.dss.crls} CRLs`);
  lines.push(r.valid ? `Result: VALID${r.level ? ` (${r.level})` : ''}` : 'Result: NOT VALID');
  return lines.join('\n');
}

/** The answers signed into a signature (adbe-revocationInfoArchival), in words. */
function signedAnswer(info: NonNullable<PdfVerificationReport['signatures'][number]['signedRevocationInfo']>): string {
  const count = `${info.ocsps} OCSP response${info.ocsps === 1 ? '' : 's'}${info.crls ? `, ${info.crls} CRL${info.crls === 1 ? '' : 's'}` : ''}`;
  return info.signer ? `certificate ${info.signer.status} (OCSP produced ${info.signer.producedAt}; ${count})` : `${count}, none about the signer's certificate`;
}

/** Where the field is and whether a viewer shows it. */
function placeLine(s: PdfVerificationReport['signatures'][number]): string {
  const where = s.page !== undefined ? `page ${s.page}` : 'no page';
  if (!s.visible) return `Appearance: invisible (${where})`;
  return `Appearance: visible on ${where} at [${(s.rect ?? []).map((n) => Math.round(n * 100) / 100).join(', ')}]`;
}

/** How far the signature reaches: the whole file, or what was appended after it and whether that changed the document. */
function integrityTail(s: PdfVerificationReport['signatures'][number]): string {
  if (s.integrity.coversWholeFile) return ', covers the whole file';
  if (s.integrity.changedAfterSigning) return `, but the document was CHANGED after it (${s.integrity.bytesAfter} bytes added)`;
  return `, ${s.integrity.bytesAfter} bytes added after it, none changing the document`;
}

export const verifyCommand: CliCommand = {
  name: 'verify',
  summary: 'check the signatures of a PDF and the PAdES level reached (B-B/B-T/B-LT/B-LTA)',
  help: HELP,
  async run(argv) {
    if (wantsHelp(argv)) {
      console.log(HELP);
      return 0;
    }
    let values: { root?: string[]; json?: boolean };
    let positionals: string[];
    try {
      ({ values, positionals } = parseArgs({ args: argv, options: { root: { type: 'string', multiple: true }, json: { type: 'boolean' } }, strict: true, allowPositionals: true }));
    } catch (e) {
      console.error(`${(e as Error).message}\n\n${HELP}`);
      return 2;
    }
    if (positionals.length !== 1) {
      console.error(`Give exactly one PDF file.\n\n${HELP}`);
      return 2;
    }
    const pdf = readUserFile(positionals[0], 'FILE');
    const trustedRoots = (values.root ?? []).map((f) => readUserFile(f, '--root'));
    const report = await verifyPdfSignatures(pdf, { trustedRoots });
    console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
    if (!values.json && trustedRoots.length === 0) console.error('No --root given: chains are shown but not trusted.');
    return report.valid ? 0 : 1;
  },
};
