import { SingpassFlowsError } from '../errors';
import { epochSeconds, systemClock, type Clock } from '../clock';
import type { SigningSession } from './client';
import type { SigningEvent } from './webhook';

/** Where a signing session stands. The service has no status call: this is tracked from our own calls and webhooks. */
export type SigningSessionStatus =
  | 'waiting_for_scan' // created, QR shown
  | 'certificate_received' // user scanned; submit the hash now
  | 'hash_submitted' // user is comparing the challenge code and signing
  | 'signed' // signature received (terminal for the service; the DSAP still embeds it and extends the PDF)
  | 'completed' // the signed PDF was produced at the requested level (terminal; set by our session engine)
  | 'failed' // error notification received (terminal)
  | 'expired'; // past expires_at (terminal)

/**
 * Everything an adapter persists between the create-session call and the webhooks (JSON-serializable). The
 * certificate is kept only while the session is active and removed as soon as it ends: the service treats keeping
 * it longer as a data-protection breach.
 */
export interface SigningSessionState {
  version: 1;
  signRef: string;
  /** UNIX seconds. */
  expiresAt: number;
  status: SigningSessionStatus;
  challengeCode: string;
  /** What the QR code shows (from createSession), so a page reloaded on any process can show it again until the scan. */
  qrPayload?: string;
  /** Secret the webhook must present as Bearer; store it like a password. */
  clientNotificationToken: string;
  /** From the certificate event; echoed in the hash call. */
  nonce?: string;
  /** User certificate (base64 DER) while the session is active only. */
  certificate?: string;
  /** UNIX seconds when the certificate arrived (the service extends a scanned session past `expiresAt`). */
  scannedAt?: number;
  /** Lower-case hex SHA-256 submitted for signing. */
  documentHash?: string;
  /** Hex DER signature, once signed. */
  signature?: string;
  error?: { code: string; message: string; correlationId: string };
  /** UNIX seconds of the last change. */
  updatedAt: number;
}

const TERMINAL: SigningSessionStatus[] = ['signed', 'completed', 'failed', 'expired'];

/** The state right after `createSession`. */
export function newSigningSessionState(
  session: SigningSession,
  secrets: { challengeCode: string; clientNotificationToken: string },
  clock: Clock = systemClock,
): SigningSessionState {
  return {
    version: 1, signRef: session.signRef, expiresAt: session.expiresAt, status: 'waiting_for_scan',
    challengeCode: secrets.challengeCode, qrPayload: session.qrPayload, clientNotificationToken: secrets.clientNotificationToken, updatedAt: epochSeconds(clock),
  };
}

/** True once the session cannot progress any more (signed, failed or expired). */
export function isSigningSessionFinished(state: SigningSessionState): boolean {
  return TERMINAL.includes(state.status);
}

/**
 * Apply a verified webhook event; returns the new state (the input is not modified). Refuses events that do not fit:
 * another session's sign_ref, a signature before any hash was submitted, or a signature over a different hash.
 */
export function applySigningEvent(state: SigningSessionState, event: SigningEvent, clock: Clock = systemClock): SigningSessionState {
  // No clock-based expiry here: an event from the service proves the session still exists (it may be extended
  // after the scan).
  if (event.signRef !== state.signRef) throw stateError(`The event is for session ${event.signRef}, not ${state.signRef}`);
  if (isSigningSessionFinished(state)) throw stateError(`The session is already ${state.status}`);
  const updatedAt = epochSeconds(clock);
  switch (event.type) {
    case 'certificate':
      if (state.status !== 'waiting_for_scan') throw stateError(`A certificate arrived while the session is ${state.status}`);
      return { ...state, status: 'certificate_received', nonce: event.nonce, certificate: event.certificate.base64, scannedAt: updatedAt, updatedAt };
    case 'signature':
      if (state.status !== 'hash_submitted') throw stateError(`A signature arrived while the session is ${state.status} (no hash submitted yet)`);
      if (event.documentHash !== state.documentHash) throw stateError('The signature is for a different document hash than the one submitted');
      return end({ ...state, status: 'signed', signature: event.signature, updatedAt });
    case 'error':
      return end({ ...state, status: 'failed', error: { code: event.errorCode, message: event.message, correlationId: event.correlationId }, updatedAt });
  }
}

/** Record a successful `submitDocumentHash`. */
export function markHashSubmitted(state: SigningSessionState, documentHash: string, clock: Clock = systemClock): SigningSessionState {
  if (state.status !== 'certificate_received') throw stateError(`Cannot submit a hash while the session is ${state.status}`);
  return { ...state, status: 'hash_submitted', documentHash: documentHash.toLowerCase(), updatedAt: epochSeconds(clock) };
}

/**
 * Mark the session expired once it cannot receive events any more (the service does not notify): an unscanned
 * session at `expiresAt`; a scanned one only when `scanExtensionSeconds` is given, at
 * {@link signingSessionDeadline} — the service extends a session after the scan (older docs: +2 min) without telling
 * the DSAP, and a late hash call answers SIGN_REF_NOT_FOUND anyway (use `failSigningSession` then).
 */
export function expireSigningSession(state: SigningSessionState, clock: Clock = systemClock, options: { scanExtensionSeconds?: number } = {}): SigningSessionState {
  if (state.status !== 'waiting_for_scan' && options.scanExtensionSeconds === undefined) return state;
  if (epochSeconds(clock) < signingSessionDeadline(state, options.scanExtensionSeconds ?? 0)) return state;
  return end({ ...state, status: 'expired', updatedAt: epochSeconds(clock) });
}

/**
 * UNIX seconds after which no webhook can arrive for this session: `expiresAt` before the scan, then the later of
 * `expiresAt` and scan time + `scanExtensionSeconds`. Infinity once the signature arrived (nothing more to wait for)
 * or the session ended.
 */
export function signingSessionDeadline(state: SigningSessionState, scanExtensionSeconds: number): number {
  if (state.status === 'waiting_for_scan') return state.expiresAt;
  if (state.status === 'certificate_received' || state.status === 'hash_submitted') {
    return Math.max(state.expiresAt, (state.scannedAt ?? state.updatedAt) + scanExtensionSeconds);
  }
  return Infinity;
}

/**
 * End the session after a local failure (e.g. SIGN_REF_NOT_FOUND from the hash call, a revoked certificate, or
 * finishing a `signed` session failed); drops the certificate.
 */
export function failSigningSession(state: SigningSessionState, error: { code: string; message: string }, clock: Clock = systemClock): SigningSessionState {
  if (isSigningSessionFinished(state) && state.status !== 'signed') return state;
  return end({ ...state, status: 'failed', error: { ...error, correlationId: '' }, updatedAt: epochSeconds(clock) });
}

/** A `signed` session whose PDF was embedded and extended to the requested level. */
export function completeSigningSession(state: SigningSessionState, clock: Clock = systemClock): SigningSessionState {
  if (state.status !== 'signed') throw stateError(`Cannot complete a session that is ${state.status}`);
  return end({ ...state, status: 'completed', updatedAt: epochSeconds(clock) });
}

/** Terminal states keep no certificate. */
function end(state: SigningSessionState): SigningSessionState {
  const { certificate: _dropped, ...rest } = state;
  return rest;
}

function stateError(message: string): SingpassFlowsError {
  return new SingpassFlowsError('STATE_INVALID', message, { retryable: false });
}
