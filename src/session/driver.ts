import { systemClock } from '../clock';
import { SingpassFlowsError } from '../errors';
import type { SigningEngine } from './engine';
import { acknowledgedRecord, handOverFailedRecord, handOverStep, handOverFileName } from './hand-over';
import { SESSION_POLICY, type SessionPolicy } from './policy';
import { isAtSavePoint, nextStep, type NextStep, type SessionAction } from './next-step';
import type { DeliveryStore } from './deliveries';
import { stepSaver, type SessionStore } from './store';
import { sessionPhase } from './transitions';
import type { FinishResult, SessionRecord, StepOptions, StepResult, VerifiedDelivery } from './types';

/** What a driver needs of a store: the record with compare-and-set, the PDF, and where a signed PDF goes. */
export type DriverStore = Pick<SessionStore, 'get' | 'put' | 'getDocument'> & Partial<Pick<SessionStore, 'putSignedDocument' | 'getSignedDocument' | 'deleteDocument'>> & Partial<Pick<DeliveryStore, 'forgetDeliveries'>>;

/** A signed PDF the flow is to store now, then acknowledge (`acknowledgeHandOver`); the same bytes and name every time. */
export interface HandOverItem {
  signRef: string;
  pdf: Buffer;
  fileName: string;
  /** 1 for the first hand-over; more: handed over again (the last one was not acknowledged in time, or failed). */
  attempt: number;
}

/** What {@link runDueStep} did. */
export interface DueStepResult {
  /** The step that was due (`nextStep`), or `none` when nothing was (not yet due, ended, gone). */
  action: SessionAction | 'none';
  /** The record as stored after the step (or as found, when nothing was done). Undefined: no such session. */
  record?: SessionRecord;
  /**
   * Another process changed the record while this step ran (compare-and-set lost): nothing of this step was kept
   * and nothing was sent after the loss; the record is that process's to carry on.
   */
  lost?: boolean;
  /** The step needs the PDF and the store has none for this session (deleted by hand, or another store): nothing done. */
  documentMissing?: boolean;
  /** Finishing: the signed PDF (stored with `putSignedDocument` before the record said completed). */
  pdf?: Buffer;
  /**
   * The signed PDF to give to the flow's storage now (finished, or handed over again): the front end passes it on
   * and the flow acknowledges it once stored. Absent: nothing to hand over (this run lost it to another, or it ended).
   */
  handOver?: HandOverItem;
  report?: FinishResult['report'];
  validationData?: FinishResult['validationData'];
}

export interface RunDueStepOptions {
  /** UNIX ms to judge "due" (and "past the deadline") at; default now. */
  now?: number;
  /** How long a record mid-step is left to the process working on it (SESSION_POLICY.takeOverIdleMs by the caller). */
  idleMs?: number;
  /** Only these steps (a scheduler that runs the others elsewhere, e.g. finishing one session at a time); else nothing. */
  only?: readonly SessionAction[];
  /** Narration and the finishing stages' pauses (the runner yields to certificates between them). */
  stepOptions?: Pick<StepOptions, 'onStep'>;
  /** The deployment's session policy (the hand-over's lease and window); default SESSION_POLICY. */
  policy?: Pick<SessionPolicy, 'handOverLeaseMs' | 'handOverWindowMs'>;
}

/**
 * THE driver of a stored session: loads the record, runs the step its phase calls for when it is due (the
 * transitions table's due triggers, `nextStep`), and saves the result with compare-and-set — every front end's
 * scheduler calls this (the runner's timers and sweep, the Node-RED sweep, n8n's Run Due Step), so the same record
 * gets the same step everywhere:
 * - `continueCertificate`: chain + OCSP, prepare, the save point (saved before the hash leaves), the hash call.
 * - `submitHash`: the SAME saved hash again (each call counted and saved before it leaves; "already submitted" on a
 *   record found at the save point means an earlier call got through).
 * - `finish`: embed and extend to the level asked for; the signed PDF is stored before the record says finished,
 *   then handed over at once (below).
 * - `handOver`: the signed PDF to the flow (`result.handOver`), the attempt saved and leased before it leaves; past
 *   the hand-over window the session ends undelivered instead.
 * - `expire`: past the deadline, the session ends as `SESSION_EXPIRED`.
 * - `forget`: nothing here (the store's clean-up deletes ended sessions after the retention).
 */
