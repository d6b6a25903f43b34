import { isSingpassFlowsError, type SingpassFlowsError } from '../errors';
import { markHashSubmitted } from '../sign';
import { endedRecord, say, type StepContext } from './record-ops';
import { isTemporarySubmitFailure, submitRetryDelayMs } from './policy';
import { advance } from './transitions';
import type { SessionRecord, StepOptions, StepResult, SubmitFailure } from './types';

/**
 * How a hash call stands to the calls made before it (the engine verb making the call knows which):
 * - `countedAtSavePoint`: the save point's record already counts this call (the certificate step sends at once).
 * - `next`: the record counts every call made; this one is counted (and saved, where the step can) before it leaves.
 * - `afterInterruption`: the record was found at the save point after an interruption (a scheduler, a replayed
 *   certificate): a call it does not count may have been made, so "already submitted" means that one got through.
 */
export type HashCall = 'countedAtSavePoint' | 'next' | 'afterInterruption';

/**
 * The hash call of a record at the save point (`submitting`). The call is counted in the record
 * (`submitting.attempts`) BEFORE it leaves — saved through `save` when given, so two executions never both make a
 * "first" call and a process that died mid-call leaves a record that knows. A refusal of the FIRST call is the
 * service's verdict: the session fails with its code and message. On a resend (an earlier call counted, a temporary
 * failure before, or `afterInterruption`) a refusal as "already submitted" means an earlier call got through.
 */
export async function submitHash(ctx: StepContext, record: SessionRecord, call: HashCall, stepOptions: StepOptions | undefined): Promise<StepResult> {
  const { documentHash } = record.submitting!;
  // Absent (a record saved before calls were counted): it may have been sent, as the old rule assumed.
  const made = record.submitting!.attempts ?? 1;
  const counted = call === 'countedAtSavePoint';
  const earlier = counted ? made - 1 : made;
  let sending = record;
  if (!counted) {
    const submitting = { documentHash, attempts: earlier + 1 };
    // A new revision only where it is saved now (compare-and-set needs it); else the step's result carries the count.
    sending = stepOptions?.save ? advance(record, 'countHashCall', { ...record, submitting }, ctx.clock, ctx.trigger) : { ...record, submitting };
    if (stepOptions?.save && !(await stepOptions.save(sending))) return { record, duplicate: true };
  }
  const resubmission = earlier > 0 || record.lastSubmitFailure !== undefined || call === 'afterInterruption';
  try {
    await ctx.config.client.submitDocumentHash(record.state.signRef, {
      documentName: record.request.documentName, documentHash, challengeCode: record.state.challengeCode, nonce: record.state.nonce!, domainName: ctx.config.domainName,
      ...(record.request.appLink ? { appLink: record.request.appLink } : {}),
    }, { resubmission });
  } catch (e) {
    // An attempt that got no answer (timeout, dropped connection, a process that died) and a later one the service
    // refused ("a hash was already submitted"): the first one most likely got through. Failing now would lose a
    // session the user is about to approve; wait for the signature webhook instead (the deadline ends it if none comes).
    if (!(isSingpassFlowsError(e) && e.details.possiblyAccepted === true)) {
      // A temporary fault: the service still waits for this hash; keep the save point (never `failed`) for a
      // resubmission of the same hash — unless no event can come any more (past the deadline: expired).
      const expired = isTemporarySubmitFailure(e) ? ctx.expire(sending).record : undefined;
      if (expired === sending) return submitDeferred(ctx, sending, e as SingpassFlowsError, stepOptions);
      const out = expired ?? endedRecord(ctx, sending, 'refuseHash', e);
      await say(stepOptions, { step: 'ended', status: out.state.status, error: out.error });
      return { record: out };
    }
  }
  const out = hashSubmitted(ctx, sending);
  await say(stepOptions, { step: 'submitted', documentName: record.request.documentName, challengeCode: record.state.challengeCode });
  return { record: out };
}

/** The save point kept after a temporary failure of the hash call, with the failure and when to resubmit. */
async function submitDeferred(ctx: StepContext, record: SessionRecord, e: SingpassFlowsError, stepOptions: StepOptions | undefined): Promise<StepResult> {
  const at = ctx.clock();
  const attempts = (record.lastSubmitFailure?.attempts ?? 0) + 1;
  const retryAt = Math.min(at + submitRetryDelayMs(attempts), ctx.deadline(record));
  const lastSubmitFailure: SubmitFailure = {
    code: e.code, message: e.message, ...(typeof e.details.status === 'number' ? { status: e.details.status } : {}),
    ...(typeof e.details.serviceCode === 'string' ? { serviceCode: e.details.serviceCode } : {}), at, attempts, retryAt,
  };
  await say(stepOptions, { step: 'submitDeferred', code: e.code, message: e.message, attempts, retryAt });
  return { record: advance(record, 'deferHash', { ...record, lastSubmitFailure }, ctx.clock, ctx.trigger) };
}

/** The save point's record once its hash is with the service (the prepared state is the saved one). */
export function hashSubmitted(ctx: Pick<StepContext, 'clock' | 'trigger'>, record: SessionRecord): SessionRecord {
  const { submitting, lastSubmitFailure: _failure, ...rest } = record;
  return advance(record, 'confirmHash', { ...rest, state: markHashSubmitted(record.state, submitting!.documentHash, ctx.clock) }, ctx.clock, ctx.trigger);
}

