import { signingSessionDeadline } from '../sign/session';
import { SESSION_POLICY } from './policy';
import { sessionPhase } from './transitions';
import type { SessionRecord } from './types';

/**
 * What a stored session needs next, and from when. THE rule for every scheduler — the runner's timers, the Node-RED
 * sweep, the stores' "due" lists (the n8n resume schedule reads those) and the PostgreSQL store's `due_at` index —
 * so a record is never "due" by one front end's rule and "waiting" by another's.
 *
 * - `continueCertificate`: claimed (certificate stored, nothing prepared): `engine.continueCertificate`.
 * - `submitHash`: at the save point (hash prepared, maybe sent): `engine.resumeSubmission` (expires it past the deadline).
 * - `finish`: `signed` (the user's signature is stored): `engine.finish`.
 * - `handOver`: finished (`handingOver`): give the signed PDF to the flow (again, when the last hand-over's lease
 *   passed unacknowledged; marked undelivered once the hand-over window closed).
 * - `expire`: waiting for an event from the service: `engine.expire` once the deadline passed.
 * - `forget`: ended: delete the record and its PDF once the retention passed.
 */
export type SessionAction = 'continueCertificate' | 'submitHash' | 'finish' | 'handOver' | 'expire' | 'forget';

/** Every action a stored session can be due for, and those a scheduler runs (the store's clean-up forgets). */
export const SESSION_ACTIONS: readonly SessionAction[] = ['continueCertificate', 'submitHash', 'finish', 'handOver', 'expire', 'forget'];
export const SCHEDULED_ACTIONS: readonly SessionAction[] = SESSION_ACTIONS.filter((a) => a !== 'forget');

export interface NextStep {
  action: SessionAction;
  /** UNIX ms from which the action is due (may be in the past). */
  at: number;
}

export interface NextStepPolicy {
  /** The engine's scan extension (`SigningEngineConfig.scanExtensionSeconds`, default 120). */
  scanExtensionSeconds?: number;
  /**
   * How long a record in the middle of a step (claimed, at the save point, signed with no failure recorded) is left
   * to the execution working on it before a scheduler takes it over as interrupted (a crash). 0 (default): at once,
   * for a process that knows nothing else is working on it (a runner resuming after its own restart).
   */
  idleMs?: number;
  /** How long an ended record is kept before `forget` is due. Default 7 days. */
  retentionMs?: number;
}

/** Default seconds a scanned session still receives events past `expires_at` (SESSION_POLICY). */
export const DEFAULT_SCAN_EXTENSION_SECONDS = SESSION_POLICY.scanExtensionSeconds;
/** Default retention of ended session records (SESSION_POLICY). */
export const DEFAULT_RETENTION_MS = SESSION_POLICY.retentionMs;

export { sessionPhase, type SessionPhase } from './transitions';

/** True once the session has ended: its PDF acknowledged by the flow (completed) or given up on (undelivered), failed, expired. */
export function isSessionEnded(record: SessionRecord): boolean {
  const phase = sessionPhase(record);
  return phase === 'completed' || phase === 'undelivered' || phase === 'failed' || phase === 'expired';
}

/** Signing is over (the user's part and ours): finished with a signed PDF (handed over or not), failed or expired. */
export function isSigningOver(record: SessionRecord): boolean {
  return isSessionEnded(record) || sessionPhase(record) === 'handingOver';
}

/** Prepared, hash maybe sent, not yet recorded as submitted: the certificate step's save point. */
export function isAtSavePoint(record: SessionRecord): boolean {
  return sessionPhase(record) === 'atSavePoint';
}

/**
 * Claimed at the certificate step and saved there, nothing prepared yet (the claim's record: the certificate and
 * nonce recorded; a process that died after the claim left it so): `continueCertificate` (or the replayed
 * certificate event) runs the rest of the step from the stored certificate.
 */
export function isCertificateClaimed(record: SessionRecord): boolean {
  return sessionPhase(record) === 'certificateClaimed';
}

/** At the save point because the hash call failed temporarily (`lastSubmitFailure`): resubmit, do not fail. */
export function isSubmitDeferred(record: SessionRecord): boolean {
  return isAtSavePoint(record) && record.lastSubmitFailure !== undefined;
}

/** Signed, and finishing failed temporarily (`lastFinishFailure`): finish again from `retryAt`, do not fail. */
export function isFinishDeferred(record: SessionRecord): boolean {
  return sessionPhase(record) === 'signed' && record.lastFinishFailure !== undefined;
}

/** UNIX ms after which no event can come any more (Infinity once signed); see `SigningEngine.deadline`. */
export function sessionDeadline(record: SessionRecord, scanExtensionSeconds = DEFAULT_SCAN_EXTENSION_SECONDS): number {
  return signingSessionDeadline(record.state, scanExtensionSeconds) * 1000;
}

/** What `record` needs next and from when (see {@link SessionAction}). Pure: the same record gives the same answer. */
export function nextStep(record: SessionRecord, policy: NextStepPolicy = {}): NextStep {
  const idle = policy.idleMs ?? 0;
  const changed = record.state.updatedAt * 1000;
  const deadline = (): number => sessionDeadline(record, policy.scanExtensionSeconds);
  switch (sessionPhase(record)) {
    case 'completed':
    case 'undelivered':
    case 'failed':
    case 'expired':
      return { action: 'forget', at: changed + (policy.retentionMs ?? DEFAULT_RETENTION_MS) };
    case 'handingOver':
      // the first right away (the run that finished usually hands over itself), then when a lease passes
      return { action: 'handOver', at: record.handOver?.nextAt ?? changed };
    case 'signed':
      // No service deadline any more: finishing has its own window (the engine's finishRetryWindowSeconds).
      return { action: 'finish', at: record.lastFinishFailure?.retryAt ?? changed + idle };
    case 'atSavePoint':
      return { action: 'submitHash', at: Math.min(record.lastSubmitFailure?.retryAt ?? changed + idle, deadline()) };
    case 'certificateClaimed':
      return { action: 'continueCertificate', at: Math.min(changed + idle, deadline()) };
    case 'waitingForScan':
    case 'hashSubmitted':
      return { action: 'expire', at: deadline() };
  }
}

/** True when `record` ended and its `forget` step is due at `nowMs` (the retention passed since its last change). */
export function isForgetDue(record: SessionRecord, retentionMs: number, nowMs: number): boolean {
  const next = nextStep(record, { retentionMs });
  return next.action === 'forget' && next.at <= nowMs;
}

/** True when {@link nextStep}'s action is due at `now` (UNIX ms). */
export function isDue(record: SessionRecord, now: number, policy: NextStepPolicy = {}): boolean {
  return nextStep(record, policy).at <= now;
}
