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
 * - `completed` / `failed` / `expired`: ended.
 */
export type SessionPhase = 'waitingForScan' | 'certificateClaimed' | 'atSavePoint' | 'hashSubmitted' | 'signed' | 'completed' | 'failed' | 'expired';

/**
 * What moves a session: a webhook event from the service (`certificate`, `signature`, `error`), a step a scheduler
 * finds due (`continueCertificate`, `submitHash`, `finish`, `expire`: see `nextStep`), `start`, or `nextSigner` (the
 * next of several signers started on this session's signed PDF: `startNextSigner`).
 */
export type SessionTrigger = 'start' | 'certificate' | 'signature' | 'error' | 'continueCertificate' | 'submitHash' | 'finish' | 'expire' | 'nextSigner';

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
  { from: 'atSavePoint', on: HASH_STEP, verb: 'countHashCall', to: 'atSavePoint' },
  { from: 'atSavePoint', on: HASH_STEP, verb: 'deferHash', to: 'atSavePoint' },
  // the service took the hash; or a signature arrived over the saved hash, which proves it (a process died before
  // recording it), and is then accepted from hashSubmitted
  { from: 'atSavePoint', on: [...HASH_STEP, 'signature'], verb: 'confirmHash', to: 'hashSubmitted' },
  { from: 'atSavePoint', on: HASH_STEP, verb: 'refuseHash', to: 'failed' },
  { from: 'hashSubmitted', on: ['signature'], verb: 'acceptSignature', to: 'signed' },
  { from: 'signed', on: ['finish'], verb: 'deferFinish', to: 'signed' },
  { from: 'signed', on: ['finish'], verb: 'complete', to: 'completed' },
  { from: 'signed', on: ['finish'], verb: 'failFinish', to: 'failed' },
  ...WAITING.map((from): Transition => ({ from, on: ['error'], verb: 'failByService', to: 'failed' })),
  // past the deadline no event can come any more; a due step on a record past it expires it and sends nothing
  ...WAITING.map((from): Transition => ({ from, on: ['expire', ...(from === 'certificateClaimed' ? CERTIFICATE_STEP : from === 'atSavePoint' ? HASH_STEP : [])], verb: 'expire', to: 'expired' })),
  // several signers in order: the completed session names the next signer's (once; the phase stays completed)
  { from: 'completed', on: ['nextSigner'], verb: 'nameNextSigner', to: 'completed' },
];

const BY_KEY = new Map(TRANSITIONS.map((t) => [`${t.from}:${t.verb}`, t]));

/** The key a transition is known by in {@link TRANSITIONS} (and in {@link observeTransitions}). */
export function transitionKey(t: Pick<Transition, 'from' | 'verb'>): string {
  return `${t.from}:${t.verb}`;
}

const observers = new Set<(t: Transition, record: SessionRecord) => void>();

/** Be told of every transition made in this process (logging, metrics, the state machine's coverage test). */
export function observeTransitions(observer: (t: Transition, record: SessionRecord) => void): () => void {
  observers.add(observer);
  return () => void observers.delete(observer);
}

/** The record's phase: the stored one, or (a record written before phases were stored) read from its fields. */
export function sessionPhase(record: SessionRecord): SessionPhase {
  return record.phase ?? phaseFromFields(record);
}

/**
 * The phase a record's fields describe (status, the claim, the save point). Used to load records written before the
 * phase was stored, and by {@link advance} to check that a move left the fields and the phase in agreement.
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
    case 'completed': return 'completed';
    case 'failed': return 'failed';
    case 'expired': return 'expired';
  }
}

/**
 * A record as a store saves or loads it: with its phase (older records get it from their fields). A record whose
 * stored phase disagrees with its fields was changed by hand (a step never leaves one so): refused, typed.
 */
export function withPhase(record: SessionRecord): SessionRecord {
  const fieldsSay = phaseFromFields(record);
  if (record.phase === undefined) return { ...record, phase: fieldsSay };
  if (record.phase !== fieldsSay) {
    throw new SingpassFlowsError('STATE_INVALID', `Session record ${record.state.signRef}: its phase says ${record.phase} but its fields say ${fieldsSay}; pass on the record a Singpass Sign step output, unchanged`, { field: 'Session Record', retryable: false });
  }
  return record;
}

/**
 * The one way a record moves: `verb` from the record's phase must be a row of {@link TRANSITIONS}; `next` is the
 * record's new content (fields only), which must describe the row's target phase. Returns it with that phase, the
 * next revision (compare-and-set in shared stores relies on every change bumping it) and `state.updatedAt` set to
 * `clock`'s now: every move is a change, and schedulers measure the take-over idle time from the last one.
 */
export function advance(record: SessionRecord, verb: SessionVerb, next: Omit<SessionRecord, 'phase' | 'revision'>, clock: Clock): SessionRecord {
  const from = sessionPhase(record);
  const t = BY_KEY.get(transitionKey({ from, verb }));
  if (!t) throw new SingpassFlowsError('STATE_INVALID', `A signing session that is ${from} cannot ${verb}`, { retryable: false, phase: from, verb });
  return moved(t, { ...next, state: { ...next.state, updatedAt: epochSeconds(clock) } }, record.revision + 1);
}

/** The first record of a session (`start`). */
export function created(record: Omit<SessionRecord, 'phase' | 'revision'>): SessionRecord {
  return moved(BY_KEY.get('new:create')!, record, 1);
}

function moved(t: Transition, next: Omit<SessionRecord, 'phase' | 'revision'>, revision: number): SessionRecord {
  const { phase: _stale, ...fields } = next as SessionRecord;
  const fieldsSay = phaseFromFields(fields);
  if (fieldsSay !== t.to) {
    // A bug in a step, not a user error: the record would say one phase and hold another's fields.
    throw new SingpassFlowsError('STATE_INVALID', `Internal error: ${t.verb} from ${t.from} left a record whose fields say ${fieldsSay}, not ${t.to}`, { retryable: false });
  }
  const out = { ...fields, phase: t.to, revision } as SessionRecord;
  for (const o of observers) o(t, out);
  return out;
}
