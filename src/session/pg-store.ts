import { SingpassFlowsError } from '../errors';
import type { CleanUpResult } from './file-store';
import { SCHEDULED_ACTIONS, SESSION_ACTIONS, type SessionAction } from './next-step';
import type { DeliveryStore } from './deliveries';
import type { DueSession, DurableSessionStore } from './store';
import type { SessionRecord } from './types';
import { checkOwner, ref } from './pg/connection';
import { PgRecords, parseRecord } from './pg/records';

/**
 * A {@link SessionStore} in PostgreSQL, for several processes (n8n queue mode workers, replicated servers) sharing
 * sessions. Same extended API as {@link FileSessionStore} (`save` with a typed outcome, `listDue`, `cleanUp`), so the
 * Session Record operations can use either.
 *
 * - `<prefix>sessions`: one row per session — the record as JSONB, and columns derived from it at every write:
 *   `revision`, `status`, `next_action` / `due_at` (UNIX ms: THE due rule, `nextStep(record, policy)`, indexed, so
 *   "what is due" is an index range scan), `updated_at` (the record's last change, what retention counts from).
 * - `<prefix>documents`: the PDF being signed (BYTEA), apart so that listing never reads megabytes.
 * - `<prefix>signed_documents`: the signed PDF, written before the record says completed.
 * - `<prefix>deliveries`: verified webhook deliveries kept until applied ({@link DeliveryStore}), one per session and
 *   event type (`INSERT … ON CONFLICT DO NOTHING`: of processes given the same event, one is told it is fresh), with
 *   a lease so that exactly one process replays a delivery another left unapplied (`claimDeliveries`).
 * - Every update is compare-and-set in ONE statement (`UPDATE … WHERE sign_ref = $1 AND revision = $2`; a new record:
 *   `INSERT … ON CONFLICT DO NOTHING`), never read-then-write; the record and its PDF are written in one transaction.
 * - The schema is the store's own: `<prefix>schema_version` and an ordered list of migrations, applied in a
 *   transaction holding `pg_advisory_xact_lock`, so processes starting together migrate once.
 * - Split by job: pg/connection.ts (pool, statements, migrations), pg/schema.ts, pg/errors.ts, pg/documents.ts,
 *   pg/deliveries.ts, pg/records.ts; the due lists, leases and clean-up are here.
 * - A server that cannot be reached, is shutting down or times out fails with `STORE_BUSY` (`retryable: true`); what a
 *   retry cannot fix (login, rights, a newer schema) with `STORE_FAILED`. Messages never carry the password.
 */
export class PgSessionStore extends PgRecords implements DurableSessionStore, DeliveryStore {
  readonly kind = 'postgres' as const;
  /** Several processes and hosts: due sessions and kept deliveries are leased. */
  readonly shared = true;

  // -- schedules ------------------------------------------------------------------------------------------------

  /**
   * Sessions whose next step (`nextStep` with the store's policy, stored as `due_at` at every write) is due at `now`,
   * oldest first, found through the `due_at` index. Ended sessions (`forget`) are left to `cleanUp` unless `actions`
   * asks for them. `idleSeconds` is accepted for FileSessionStore's call shape only: the idle time is the store's
   * `idleMs` (part of `due_at`), so another value is refused. Rows that are not a readable record are counted.
   * `retentionSeconds`: first clean up as {@link cleanUp} does with it (at `now`), the sessions deleted in `deleted`.
   */
  async listDue(options: ListDueOptions = {}): Promise<{ due: DueSession[]; unreadable: string[]; deleted: string[] }> {
    const { now, limit, actions } = this.dueQuery(options);
    const deleted = options.retentionSeconds === undefined ? [] : (await this.cleanUpAt(now, options.retentionSeconds)).deleted;
    const rows = await this.query<DueRow>('list due sessions', `SELECT sign_ref, next_action, due_at, record FROM ${this.t.sessions}
      WHERE due_at <= $1 AND next_action = ANY($2::text[]) ORDER BY due_at, sign_ref LIMIT $3`, [now, actions, limit]);
    return { ...this.dueSessions(rows), deleted };
  }

