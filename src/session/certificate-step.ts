import type { Hash } from 'node:crypto';
import { prepareSignatureHashed } from '../pades/signature';
import { signingForOf } from './request-context';
import type { CertificateEvent } from '../sign';
import { endedRecord, say, type StepContext } from './record-ops';
import { advance, sessionPhase } from './transitions';
import { issuerNames, signerOf } from './signer';
import { submitHash } from './submission';
import type { SessionRecord, StepOptions, StepResult } from './types';

/**
 * The certificate step after the claim (`claimed`: certificate recorded, nothing prepared): chain + OCSP, prepare,
 * the save point (`save`, compare-and-set), then the hash call. One copy for a fresh event and a continued claim.
 * `pdfHash`: the running SHA-256 of `pdf` from the engine's document check, reused by prepare. A PDF changed in
 * between (by the caller, during the OCSP check) cannot end signed: finish checks it against the record again.
 */
export async function certificateStep(ctx: StepContext, claimed: SessionRecord, event: CertificateEvent, pdf: Buffer, stepOptions: StepOptions | undefined, pdfHash?: Hash): Promise<StepResult> {
  // Counted as sent at the save point: the hash call follows its save.
  const r = await toSavePoint(ctx, claimed, event, pdf, stepOptions, 1, pdfHash);
  return r.duplicate || sessionPhase(r.record) !== 'atSavePoint' ? r : submitHash(ctx, r.record, 'countedAtSavePoint', stepOptions);
}

/**
 * The certificate step up to its save point only (the record returned with `submitting`, no call counted, nothing
 * sent), for a caller that stores it and sends the hash in a later step (`resumeSubmission`).
 */
export function prepareStep(ctx: StepContext, claimed: SessionRecord, event: CertificateEvent, pdf: Buffer, stepOptions: StepOptions | undefined, pdfHash?: Hash): Promise<StepResult> {
  return toSavePoint(ctx, claimed, event, pdf, stepOptions, 0, pdfHash);
}

/** Chain + OCSP, prepare, the save point with `attempts` hash calls counted; or the session's end. */
async function toSavePoint(ctx: StepContext, claimed: SessionRecord, event: CertificateEvent, pdf: Buffer, stepOptions: StepOptions | undefined, attempts: 0 | 1, pdfHash?: Hash): Promise<StepResult> {
  let current = claimed;
  await say(stepOptions, { step: 'certificate', signRef: event.signRef, signer: signerOf(event.certificate), publicKeyAlgorithm: event.certificate.publicKeyAlgorithm });
  const finishWith = async (e: unknown): Promise<StepResult> => {
    const out = endedRecord(ctx, current, 'refuseCertificate', e);
    await say(stepOptions, { step: 'ended', status: out.state.status, error: out.error });
    return { record: out };
  };
  let chain: Buffer[];
  let ocsp: Buffer;
  try {
    ({ chain, ocsp } = await ctx.certificates.checkForSigning(event.certificate.der));
  } catch (e) {
    return finishWith(e); // revoked, unknown, expired, untrusted…: no hash is ever submitted
  }
  await say(stepOptions, { step: 'certificateChecked', issuers: issuerNames(chain), ocsp: 'good' });
  try {
    const prepared = await prepareSignatureHashed(pdf, {
      certificate: event.certificate.der, chain: chain.slice(1, -1), ocspResponses: [ocsp], reason: claimed.request.reason, location: claimed.request.location, clock: ctx.clock,
      ...(claimed.request.appearance ? { appearance: claimed.request.appearance, signingFor: signingForOf(claimed.request.onBehalfOf) } : {}),
    }, pdfHash);
    // The save point: the prepared state and the exact hash are persisted BEFORE the hash leaves this process.
    current = advance(current, 'prepare', { ...current, prepared: prepared.state, submitting: { documentHash: prepared.documentHash, attempts } }, ctx.clock, ctx.trigger);
    await say(stepOptions, { step: 'prepared', inputBytes: pdf.length, documentHash: prepared.documentHash });
  } catch (e) {
    return finishWith(e);
  }
  // Lost to another execution (it saved its own save point, or moved the record on): this one sends nothing.
  if (stepOptions?.save && !(await stepOptions.save(current))) return { record: claimed, duplicate: true };
  return { record: current };
}
