import { isForgetDue, type NextStepPolicy, type SessionAction } from './next-step';
import { SESSION_POLICY } from './policy';
import { SingpassFlowsError } from '../errors';
import type { SessionRecord } from './types';
import type { DeliveryStore, KeptDelivery } from './deliveries';
import type { CleanUpResult, SaveOutcome } from './file-store';

/**
 * Where a {@link SessionRunner} keeps its sessions: the record (small JSON) and the PDF being signed. The default is
 * in memory; Node-RED and the n8n sample use the folder store (file-store.ts), servers a database. Implementations
 * must return copies (or the runner's later changes would leak in) and may be async.
 */
export interface SessionStore {
  get(signRef: string): Promise<SessionRecord | undefined> | SessionRecord | undefined;
  /**
   * Save `record` if the stored revision is still `expectedRevision` (undefined: the record must not exist yet);
   * resolve false when another writer got there first. Stores shared by several processes must do this atomically.
   */
  put(record: SessionRecord, expectedRevision: number | undefined): Promise<boolean> | boolean;
  delete(signRef: string): Promise<void> | void;
  /** Every stored sign_ref (the runner resumes the unfinished ones after a restart). */
  list(): Promise<string[]> | string[];
  getDocument(signRef: string): Promise<Buffer | undefined> | Buffer | undefined;
  putDocument(signRef: string, pdf: Buffer): Promise<void> | void;
  deleteDocument(signRef: string): Promise<void> | void;
  /**
   * Where the signed PDF goes, BEFORE the record is saved as completed (a crash in between finishes again: the same
   * single signature, the file overwritten; never lost). Optional: without it the signed PDF is only handed to
   * `onEnded` / `outcome()`.
   */
  putSignedDocument?(signRef: string, pdf: Buffer): Promise<void> | void;
  getSignedDocument?(signRef: string): Promise<Buffer | undefined> | Buffer | undefined;
  /**
   * Stores shared by several processes (PgSessionStore): the sessions whose next step is due, found by an index and
   * each leased to `owner` for `SESSION_POLICY.leaseMs` (the store's, never the caller's), so that schedulers in other
   * processes skip them meanwhile; a save of the record ends the lease. Optional: without it a sweep reads every record.
   */
  claimDue?(options: { owner: string; limit?: number }): Promise<{ due: { signRef: string }[] }>;
  /** Give back `owner`'s lease on a session it claimed and does not take up (with {@link claimDue}). */
  releaseClaim?(signRef: string, owner: string): Promise<boolean>;
  /**
   * Delete the sessions that ended (completed, failed, expired) `retentionSeconds` or more ago, with their PDFs: the
   * `forget` step of `nextStep`. Optional: a runner with `cleanUpIntervalMs` calls it (see runner-parts/retention.ts).
   */
  cleanUp?(options: { retentionSeconds: number }): Promise<{ deleted: string[] }> | { deleted: string[] };
}

/**
 * The timings a durable store works by: the session policy's (`SESSION_POLICY`), passed in. A deployment may change
 * one through the settings that name it (a credential's take-over time or retention); nothing else picks its own.
 */
export type StorePolicy = Readonly<{ takeOverIdleMs: number; leaseMs: number; retentionMs: number; scanExtensionSeconds: number }>;

/**
 * `SESSION_POLICY` itself, or a copy with the values `changes` names changed (undefined ones ignored), each checked:
 * a number ≥ 0.
 */
export function storePolicy(changes: Partial<StorePolicy> = {}): StorePolicy {
  const given = Object.entries(changes).filter(([, v]) => v !== undefined);
  for (const [k, v] of given) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new SingpassFlowsError('INVALID_INPUT', `${k}: must be a number ≥ 0`, { field: k });
  }
  const changed = given.filter(([k, v]) => v !== SESSION_POLICY[k as keyof StorePolicy]);
  return changed.length === 0 ? SESSION_POLICY : Object.freeze({ ...SESSION_POLICY, ...Object.fromEntries(changed) });
}

/** The store policy as `nextStep` takes it (the due rule a store evaluates). */
export function dueRule(policy: StorePolicy): Required<NextStepPolicy> {
  return { idleMs: policy.takeOverIdleMs, retentionMs: policy.retentionMs, scanExtensionSeconds: policy.scanExtensionSeconds };
}

/**
 * THE store every front end uses (n8n's operations and trigger, the Node-RED nodes, the CLI): a folder
 * (FileSessionStore, one host) or PostgreSQL (PgSessionStore, several processes and hosts), built by
 * `createSessionStore` from settings and the policy. One way each to list what is due, to replay kept deliveries and
 * to clean up; the rest is the runner's {@link SessionStore} and the kept deliveries' {@link DeliveryStore}.
 */