export function runDueStep(engine: SigningEngine, store: DriverStore, signRef: string, options: RunDueStepOptions = {}): Promise<DueStepResult> {
  return drive(engine, store, signRef, options, (due, now) => due.at <= now);
}

/**
 * {@link runDueStep} without waiting for the step's time: the step the record's phase calls for, now (a scheduler that
 * timed it itself, a record an event just moved on, a user's "retry now"). Past the deadline it still expires.
 */
export function runStepNow(engine: SigningEngine, store: DriverStore, signRef: string, options: RunDueStepOptions = {}): Promise<DueStepResult> {
  return drive(engine, store, signRef, options, () => true);
}

/** Load, pick the phase's step (`ready` says whether its time has come), run it, save with compare-and-set. */
async function drive(engine: SigningEngine, store: DriverStore, signRef: string, options: RunDueStepOptions, ready: (due: NextStep, now: number) => boolean): Promise<DueStepResult> {
  const record = await store.get(signRef);
  if (!record) return { action: 'none' };
  const now = options.now ?? Date.now();
  const next = nextStep(record, { scanExtensionSeconds: engine.config.scanExtensionSeconds, idleMs: options.idleMs ?? 0 });
  // Past the deadline no event can come any more: a session still waiting mid-step expires (the table's expire row),
  // without its PDF or an outbound call.
  const pastDeadline = (next.action === 'continueCertificate' || next.action === 'submitHash') && now > engine.deadline(record);
  const due = pastDeadline ? { action: 'expire' as const, at: next.at } : next;
  if (due.action === 'forget' || !ready(due, now) || (options.only && !options.only.includes(due.action) && !options.only.includes(next.action))) return { action: 'none', record };
  const saver = stepSaver(store, record);
  const stepOptions = { ...options.stepOptions, save: saver.save };
  const policy = options.policy ?? SESSION_POLICY;
  const clock = engine.config.clock ?? systemClock;
  const { kept, settle } = keeper(store, saver, signRef, due.action, record);
  switch (due.action) {
    case 'expire': {
      const r = engine.expire(record);
      return r.record === record ? { action: 'none', record } : kept(r.record);
    }
    case 'continueCertificate': {
      const pdf = await store.getDocument(signRef);
      if (!pdf) return { action: due.action, record, documentMissing: true };
      return settle(await engine.continueCertificate(record, pdf, stepOptions));
    }
    case 'submitHash': {
      // Found at the save point by a scheduler: a call may have been made that the record does not count.
      return settle(await engine.resubmitHash(record, stepOptions));
    }
    case 'finish': {
      const pdf = await store.getDocument(signRef);
      if (!pdf) return { action: due.action, record, documentMissing: true };
      const f = await engine.finish(record, pdf, options.stepOptions);
      const extra = { ...(f.pdf ? { pdf: f.pdf } : {}), ...(f.report ? { report: f.report } : {}), ...(f.validationData ? { validationData: f.validationData } : {}) };
      if (!f.pdf || sessionPhase(f.record) !== 'handingOver') return kept(f.record, extra);
      // Stored before the record says finished: a crash in between finishes again (the same single signature).
      if (store.putSignedDocument) await store.putSignedDocument(signRef, f.pdf);
      // The first hand-over is saved with the finish (one compare-and-set): no other scheduler hands it over meanwhile.
      const handing = handOverStep(f.record, policy, clock);
      const out = await kept(handing, extra);
      if (out.lost) return out;
      await store.deleteDocument?.(signRef); // the PDF being signed is done with; the signed one stays until forgotten
      return { ...out, handOver: { signRef, pdf: f.pdf, fileName: handOverFileName(handing), attempt: handing.handOver!.attempts } };
    }
    case 'handOver': {
      const next = handOverStep(record, policy, clock);
      if (sessionPhase(next) !== 'handingOver') return kept(next); // the window closed: undelivered, the PDF stays stored
      const pdf = await store.getSignedDocument?.(signRef);
      if (!pdf) return { action: due.action, record, documentMissing: true };
      const out = await kept(next);
      if (out.lost) return out;
      return { ...out, handOver: { signRef, pdf, fileName: handOverFileName(next), attempt: next.handOver!.attempts } };
    }
  }
}

