import { epochSeconds, type Clock } from '../clock';
import { SingpassFlowsError } from '../errors';
import type { SessionRecord } from './types';

/**
 * Where a session is. Stored in the record (`record.phase`; a column in PostgreSQL) and moved ONLY by
 * {@link advance}, along a row of {@link TRANSITIONS}.
 * - `waitingForScan`: created, QR shown.
 * - `certificateClaimed`: the certificate event is stored, nothing prepared yet.
 * - `atSavePoint`: prepared, the hash saved before the call (maybe sent: the same hash is resent, never a new one).
 * - `hashSubmitted`: the service has the hash; waiting for the user's approval.
 * - `signed`: the user's signature is stored (the second save point); finishing is next.
 * - `handingOver`: finished at the level asked for (the signed PDF stored); handed to the flow, at least once, until
 *   the flow acknowledges that its storage has it.
 * - `completed`: the flow acknowledged the signed PDF (ended). `undelivered`: never acknowledged within the hand-over
 *   window (ended; the PDF stays in the store for the retention time).
 * - `failed` / `expired`: ended without a signed PDF.
 */
export type SessionPhase = 'waitingForScan' | 'certificateClaimed' | 'atSavePoint' | 'hashSubmitted' | 'signed' | 'handingOver' | 'completed' | 'undelivered' | 'failed' | 'expired';

/**
 * What moves a session: a webhook event from the service (`certificate`, `signature`, `error`), a step a scheduler
 * finds due (`continueCertificate`, `submitHash`, `finish`, `handOver`, `expire`: see `nextStep`), `start`, the flow's
 * word on a hand-over (`acknowledge`: its storage has the PDF; `handOverFailed`: its storage refused it), or
 * `nextSigner` (the next of several signers started on this session's signed PDF: `startNextSigner`).
 */
export type SessionTrigger = 'start' | 'certificate' | 'signature' | 'error' | 'continueCertificate' | 'submitHash' | 'finish' | 'handOver' | 'acknowledge' | 'handOverFailed' | 'expire' | 'nextSigner';

/** One verb per transition: what the engine did to the record. */
export type SessionVerb =
  | 'create'
  | 'claimCertificate'
  | 'prepare'
  | 'refuseCertificate'
  | 'countHashCall'
  | 'deferHash'
  | 'confirmHash'
  | 'refuseHash'
  | 'acceptSignature'
  | 'deferFinish'
  | 'complete'
  | 'failFinish'
  | 'handOver'
  | 'failHandOver'
  | 'acknowledge'
  | 'giveUpHandOver'
  | 'failByService'
  | 'expire'
  | 'nameNextSigner';

export interface Transition {
  /** `new`: no record yet. */
  from: SessionPhase | 'new';
  /** The events or due steps that lead here (the engine step that runs it is named after the trigger). */
  on: readonly SessionTrigger[];
  verb: SessionVerb;
  to: SessionPhase;
}

const WAITING: readonly SessionPhase[] = ['waitingForScan', 'certificateClaimed', 'atSavePoint', 'hashSubmitted'];
/** Finished signing: the signed PDF is in the store (handed over, acknowledged or not). */
const FINISHED: readonly SessionPhase[] = ['handingOver', 'completed', 'undelivered'];
/** A certificate event replayed on a record mid-step continues it, as the due step would. */
const CERTIFICATE_STEP: readonly SessionTrigger[] = ['certificate', 'continueCertificate'];
const HASH_STEP: readonly SessionTrigger[] = ['certificate', 'continueCertificate', 'submitHash'];

/**
 * THE session state machine: every move of a record, and nothing else. `advance` refuses a move that is not a row;
 * test/session/engine-transitions.test.ts fails when a row is never exercised.
 */