export interface DurableSessionStore extends SessionStore, DeliveryStore {
  readonly kind: 'folder' | 'postgres';
  /** Several processes on one store: due sessions and kept deliveries are leased, and none is replayed at start. */
  readonly shared: boolean;
  /** Where the records are, for messages and logs (never a password). */
  readonly where: string;
  readonly policy: StorePolicy;
  get(signRef: string): Promise<SessionRecord | undefined>;
  /** Compare-and-set with a typed outcome; `document`: the PDF saved with the record (not at all when refused). */
  save(record: SessionRecord, expectedRevision: number | undefined, options?: { document?: Buffer }): Promise<SaveOutcome>;
  put(record: SessionRecord, expectedRevision: number | undefined): Promise<boolean>;
  delete(signRef: string): Promise<void>;
  list(): Promise<string[]>;
  getDocument(signRef: string): Promise<Buffer | undefined>;
  putDocument(signRef: string, pdf: Buffer): Promise<void>;
  deleteDocument(signRef: string): Promise<void>;
  putSignedDocument(signRef: string, pdf: Buffer): Promise<void>;
  getSignedDocument(signRef: string): Promise<Buffer | undefined>;
  /**
   * The sessions whose next step is due now (`nextStep` with the store's policy; never `forget`: that is
   * {@link cleanUp}'s), oldest first; a shared store leases each to `owner` for the policy's `leaseMs`, so that other
   * processes skip it until a save, {@link releaseClaim} or the lease's end. Unreadable records are named, not thrown.
   * `now` (UNIX ms, default now): the time "due" is judged at.
   */
  claimDue(options: { owner: string; limit?: number; now?: number }): Promise<{ due: DueSession[]; unreadable: string[] }>;
  /** Give back `owner`'s lease on a session it does not take up; false when it held none (or the store leases none). */
  releaseClaim(signRef: string, owner: string): Promise<boolean>;
  /**
   * The kept deliveries to replay now: unapplied for `idleMs` (default the policy's take-over time; 0 for the only
   * process on a folder, at its start), each with its record, those the record still needs (`isDeliveryStillNeeded`;
   * the others are marked applied). A shared store leases each to `owner`.
   */
  claimDeliveriesToReplay(options: { owner: string; limit?: number; idleMs?: number }): Promise<Array<{ kept: KeptDelivery; record: SessionRecord }>>;
  /**
   * Delete every session whose `forget` step is due (ended; the retention passed since its last change) with its
   * PDFs and kept deliveries, and what a crash left. `retentionSeconds`: another retention than the policy's.
   */
  cleanUp(options?: { retentionSeconds?: number }): Promise<CleanUpResult>;
  /** Let go of connections (the PostgreSQL pool the store created). */
  close(): Promise<void>;
}

/**
 * A session whose next step is due, as every store's due list gives it (`listDue`, `claimDue`): what to do
 * (`nextStep`), since when, and the record with its revision for the compare-and-set save.
 */
export interface DueSession {
  signRef: string;
  action: SessionAction;
  /** UNIX ms from which it is due. */
  at: number;
  record: SessionRecord;
}

/**
 * Compare-and-set saves for one step that persists more than once (the claim, the save point before the hash call,
 * then its result): each save is checked against the revision the previous one wrote. Pass `save` as the step's
 * `claim` and `save` options, then save the step's result with `save` too.
 */
export function stepSaver(store: Pick<SessionStore, 'put'>, loaded: SessionRecord): { save: (record: SessionRecord) => Promise<boolean>; readonly expected: number } {
  let expected = loaded.revision;
  return {
    async save(record) {
      const ok = await store.put(record, expected);
      if (ok) expected = record.revision;
      return ok;
    },
    get expected() {
      return expected;
    },
  };
}

/** The default {@link SessionStore}: process memory (JSON copies, so it behaves like a persistent store). */
export class MemorySessionStore implements SessionStore {
  /** Each record as JSON, with its revision apart so that a compare-and-set need not parse the stored copy. */
  private readonly records = new Map<string, { json: string; revision: number }>();
  private readonly documents = new Map<string, Buffer>();
  private readonly signed = new Map<string, Buffer>();

  get(signRef: string): SessionRecord | undefined {
    const stored = this.records.get(signRef);
    return stored === undefined ? undefined : (JSON.parse(stored.json) as SessionRecord);
  }

  put(record: SessionRecord, expectedRevision: number | undefined): boolean {
    const current = this.records.get(record.state.signRef);
    if ((current === undefined) !== (expectedRevision === undefined)) return false;
    if (current && current.revision !== expectedRevision) return false;
    this.records.set(record.state.signRef, { json: JSON.stringify(record), revision: record.revision });
    return true;
  }

  delete(signRef: string): void {
    this.records.delete(signRef);
  }

  list(): string[] {
    return [...this.records.keys()];
  }

  getDocument(signRef: string): Buffer | undefined {
    return this.documents.get(signRef);
  }

  putDocument(signRef: string, pdf: Buffer): void {
    this.documents.set(signRef, pdf);
  }

  deleteDocument(signRef: string): void {
    this.documents.delete(signRef);
  }

  putSignedDocument(signRef: string, pdf: Buffer): void {
    this.signed.set(signRef, pdf);
  }

  getSignedDocument(signRef: string): Buffer | undefined {
    return this.signed.get(signRef);
  }

  cleanUp(options: { retentionSeconds: number }): { deleted: string[] } {
    const retentionMs = options.retentionSeconds * 1000;
    const now = Date.now();
    const deleted: string[] = [];
    for (const signRef of this.records.keys()) {
      if (!isForgetDue(this.get(signRef)!, retentionMs, now)) continue;
      this.records.delete(signRef);
      this.documents.delete(signRef);
      this.signed.delete(signRef);
      deleted.push(signRef);
    }
    return { deleted };
  }
}
