/**
 * What every Node-RED signing node uses as its session store (one factory picks it from the Sign API client config
 * node, store-factory.ts): the engine's `SessionStore`, the kept webhook deliveries, and what the webhook node's
 * sweep needs. Two implementations: {@link ContextSessionStore} (one Node-RED) and `PgNodeRedStore` (several
 * Node-RED instances on one PostgreSQL, pg-session-store.ts).
 */
export interface SignSessionStore extends SessionStore {
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
  /** Keep a verified delivery until it is applied; false when this event was already received (a duplicate). */
  rememberDelivery(signRef: string, delivery: VerifiedDelivery): Promise<boolean>;
  getDelivery(signRef: string, type: SigningEvent['type']): Promise<StoredDelivery | undefined>;
  markApplied(signRef: string, type: SigningEvent['type']): Promise<void>;
  pendingDeliveries(): Promise<Array<{ signRef: string; type: SigningEvent['type'] }>>;
  forgetDeliveries(signRef: string): Promise<void>;
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
  claimStaleDeliveries?(owner: string): Promise<StoredDelivery[]>;
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
    rememberDelivery: fail, getDelivery: fail, markApplied: fail, pendingDeliveries: fail, forgetDeliveries: fail, dueSessions: fail, close: () => Promise.resolve(),
  };
}

/** How long a record left mid-step belongs to the node working on it (see the webhook node's sweep). */
export const DEFAULT_IDLE_MS = 60_000;

/**
 * The signing engine's `SessionStore` on Node-RED: session records (small JSON) in a global context store — the
 * example flows and tests configure `localfilesystem` — and the PDFs being signed as files (a context store
 * rewrites its whole scope file on every change, which is no place for megabytes). Also keeps the verified webhook
 * deliveries until they are applied, so a restart right after the service got its 200 loses nothing.
 *
 * Compare-and-set (`put` with `expectedRevision`) is exact within one Node-RED process (writes to one session are
 * serialised here); Node-RED runs flows in one process.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { SingpassFlowsError } from '../../src/errors';
import { deliveryFromJson, deliveryToJson, nextStep, type NextStepPolicy, type SessionAction, type SessionRecord, type SessionStore, type VerifiedDelivery } from '../../src/session';
import type { SigningEvent } from '../../src/sign';
import type { ContextStore } from './types';

const RECORD = 'singpassSign_';
const DELIVERY = 'singpassSignDelivery_';

/** A verified delivery as kept in the context store (the certificate bytes travel as base64 only). */
export interface StoredDelivery {
  type: SigningEvent['type'];
  /** Set once the event was applied to its session: a later copy is a duplicate, not news. */
  applied: boolean;
  delivery: VerifiedDelivery;
}

export class ContextSessionStore implements SignSessionStore {
  readonly shared = false;
  readonly idleMs = DEFAULT_IDLE_MS;
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(
    private readonly context: ContextStore,
    /** Context store name from settings.js `contextStorage` ('' = the default store). */
    private readonly storeName: string,
    /** Folder for the PDFs being signed (created on first use, files mode 0600). */
    private readonly documentDir: string,
  ) {}

  get(signRef: string): Promise<SessionRecord | undefined> {
    return this.read<SessionRecord>(RECORD + keyOf(signRef));
  }

  put(record: SessionRecord, expectedRevision: number | undefined): Promise<boolean> {
    const key = RECORD + keyOf(record.state.signRef);
    return this.exclusive(key, async () => {
      const current = await this.read<SessionRecord>(key);
      if ((current === undefined) !== (expectedRevision === undefined)) return false;
      if (current && current.revision !== expectedRevision) return false;
      await this.write(key, record);
      return true;
    });
  }

  async delete(signRef: string): Promise<void> {
    await this.write(RECORD + keyOf(signRef), undefined);
  }

  async list(): Promise<string[]> {
    const keys = await new Promise<string[]>((resolve, reject) => this.context.keys(this.store, (err, k) => (err ? reject(storeError(err)) : resolve(k ?? []))));
    return keys.filter((k) => k.startsWith(RECORD)).map((k) => Buffer.from(k.slice(RECORD.length), 'base64url').toString('utf8'));
  }

  /** Every session record in one read of the store (the expiry sweep runs every few seconds). */
  async records(): Promise<SessionRecord[]> {
    const keys = (await new Promise<string[]>((resolve, reject) => this.context.keys(this.store, (err, k) => (err ? reject(storeError(err)) : resolve(k ?? []))))).filter((k) => k.startsWith(RECORD));
    if (keys.length === 0) return [];
    const values = await new Promise<unknown[]>((resolve, reject) => {
      this.context.get(keys, this.store, (err: Error | null | undefined, ...v: unknown[]) => (err ? reject(storeError(err)) : resolve(v)));
    });
    return values.filter((v): v is SessionRecord => !!v && typeof v === 'object').map((v) => JSON.parse(JSON.stringify(v)) as SessionRecord);
  }

  /** Every record whose next step is due (one read of the store; Node-RED runs the flows in one process). */
  async dueSessions(policy: NextStepPolicy): Promise<Array<{ record: SessionRecord; action: SessionAction }>> {
    const now = Date.now();
    const out: Array<{ record: SessionRecord; action: SessionAction }> = [];
    for (const record of await this.records()) {
      const due = nextStep(record, policy);
      if (due.at <= now) out.push({ record, action: due.action });
    }
    return out;
  }

