import type { Clock } from '../clock';
import type { SignerSummary } from './signer';
import type { SessionPhase } from './transitions';
import type { ErrorCode } from '../errors';
import type { OnBehalfOf } from '../login/officer';
import type { Fetch } from '../http';
import type { PreparedSignature, SignaturePlacement } from '../pades';
import type { ValidationDataSummary } from '../pades/ltv';
import type { PadesLevel, PdfVerificationReport } from '../pades/verify';
import type {
  NotificationTokens, SignatureEvent, SigningApiClient, SigningEvent, SigningSessionState,
} from '../sign';

/**
 * One signing session as plain JSON: what an adapter persists between its steps (n8n execution data, Node-RED
 * context, a database row). Everything needed to continue — on another process, after a restart — is in here,
 * except the PDF itself (the adapter keeps its bytes; every step that needs them takes them and checks they are
 * the same file via `document.sha256`). The user's certificate and the prepared signature are removed as soon as
 * the session ends (completed, failed, expired).
 */
export interface SessionRecord {
  format: 'singpass-flows/signing-session@1';
  /**
   * Where the session is (see `TRANSITIONS` in transitions.ts), in charge of what comes next: set by every step,
   * never by hand. A record written before phases were stored gets it from its fields when a store loads it
   * (`withPhase`).
   */
  phase: SessionPhase;
  /** The protocol state machine (sign_ref, expires_at, status, challenge code, notification token, nonce, hash…). */
  state: SigningSessionState;
  /** What was asked for at start. */
  request: {
    documentName: string;
    level: PadesLevel;
    reason?: string;
    location?: string;
    /** Signed for a company by an officer whose Corppass role allowed it (`officerDecision`). */
    onBehalfOf?: OnBehalfOf;
    /** One of several signers of one document, in order: this session's place, and the session before it. */
    signer?: SignerPlace;
    /** The DSAP's own app link the Singpass app returns the user to (sent with the hash). */
    appLink?: string;
    /** The visible signature box; absent: an invisible signature. */
    appearance?: SessionAppearance;
  };
  /** The PDF being signed: size and SHA-256 (hex), so a step given other bytes refuses them. */
  document: { length: number; sha256: string };
  /** Several signers in order: the next signer's session, once started on this one's signed PDF (`startNextSigner`). */
  nextSigner?: { signRef: string };
  /** Everything finalize needs (JSON, small), from the certificate step until the session ends. */
  prepared?: PreparedSignature;
  /**
   * The save point of the certificate step: set (with `prepared`) BEFORE the hash call, removed once it returned.
   * A record still carrying it may have had its hash submitted by a process that then died: the next step resubmits
   * exactly this hash (`resumeSubmission`, or the replayed certificate event) and never prepares a new one.
   */
  submitting?: {
    documentHash: string;
    /**
     * Hash calls made (or started) for this hash. 0 or absent: none yet, so a refusal of the next call is the
     * service's verdict on it (the session fails with the service's code). From 1 on the next call is a resend, and
     * "already submitted" means an earlier call got through. Saved BEFORE each call where the step can save
     * (`StepOptions.save`), so a process that dies mid-call leaves a record that knows.
     */
    attempts?: number;
  };
  /**
   * Set while the record is at the save point after a hash call failed TEMPORARILY (service unreachable, timed out,
   * 5xx, rate-limited: `isTemporarySubmitFailure`): the session is NOT failed, the service still waits for this hash
   * until the deadline. Resubmit the SAME hash (`resumeSubmission`) from `retryAt` on; the runner does so by itself.
   * Removed once the hash got through or the session ended.
   */
  lastSubmitFailure?: SubmitFailure;
  /**
   * Set while a `signed` record (the second save point: the user's signature is stored) could not be finished because
   * a finishing step failed TEMPORARILY (TSA, OCSP/CRL responder, network, 5xx, 429, timeout:
   * `isTemporaryFinishFailure`). The session is NOT failed: finish again from `retryAt` on, until `finishBy`.
   * Removed once the session ended.
   */
  lastFinishFailure?: FinishFailure;
  /**
   * Set when the session ended: the level reached and whether OUR signature verified. `missing` is set when it
   * completed short of the level asked for (the PDF is handed on as any completed session's is).
   */
  result?: { level: PadesLevel | null; valid: boolean; missing?: FinishShortfall };
  /**
   * The signed PDF's way into the flow's storage, from the moment the session finished (phase `handingOver`) until the
   * flow acknowledged it (`completed`) or the hand-over window closed (`undelivered`). Every hand-over gives the same
   * bytes under the same file name.
   */
  handOver?: HandOver;
  /**
   * Why the session ended without a signed PDF (stable code, user-readable message); status `failed` / `expired`. Where
   * the service refused a call, its own error code too (`serviceCode`, e.g. `ARGUMENTS_NOT_VALID`), for a support request.
   */
  error?: { code: ErrorCode | string; message: string; serviceCode?: string };
  /** Bumped by every change: stores shared by several processes use it for compare-and-set. */
  revision: number;
}

