/**
 * What every Node-RED signing node uses as its session store (one factory picks it from the Sign API client config
 * node, store-factory.ts): the engine's `SessionStore`, the kept webhook deliveries under the core's names
 * (`DeliveryStore`, `KeptDelivery`), and what the webhook node's sweep needs. Two implementations over the core's
 * durable stores: `FolderNodeRedStore` (one Node-RED: a folder of its user directory, folder-session-store.ts) and
 * `PgNodeRedStore` (several Node-RED instances on one PostgreSQL, pg-session-store.ts). Never Node-RED's context
 * store: its default cache is flushed every 30 s, and a crash inside that window would lose sessions silently.
 */
import { SingpassFlowsError } from '../../src/errors';
import { SESSION_POLICY, type DeliveryStore, type KeptDelivery, type NextStepPolicy, type SessionAction, type SessionRecord, type SessionStore } from '../../src/session';

export interface SignSessionStore extends SessionStore, DeliveryStore {
  /** Shared by several Node-RED instances: deliveries and due sessions are claimed (leases), never replayed at start. */
  readonly shared: boolean;
  /** How long a record in the middle of a step belongs to the node working on it before the sweep takes it over. */
  readonly idleMs: number;
  get(signRef: string): Promise<SessionRecord | undefined>;
  put(record: SessionRecord, expectedRevision: number | undefined): Promise<boolean>;
  delete(signRef: string): Promise<void>;
  getDocument(signRef: string): Promise<Buffer | undefined>;
  putDocument(signRef: string, pdf: Buffer): Promise<void>;
  deleteDocument(signRef: string): Promise<void>;
  /**
   * The sessions whose next step (`nextStep` with `policy`) is due now; a shared store leases each to `owner` so
   * that another instance's sweep skips it meanwhile.
   */
  dueSessions(policy: NextStepPolicy, owner: string): Promise<Array<{ record: SessionRecord; action: SessionAction }>>;
  /**
   * Shared stores: deliveries kept at least {@link idleMs} ago and still not applied (the instance that answered them
   * died, or its step failed) and still needed by their session (`isDeliveryStillNeeded`; the others are marked
   * applied), leased to `owner` so that exactly one instance replays each.
   */
  claimDeliveriesToReplay?(options: { owner: string }): Promise<Array<{ kept: KeptDelivery; record: SessionRecord }>>;
  /** Let go of connections (the config node closes). */
  close(): Promise<void>;
}

/**
 * The store of a config node whose store settings are wrong: every call fails with that error (the node reports it
 * at deploy; a webhook answers 503 meanwhile, so the service retries until the settings are fixed and redeployed).
 */
export function unusableStore(cause: Error): SignSessionStore {
  // STORE_FAILED: the webhook answers a store failure 503 (the service retries), never a final 4xx
  const error = new SingpassFlowsError('STORE_FAILED', `The session store is not configured: ${cause.message}`, { retryable: false });
  const fail = (): Promise<never> => Promise.reject(error);
  return {
    shared: false, idleMs: DEFAULT_IDLE_MS, get: fail, put: fail, delete: fail, list: fail, getDocument: fail, putDocument: fail, deleteDocument: fail,
    rememberDelivery: fail, getDelivery: fail, markDeliveryApplied: fail, pendingDeliveries: fail, forgetDeliveries: fail, dueSessions: fail, close: () => Promise.resolve(),
  };
}

/** How long a record left mid-step belongs to the node working on it (see the webhook node's sweep). */
export const DEFAULT_IDLE_MS = SESSION_POLICY.takeOverIdleMs;

/** A store that is down or refuses writes: the webhook node reports it once and the sweep tries again later. */
export function isStoreOutage(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return code === 'STORE_BUSY' || code === 'STORE_FAILED';
}
