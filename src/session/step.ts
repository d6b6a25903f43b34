import type { SigningEngine } from './engine';
import {
  acknowledgeHandOver, prepareStored, recordEvent, reportHandOverFailure, runDueStep, runStepNow, submitStoredHash,
  type DriverStore, type DueStepResult, type HandOverAnswer,
} from './driver';
import { isSigningOver, nextStep, SCHEDULED_ACTIONS, type SessionAction } from './next-step';
import { sessionPolicy, type SessionPolicy } from './policy';
import { TRANSITIONS, sessionPhase } from './transitions';
import type { SessionRecord, StepOptions, VerifiedDelivery } from './types';

/** A due step of the transitions table, named by the front end's timer or node for that stage. */
export type NamedStep = Exclude<SessionAction, 'forget'>;

/**
 * What leads a stored session on, as a front end hands it in: a row's `on` in the transitions table, or "whatever is
 * due". The front end says what happened (an event came, a timer fired, its storage answered); the table says what
 * runs.
 */
export type StepTrigger =
  /**
   * A verified webhook event, into its record as the webhook does before its 200 (a certificate only claimed: no PDF,
   * no outbound call; a signature or an error applied). `through`: then the rows the same event leads to as well (a
   * certificate: check, prepare, the save point, the hash call), for a front end that runs them in the same execution.
   */
  | { on: 'event'; delivery: VerifiedDelivery; through?: boolean }
  /** A scheduler's tick: the step the record's phase calls for (`nextStep`), when its time has come at `now`. */
  | { on: 'due'; now?: number; idleMs?: number }
  /**
   * A due step by name, now, when it is still what the record's phase calls for (a timer that planned it, a node
   * for that stage); anything else: nothing done (`action: 'none'`). `expire` still waits for the deadline.
   */
  | { on: NamedStep }
  /** The certificate event's first half on the stored session: claimed, checked, prepared, the save point saved; nothing sent. */
  | { on: 'prepare'; delivery: VerifiedDelivery }
  /** The hash `prepare` saved, sent (only a session at its save point; of two runs only one sends). */
  | { on: 'sendHash' }
  /** The flow's storage has the signed PDF: the session ends completed. */
  | { on: 'acknowledge' }
  /** The flow's storage refused the signed PDF: kept in the record, handed over again after a backoff. */
  | { on: 'handOverFailed'; failure: { code?: string; message: string } };

export interface StepEntryOptions {
  /** The signing engine; every trigger but the flow's word on a hand-over (`acknowledge`, `handOverFailed`) needs it. */
  engine?: SigningEngine;
  /** Narration of each step (and, for the runner, the pauses between finishing stages). */
  onStep?: StepOptions['onStep'];
  /** The clock of the flow's word on a hand-over; default the engine's, else the system's. */
  clock?: () => number;
  /** The deployment's hand-over lease and window where it changes them; default SESSION_POLICY. */
  policy?: Partial<Pick<SessionPolicy, 'handOverLeaseMs' | 'handOverWindowMs'>>;
}

/** What {@link step} did, and what the front end does with it: answer, hand over (`handOver`), route (`record`). */
export interface StepOutcome extends Omit<DueStepResult, 'action'> {
  /** The trigger handed in. */
  on: StepTrigger['on'];
  /** The due step that ran (`none`: none; an event, an acknowledgement, a failure report: `none` too, see `moved`). */
  action: SessionAction | 'none';
  /** This call changed the stored record (compare-and-set won). */
  moved: boolean;
  /** The session does not take the event (ended meanwhile, another session's token…): the record is untouched. */
  refused?: unknown;
  /** `prepare`: this run saved the save point, so the hash is its to send. */
  prepared?: boolean;
  /** Signing ended with this call (finished, failed, expired): the session's outcome, to report once. */
  signingEnded: boolean;
}

/**
 * THE entry point of a stored session for every front end (the runner, `serve`, the Node-RED nodes, the n8n
 * operations): load the record, find the row the trigger and the record's phase lead to, run its step, save with
 * compare-and-set, and say what came of it. No front end picks a step from a phase or a status: it names what
 * happened, and the transitions table and `nextStep` choose.
 */
export async function step(store: DriverStore, signRef: string, trigger: StepTrigger, options: StepEntryOptions = {}): Promise<StepOutcome> {
  const outcome = await run(store, signRef, trigger, options);
  if (outcome.signingEnded) await leaveWhatSigningNeeded(store, signRef);
  return outcome;
}