/** The hand-over of a finished session's signed PDF to the flow (see `SessionRecord.handOver`). */
export interface HandOver {
  /** UNIX ms the session finished: the hand-over window counts from here. */
  since: number;
  /** Hand-overs made (each saved before the PDF left). */
  attempts: number;
  /** UNIX ms of the last hand-over. */
  lastAt?: number;
  /**
   * UNIX ms from which the PDF is handed over again unless acknowledged: the last hand-over's lease, or the backoff
   * after the flow reported its storage failed.
   */
  nextAt: number;
  /** The flow's storage refused the last hand-over (what it said). */
  lastFailure?: { code: string; message: string; at: number };
  /** UNIX ms the flow acknowledged that its storage has the PDF. */
  acknowledgedAt?: number;
  /** Set when the hand-over window closed without an acknowledgement: why (phase `undelivered`). */
  undelivered?: { code: 'HANDOVER_UNACKNOWLEDGED'; message: string; at: number };
}

/** The last temporary failure of the hash call of a record at the save point (see `SessionRecord.lastSubmitFailure`). */
export interface SubmitFailure {
  /** Stable code, e.g. `SIGN_SERVICE_ERROR`, `SIGN_RATE_LIMITED`, `HTTP_TIMEOUT`, `HTTP_NETWORK`. */
  code: ErrorCode | string;
  message: string;
  /** HTTP status of the service's answer, when there was one. */
  status?: number;
  /** The service's own error code, when its answer named one (e.g. `TOO_MANY_REQUESTS`). */
  serviceCode?: string;
  /** UNIX ms of this failure. */
  at: number;
  /** Hash calls that failed temporarily in a row (each after the HTTP client's own retries). */
  attempts: number;
  /** UNIX ms from which to resubmit (backoff 1, 2, 4, 8, then every 15 s; never past the session's deadline). */
  retryAt: number;
}

/** The last temporary failure of finishing a `signed` record (see `SessionRecord.lastFinishFailure`). */
export interface FinishFailure extends SubmitFailure {
  /** The finishing stage that failed: embedding with its signature timestamp, validation data, document timestamp. */
  stage: 'embed' | 'validationData' | 'documentTimestamp';
  /**
   * UNIX ms after which a temporary failure ends the session (`finishRetryWindowSeconds` after the signature
   * arrived); `retryAt` is never later.
   */
  finishBy: number;
}

/**
 * Why a session completed short of the level asked for (`SessionRecord.result.missing`). Finishing failed for good
 * after the user signed (a TSA refusing the request, validation data that cannot be had, or a temporary failure
 * still there when the finishing window closed): rather than make the user sign again, the session completed with
 * the PDF at the highest level reached (`result.level`, at least B-B: the signature is embedded without its
 * timestamp when the timestamp itself cannot be had), which verifies at that level.
 */
export interface FinishShortfall {
  /** The level asked for at start (`request.level`). */
  requested: PadesLevel;
  /**
   * The stage that could not be done: `embed` (the signature timestamp: B-T), `validationData` (B-LT),
   * `documentTimestamp` (B-LTA).
   */
  stage: FinishFailure['stage'];
  /** The failure's stable code (e.g. `TSA_FAILED`, `OCSP_FAILED`) and message. */
  code: ErrorCode | string;
  message: string;
}

