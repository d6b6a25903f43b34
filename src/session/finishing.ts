import { SingpassFlowsError, isSingpassFlowsError, type ErrorCode } from '../errors';
import type { Hash } from 'node:crypto';
import { finalizeSignature } from '../pades';
import { finalizeSignatureHashed, finalizeSignatureInto, signedFileFor } from '../pades/signature';
import { CertificateScope } from '../pki/certificate-view';
import { addDocumentTimestamp, timestampSignature } from '../pades/doc-timestamp';
import { addValidationDataWithSummary, type ValidationDataSummary } from '../pades/ltv';
import { verifyPdfSignaturesIn, type KnownByteRangeDigest, type PadesLevel, type PdfVerificationReport } from '../pades/verify';
import { completeSigningSession } from '../sign';
import { checkRecord, endedRecord, errorOf, say, withoutSessionData, type StepContext } from './record-ops';
import { finishRetryDelayMs, isTemporaryFinishFailure } from './policy';
import { handOverStarted } from './hand-over';
import { advance } from './transitions';
import type { FinishFailure, FinishResult, FinishShortfall, SessionRecord, StepOptions } from './types';


/**
 * Failures that are a verdict on the signature (it does not verify, a certificate it relies on is revoked or
 * unknown): no PDF is handed on, the session fails. Any other failure after the user signed (a TSA refusing for
 * good, validation data that cannot be had, the finishing window over) hands on the PDF at the highest level
 * reached, at least B-B, with `result.missing`: the user is never made to sign again for our post-processing.
 */
const SIGNATURE_VERDICTS: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['SIGNATURE_INVALID', 'CERTIFICATE_MISMATCH', 'OCSP_REVOKED', 'CRL_REVOKED', 'OCSP_UNKNOWN']);

/** What a session that completed short of the level asked for lacks (`record.result.missing`), if anything. */
export function finishShortfall(record: SessionRecord): FinishShortfall | undefined {
  return record.state.status === 'completed' ? record.result?.missing : undefined;
}



/**
 * Embed the signature and extend to the requested level (see `SigningEngine.finish`). `checkDocument` is the
 * engine's check that `pdf` is the session's PDF.
 */