/** What {@link acknowledgeHandOver} / {@link reportHandOverFailure} did. */
export interface HandOverAnswer {
  /** The record as stored now (undefined: no such session). */
  record?: SessionRecord;
  /** This call changed the record (false: already acknowledged, or nothing to do). */
  moved: boolean;
}

/**
 * The flow's storage has the session's signed PDF: the session ends `completed` (the trigger `acknowledge`). Safe to
 * call twice, from any process; compare-and-set, re-read when another writer got there first. A session with no
 * signed PDF (still signing, failed) is refused (`STATE_INVALID`).
 */
export function acknowledgeHandOver(store: Pick<DriverStore, 'get' | 'put'>, signRef: string, options: { clock?: () => number } = {}): Promise<HandOverAnswer> {
  return changeStored(store, signRef, 'acknowledge', (r) => acknowledgedRecord(r, options.clock ?? systemClock));
}

/**
 * The flow's storage refused the session's signed PDF: kept in the record (`handOver.lastFailure`), handed over again
 * after a short backoff. A session already acknowledged is left as it is.
 */
export function reportHandOverFailure(store: Pick<DriverStore, 'get' | 'put'>, signRef: string, failure: { code?: string; message: string }, options: { clock?: () => number; policy?: Pick<SessionPolicy, 'handOverLeaseMs'> } = {}): Promise<HandOverAnswer> {
  return changeStored(store, signRef, 'handOverFailed', (r) => sessionPhase(r) === 'handingOver' ? handOverFailedRecord(r, failure, options.policy ?? SESSION_POLICY, options.clock ?? systemClock) : r);
}

/**
 * Load, change, save with compare-and-set; re-read and try again (three times) when another writer got there first.
 * A change that returns the record as it is saves nothing (`moved: false`). Store failures throw.
 */
async function changeStored(store: Pick<DriverStore, 'get' | 'put'>, signRef: string, what: string, change: (r: SessionRecord) => SessionRecord | Promise<SessionRecord>): Promise<HandOverAnswer> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const record = await store.get(signRef);
    if (!record) return { moved: false };
    const next = await change(record);
    if (next === record) return { moved: false, record };
    if (await store.put(next, record.revision)) return { moved: true, record: next };
  }
  throw new SingpassFlowsError('STORE_BUSY', `The session record ${signRef} kept changing while its ${what} was saved`, { retryable: true });
}

/**
 * How a step on `loaded` ends: `kept` saves its result with compare-and-set against the last revision the step saved
 * (stepSaver tracks it); `settle` does so for an engine step's result, whose `duplicate` says a save point inside the
 * step was lost already. Lost to another writer: the stored record, `lost`.
 */
function keeper(store: DriverStore, saver: ReturnType<typeof stepSaver>, signRef: string, action: SessionAction, loaded: SessionRecord) {
  const lost = async (fallback: SessionRecord): Promise<DueStepResult> => ({ action, record: (await store.get(signRef)) ?? fallback, lost: true });
  const kept = async (next: SessionRecord, extra: Omit<DueStepResult, 'action' | 'record'> = {}): Promise<DueStepResult> => {
    if (next.revision === saver.expected) return { action, record: next, ...extra };
    return (await saver.save(next)) ? { action, record: next, ...extra } : lost(next);
  };
  return { kept, settle: (r: StepResult): Promise<DueStepResult> => (r.duplicate ? lost(loaded) : kept(r.record)) };
}