/** Where the engine runs: one per DSAP and environment, built from the adapter's credentials (holds no session). */
export interface SigningEngineConfig {
  /** The signing API client (client ID + signing key). */
  client: SigningApiClient;
  /** Issues and checks `client_notification_token`s from the DSAP-held secret. */
  notificationTokens: NotificationTokens;
  /** Root CAs the user's certificate must chain to (DER or PEM); e.g. the Singpass/NDI roots, or the sandbox's. */
  trustedRoots: (Buffer | string)[];
  /** Intermediate CAs known in advance (else fetched once via AIA and cached). */
  intermediates?: (Buffer | string)[];
  /** RFC 3161 TSA, needed for B-T and above. */
  tsaUrl?: string;
  /** Host name of the page showing the QR code (sent with the hash, shown in the app). */
  domainName: string;
  /** `tenant_id` sent at create-session. */
  tenantId: string;
  /**
   * Seconds a session may still receive events after the user scanned, beyond `expires_at` (the service extends a
   * scanned session; older docs: 2 min). Default 120.
   */
  scanExtensionSeconds?: number;
  /**
   * Seconds after the signature arrived during which a finishing step that failed temporarily (TSA, OCSP/CRL, network)
   * is retried. The service's deadline covers the signing only; finishing is ours. Default 86400 (a day: outlives an
   * outage over a night, short enough that a certificate revoked meanwhile — which B-LT would then refuse — stays
   * unlikely, and the PDF being signed is not kept for long).
   */
  finishRetryWindowSeconds?: number;
  fetch?: Fetch;
  clock?: Clock;
}

/** What `start` is asked to do. */
export interface StartSessionInput {
  /** Shown to the user in the app (1–255). */
  documentName: string;
  /** PAdES level to reach (default B-LTA). */
  level?: PadesLevel;
  reason?: string;
  location?: string;
  /** Kept in the record: the company the user signs for and the role that allowed it. */
  onBehalfOf?: OnBehalfOf;
  /** Kept in the record: this signer's place among several signing one document in order. */
  signer?: SignerPlace;
  /**
   * Optional: your own app's registered app-claimed https link (≤ 255 characters) the Singpass app sends the user back
   * to after approving; sent with the hash. Without it the user switches back by hand.
   */
  appLink?: string;
  /** A visible signature box and where it goes (omitted: invisible). `{}`: bottom-right of the last page. */
  appearance?: SessionAppearance;
}

/** A visible signature box in a session: its place, and an optional PNG or JPEG as base64 (the record is JSON). */
export type SessionAppearance = SignaturePlacement & { image?: string };

/** A signer's place among several who sign one document in turn (each on the previous one's signed PDF). */
export interface SignerPlace {
  /** 1-based. */
  position: number;
  /** How many sign in all. */
  of: number;
  /** Who signs here, as the flow names them (e.g. "Landlord"); shown on the signer's page. */
  label?: string;
  /** The sign_ref of the session whose signed PDF this one signs (none for the first signer). */
  previousSignRef?: string;
}

/** What the page shows after `start`. */
export interface SessionStarted {
  record: SessionRecord;
  signRef: string;
  /** Encode as the QR code (see `renderQr`). */
  qrPayload: string;
  qrLogo?: string;
  /** Show next to the QR code: the user compares it with the app. */
  challengeCode: string;
  /** UNIX seconds, from the service's own `expires_at`. */
  expiresAt: number;
}

/** A webhook delivery whose JWT verified, with the Bearer it was presented with (needed for the session binding). */
export interface VerifiedDelivery {
  event: SigningEvent;
  /** The `Authorization: Bearer` value of the delivery. */
  notificationToken: string;
}

/** Result of a step: the new record (persist it) and, when the session ended, why. */
export interface StepResult {
  record: SessionRecord;
  /** True when this event had already been applied (a retried/duplicated delivery): nothing was done. */
  duplicate?: boolean;
}