export async function finishSession(ctx: StepContext, record: SessionRecord, pdf: Buffer, stepOptions: StepOptions | undefined, checkDocument: (record: SessionRecord, pdf: Buffer) => Hash): Promise<FinishResult> {
  checkRecord(record);
  if (record.state.status !== 'signed' || !record.prepared || !record.state.signature) {
    throw new SingpassFlowsError('STATE_INVALID', `Nothing to finish: the session is ${record.state.status}`, { retryable: false });
  }
  // The PDF is copied into the signed file's Buffer first and the copy is what is checked: the signed file is then
  // made of exactly the bytes hashed, whatever the caller does with `pdf` meanwhile, and its digest is known.
  const signed = Buffer.isBuffer(pdf) ? signedFileFor(pdf, record.prepared) : undefined;
  const original = signed?.original ?? pdf;
  const pdfHash = checkDocument(record, original);
  // The user's certificate read, parsed and its key imported once for the signature check and the verification.
  const certificates = new CertificateScope();
  let known: KnownByteRangeDigest | undefined;
  // Always from the PDF as it was before signing and the saved prepared state: a retry (after a fault or a crash)
  // embeds the same signature in the same field again — never a second signature.
  const prepared = record.prepared;
  const signature = record.state.signature;
  const level = record.request.level;
  const roots = ctx.config.trustedRoots;
  const timestamped = level !== 'B-B';
  let best: { pdf: Buffer; level: PadesLevel } | undefined;
  let validationData: ValidationDataSummary | undefined;
  let stage: FinishFailure['stage'] = 'embed';
  // Set when the signature timestamp itself failed (not the embedding): B-B without it is still the user's signature.
  let timestampFailed = false;
  const timestamp = async (value: Buffer): Promise<Buffer> => {
    try {
      return await timestampSignature({ tsaUrl: ctx.config.tsaUrl!, fetch: ctx.config.fetch })(value);
    } catch (e) {
      timestampFailed = true;
      throw e;
    }
  };
  const finishWith = async (e: unknown, report?: PdfVerificationReport): Promise<FinishResult> => {
    const out = endedRecord(ctx, record, 'failFinish', e, { result: { level: null, valid: false } });
    await say(stepOptions, { step: 'ended', status: out.state.status, error: out.error });
    return { record: out, ...(report ? { report } : {}) };
  };
  let missing: FinishShortfall | undefined;
  try {
    // finalize checks the signature against the certificate over the SignedAttributes before embedding, and the
    // PDF against the prepared state from the document check's hash (nothing awaited in between).
    let out: Buffer;
    if (signed) {
      const r = await finalizeSignatureInto(signed, prepared, signature, timestamped ? { timestamp } : {}, pdfHash, certificates);
      out = r.pdf;
      if (r.byteRangeDigest) known = { pdf: out, byteRange: prepared.byteRange, sha256: r.byteRangeDigest };
    } else {
      out = Buffer.concat(await finalizeSignatureHashed(original, prepared, signature, timestamped ? { timestamp } : {}, pdfHash));
    }
    best = { pdf: out, level: timestamped ? 'B-T' : 'B-B' };
    await say(stepOptions, { step: 'embedded', timestamped });
    // addValidationData's default (requireComplete 'newest'): OUR signature, its timestamp and the document
    // timestamps after it must end complete (else it refuses: retried, or the B-T PDF handed on with `missing`);
    // signatures made before ours by others get what can be obtained and `validationData` says what could not.
    const ltv = { trustedRoots: roots, intermediates: ctx.certificates.intermediates(), fetch: ctx.config.fetch, clock: ctx.clock };
    if (level === 'B-LT' || level === 'B-LTA') {
      stage = 'validationData';
      const r = await addValidationDataWithSummary(out, ltv);
      out = r.pdf;
      validationData = r.summary;
      best = { pdf: out, level: 'B-LT' };
      await say(stepOptions, { step: 'validationData', summary: r.summary });
    }
    if (level === 'B-LTA') {
      stage = 'documentTimestamp';
      out = await addDocumentTimestamp(out, { tsaUrl: ctx.config.tsaUrl!, fetch: ctx.config.fetch });
      // The document timestamp's own TSA chain gets its OCSP too, so the next renewal has what it needs (what the
      // B-LT step put in the DSS is reused, not fetched again).
      const r = await addValidationDataWithSummary(out, ltv);
      out = r.pdf;
      validationData = r.summary;
      best = { pdf: out, level: 'B-LTA' };
      await say(stepOptions, { step: 'documentTimestamp' });
    }
  } catch (e) {
    if (isTemporaryFinishFailure(e)) {
      const kept = await finishDeferred(ctx, record, stage, e, stepOptions);
      if (kept) return kept;
    }
    // Refused for good, or the finishing window is over: the user signed, so what was reached is handed on.
    if (!best && timestampFailed) {
      try {
        best = { pdf: await finalizeSignature(original, prepared, signature), level: 'B-B' };
        await say(stepOptions, { step: 'embedded', timestamped: false });
      } catch (again) {
        return finishWith(again);
      }
    }
    if (!best || (isSingpassFlowsError(e) && SIGNATURE_VERDICTS.has(e.code))) return finishWith(e);
    const { code, message } = errorOf(e);
    missing = { requested: level, stage, code, message };
  }
  // `known` is for the file assembled above only (the verification uses it for that very Buffer, else hashes).
  const report = await verifyPdfSignaturesIn(best.pdf, { trustedRoots: roots, clock: ctx.clock }, { scope: certificates, known });
  await say(stepOptions, { step: 'verified', report });
  // Judged on OUR signature, the newest, with the document timestamps after it (report.newest); others' earlier
  // signatures (other CAs, self-signed) do not change that verdict. It must be the field we prepared.
  const ours = report.newest?.fieldName === prepared.fieldName ? report.newest : undefined;
  if (!ours?.valid || ours.level !== best.level) {
    // never hand out a PDF whose own signature does not verify at the level it claims
    // Only real problems are listed (what B-LT/B-LTA appended is in the notes), each with its plain words.
    const why = ours?.problemDetails.map((p) => `${p.code}: ${p.text}`).join(' ') ?? '';
    return finishWith(new SingpassFlowsError('SIGNATURE_INVALID', `Our signature in the signed PDF verifies as ${ours?.level ?? 'nothing'} (valid=${ours?.valid ?? false}${why ? `; ${why}` : ''}); expected ${best.level}`), report);
  }
  const rest = withoutSessionData({ ...record, result: { level: ours.level, valid: true, ...(missing ? { missing } : {}) } });
  const done = advance(record, 'complete', { ...rest, state: completeSigningSession(record.state, ctx.clock), handOver: handOverStarted(ctx.clock()) }, ctx.clock, ctx.trigger);
  await say(stepOptions, { step: 'ended', status: done.state.status, ...(missing ? { missing } : {}) });
  return { record: done, pdf: best.pdf, report, ...(validationData ? { validationData } : {}) };
}

/**
 * A `signed` record kept (the user's signature is in it) after a finishing stage failed temporarily, with the
 * failure and when to finish again; undefined when the finishing window (`finishRetryWindowSeconds` after the
 * signature arrived) is over: the session then ends with what was reached (`result.missing` says why).
 */
async function finishDeferred(ctx: StepContext, record: SessionRecord, stage: FinishFailure['stage'], e: SingpassFlowsError, stepOptions: StepOptions | undefined): Promise<FinishResult | undefined> {
  const at = ctx.clock();
  const finishBy = record.lastFinishFailure?.finishBy ?? record.state.updatedAt * 1000 + ctx.finishWindowMs;
  if (at >= finishBy) return undefined;
  const attempts = (record.lastFinishFailure?.attempts ?? 0) + 1;
  const retryAt = Math.min(at + finishRetryDelayMs(attempts), finishBy);
  const lastFinishFailure: FinishFailure = {
    stage, code: e.code, message: e.message, ...(typeof e.details.status === 'number' ? { status: e.details.status } : {}), at, attempts, retryAt, finishBy,
  };
  await say(stepOptions, { step: 'finishDeferred', stage, code: e.code, message: e.message, attempts, retryAt });
  return { record: advance(record, 'deferFinish', { ...record, lastFinishFailure }, ctx.clock, ctx.trigger), deferred: true };
}