  async close(): Promise<void> {
    // nothing held: the context store is Node-RED's
  }

  async getDocument(signRef: string): Promise<Buffer | undefined> {
    try {
      return await fs.readFile(this.documentPath(signRef));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw storeError(e);
    }
  }

  async putDocument(signRef: string, pdf: Buffer): Promise<void> {
    const file = this.documentPath(signRef);
    try {
      await fs.mkdir(this.documentDir, { recursive: true, mode: 0o700 });
      const tmp = `${file}.${process.pid}.tmp`;
      await fs.writeFile(tmp, pdf, { mode: 0o600 });
      await fs.rename(tmp, file); // never a half-written document after a crash
    } catch (e) {
      throw storeError(e);
    }
  }

  async deleteDocument(signRef: string): Promise<void> {
    await fs.rm(this.documentPath(signRef), { force: true });
  }

  /** Keep a verified delivery until it is applied; false when this event was already received (a duplicate). */
  rememberDelivery(signRef: string, delivery: VerifiedDelivery): Promise<boolean> {
    const key = DELIVERY + keyOf(signRef);
    return this.exclusive(key, async () => {
      const all = (await this.read<Record<string, StoredDelivery>>(key)) ?? {};
      const type = delivery.event.type;
      if (all[type]) return false;
      // kept in the core codec's JSON form (the certificate as base64 only), read back through deliveryFromJson
      all[type] = { type, applied: false, delivery: deliveryToJson(delivery) as unknown as VerifiedDelivery };
      await this.write(key, all);
      return true;
    });
  }

  /** The delivery of `type` kept for `signRef`, with the certificate bytes restored. */
  async getDelivery(signRef: string, type: SigningEvent['type']): Promise<StoredDelivery | undefined> {
    const d = (await this.read<Record<string, StoredDelivery>>(DELIVERY + keyOf(signRef)))?.[type];
    return d && { ...d, delivery: deliveryFromJson(d.delivery, 'kept webhook delivery') };
  }

  markApplied(signRef: string, type: SigningEvent['type']): Promise<void> {
    const key = DELIVERY + keyOf(signRef);
    return this.exclusive(key, async () => {
      const all = await this.read<Record<string, StoredDelivery>>(key);
      if (!all?.[type]) return;
      all[type].applied = true;
      // the certificate is not kept beyond its use (the record drops it too when the session ends)
      if (all[type].delivery.event.type === 'certificate') all[type] = { ...all[type], delivery: { ...all[type].delivery, event: { ...all[type].delivery.event, certificate: { ...redactedCertificate } } } };
      await this.write(key, all);
    });
  }

  /** Deliveries received but not applied yet (e.g. Node-RED stopped in between): replayed at start. */
  async pendingDeliveries(): Promise<Array<{ signRef: string; type: SigningEvent['type'] }>> {
    const keys = await new Promise<string[]>((resolve, reject) => this.context.keys(this.store, (err, k) => (err ? reject(storeError(err)) : resolve(k ?? []))));
    const out: Array<{ signRef: string; type: SigningEvent['type'] }> = [];
    for (const k of keys.filter((k) => k.startsWith(DELIVERY))) {
      const all = (await this.read<Record<string, StoredDelivery>>(k)) ?? {};
      for (const d of Object.values(all)) if (!d.applied) out.push({ signRef: d.delivery.event.signRef, type: d.type });
    }
    return out;
  }

  /** Forget a finished session's deliveries. */
  async forgetDeliveries(signRef: string): Promise<void> {
    await this.write(DELIVERY + keyOf(signRef), undefined);
  }

  private get store(): string | undefined {
    return this.storeName || undefined;
  }

  private documentPath(signRef: string): string {
    return path.join(this.documentDir, `${keyOf(signRef)}.pdf`);
  }

  private read<T>(key: string): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
      this.context.get(key, this.store, (err, value) => {
        if (err) return reject(storeError(err));
        // copies: the memory store hands out references, and later changes must not leak in
        resolve(value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as T));
      });
    });
  }

  private write(key: string, value: unknown): Promise<void> {
    return new Promise((resolve, reject) => {
      this.context.set(key, value === undefined ? undefined : JSON.parse(JSON.stringify(value)), this.store, (err) => (err ? reject(storeError(err)) : resolve()));
    });
  }

  private exclusive<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(key) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return run;
  }
}

const redactedCertificate = { der: Buffer.alloc(0), base64: '', subject: '', issuer: '', serialNumber: '', notBefore: '', notAfter: '', publicKeyAlgorithm: '' };

/** Context keys are property paths: encode the sign_ref so dots or brackets in it cannot split the key. */
function keyOf(signRef: string): string {
  return Buffer.from(signRef, 'utf8').toString('base64url');
}

function storeError(e: unknown): SingpassFlowsError {
  return new SingpassFlowsError('WEBHOOK_HANDLER_FAILED', `The Node-RED context/document store failed: ${(e as Error)?.message ?? e}`, { retryable: true }, { cause: e });
}
