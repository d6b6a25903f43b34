import { isSingpassFlowsError, type ErrorCode, type SingpassFlowsError } from '../errors';

/**
 * The session engine's timings, defined once for every front end (the runner behind the CLI, the Node-RED nodes, the
 * n8n nodes and both stores), so that the same record is taken over, leased, kept and expired at the same moments
 * wherever it is. A deployment may change one through the settings that name it; no front end has its own default.
 * Below it, the rest of the policy: which failures of the hash call and of finishing are temporary (retried from the
 * save point) and the backoffs between those retries.
 */
export interface SessionPolicy {
  takeOverIdleMs: number;
  leaseMs: number;
  retentionMs: number;
  scanExtensionSeconds: number;
  handOverLeaseMs: number;
  handOverWindowMs: number;
}

export const SESSION_POLICY: Readonly<SessionPolicy> = Object.freeze({
  /**
   * How long a record in the middle of a step (claimed, at the save point, signed with no failure recorded) belongs to
   * the process working on it before a scheduler elsewhere takes it over as interrupted. Longer than any step takes
   * on a loaded machine (a B-LTA finish with slow responders), short enough that a crash costs the user little.
   */
  takeOverIdleMs: 45_000,
  /**
   * How long a scheduler's claim on a due record (or a kept delivery) keeps other processes off it: every claim a store
   * hands out lasts this long (no front end picks its own); a save of the record, or giving it back, ends it sooner.
   */
  leaseMs: 60_000,
  /** How long an ended session's record stays (for a status page or a flow that looks it up), then leaves the store. */
  retentionMs: 7 * 24 * 3600 * 1000,
  /** Seconds a scanned session still receives events past `expires_at` (the service extends it after the scan). */
  scanExtensionSeconds: 120,
  /**
   * How long the flow has to acknowledge a hand-over of the signed PDF (its storage step, then the acknowledgement)
   * before the PDF is handed over again: longer than an upload of a large PDF to a slow document system takes.
   */
  handOverLeaseMs: 300_000,
  /**
   * How long a finished session is handed over again while unacknowledged: outlasts a storage outage over a night;
   * then it is marked undelivered and its PDF stays in the store for the retention time.
   */
  handOverWindowMs: 24 * 3600 * 1000,
});

/** The session policy with a deployment's own values (unset ones: {@link SESSION_POLICY}). */
export function sessionPolicy(overrides: Partial<SessionPolicy> = {}): Readonly<SessionPolicy> {
  const out = { ...SESSION_POLICY };
  for (const [k, v] of Object.entries(overrides) as [keyof SessionPolicy, number | undefined][]) if (v !== undefined) out[k] = v;
  return Object.freeze(out);
}

// -- the hash call --------------------------------------------------------------------------------------------

/**
 * THE rule for a failed hash call (the only copy; every front end goes through the engine): these codes say nothing
 * about the session (service unreachable, no answer in time, 5xx, rate-limited, after the HTTP client's own retry),
 * so the service still waits for the hash until the deadline and the same call later can succeed. Anything else
 * (the hash or sign_ref refused, credentials refused, a 501…) fails the session.
 */
const TEMPORARY_SUBMIT_FAILURES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['HTTP_TIMEOUT', 'HTTP_NETWORK', 'SIGN_SERVICE_ERROR', 'SIGN_RATE_LIMITED']);

/** True for a hash-call failure after which the record stays at the save point (the code is temporary and the core did not mark it `retryable: false`). */
export function isTemporarySubmitFailure(e: unknown): e is SingpassFlowsError {
  return isSingpassFlowsError(e) && TEMPORARY_SUBMIT_FAILURES.has(e.code) && e.details.retryable !== false;
}

/** Backoff between resubmissions after a temporary failure: 1, 2, 4, 8, then every 15 s. */
export function submitRetryDelayMs(attempts: number): number {
  return Math.min(15_000, 1000 * 2 ** Math.max(0, attempts - 1));
}

// -- finishing ------------------------------------------------------------------------------------------------

/**
 * THE rule for a failed finishing stage (embedding with its signature timestamp, validation data, document
 * timestamp): the TSA, an OCSP responder or CRL server, or the network failed in a way that says nothing about the
 * signature (unreachable, timed out, 5xx, 429, "try later", a TSA's systemFailure / timeNotAvailable /
 * addInfoNotAvailable). The core marks those `retryable: true`; they are retried until `finishBy`.
 */
// CHAIN_INCOMPLETE: an issuing CA certificate (e.g. the TSA's) whose AIA download failed, marked retryable then.
const TEMPORARY_FINISH_FAILURES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['TSA_FAILED', 'OCSP_FAILED', 'CRL_FAILED', 'CHAIN_INCOMPLETE', 'HTTP_TIMEOUT', 'HTTP_NETWORK']);

/** True for a finishing failure after which the record stays `signed` and finishing is retried (see above). */
export function isTemporaryFinishFailure(e: unknown): e is SingpassFlowsError {
  return isSingpassFlowsError(e) && TEMPORARY_FINISH_FAILURES.has(e.code) && (e.details.retryable === true || e.details.status === 429);
}

/** Backoff between finishing attempts after a temporary failure: 1, 2, 4 … 256 s, then every 5 min. */
export function finishRetryDelayMs(attempts: number): number {
  return Math.min(300_000, 1000 * 2 ** Math.max(0, attempts - 1));
}

/** Backoff before handing over again after the flow reported its storage failed: 1, 2, 4 … s, never past the lease. */
export function handOverRetryDelayMs(attempts: number, leaseMs: number): number {
  return Math.min(leaseMs, finishRetryDelayMs(attempts));
}

/** Default `finishRetryWindowSeconds`: a day (see `SigningEngineConfig`). */
export const DEFAULT_FINISH_RETRY_WINDOW_SECONDS = 24 * 3600;