/** Result of `finish`: the signed PDF (when a signature was embedded) and the verification report. */
export interface FinishResult extends StepResult {
  /** True when a finishing stage failed temporarily: `record` is still `signed`, with `lastFinishFailure`; store it. */
  deferred?: boolean;
  /**
   * The signed PDF at `record.result.level` (short of the level asked for when `record.result.missing` is set);
   * undefined when the session failed.
   */
  pdf?: Buffer;
  /** `report.newest` is OUR signature's verdict; `report.valid` also judges signatures made before ours. */
  report?: PdfVerificationReport;
  /**
   * B-LT/B-LTA: the validation data the PDF got, per signature. Ours is always complete; a signature made before
   * ours by someone else may not be (`perSignature[].missing` says why), which never fails the session.
   */
  validationData?: ValidationDataSummary;
}

/** Progress of a session, in order, for logs and narration (the CLI words each one). */
export type SessionStep =
  | { step: 'created'; signRef: string; qrPayload: string; challengeCode: string; expiresAt: number }
  /** The user scanned: who (the name; never the certificate or the NRIC, a narration is logged) and the key type. */
  | { step: 'certificate'; signRef: string; signer: SignerSummary; publicKeyAlgorithm: string }
  /**
   * Chain to a trusted root and OCSP "good" for the user's certificate, before any hash: the issuers named (the
   * intermediate CAs and the root, in order), without the user's own subject.
   */
  | { step: 'certificateChecked'; issuers: string[]; ocsp: 'good' }
  | { step: 'prepared'; inputBytes: number; documentHash: string }
  | { step: 'submitted'; documentName: string; challengeCode: string }
  /**
   * The hash call failed temporarily: the record stays at the save point (not failed) with `lastSubmitFailure`;
   * resubmit the same hash from `retryAt` (UNIX ms) on.
   */
  | { step: 'submitDeferred'; code: string; message: string; attempts: number; retryAt: number }
  | { step: 'signature'; event: SignatureEvent }
  /**
   * A finishing stage failed temporarily: the record stays `signed` (the signature is kept) with `lastFinishFailure`;
   * finish again from `retryAt` (UNIX ms) on.
   */
  | { step: 'finishDeferred'; stage: FinishFailure['stage']; code: string; message: string; attempts: number; retryAt: number }
  | { step: 'embedded'; timestamped: boolean }
  | { step: 'validationData'; summary: ValidationDataSummary }
  | { step: 'documentTimestamp' }
  | { step: 'verified'; report: PdfVerificationReport }
  /** The signed PDF handed to the flow's storage was stored there (the session ended completed). */
  | { step: 'delivered'; attempt: number }
  /** The flow's storage refused the signed PDF: handed over again after a backoff. */
  | { step: 'handOverFailed'; attempt: number; code: string }
  /** The hand-over window closed unacknowledged: the session ended undelivered, the PDF kept in the store. */
  | { step: 'undelivered'; code: string }
  /** `missing`: completed short of the level asked for (see `FinishShortfall`). */
  | { step: 'ended'; status: SigningSessionState['status']; error?: { code: string; message: string }; missing?: FinishShortfall };

/** Per-call options of the steps. */
export interface StepOptions {
  onStep?: (step: SessionStep) => void | Promise<void>;
  /**
   * Called with the record the moment a certificate event is accepted, BEFORE any outbound call: save it with
   * compare-and-set and resolve false if another execution already claimed the event (then nothing is done). This is
   * what makes concurrent duplicate deliveries safe across processes (never a second hash). A claimed record left
   * by a process that died before the save point (`isCertificateClaimed`) is continued with `continueCertificate`
   * (or the replayed event with `save`), not dropped.
   */
  claim?: (record: SessionRecord) => boolean | Promise<boolean>;
  /**
   * The save point before the hash call: called with the prepared record (`submitting` set) BEFORE the hash is
   * submitted. Save it with compare-and-set (after a `claim`, against the claimed revision) and resolve false if
   * another execution changed the record (then nothing is submitted). Without it, a crash between the hash call and
   * the caller's save loses the session: the replayed event would prepare a new hash, which the service refuses.
   */
  save?: (record: SessionRecord) => boolean | Promise<boolean>;
}