export const TRANSITIONS: readonly Transition[] = [
  { from: 'new', on: ['start'], verb: 'create', to: 'waitingForScan' },
  { from: 'waitingForScan', on: ['certificate'], verb: 'claimCertificate', to: 'certificateClaimed' },
  // chain + OCSP good, the PDF prepared, the hash saved before it leaves
  { from: 'certificateClaimed', on: CERTIFICATE_STEP, verb: 'prepare', to: 'atSavePoint' },
  // revoked, untrusted, expired, OCSP down, a PDF that cannot be prepared: no hash is ever sent
  { from: 'certificateClaimed', on: CERTIFICATE_STEP, verb: 'refuseCertificate', to: 'failed' },
  // the hash call counted (and saved) before it leaves, so a process that dies mid-call leaves a record that knows
  // (the certificate step itself saves its save point with the first call counted: only a replay or a resend counts here)
  { from: 'atSavePoint', on: ['certificate', 'submitHash'], verb: 'countHashCall', to: 'atSavePoint' },
  { from: 'atSavePoint', on: HASH_STEP, verb: 'deferHash', to: 'atSavePoint' },
  // the service took the hash; or a signature arrived over the saved hash, which proves it (a process died before
  // recording it), and is then accepted from hashSubmitted
  { from: 'atSavePoint', on: [...HASH_STEP, 'signature'], verb: 'confirmHash', to: 'hashSubmitted' },
  { from: 'atSavePoint', on: HASH_STEP, verb: 'refuseHash', to: 'failed' },
  { from: 'hashSubmitted', on: ['signature'], verb: 'acceptSignature', to: 'signed' },
  { from: 'signed', on: ['finish'], verb: 'deferFinish', to: 'signed' },
  // finished at the level asked for (or short of it, `result.missing`): the signed PDF is stored, the hand-over is due
  { from: 'signed', on: ['finish'], verb: 'complete', to: 'handingOver' },
  { from: 'signed', on: ['finish'], verb: 'failFinish', to: 'failed' },
  // the PDF given to the flow (saved before it leaves, leased: not acknowledged in time, it is handed over again)
  { from: 'handingOver', on: ['handOver'], verb: 'handOver', to: 'handingOver' },
  { from: 'handingOver', on: ['handOverFailed'], verb: 'failHandOver', to: 'handingOver' },
  { from: 'handingOver', on: ['acknowledge'], verb: 'acknowledge', to: 'completed' },
  // the hand-over window is over: the PDF stays in the store for the retention time, the record says why
  { from: 'handingOver', on: ['handOver'], verb: 'giveUpHandOver', to: 'undelivered' },
  // the flow's storage had it after all (a late acknowledgement)
  { from: 'undelivered', on: ['acknowledge'], verb: 'acknowledge', to: 'completed' },
  ...WAITING.map((from): Transition => ({ from, on: ['error'], verb: 'failByService', to: 'failed' })),
  // past the deadline no event can come any more; a due step on a record past it expires it and sends nothing
  ...WAITING.map((from): Transition => ({ from, on: ['expire', ...(from === 'certificateClaimed' ? CERTIFICATE_STEP : from === 'atSavePoint' ? HASH_STEP : [])], verb: 'expire', to: 'expired' })),
  // several signers in order: a finished session names the next signer's (once; the phase stays)
  ...FINISHED.map((from): Transition => ({ from, on: ['nextSigner'], verb: 'nameNextSigner', to: from })),
];

const BY_KEY = new Map(TRANSITIONS.map((t) => [`${t.from}:${t.verb}`, t]));

/** The key a transition is known by in {@link TRANSITIONS} (and in {@link observeTransitions}). */
export function transitionKey(t: Pick<Transition, 'from' | 'verb'>): string {
  return `${t.from}:${t.verb}`;
}

/** A move as it was made: the row, and what led to it when the caller said (the coverage test counts both). */
export type TransitionObserver = (t: Transition, record: SessionRecord, trigger: SessionTrigger | undefined) => void;
const observers = new Set<TransitionObserver>();

/** Be told of every transition made in this process (logging, metrics, the state machine's coverage test). */
export function observeTransitions(observer: TransitionObserver): () => void {
  observers.add(observer);
  return () => void observers.delete(observer);
}

/** The record's phase: the stored one (in charge), or (a record written before phases were stored) read from its fields. */
export function sessionPhase(record: SessionRecord): SessionPhase {
  return record.phase ?? phaseFromFields(record);
}

/**
 * The phase the fields of a record written before phases were stored describe (status, the claim, the save point).
 * Only for loading such a record: a stored phase is never second-guessed by the fields. A completed record of that
 * version was handed on by its flow then, so it loads as `completed` (not handed over again).
 */
export function phaseFromFields(record: Omit<SessionRecord, 'phase'>): SessionPhase {
  const s = record.state;
  switch (s.status) {
    case 'waiting_for_scan': return 'waitingForScan';
    case 'certificate_received':
      if (record.submitting !== undefined && record.prepared !== undefined) return 'atSavePoint';
      // Without both, a record is continued as a claim when it holds what that needs; else it only waits for its deadline.
      return record.submitting === undefined && record.prepared === undefined && s.certificate !== undefined && s.nonce !== undefined ? 'certificateClaimed' : 'hashSubmitted';
    case 'hash_submitted': return 'hashSubmitted';
    case 'signed': return 'signed';
    case 'completed': return record.handOver?.undelivered ? 'undelivered' : record.handOver && record.handOver.acknowledgedAt === undefined ? 'handingOver' : 'completed';
    case 'failed': return 'failed';
    case 'expired': return 'expired';
  }
}

