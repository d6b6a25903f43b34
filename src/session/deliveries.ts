import type { SigningEvent } from '../sign';
import type { VerifiedDelivery } from './types';

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
