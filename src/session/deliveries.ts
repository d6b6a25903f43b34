import type { SigningEvent } from '../sign';
import { isSessionEnded, sessionPhase } from './next-step';
import type { SessionRecord, VerifiedDelivery } from './types';

/**
 * A verified webhook delivery kept until it is applied to its session. A front end whose webhook answers 200 before
 * the slow part of a step runs (Node-RED: the flow applies the event after the answer) keeps it, so a process killed
 * after the answer loses nothing: it is replayed (by the same process after a restart, or by another process sharing
 * the store) until a step marks it applied. At most one per session and event type: a second copy of the same event
 * (the service's retry, a proxy's resend, the same event given to two processes) is a duplicate.
 */
export interface KeptDelivery {
  type: SigningEvent['type'];
  /** Set once the event was applied to its session: a later copy is a duplicate, not news. */
  applied: boolean;
  delivery: VerifiedDelivery;
  /** UNIX ms when it was first kept (stores that record it). */
  receivedAt?: number;
}

/**
 * Where kept deliveries live. `rememberDelivery` must be atomic across every process sharing the store: of two
 * processes given the same event, exactly one is told it is fresh.
 */
export interface DeliveryStore {
  /** Keep `delivery`; false when this event (sign_ref + type) was kept already. */
  rememberDelivery(delivery: VerifiedDelivery): Promise<boolean>;
  /** The kept delivery, with the certificate bytes restored. */
  getDelivery(signRef: string, type: SigningEvent['type']): Promise<KeptDelivery | undefined>;
  /** The event was applied; the user's certificate is not kept beyond that. */
  markDeliveryApplied(signRef: string, type: SigningEvent['type']): Promise<void>;
  /** Deliveries kept and not applied yet. */
  pendingDeliveries(): Promise<Array<{ signRef: string; type: SigningEvent['type'] }>>;
  /** Forget a session's deliveries (it ended). */
  forgetDeliveries(signRef: string): Promise<void>;
}

/** What an applied certificate delivery keeps of the certificate, as JSON: nothing personal. */
export const REDACTED_CERTIFICATE_JSON: Readonly<Record<string, string>> = Object.freeze({ base64: '', subject: '', issuer: '', serialNumber: '', notBefore: '', notAfter: '', publicKeyAlgorithm: '' });

/**
 * Whether a kept delivery still has to be applied to move its session on — the ONE rule for replaying deliveries a
 * process answered and never applied (it died, or its engine lost the run): a certificate while the session still
 * waits for the scan, a signature while it waits for the signature (hash prepared or submitted), an error until the
 * signature came (after it the service sends none, and the engine refuses one). Otherwise there is nothing to
 * replay: the record went past the event, or carries its own next step (a claimed certificate, a hash at its save
 * point: `nextStep`), or the session ended or is gone.
 */
export function isDeliveryStillNeeded(record: SessionRecord | undefined, type: SigningEvent['type']): boolean {
  if (!record) return false;
  const phase = sessionPhase(record);
  switch (type) {
    case 'certificate': return phase === 'waitingForScan';
    case 'signature': return phase === 'atSavePoint' || phase === 'hashSubmitted';
    case 'error': return phase !== 'signed' && !isSessionEnded(record); // the service's part ends at the signature
  }
}

/**
 * The kept deliveries a store hands back for replay: each with its session's record when the record still needs it
 * (`isDeliveryStillNeeded`); the others are marked applied, so they are not looked at again. One rule for every store.
 */
export async function replaysStillNeeded(
  store: { get(signRef: string): Promise<SessionRecord | undefined>; markDeliveryApplied(signRef: string, type: SigningEvent['type']): Promise<void> },
  kept: KeptDelivery[],
): Promise<Array<{ kept: KeptDelivery; record: SessionRecord }>> {
  const replays: Array<{ kept: KeptDelivery; record: SessionRecord }> = [];
  for (const k of kept) {
    const { signRef } = k.delivery.event;
    const record = await store.get(signRef);
    if (record && isDeliveryStillNeeded(record, k.type)) replays.push({ kept: k, record });
    else await store.markDeliveryApplied(signRef, k.type);
  }
  return replays;
}
