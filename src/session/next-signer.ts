import { systemClock, type Clock } from '../clock';
import { SingpassFlowsError, invalidInput } from '../errors';
import type { PadesLevel } from '../pades/verify';
import type { SigningEngine } from './engine';
import { isSessionEnded } from './next-step';
import type { SessionStore } from './store';
import { advance } from './transitions';
import type { SessionAppearance, SessionRecord, SessionStarted } from './types';
import { nextSignerAppearance } from './request-context';

/**
 * Several signers in order: the next signer signs the previous signer's signed PDF, in a session of their own that
 * starts only once the previous one completed (a QR code lives minutes; the previous signer may take days). The first
 * to ask starts it; everyone after — a reload, another process or instance — gets the same session: the previous
 * record names it (`nextSigner`, saved with compare-and-set). A next session that ended unsigned (declined, timed out)
 * is replaced by a new one on the next ask: the previous signer's signed PDF is never lost or signed again.
 */
export type NextSignerStore = Pick<SessionStore, 'get' | 'put' | 'putDocument'> & Required<Pick<SessionStore, 'getSignedDocument'>>;

export type NextSignerOutcome =
  /** The previous signer has not finished yet: ask again later. */
  | { outcome: 'waiting'; previous: SessionRecord }
  /** The previous session ended unsigned (failed, expired): there is nothing to sign. */
  | { outcome: 'previousNotSigned'; previous: SessionRecord }
  /** The previous signer was the last one. */
  | { outcome: 'noNextSigner'; previous: SessionRecord }
  /** The next signer's session: started now (`started`), or the one started before (`record` only). */
  | { outcome: 'started'; record: SessionRecord; started?: SessionStarted };

export interface NextSignerInput {
  previousSignRef: string;
  /** The next signer's name on the page (e.g. "Landlord"). */
  label?: string;
  /** Default: the last signer B-LTA, anyone before B-T (the archive timestamp belongs after the last signature). */
  level?: PadesLevel;
  /** Default: the previous session's. */
  documentName?: string;
  reason?: string;
  location?: string;
  /** Default: where the previous signer's box went, or the next empty form field when that was their own place. */
  appearance?: SessionAppearance;
  /** The engine's clock, for the record's `updatedAt` (default: the system's). */
  clock?: Clock;
}

const withAppearance = (a: SessionAppearance | undefined) => (a ? { appearance: a } : {});

const UNSIGNED = (r: SessionRecord) => isSessionEnded(r) && r.state.status !== 'completed';

export async function startNextSigner(engine: SigningEngine, store: NextSignerStore, input: NextSignerInput): Promise<NextSignerOutcome> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const previous = await store.get(input.previousSignRef);
    if (!previous) throw new SingpassFlowsError('STATE_INVALID', `No session record for ${input.previousSignRef} (never saved, or deleted after its retention)`, { retryable: false, field: 'previousSignRef' });
    const place = previous.request.signer;
    if (!place) throw invalidInput('previousSignRef', `session ${input.previousSignRef} was not started as one of several signers (Create Session's "signer")`);
    if (place.position >= place.of) return { outcome: 'noNextSigner', previous };
    if (UNSIGNED(previous)) return { outcome: 'previousNotSigned', previous };
    if (previous.state.status !== 'completed') return { outcome: 'waiting', previous };
    const known = previous.nextSigner ? await store.get(previous.nextSigner.signRef) : undefined;
    if (known && !UNSIGNED(known)) return { outcome: 'started', record: known };
    const pdf = await store.getSignedDocument(previous.state.signRef);
    if (!pdf) throw new SingpassFlowsError('STATE_INVALID', `Session ${previous.state.signRef} completed but its signed PDF is not in the store: the next signer has nothing to sign`, { retryable: false });
    const position = place.position + 1;
    const started = await engine.start(pdf, {
      documentName: input.documentName ?? previous.request.documentName,
      level: input.level ?? (position === place.of ? 'B-LTA' : 'B-T'),
      ...(input.reason !== undefined ? { reason: input.reason } : {}),
      ...(input.location !== undefined ? { location: input.location } : {}),
      ...(previous.request.onBehalfOf ? { onBehalfOf: previous.request.onBehalfOf } : {}),
      ...withAppearance(input.appearance ?? nextSignerAppearance(previous.request.appearance)),
      signer: { position, of: place.of, ...(input.label ? { label: input.label } : {}), previousSignRef: previous.state.signRef },
    });
    // the new session first (with its PDF): a marker never names a session the store does not have
    await store.putDocument(started.signRef, pdf);
    if (!(await store.put(started.record, undefined))) throw new SingpassFlowsError('STORE_FAILED', `the new session ${started.signRef} could not be saved`, { retryable: true });
    // the move stamps updatedAt: the chain is in use, so the clean-up's retention counts from here
    const marked = advance(previous, 'nameNextSigner', { ...previous, nextSigner: { signRef: started.signRef } }, input.clock ?? systemClock, 'nextSigner');
    if (await store.put(marked, previous.revision)) return { outcome: 'started', record: started.record, started };
    // another ask got there first: its session is the one (ours is never shown and expires at the service)
  }
  throw new SingpassFlowsError('STORE_FAILED', `the next signer of ${input.previousSignRef} could not be recorded (the record kept changing)`, { retryable: true });
}
