import { SingpassFlowsError, isSingpassFlowsError } from '../errors';
import { readBearer, signWire, temporaryWebhookFailure, webhookErrorBody, type WebhookRequest, type WebhookResponse } from '../sign';
import type { SigningEngine } from './engine';
import { eventStanding } from './event-standing';
import { isSessionEnded } from './next-step';
import type { SessionRecord, VerifiedDelivery } from './types';

/** What the front door needs of a store: the record, and (where deliveries are kept) keeping one before the 200. */
export interface FrontDoorStore {
  get(signRef: string): Promise<SessionRecord | undefined> | SessionRecord | undefined;
  /**
   * Keep a genuine delivery until a step applies it (a crash after the 200 loses nothing); true: the first time the
   * store sees this event, false: a copy. Without it nothing is kept here: the caller stores the event itself before
   * answering (the runner's claim) or applies it later from the record.
   */
  rememberDelivery?(delivery: VerifiedDelivery): Promise<boolean>;
}

/**
 * How a delivery was received, and so what every front end answers and does:
 * - `handOver`: 200 — genuine, first seen, its session waiting for it: apply it / start the flow.
 * - `copy`: 200 — a copy of an event already kept or applied: nothing runs.
 * - `refused`: 400 — forged, garbled, a Bearer this DSAP never issued or another session's: nothing runs, the session
 *   named is untouched.
 * - `sessionEnded`: 400 `SIGN_REF_NOT_FOUND` — a new event for a session that ended (the spec's "expired").
 * - `notFound`: 503 — no record for the sign_ref even after short re-reads (saved a moment later, or another store than
 *   the one the session was saved in): the service delivers again.
 * - `storeDown`: 503 — the store failed; nothing was kept, so it must come again.
 * - `retryLater`: 503 — the verifier's own passing trouble (the service key set, a key rotation in its cooldown).
 */
export type DeliveryVerdict = 'handOver' | 'copy' | 'refused' | 'sessionEnded' | 'notFound' | 'storeDown' | 'retryLater';

export interface DeliveryReceipt {
  /** Answer the service with this, always. */
  response: WebhookResponse;
  verdict: DeliveryVerdict;
  /** `handOver` and `copy`: the verified delivery. */
  delivery?: VerifiedDelivery;
  /** The stored record the delivery was bound to (when one was found). */
  record?: SessionRecord;
  /** Why it was not handed over (log-safe: no token, no certificate). */
  error?: { code: string; message: string };
}

export interface ReceiveDeliveryOptions {
  /**
   * Waits (ms) before re-reading a record not found: a front end that saves the session after showing the QR code
   * (an n8n workflow's Save Record) can be beaten by the scan by a moment. Default 25, 25, 50, 50, 100, 150, 300.
   */
  notFoundRetriesMs?: readonly number[];
}

// Short first: a record saved a moment late is found within ~25 ms of its save, not ~200; still 700 ms in all.
const NOT_FOUND_RETRIES_MS = [25, 25, 50, 50, 100, 150, 300];

/**
 * THE webhook front door, for every front end (the runner behind `serve` and the CLI, the Node-RED webhook node, the
 * n8n trigger): verify the service's JWT and the Bearer this DSAP issued, bind the Bearer to the stored session's own
 * token, keep the delivery (where the store keeps them) and decide the answer for every edge once (see
 * {@link DeliveryVerdict}). Never throws.
 */
export async function receiveDelivery(engine: SigningEngine, store: FrontDoorStore, request: Pick<WebhookRequest, 'headers' | 'body'>, options: ReceiveDeliveryOptions = {}): Promise<DeliveryReceipt> {
  const retries = options.notFoundRetriesMs ?? NOT_FOUND_RETRIES_MS;
  // A Bearer this DSAP never issued is refused before any store read (stateless HMAC check): no lookups, no waits.
  const bearer = readBearer(request?.headers ?? {});
  if (bearer === undefined || !engine.config.notificationTokens.isIssued(bearer)) {
    const check = await engine.checkDelivery(request);
    return { response: check.response, verdict: 'refused', error: check.error ?? { code: 'WEBHOOK_UNAUTHORIZED', message: 'A Bearer this DSAP did not issue' } };
  }
  let record: SessionRecord | undefined;
  let notFound = false;
  let storeFailure: unknown;
  const tokenOf = async (signRef: string): Promise<string | undefined> => {
    for (let attempt = 0; ; attempt++) {
      try {
        record = await store.get(signRef);
      } catch (e) {
        // not a sign_ref a store can hold (path characters, length): no such session
        if (isSingpassFlowsError(e, 'INVALID_INPUT')) return undefined;
        storeFailure = e;
        throw e;
      }
      if (record) return record.state.clientNotificationToken;
      if (attempt >= retries.length) {
        notFound = true;
        throw new SingpassFlowsError('WEBHOOK_HANDLER_FAILED', `No session record for ${signRef} in the session store (yet)`, { retryable: true });
      }
      await new Promise((r) => setTimeout(r, retries[attempt]));
    }
  };
  const check = await engine.checkDelivery(request, tokenOf);
  if (check.error || !check.delivery) {
    const error = check.error ?? { code: 'WEBHOOK_HANDLER_FAILED', message: 'refused' };
    // Whatever the store threw (down, or a record it cannot read): our fault, never the service's: 503, it retries.
    if (storeFailure !== undefined) return { response: temporaryWebhookFailure(), verdict: 'storeDown', error: storeError(storeFailure) };
    if (notFound) return { response: check.response, verdict: 'notFound', error };
    return { response: check.response, verdict: check.response.status >= 500 ? 'retryLater' : 'refused', error, ...(record ? { record } : {}) };
  }
  const delivery = check.delivery;
  const bound = record!;
  if (isSessionEnded(bound)) {
    if (eventStanding(bound, delivery.event) !== 'new') return { response: check.response, verdict: 'copy', delivery, record: bound };
    return {
      response: { status: 400, body: webhookErrorBody('Unknown or expired sign_ref', signWire.WEBHOOK_ERROR_CODES.signRefNotFound) },
      verdict: 'sessionEnded', record: bound,
      error: { code: 'SIGN_REF_NOT_FOUND', message: `The signing session ${bound.state.signRef} has ended (${bound.state.status}); the ${delivery.event.type} event is refused` },
    };
  }
  if (!store.rememberDelivery) {
    // The stored record decides (not the verifier's in-memory log: a copy of a delivery answered 503 must be taken).
    return { response: check.response, verdict: eventStanding(bound, delivery.event) !== 'new' ? 'copy' : 'handOver', delivery, record: bound };
  }
  let fresh: boolean;
  try {
    fresh = await store.rememberDelivery(delivery);
  } catch (e) {
    // Not kept = not safe to acknowledge: the service retries a 503.
    return { response: temporaryWebhookFailure(), verdict: 'storeDown', record: bound, error: storeError(e) };
  }
  return { response: check.response, verdict: fresh ? 'handOver' : 'copy', delivery, record: bound };
}

function storeError(e: unknown): { code: string; message: string } {
  return { code: isSingpassFlowsError(e) ? e.code : 'STORE_BUSY', message: (e as Error)?.message ?? String(e) };
}
