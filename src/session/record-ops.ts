import { createHash } from 'node:crypto';
import type { Clock } from '../clock';
import { SingpassFlowsError, isSingpassFlowsError, type ErrorCode } from '../errors';
import { failSigningSession } from '../sign';
import { advance } from './transitions';
import type { SessionTrigger } from './transitions';
import type { UserCertificateChecker } from './user-certificate';
import type { SessionRecord, SessionStep, SigningEngineConfig, StepOptions, StepResult } from './types';

/**
 * What the engine's steps share (one engine: one configuration, clock, certificate checker): each step is a module
 * of its own (certificate-step, submission, finishing) and gets this instead of closing over the engine.
 */
export interface StepContext {
  readonly config: Readonly<SigningEngineConfig>;
  readonly clock: Clock;
  readonly certificates: UserCertificateChecker;
  /** `finishRetryWindowSeconds` in ms. */
  readonly finishWindowMs: number;
  /** What led to the step (an event, a due step): every move it makes is checked against the table's row for it. */
  readonly trigger?: SessionTrigger;
  /** The engine's `expire` (the record unchanged when its deadline has not passed). */
  expire(record: SessionRecord): StepResult;
  /** The engine's `deadline`. */
  deadline(record: SessionRecord): number;
}

/** The session fails (`verb`: the step that failed) without (or short of) its PDF: the certificate and prepared state go with it. */
export function endedRecord(ctx: Pick<StepContext, 'clock' | 'trigger'>, record: SessionRecord, verb: 'refuseCertificate' | 'refuseHash' | 'failFinish', e: unknown, patch: Partial<SessionRecord> = {}): SessionRecord {
  const error = errorOf(e);
  const rest = withoutSessionData({ ...record, ...patch });
  return advance(record, verb, { ...rest, state: failSigningSession(record.state, error, ctx.clock), error }, ctx.clock, ctx.trigger);
}

/** Narrate a step (the caller's `onStep`). */
export async function say(options: StepOptions | undefined, step: SessionStep): Promise<void> {
  await options?.onStep?.(step);
}

/** An ended session keeps neither the prepared signature state nor the save points' bookkeeping. */
export function withoutSessionData(record: SessionRecord): SessionRecord {
  const { prepared: _prepared, submitting: _submitting, lastSubmitFailure: _failure, lastFinishFailure: _finishFailure, ...rest } = record;
  return rest;
}

export function checkRecord(record: SessionRecord): void {
  if (!record || typeof record !== 'object' || record.format !== 'singpass-flows/signing-session@1' || !record.state || typeof record.revision !== 'number') {
    throw new SingpassFlowsError('STATE_INVALID', 'Not a signing session record (expected the record returned by start() or a later step)', { field: 'record', retryable: false });
  }
}

export function errorOf(e: unknown): { code: ErrorCode | string; message: string; serviceCode?: string } {
  // the service's own code (e.g. ARGUMENTS_NOT_VALID) beside ours, for a support request
  if (isSingpassFlowsError(e)) return { code: e.code, message: e.message, ...(typeof e.details.serviceCode === 'string' ? { serviceCode: e.details.serviceCode } : {}) };
  return { code: 'STATE_INVALID', message: `Unexpected failure: ${(e as Error)?.message ?? String(e)}` };
}

/**
 * Why a session failed, in one shape for every output: our stable code and message, and the service's own code beside
 * it when the service said one — a refused call or its error event (`record.error.serviceCode`; a record written
 * before that was kept holds the event's code only in its state, e.g. `user_cancelled`).
 */
export function sessionFailure(record: SessionRecord): { code: ErrorCode | string; message: string; serviceCode?: string } | undefined {
  const own = record.error;
  const service = record.state.error;
  if (!own && !service) return undefined;
  // a failure of ours is also written to the state with our code: only a different code there is the service's
  const serviceCode = own?.serviceCode ?? (service?.code && service.code !== own?.code ? service.code : undefined);
  return { code: own?.code ?? 'SIGN_REQUEST_REJECTED', message: own?.message ?? service!.message, ...(serviceCode ? { serviceCode } : {}) };
}

/**
 * How the service's error event ends a session (the record's `error`): our stable code, and the service's own code
 * beside it. Front ends that hand the event on before it is applied give the same, so a flow branches on one code.
 */
export function serviceEventFailure(event: { errorCode: string; message?: string }): { code: 'SIGN_REQUEST_REJECTED'; message: string; serviceCode?: string } {
  return {
    code: 'SIGN_REQUEST_REJECTED', message: `The signing session ended with an error from the service: ${event.errorCode}${event.message ? ` ${event.message}` : ''}`,
    ...(event.errorCode ? { serviceCode: event.errorCode } : {}),
  };
}

export function sha256(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}
