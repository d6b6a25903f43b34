import type { OnBehalfOf } from '../login/officer';
import type { PadesLevel } from '../pades/verify';
import { sessionFailure } from './record-ops';
import { sessionPhase } from './transitions';
import type { SessionRecord, SignerPlace } from './types';

/**
 * What the person signing may see of their session, in plain words, for the signer's page: read from the stored
 * record (whichever process or instance wrote it), never from a process's memory. Nothing secret leaves: no
 * notification token, nonce, certificate, hash or signature.
 */
export type SignerStage = 'waitingForScan' | 'scanned' | 'approved' | 'signed' | 'failed' | 'expired';

export interface SignerStatus {
  signRef: string;
  stage: SignerStage;
  /** The session ended (signed, failed or expired): nothing more will change. */
  done: boolean;
  /** One line for the page. */
  headline: string;
  /** What to do now, or why it failed, in plain words. */
  detail?: string;
  documentName: string;
  /** What the QR code encodes, until the scan (render it with `renderQr`). */
  qrPayload?: string;
  /** Shown until the user has approved, to compare with the code in their app. */
  challengeCode?: string;
  /** When the service stops waiting for the scan and approval (ISO). */
  expiresAt?: string;
  onBehalfOf?: OnBehalfOf;
  signer?: SignerPlace;
  /** Signed: the level reached, and what is missing when it is short of the level asked for. */
  result?: { level: PadesLevel | null; shortOf?: { requested: PadesLevel; reason: string } };
  /** Failed or expired: our stable code, and the service's own when it gave one (for a support request). */
  error?: { code: string; serviceCode?: string };
}

/** Plain reasons for the failures a signer can meet; anything else falls back to a generic line with the code. */
const FAILURE_REASONS: Record<string, string> = {
  user_cancelled: 'You declined the signing in the Singpass app. Nothing was signed.',
  CERTIFICATE_EXPIRED: 'Your signing certificate has expired, so it cannot be used to sign. Nothing was signed.',
  CERTIFICATE_NOT_YET_VALID: 'Your signing certificate is not valid yet. Nothing was signed.',
  CERTIFICATE_UNTRUSTED: 'Your signing certificate could not be trusted. Nothing was signed.',
  OCSP_REVOKED: 'Your signing certificate has been revoked. Nothing was signed.',
  CRL_REVOKED: 'Your signing certificate has been revoked. Nothing was signed.',
  OCSP_UNKNOWN: 'Your signing certificate is not known to the certificate authority. Nothing was signed.',
  SESSION_EXPIRED: 'The time to scan and approve ran out. Nothing was signed; start again for a new QR code.',
  SIGNATURE_INVALID: 'The signature from the Singpass app could not be verified, so the document was not signed.',
  PDF_INVALID: 'The document could not be prepared for signing.',
};

const ended = (record: SessionRecord) => ['completed', 'failed', 'expired'].includes(record.state.status);

export function signerStatus(record: SessionRecord): SignerStatus {
  const phase = sessionPhase(record);
  const base = {
    signRef: record.state.signRef,
    documentName: record.request.documentName,
    ...(record.request.onBehalfOf ? { onBehalfOf: record.request.onBehalfOf } : {}),
    ...(record.request.signer ? { signer: record.request.signer } : {}),
  };
  const waiting = { challengeCode: record.state.challengeCode, expiresAt: new Date(record.state.expiresAt * 1000).toISOString() };
  switch (phase) {
    case 'waitingForScan':
      return { ...base, ...waiting, ...(record.state.qrPayload ? { qrPayload: record.state.qrPayload } : {}), stage: 'waitingForScan', done: false, headline: 'Scan the QR code with the Singpass app, or tap "Open in Singpass" on your phone', detail: `Check that the app shows the code ${record.state.challengeCode}.` };
    case 'certificateClaimed':
    case 'atSavePoint':
    case 'hashSubmitted':
      return { ...base, ...waiting, stage: 'scanned', done: false, headline: 'Scanned — approve the signing in the Singpass app', detail: `The app shows "${record.request.documentName}" and the code ${record.state.challengeCode}.` };
    case 'signed':
      return { ...base, stage: 'approved', done: false, headline: 'Approved — adding your signature to the document', ...(record.lastFinishFailure ? { detail: 'A service we use to timestamp the signature is busy; this is retried by itself. You do not need to sign again.' } : {}) };
    // signed and finished: the flow's storage may still be taking the PDF (or never did); the signer has it either way
    case 'handingOver':
    case 'undelivered':
    case 'completed': {
      const missing = record.result?.missing;
      return {
        ...base, stage: 'signed', done: true, headline: 'Signed',
        result: { level: record.result?.level ?? null, ...(missing ? { shortOf: { requested: missing.requested, reason: `Signed and valid, but without the long-term validation the document asked for (${missing.code}). You do not need to sign again.` } } : {}) },
        ...(missing ? { detail: 'Signed and valid; the long-term validation data could not be added.' } : {}),
      };
    }
    case 'expired':
      return { ...base, stage: 'expired', done: true, headline: 'The signing session expired', detail: FAILURE_REASONS.SESSION_EXPIRED, error: { code: record.error?.code ?? 'SESSION_EXPIRED' } };
    case 'failed':
    default: {
      const failure = sessionFailure(record);
      const serviceCode = failure?.serviceCode;
      const code = failure?.code ?? 'SIGN_REQUEST_REJECTED';
      const reason = (serviceCode && FAILURE_REASONS[serviceCode]) ?? FAILURE_REASONS[code] ?? `Signing did not complete (${code}). Nothing was signed; start again, or quote reference ${record.state.signRef} when asking for help.`;
      return { ...base, stage: 'failed', done: ended(record), headline: 'Not signed', detail: reason, error: { code, ...(serviceCode ? { serviceCode } : {}) } };
    }
  }
}