/**
 * What each phase needs in its record (the protocol status, and the fields its next step works from); a record that
 * says a phase without them was changed by hand or by a broken step. Undefined: fine; else what is wrong.
 */
const PHASE_FIELDS: Readonly<Record<SessionPhase, (r: Omit<SessionRecord, 'phase'>) => string | undefined>> = {
  waitingForScan: (r) => status(r, 'waiting_for_scan'),
  certificateClaimed: (r) => status(r, 'certificate_received') ?? (r.state.certificate === undefined || r.state.nonce === undefined ? 'no claimed certificate' : undefined),
  atSavePoint: (r) => status(r, 'certificate_received') ?? (r.submitting === undefined || r.prepared === undefined ? 'no saved hash' : undefined),
  hashSubmitted: (r) => status(r, 'hash_submitted', 'certificate_received'),
  signed: (r) => status(r, 'signed'),
  handingOver: (r) => status(r, 'completed') ?? (r.handOver === undefined ? 'no hand-over' : undefined),
  completed: (r) => status(r, 'completed'),
  undelivered: (r) => status(r, 'completed') ?? (r.handOver?.undelivered === undefined ? 'no reason it was not delivered' : undefined),
  failed: (r) => status(r, 'failed'),
  expired: (r) => status(r, 'expired'),
};

function status(r: Omit<SessionRecord, 'phase'>, ...allowed: SessionRecord['state']['status'][]): string | undefined {
  return allowed.includes(r.state.status) ? undefined : `status ${r.state.status}`;
}

/** What is wrong with a record that says `phase` (undefined: nothing). */
export function phaseMismatch(phase: SessionPhase, record: Omit<SessionRecord, 'phase'>): string | undefined {
  const check = PHASE_FIELDS[phase];
  return check ? check(record) : `unknown phase ${phase}`;
}

/**
 * A record as a store saves or loads it: with its phase (older records get it from their fields). A record whose
 * stored phase lacks what that phase needs was changed by hand (a step never leaves one so): refused, typed.
 */
export function withPhase(record: SessionRecord): SessionRecord {
  if (record.phase === undefined) return { ...record, phase: phaseFromFields(record) };
  const wrong = phaseMismatch(record.phase, record);
  if (wrong !== undefined) {
    throw new SingpassFlowsError('STATE_INVALID', `Session record ${record.state.signRef}: its phase says ${record.phase} but it has ${wrong}; pass on the record a Singpass Sign step output, unchanged`, { field: 'Session Record', retryable: false });
  }
  return record;
}

/**
 * The one way a record moves: `verb` from the record's phase must be a row of {@link TRANSITIONS} (and, when the
 * caller names what led to it, `trigger` one of the row's); `next` is the record's new content, which must hold what
 * the row's target phase needs. Returns it with that phase, the next revision (compare-and-set in shared stores
 * relies on every change bumping it) and `state.updatedAt` set to `clock`'s now: every move is a change, and
 * schedulers measure the take-over idle time from the last one.
 */
export function advance(record: SessionRecord, verb: SessionVerb, next: Omit<SessionRecord, 'phase' | 'revision'>, clock: Clock, trigger?: SessionTrigger): SessionRecord {
  const from = sessionPhase(record);
  const t = BY_KEY.get(transitionKey({ from, verb }));
  if (!t || (trigger !== undefined && !t.on.includes(trigger))) {
    throw new SingpassFlowsError('STATE_INVALID', `A signing session that is ${from} cannot ${verb}${trigger ? ` on ${trigger}` : ''}`, { retryable: false, phase: from, verb });
  }
  return moved(t, { ...next, state: { ...next.state, updatedAt: epochSeconds(clock) } }, record.revision + 1, trigger);
}

/** The first record of a session (`start`). */
export function created(record: Omit<SessionRecord, 'phase' | 'revision'>): SessionRecord {
  return moved(BY_KEY.get('new:create')!, record, 1, 'start');
}

function moved(t: Transition, next: Omit<SessionRecord, 'phase' | 'revision'>, revision: number, trigger: SessionTrigger | undefined): SessionRecord {
  const { phase: _stale, ...fields } = next as SessionRecord;
  const wrong = phaseMismatch(t.to, fields);
  if (wrong !== undefined) {
    // A bug in a step, not a user error: the record would say one phase and lack what it needs.
    throw new SingpassFlowsError('STATE_INVALID', `Internal error: ${t.verb} from ${t.from} left a ${t.to} record with ${wrong}`, { retryable: false });
  }
  const out = { ...fields, phase: t.to, revision } as SessionRecord;
  for (const o of observers) o(t, out, trigger);
  return out;
}
