import type { RequestType } from './wire';

/** What a simulated delivery failure looks like to the service. */
export type DeliveryFailure = 'connection' | 'timeout' | number;

/** One HTTP attempt to deliver a notification (inspect with `service.deliveries()`). */
export interface DeliveryAttempt {
  /** Same for all attempts (and the duplicate, with `deliverTwice`) of one notification. */
  deliveryId: string;
  signRef: string;
  clientId: string;
  requestType: RequestType;
  /** 1-based attempt number within this delivery. */
  attempt: number;
  /** True for the second copy sent by the `deliverTwice` fault. */
  duplicate: boolean;
  at: number;
  /** HTTP status the webhook answered, when it answered. */
  status?: number;
  /** `connection` / `timeout` when no HTTP answer arrived. */
  error?: 'connection' | 'timeout';
  /** True when the failure was injected by `faults.failDeliveries` (the DSAP was not contacted). */
  simulated: boolean;
  outcome: 'acknowledged' | 'retry' | 'failed';
}

export type DeliveryResult = 'acknowledged' | 'failed';

export interface WebhookPolicy {
  attempts: number;
  retryDelayMs: number;
  timeoutMs: number;
}

/** Statuses after which the service tries again (spec §6 rule 5); every other non-2xx is final. */
const RETRY_STATUSES = new Set([502, 503, 504]);

export interface DeliverOptions {
  url: string;
  bearer: string;
  token: string;
  deliveryId: string;
  signRef: string;
  clientId: string;
  requestType: RequestType;
  duplicate: boolean;
  policy: WebhookPolicy;
  fetch: typeof fetch;
  clock: () => number;
  record: (a: DeliveryAttempt) => void;
  /** Consumes one injected failure, if any is pending. */
  takeFailure: () => DeliveryFailure | undefined;
}

/**
 * POST `{"token": JWT}` with `Authorization: Bearer <client_notification_token>`; retries on connection errors,
 * timeouts and 502/503/504 (`attempts` in all, `retryDelayMs` apart); any 2xx acknowledges; other statuses are final.
 */
export async function deliverNotification(o: DeliverOptions): Promise<DeliveryResult> {
  for (let attempt = 1; attempt <= o.policy.attempts; attempt++) {
    const base = { deliveryId: o.deliveryId, signRef: o.signRef, clientId: o.clientId, requestType: o.requestType, attempt, duplicate: o.duplicate, at: o.clock() };
    const injected = o.takeFailure();
    let status: number | undefined;
    let error: 'connection' | 'timeout' | undefined;
    if (injected !== undefined) {
      if (typeof injected === 'number') status = injected;
      else error = injected;
    } else {
      try {
        const res = await o.fetch(o.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${o.bearer}` },
          body: JSON.stringify({ token: o.token }),
          redirect: 'manual',
          signal: AbortSignal.timeout(o.policy.timeoutMs),
        });
        status = res.status;
        await res.arrayBuffer().catch(() => undefined); // drain; body is ignored
      } catch (e) {
        const name = (e as Error)?.name;
        error = name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'connection';
      }
    }
    const acknowledged = status !== undefined && status >= 200 && status < 300;
    const retryable = !acknowledged && (error !== undefined || RETRY_STATUSES.has(status as number));
    const last = attempt === o.policy.attempts;
    o.record({ ...base, status, error, simulated: injected !== undefined, outcome: acknowledged ? 'acknowledged' : retryable && !last ? 'retry' : 'failed' });
    if (acknowledged) return 'acknowledged';
    if (!retryable || last) return 'failed';
    await new Promise((r) => setTimeout(r, o.policy.retryDelayMs));
  }
  return 'failed';
}
