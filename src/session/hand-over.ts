import type { Clock } from '../clock';
import { SingpassFlowsError } from '../errors';
import { handOverRetryDelayMs, type SessionPolicy } from './policy';
import { signedFileName } from './signer-answer';
import { advance, sessionPhase } from './transitions';
import type { HandOver, SessionRecord } from './types';

/**
 * The last phase of a session: its signed PDF handed to the flow (the flow's storage step, then its acknowledgement),
 * at least once, until the flow acknowledges it. Each hand-over is saved before the PDF leaves and leased: one not
 * acknowledged within `handOverLeaseMs` is handed over again (the same bytes, the same file name, so a storage step
 * overwrites rather than duplicates); after `handOverWindowMs` the session ends `undelivered`, its PDF kept in the
 * store for the retention time.
 */

/** What `complete` starts: the hand-over is due at once. */
export function handOverStarted(now: number): HandOver {
  return { since: now, attempts: 0, nextAt: now };
}

/**
 * The `handOver` due step on a `handingOver` record: the next hand-over (leased), or, past the window, the end as
 * undelivered. Saved with compare-and-set BEFORE the PDF leaves: of two schedulers only one hands it over.
 */
export function handOverStep(record: SessionRecord, policy: Pick<SessionPolicy, 'handOverLeaseMs' | 'handOverWindowMs'>, clock: Clock): SessionRecord {
  const h = handOverOf(record);
  const now = clock();
  if (now >= h.since + policy.handOverWindowMs) {
    const tried = h.lastFailure ? `; the last attempt failed: ${h.lastFailure.message}` : '';
    const message = `The signed PDF was handed to the flow ${h.attempts} time(s) since ${new Date(h.since).toISOString()} and its storage never acknowledged it${tried}. It stays in the session store until the retention ends: fetch it from there, or acknowledge the session once it is stored.`;
    return advance(record, 'giveUpHandOver', { ...record, handOver: { ...h, undelivered: { code: 'HANDOVER_UNACKNOWLEDGED', message, at: now } } }, clock, 'handOver');
  }
  return advance(record, 'handOver', { ...record, handOver: { ...h, attempts: h.attempts + 1, lastAt: now, nextAt: now + policy.handOverLeaseMs } }, clock, 'handOver');
}

/**
 * The flow's storage has the PDF: the session ends `completed`. A late acknowledgement of an undelivered session ends
 * it so too. Already acknowledged: the record as it is (acknowledging twice is harmless).
 */
export function acknowledgedRecord(record: SessionRecord, clock: Clock): SessionRecord {
  const phase = sessionPhase(record);
  if (phase === 'completed') return record;
  if (phase !== 'handingOver' && phase !== 'undelivered') {
    throw new SingpassFlowsError('STATE_INVALID', `Session ${record.state.signRef} has no signed PDF to acknowledge: it is ${phase}`, { retryable: false, phase });
  }
  const { undelivered: _gaveUp, ...h } = handOverOf(record);
  return advance(record, 'acknowledge', { ...record, handOver: { ...h, acknowledgedAt: clock() } }, clock, 'acknowledge');
}

/**
 * The flow's storage refused the PDF (e.g. the upload failed): kept in the record, handed over again after a backoff
 * (never later than the lease would have).
 */
export function handOverFailedRecord(record: SessionRecord, failure: { code?: string; message: string }, policy: Pick<SessionPolicy, 'handOverLeaseMs'>, clock: Clock): SessionRecord {
  const h = handOverOf(record);
  const now = clock();
  const lastFailure = { code: failure.code ?? 'HANDOVER_FAILED', message: failure.message.slice(0, 500), at: now };
  return advance(record, 'failHandOver', { ...record, handOver: { ...h, lastFailure, nextAt: now + handOverRetryDelayMs(Math.max(1, h.attempts), policy.handOverLeaseMs) } }, clock, 'handOverFailed');
}

/**
 * The file name every hand-over of a session's signed PDF carries: the document's name (as the signer downloads it)
 * and the sign_ref, so two sessions of one document never overwrite each other and a repeat overwrites its own.
 */
export function handOverFileName(record: SessionRecord): string {
  return signedFileName(record).replace(/-signed\.pdf$/, `-signed-${record.state.signRef.replace(/[^A-Za-z0-9._-]+/g, '_')}.pdf`);
}

function handOverOf(record: SessionRecord): HandOver {
  if (!record.handOver) throw new SingpassFlowsError('STATE_INVALID', `Session ${record.state.signRef} has no hand-over`, { retryable: false });
  return record.handOver;
}