  /**
   * `listDue`, and each listed session leased to `owner` for `SESSION_POLICY.leaseMs`: another `claimDue` (another
   * process) skips it until the lease ends, a save of the record ends it or `releaseClaim` gives it back. Rows are picked with
   * `FOR UPDATE SKIP LOCKED`, so concurrent claimers get disjoint sessions without waiting for each other. A lease is
   * advice for schedulers, not a lock: saves still decide by compare-and-set.
   */
  async claimDue(options: ListDueOptions & { owner: string }): Promise<{ due: (DueSession & { leaseUntil: number })[]; unreadable: string[] }> {
    const { now, limit, actions } = this.dueQuery(options);
    const owner = checkOwner(options?.owner);
    const rows = await this.query<DueRow & { lease_until: string }>('claim due sessions', `WITH c AS (
        SELECT sign_ref FROM ${this.t.sessions}
        WHERE due_at <= $1 AND next_action = ANY($2::text[]) AND (lease_until IS NULL OR lease_until <= $1)
        ORDER BY due_at, sign_ref LIMIT $3 FOR UPDATE SKIP LOCKED)
      UPDATE ${this.t.sessions} s SET lease_owner = $4, lease_until = $5 FROM c WHERE s.sign_ref = c.sign_ref
      RETURNING s.sign_ref, s.next_action, s.due_at, s.record, s.lease_until`, [now, actions, limit, owner, now + this.policy.leaseMs]);
    rows.sort((a, b) => Number(a.due_at) - Number(b.due_at) || (a.sign_ref < b.sign_ref ? -1 : 1));
    const { due, unreadable } = this.dueSessions(rows);
    return { due: due.map((d) => ({ ...d, leaseUntil: now + this.policy.leaseMs })), unreadable };
  }

  /** End `owner`'s lease on a session before it runs out (the work was given up); true when it held one. */
  async releaseClaim(signRef: string, owner: string): Promise<boolean> {
    const rows = await this.query('release a claim', `UPDATE ${this.t.sessions} SET lease_owner = NULL, lease_until = NULL
      WHERE sign_ref = $1 AND lease_owner = $2 RETURNING sign_ref`, [ref(signRef), owner]);
    return rows.length === 1;
  }

  /**
   * Delete the sessions whose `forget` step is due (`nextStep`: ended, and the retention passed since the last change;
   * stored as `next_action` / `due_at` at every write), with their PDFs and kept deliveries, and PDFs and deliveries
   * with no record kept that long (a crash between the PDF and the first record save): ONE statement, so the tables
   * change together. Live sessions are never deleted. `retentionSeconds`: another retention than the store's policy
   * (a node's own setting), applied to the same stored due times.
   */
  async cleanUp(options: { retentionSeconds?: number } = {}): Promise<CleanUpResult> {
    return this.cleanUpAt(this.now(), options?.retentionSeconds);
  }

  /** {@link cleanUp} judged at `now` (UNIX ms): the one clean-up rule, for `listDue`'s retention too. */
  private async cleanUpAt(now: number, retentionSeconds: number | undefined): Promise<CleanUpResult> {
    const forgetBefore = this.forgetBefore(now, retentionSeconds);
    const cutoffS = (now - (retentionSeconds === undefined ? this.policy.retentionMs : retentionSeconds * 1000)) / 1000;
    const rows = await this.query<{ deleted: string[] | null; documents: number; signed: number; orphans: number; kept: number }>('clean up ended sessions', `WITH
      gone AS (DELETE FROM ${this.t.sessions} WHERE ${forgetDue('$2')} RETURNING sign_ref),
      docs AS (DELETE FROM ${this.t.documents} d USING gone WHERE d.sign_ref = gone.sign_ref RETURNING d.sign_ref),
      signed AS (DELETE FROM ${this.t.signedDocuments} d WHERE d.sign_ref IN (SELECT sign_ref FROM gone)
        OR (d.written_at <= to_timestamp($1) AND NOT EXISTS (SELECT 1 FROM ${this.t.sessions} s WHERE s.sign_ref = d.sign_ref)) RETURNING d.sign_ref),
      orphans AS (DELETE FROM ${this.t.documents} d WHERE d.written_at <= to_timestamp($1)
        AND NOT EXISTS (SELECT 1 FROM ${this.t.sessions} s WHERE s.sign_ref = d.sign_ref) RETURNING d.sign_ref),
      dlv AS (DELETE FROM ${this.t.deliveries} d WHERE d.sign_ref IN (SELECT sign_ref FROM gone)
        OR (d.received_at <= $1 * 1000 AND NOT EXISTS (SELECT 1 FROM ${this.t.sessions} s WHERE s.sign_ref = d.sign_ref)) RETURNING d.sign_ref)
      SELECT (SELECT array_agg(sign_ref ORDER BY sign_ref) FROM gone) AS deleted, (SELECT count(*) FROM docs)::int AS documents, (SELECT count(*) FROM signed)::int AS signed,
        (SELECT count(*) FROM orphans)::int AS orphans, ((SELECT count(*) FROM ${this.t.sessions}) - (SELECT count(*) FROM gone))::int AS kept`, [cutoffS, forgetBefore]);
    const r = rows[0];
    for (const signRef of r.deleted ?? []) this.documents.delete(signRef);
    return { deleted: r.deleted ?? [], documents: r.documents, signedDocuments: r.signed, orphanDocuments: r.orphans, tempFiles: 0, kept: r.kept, unreadable: [] };
  }