/**
 * Signing is over: the PDF being signed and the kept webhook deliveries (a certificate event carries the user's
 * certificate) leave the store now, in every front end; the signed PDF stays until the hand-over is acknowledged.
 * A store failing here leaves them to its clean-up, which removes what a crash left: the session has moved on either way.
 */
async function leaveWhatSigningNeeded(store: DriverStore, signRef: string): Promise<void> {
  try {
    await store.deleteDocument?.(signRef);
    await store.forgetDeliveries?.(signRef);
  } catch {
    // the clean-up's to remove (see above)
  }
}

async function run(store: DriverStore, signRef: string, trigger: StepTrigger, options: StepEntryOptions): Promise<StepOutcome> {
  const stepOptions = options.onStep ? { onStep: options.onStep } : {};
  const policy = { policy: sessionPolicy(options.policy) };
  // the flow's word on a hand-over: signing ended before it, so it never ends signing
  const answered = (r: HandOverAnswer): StepOutcome => ({ on: trigger.on, action: 'none', ...(r.record ? { record: r.record } : {}), moved: r.moved, signingEnded: false });
  if (trigger.on === 'acknowledge') return answered(await acknowledgeHandOver(store, signRef, { ...clockOf(options) }));
  if (trigger.on === 'handOverFailed') return answered(await reportHandOverFailure(store, signRef, trigger.failure, { ...policy, ...clockOf(options) }));
  const engine = options.engine;
  if (!engine) throw new TypeError(`step: the ${trigger.on} trigger needs the signing engine`);
  switch (trigger.on) {
    case 'event': {
      const r = await recordEvent(engine, store, trigger.delivery, stepOptions);
      const recorded: StepOutcome = { on: 'event', action: 'none', ...(r.record ? { record: r.record } : {}), moved: r.moved, ...(r.refused !== undefined ? { refused: r.refused } : {}), signingEnded: r.moved && !!r.record && isSigningOver(r.record) };
      const then = trigger.through && r.record && r.refused === undefined ? sameEventLeadsTo(r.record, trigger.delivery.event.type) : undefined;
      if (!then) return recorded;
      const more = fromDue('event', await runStepNow(engine, store, signRef, { only: [then], ...policy, stepOptions }));
      // moved: the event or the step it led to changed the record (a copy of a claim continued here counts)
      return { ...more, moved: recorded.moved || more.moved, signingEnded: recorded.signingEnded || more.signingEnded };
    }
    case 'due':
      return fromDue('due', await runDueStep(engine, store, signRef, { ...(trigger.now !== undefined ? { now: trigger.now } : {}), idleMs: trigger.idleMs ?? 0, ...policy, stepOptions }));
    case 'prepare': {
      const r = await prepareStored(engine, store, trigger.delivery);
      return { ...fromDue('prepare', r), prepared: r.prepared };
    }
    case 'sendHash':
      return fromDue('sendHash', await submitStoredHash(engine, store, signRef));
    default: {
      const named = trigger.on;
      if (!SCHEDULED_ACTIONS.includes(named)) throw new TypeError(`step: unknown trigger ${String(named)}`);
      return fromDue(named, await runStepNow(engine, store, signRef, { only: [named], ...policy, stepOptions }));
    }
  }
}

/**
 * The due step the same event leads on to in the table (a row from the record's phase whose `on` lists both the
 * event and that step): a certificate's check and hash call; nothing for a signature (finishing is its own trigger).
 */
function sameEventLeadsTo(record: SessionRecord, event: 'certificate' | 'signature' | 'error'): NamedStep | undefined {
  const phase = sessionPhase(record);
  const next = nextStep(record).action;
  if (next === 'forget' || next === 'expire') return undefined;
  return TRANSITIONS.some((t) => t.from === phase && t.on.includes(event) && t.on.includes(next)) ? next : undefined;
}

function clockOf(options: StepEntryOptions): { clock?: () => number } {
  const clock = options.clock ?? options.engine?.config.clock;
  return clock ? { clock } : {};
}

function fromDue(on: StepTrigger['on'], r: DueStepResult): StepOutcome {
  const moved = r.action !== 'none' && r.lost !== true && r.documentMissing !== true;
  // a hand-over only repeats an end that was reported when finishing made it
  return { ...r, on, moved, signingEnded: moved && r.action !== 'handOver' && !!r.record && isSigningOver(r.record) };
}