/** What {@link prepareStored} did: {@link DueStepResult}, and whether THIS run saved the save point. */
export interface PreparedStored extends DueStepResult {
  /** This run checked the certificate, prepared the PDF and saved the save point: the hash is its to send. */
  prepared: boolean;
}

/**
 * A live certificate event's first half on a stored session, for a front end that shows the step as its own node
 * (n8n's Prepare PDF Signature on the session store): the record and PDF loaded, the event claimed (or the claim the
 * webhook saved continued), chain + OCSP, prepare, and the save point saved with compare-and-set — nothing sent. A
 * refused certificate ends the session here (saved). An event already past its claim (a redelivery) changes nothing.
 * Send the hash next with {@link submitStoredHash}.
 */
export async function prepareStored(engine: SigningEngine, store: DriverStore, delivery: VerifiedDelivery): Promise<PreparedStored> {
  const signRef = delivery.event.signRef;
  const record = await store.get(signRef);
  if (!record) return { action: 'none', prepared: false };
  // at the save point or past it (a redelivery, another run was first), or ended: nothing of this event is left to do
  const phase = sessionPhase(record);
  if (phase !== 'waitingForScan' && phase !== 'certificateClaimed') return { action: 'none', record, prepared: false };
  const pdf = await store.getDocument(signRef);
  if (!pdf) return { action: 'continueCertificate', record, documentMissing: true, prepared: false };
  const saver = stepSaver(store, record);
  const prepared = await engine.prepareCertificate(record, delivery, pdf, { claim: saver.save, save: saver.save });
  const out = await keeper(store, saver, signRef, 'continueCertificate', record).settle(prepared);
  return { ...out, prepared: !out.lost && isAtSavePoint(out.record!) };
}

/**
 * The hash of a stored session at its save point, sent (the step after {@link prepareStored}): the call counted and
 * saved with compare-and-set before it leaves, so of two runs only one sends, and a run that finds an earlier call
 * counted treats "already submitted" as that call having got through. The result saved. A session not at its save
 * point (sent already, ended) is left as it is (`action: 'none'`).
 */
export async function submitStoredHash(engine: SigningEngine, store: DriverStore, signRef: string): Promise<DueStepResult> {
  const record = await store.get(signRef);
  if (!record) return { action: 'none' };
  if (!isAtSavePoint(record)) return { action: 'none', record };
  const saver = stepSaver(store, record);
  return keeper(store, saver, signRef, 'submitHash', record).settle(await engine.resumeSubmission(record, { save: saver.save }));
}

/** What {@link recordEvent} did with a webhook event. */
export interface RecordedEvent {
  /** The record as stored now (undefined: no such session). */
  record?: SessionRecord;
  /** The event changed the record and that change is saved. */
  moved: boolean;
  /** The session does not take the event (ended meanwhile, another session's token…): the record is untouched. */
  refused?: unknown;
}

/**
 * Put what a webhook event says into its stored record, as the webhook does before its 200: a certificate is only
 * claimed (no PDF, no outbound call), a signature or an error event applied; saved with compare-and-set, re-read and
 * tried again (three times) when another writer got there first. An event already in the record leaves it as it is
 * (`moved: false`): the stored record decides, not a delivery log. Store failures throw.
 */
export async function recordEvent(engine: SigningEngine, store: Pick<DriverStore, 'get' | 'put'>, delivery: VerifiedDelivery, stepOptions: Pick<StepOptions, 'onStep'> = {}): Promise<RecordedEvent> {
  let refused: { reason: unknown; record: SessionRecord } | undefined;
  const r = await changeStored(store, delivery.event.signRef, `${delivery.event.type} event`, async (record) => {
    try {
      const step = await engine.recordDelivery(record, delivery, stepOptions);
      return step.duplicate ? record : step.record;
    } catch (e) {
      refused = { reason: e, record };
      return record;
    }
  });
  return refused ? { moved: false, record: refused.record, refused: refused.reason } : r;
}