  /**
   * The `due_at` up to which a `forget` step is due at `now`: `now` with the store's retention (the one every
   * `due_at` was computed with), shifted by the difference when a caller gives another.
   */
  private forgetBefore(now: number, retentionSeconds: number | undefined): number {
    if (retentionSeconds === undefined) return Math.floor(now);
    if (typeof retentionSeconds !== 'number' || !Number.isFinite(retentionSeconds) || retentionSeconds < 0) throw new SingpassFlowsError('INVALID_INPUT', 'retentionSeconds: a number of seconds ≥ 0', { field: 'retentionSeconds' });
    return Math.floor(now + this.policy.retentionMs - retentionSeconds * 1000);
  }

  private dueQuery(options: ListDueOptions): { now: number; limit: number; actions: SessionAction[] } {
    const o = options ?? {};
    if (o.idleSeconds !== undefined && o.idleSeconds * 1000 !== this.dueRule.idleMs) {
      throw new SingpassFlowsError('INVALID_INPUT', `idleSeconds: this store decides "due" with the idle time it was created with (${this.dueRule.idleMs / 1000} s, stored with every record); create it with idleMs: ${o.idleSeconds * 1000} instead`, { field: 'idleSeconds' });
    }
    const { now, limit } = this.window(o);
    const actions = o.actions ?? DUE_ACTIONS;
    if (!Array.isArray(actions) || actions.some((a) => !ALL_ACTIONS.includes(a))) throw new SingpassFlowsError('INVALID_INPUT', `actions: any of ${ALL_ACTIONS.join(', ')}`, { field: 'actions' });
    return { now, limit, actions };
  }

  private dueSessions(rows: DueRow[]): { due: DueSession[]; unreadable: string[] } {
    const due: DueSession[] = [];
    const unreadable: string[] = [];
    for (const row of rows) {
      let record: SessionRecord;
      try {
        record = parseRecord(row.record, row.sign_ref);
      } catch {
        unreadable.push(row.sign_ref);
        continue;
      }
      const action = row.next_action as SessionAction;
      due.push({ signRef: row.sign_ref, action, at: Number(row.due_at), record });
    }
    return { due, unreadable };
  }
}

export type { PgSessionStoreOptions } from './pg/connection';
export { DEFAULT_TABLE_PREFIX } from './pg/schema';

export interface ListDueOptions {
  /** UNIX ms (default: the store's clock). */
  now?: number;
  /** At most this many, the longest due first (default 1000). */
  limit?: number;
  /** Only these next steps (default: all but `forget`, which cleanUp handles). */
  actions?: SessionAction[];
  /** FileSessionStore's parameter: must equal the store's `idleMs` (in seconds) when given. */
  idleSeconds?: number;
  /** `listDue` only: first clean up ({@link PgSessionStore.cleanUp}) with this retention. */
  retentionSeconds?: number;
}

interface DueRow {
  sign_ref: string;
  next_action: string;
  /** int8 arrives as text. */
  due_at: string;
  record: unknown;
}

/** The one clean-up rule, on the forget index: `nextStep` said `forget`, due by the parameter `at` (see forgetBefore). */
const forgetDue = (at: string): string => `next_action = 'forget' AND due_at <= ${at}`;

const ALL_ACTIONS = SESSION_ACTIONS;
const DUE_ACTIONS = [...SCHEDULED_ACTIONS];
