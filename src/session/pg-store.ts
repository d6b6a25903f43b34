import { createHash } from 'node:crypto';
import { Pool, type PoolClient, type PoolConfig, type QueryResultRow } from 'pg';
import { SingpassFlowsError, type ErrorDetails } from '../errors';
import { checkSignRef } from '../sign/validate';
import type { CleanUpResult, SaveOutcome } from './file-store';
import { DEFAULT_RETENTION_MS, DEFAULT_SCAN_EXTENSION_SECONDS, nextStep, type NextStepPolicy, type SessionAction } from './next-step';
import { deliveryFromJson, deliveryToJson } from './delivery-codec';
import { DocumentCache, type DocumentCacheOptions } from './document-cache';
import { REDACTED_CERTIFICATE_JSON, isDeliveryStillNeeded, replaysStillNeeded, type DeliveryStore, type KeptDelivery } from './deliveries';
import type { DueSession, SessionStore } from './store';
import { SESSION_POLICY } from './policy';
import { withPhase } from './transitions';
import type { SessionRecord, VerifiedDelivery } from './types';
import type { SigningEvent } from '../sign';

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
 * - A server that cannot be reached, is shutting down or times out fails with `STORE_BUSY` (`retryable: true`); what a
 *   retry cannot fix (login, rights, a newer schema) with `STORE_FAILED`. Messages never carry the password.
 */
export class PgSessionStore implements SessionStore, DeliveryStore {
  /** The validated table-name prefix. */
  readonly prefix: string;
  /** The advisory lock key migrations of this prefix hold (bigint, as text): derived from the prefix. */
  readonly migrationLockKey: string;
  private readonly pool: Pool;
  private readonly ownsPool: boolean;
  private readonly policy: Required<NextStepPolicy>;
  private readonly now: () => number;
  private readonly autoMigrate: boolean;
  private readonly secrets: string[];
  private readonly t: Tables;
  private readonly onPoolError = (e: Error): void => {
    // An idle connection lost (server restarted, admin shutdown): the pool drops it and connects anew on the next
    // call. Without a listener Node would crash the process on this event.
    this.lastPoolError = redact(e.message, this.secrets);
  };
  /** The last error of an idle connection (log-safe), for diagnostics. */
  lastPoolError: string | undefined;
  private ready: Promise<void> | undefined;
  private closed = false;
  /** PDFs written or read here lately, by the row version they were at (a step asks for the version, not the PDF). */
  private readonly documents: DocumentCache;

  /**
   * @param connection a `pg.Pool` of yours (you end it; `close()` leaves it open), or a connection string / `pg`
   * pool config for a pool the store creates (and ends in `close()`).
   */
  constructor(connection: string | PoolConfig | PoolLike, options: PgSessionStoreOptions = {}) {
    this.prefix = checkPrefix(options.tablePrefix ?? DEFAULT_TABLE_PREFIX);
    this.t = tables(this.prefix);
    this.migrationLockKey = lockKey(this.prefix);
    this.policy = {
      scanExtensionSeconds: options.scanExtensionSeconds ?? DEFAULT_SCAN_EXTENSION_SECONDS,
      idleMs: options.idleMs ?? DEFAULT_IDLE_MS,
      retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
    };
    for (const [k, v] of Object.entries(this.policy)) {
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new SingpassFlowsError('INVALID_INPUT', `${k}: must be a number ≥ 0`, { field: k });
    }
    this.now = options.now ?? Date.now;
    this.autoMigrate = options.autoMigrate ?? true;
    this.documents = new DocumentCache(options.documentCache === false ? { maxBytes: 0 } : options.documentCache);
    if (isPool(connection)) {
      this.pool = connection as Pool;
      this.ownsPool = false;
      this.secrets = secretsOf((connection as { options?: PoolConfig }).options);
    } else {
      if (typeof connection === 'string' ? connection.trim() === '' : !connection || typeof connection !== 'object') {
        throw new SingpassFlowsError('INVALID_INPUT', 'PostgreSQL: give a connection string (postgres://user:password@host:5432/database), a pg pool config or a pg.Pool', { field: 'connection' });
      }
      const config: PoolConfig = typeof connection === 'string' ? { connectionString: connection } : { ...connection };
      this.secrets = secretsOf(config);
      this.pool = new Pool({ ...POOL_DEFAULTS, ...config });
      this.ownsPool = true;
    }
    this.pool.on('error', this.onPoolError);
  }

  // -- schema ---------------------------------------------------------------------------------------------------

  /**
   * Create or upgrade the store's tables (done by the first call of any other method unless `autoMigrate: false`).
   * Idempotent; safe when several processes start at once (one migrates, the others wait for its lock, then find the
   * schema current). Resolves with the schema version before and after. `to`: stop at that version (an operator
   * staging an upgrade; the store's other methods need the latest).
   */
  async migrate(options: { to?: number } = {}): Promise<{ from: number; to: number }> {
    const target = options.to ?? MIGRATIONS.length;
    if (!Number.isSafeInteger(target) || target < 1 || target > MIGRATIONS.length) {
      throw new SingpassFlowsError('INVALID_INPUT', `to: a schema version from 1 to ${MIGRATIONS.length}`, { field: 'to' });
    }
    // Fast path, no lock and no DDL: the schema is current (a database user without CREATE rights can use the store).
    const current = await this.withClient('read the schema version', (c) => schemaVersion(c, this.t), false);
    if (current > MIGRATIONS.length) throw newerSchema(current, MIGRATIONS.length);
    const result = current >= target ? { from: current, to: current } : await this.transaction('migrate the schema', false, async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1::bigint)', [this.migrationLockKey]);
      await c.query(`CREATE TABLE IF NOT EXISTS ${this.t.schemaVersion} (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      const from = await schemaVersion(c, this.t);
      if (from > MIGRATIONS.length) throw newerSchema(from, MIGRATIONS.length);
      for (let v = from; v < target; v++) {
        for (const sql of MIGRATIONS[v](this.t)) await c.query(sql);
        await c.query(`INSERT INTO ${this.t.schemaVersion} (version) VALUES ($1)`, [v + 1]);
      }
      return { from, to: Math.max(from, target) };
    });
    if (result.to === MIGRATIONS.length) this.ready ??= Promise.resolve();
    return result;
  }

  /** The schema version stored in the database (0: no tables yet). */
  async schemaVersion(): Promise<number> {
    return this.withClient('read the schema version', (c) => schemaVersion(c, this.t), false);
  }

  // -- records --------------------------------------------------------------------------------------------------

  async get(signRef: string): Promise<SessionRecord | undefined> {
    const r = ref(signRef);
    const rows = await this.query<{ record: unknown }>('load a session record', `SELECT record FROM ${this.t.sessions} WHERE sign_ref = $1`, [r]);
    return rows[0] ? parseRecord(rows[0].record, r) : undefined;
  }

  /**
   * Compare-and-set: save `record` if the stored revision is `expectedRevision` (undefined: no record may exist yet),
   * in one statement. With `document`, the PDF is saved in the same transaction (not at all when the record is
   * refused). A save also ends a claim (`claimDue`) on the record: the claimed step has moved it on.
   */
  async save(record: SessionRecord, expectedRevision: number | undefined, options: { document?: Buffer } = {}): Promise<SaveOutcome> {
    const row = this.row(record);
    if (expectedRevision !== undefined && !isRevision(expectedRevision)) {
      throw new SingpassFlowsError('INVALID_INPUT', 'expectedRevision: give the "revision" of the record this execution loaded (a whole number)', { field: 'expectedRevision' });
    }
    const write = async (c: PoolClient): Promise<boolean> => {
      const r = expectedRevision === undefined
        ? await c.query(`INSERT INTO ${this.t.sessions} (sign_ref, revision, status, next_action, due_at, updated_at, record, phase)
            VALUES ($1, $2, $3, $4, $5, to_timestamp($6), $7::jsonb, $8) ON CONFLICT (sign_ref) DO NOTHING`, row.values)
        // the same statement marks applied the kept deliveries the saved record has gone past (isDeliveryStillNeeded):
        // front ends that never mark them (n8n) leave none for the replay claim to sort out one by one
        : await c.query(`WITH s AS (UPDATE ${this.t.sessions} SET revision = $2, status = $3, next_action = $4, due_at = $5, updated_at = to_timestamp($6),
            record = $7::jsonb, phase = $8, written_at = now(), lease_owner = NULL, lease_until = NULL WHERE sign_ref = $1 AND revision = $9 RETURNING sign_ref),
            d AS (UPDATE ${this.t.deliveries} SET ${APPLIED_SET('$11')}
              WHERE sign_ref IN (SELECT sign_ref FROM s) AND NOT applied AND type = ANY($10::text[]))
            SELECT sign_ref FROM s`, [...row.values, expectedRevision, deliveriesGonePast(record), JSON.stringify(REDACTED_CERTIFICATE_JSON)]);
      if (r.rowCount !== 1) return false;
      if (options.document) written = await this.writeDocument(c, row.signRef, options.document);
      return true;
    };
    let written: string | undefined;
    const saved = options.document
      ? await this.withClient('save a session record and its PDF', async (c) => {
        await c.query('BEGIN');
        try {
          const ok = await write(c);
          await c.query(ok ? 'COMMIT' : 'ROLLBACK'); // refused: the PDF is not written either
          return ok;
        } catch (e) {
          await c.query('ROLLBACK').catch(() => undefined);
          throw e;
        }
      })
      : await this.withClient('save a session record', write);
    if (saved) {
      if (written !== undefined) this.documents.set(row.signRef, written, Buffer.from(options.document!)); // the caller may reuse its Buffer
      return { saved: true, signRef: row.signRef, revision: record.revision, status: record.state.status };
    }
    // Refused: what is stored now, for the caller's message (a report only: the decision was the statement's).
    const stored = (await this.query<{ revision: number; status: string }>('read a session record\'s revision', `SELECT revision, status FROM ${this.t.sessions} WHERE sign_ref = $1`, [row.signRef]))[0];
    if (expectedRevision !== undefined && !stored) return { saved: false, reason: 'missing', signRef: row.signRef, expectedRevision };
    return {
      saved: false, reason: expectedRevision === undefined ? 'exists' : 'conflict', signRef: row.signRef, expectedRevision,
      ...(stored ? { storedRevision: stored.revision, storedStatus: stored.status } : {}),
    };
  }

  async put(record: SessionRecord, expectedRevision: number | undefined): Promise<boolean> {
    return (await this.save(record, expectedRevision)).saved;
  }

  /** Delete the record; the PDF stays (see deleteDocument). */
  async delete(signRef: string): Promise<void> {
    await this.query('delete a session record', `DELETE FROM ${this.t.sessions} WHERE sign_ref = $1`, [ref(signRef)]);
  }

  /** Every stored signRef. */
  async list(): Promise<string[]> {
    return (await this.query<{ sign_ref: string }>('list session records', `SELECT sign_ref FROM ${this.t.sessions} ORDER BY sign_ref`)).map((r) => r.sign_ref);
  }

  /**
   * The session's PDF. One this process wrote or read lately is served from memory once the row is found still at the
   * version it had then (a few bytes asked for instead of the PDF, which node-postgres reads as hex text).
   */
  async getDocument(signRef: string): Promise<Buffer | undefined> {
    const r = ref(signRef);
    if (this.documents.versionOf(r) !== undefined) {
      const rows = await this.query<{ v: string }>('check a session\'s PDF', `SELECT ${DOCUMENT_VERSION} AS v FROM ${this.t.documents} WHERE sign_ref = $1`, [r]);
      if (!rows[0]) {
        this.documents.delete(r);
        return undefined;
      }
      const kept = this.documents.get(r, rows[0].v);
      if (kept) return kept;
    }
    const rows = await this.query<{ pdf: Buffer; v: string }>('load a session\'s PDF', `SELECT pdf, ${DOCUMENT_VERSION} AS v FROM ${this.t.documents} WHERE sign_ref = $1`, [r]);
    if (rows[0]) this.documents.set(r, rows[0].v, rows[0].pdf);
    return rows[0]?.pdf;
  }

  async putDocument(signRef: string, pdf: Buffer): Promise<void> {
    const r = ref(signRef);
    this.documents.set(r, await this.withClient('save a session\'s PDF', (c) => this.writeDocument(c, r, pdf)), Buffer.from(pdf));
  }

  async deleteDocument(signRef: string): Promise<void> {
    const r = ref(signRef);
    this.documents.delete(r);
    await this.query('delete a session\'s PDF', `DELETE FROM ${this.t.documents} WHERE sign_ref = $1`, [r]);
  }

  /** The signed PDF, stored before the record says completed (kept with the record until `cleanUp`). */
  async putSignedDocument(signRef: string, pdf: Buffer): Promise<void> {
    if (!Buffer.isBuffer(pdf)) throw new SingpassFlowsError('INVALID_INPUT', 'document: the signed PDF must be a Buffer', { field: 'document' });
    await this.query('save a signed PDF', `INSERT INTO ${this.t.signedDocuments} (sign_ref, pdf) VALUES ($1, $2)
      ON CONFLICT (sign_ref) DO UPDATE SET pdf = EXCLUDED.pdf, written_at = now()`, [ref(signRef), pdf]);
  }

  async getSignedDocument(signRef: string): Promise<Buffer | undefined> {
    const rows = await this.query<{ pdf: Buffer }>('load a signed PDF', `SELECT pdf FROM ${this.t.signedDocuments} WHERE sign_ref = $1`, [ref(signRef)]);
    return rows[0]?.pdf;
  }

  // -- schedules ------------------------------------------------------------------------------------------------

  /**
   * Sessions whose next step (`nextStep` with the store's policy, stored as `due_at` at every write) is due at `now`,
   * oldest first, found through the `due_at` index. Ended sessions (`forget`) are left to `cleanUp` unless `actions`
   * asks for them. `idleSeconds` is accepted for FileSessionStore's call shape only: the idle time is the store's
   * `idleMs` (part of `due_at`), so another value is refused. Rows that are not a readable record are counted.
   * `retentionSeconds`: first delete the ended sessions past it ({@link deleteEnded}), in `deleted`.
   */
  async listDue(options: ListDueOptions = {}): Promise<{ due: DueSession[]; unreadable: string[]; deleted: string[] }> {
    const { now, limit, actions } = this.dueQuery(options);
    const deleted = options.retentionSeconds === undefined ? [] : await this.deleteEnded({ retentionSeconds: options.retentionSeconds, now });
    const rows = await this.query<DueRow>('list due sessions', `SELECT sign_ref, next_action, due_at, record FROM ${this.t.sessions}
      WHERE due_at <= $1 AND next_action = ANY($2::text[]) ORDER BY due_at, sign_ref LIMIT $3`, [now, actions, limit]);
    return { ...this.dueSessions(rows), deleted };
  }

  /**
   * Delete the ended sessions (completed, failed, expired) unchanged for `retentionSeconds`, with their PDFs and kept
   * deliveries: one statement on the ended-sessions index, each other table by its key — cheap enough for a schedule
   * every few seconds. The crash leftovers cleanUp also sweeps (PDFs and deliveries without a record) stay its job.
   */
  async deleteEnded(options: { retentionSeconds: number; now?: number }): Promise<string[]> {
    const retention = options?.retentionSeconds;
    if (typeof retention !== 'number' || !Number.isFinite(retention) || retention < 0) throw new SingpassFlowsError('INVALID_INPUT', 'retentionSeconds: a number of seconds ≥ 0', { field: 'retentionSeconds' });
    const cutoffS = (options.now ?? this.now()) / 1000 - retention;
    const rows = await this.query<{ deleted: string[] | null }>('delete ended sessions', `WITH
      gone AS (DELETE FROM ${this.t.sessions} WHERE status IN ('completed', 'failed', 'expired') AND updated_at <= to_timestamp($1) RETURNING sign_ref),
      docs AS (DELETE FROM ${this.t.documents} d USING gone WHERE d.sign_ref = gone.sign_ref),
      signed AS (DELETE FROM ${this.t.signedDocuments} d USING gone WHERE d.sign_ref = gone.sign_ref),
      dlv AS (DELETE FROM ${this.t.deliveries} d USING gone WHERE d.sign_ref = gone.sign_ref)
      SELECT array_agg(sign_ref ORDER BY sign_ref) AS deleted FROM gone`, [cutoffS]);
    const deleted = rows[0]?.deleted ?? [];
    for (const signRef of deleted) this.documents.delete(signRef);
    return deleted;
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
      RETURNING s.sign_ref, s.next_action, s.due_at, s.record, s.lease_until`, [now, actions, limit, owner, now + LEASE_MS]);
    rows.sort((a, b) => Number(a.due_at) - Number(b.due_at) || (a.sign_ref < b.sign_ref ? -1 : 1));
    const { due, unreadable } = this.dueSessions(rows);
    return { due: due.map((d) => ({ ...d, leaseUntil: now + LEASE_MS })), unreadable };
  }

  /** End `owner`'s lease on a session before it runs out (the work was given up); true when it held one. */
  async releaseClaim(signRef: string, owner: string): Promise<boolean> {
    const rows = await this.query('release a claim', `UPDATE ${this.t.sessions} SET lease_owner = NULL, lease_until = NULL
      WHERE sign_ref = $1 AND lease_owner = $2 RETURNING sign_ref`, [ref(signRef), owner]);
    return rows.length === 1;
  }

  /**
   * Delete ended sessions (completed, failed, expired) whose last change is `retentionSeconds` old or more, with
   * their PDFs, and PDFs with no record written that long ago (a crash between the PDF and the first record save):
   * ONE statement, so the tables change together (kept deliveries go with their record, or past the retention without
   * one). Live sessions are never deleted.
   */
  async cleanUp(options: { retentionSeconds: number }): Promise<CleanUpResult> {
    const retention = options?.retentionSeconds;
    if (typeof retention !== 'number' || !Number.isFinite(retention) || retention < 0) throw new SingpassFlowsError('INVALID_INPUT', 'retentionSeconds: a number of seconds ≥ 0', { field: 'retentionSeconds' });
    const cutoffS = this.now() / 1000 - retention;
    const rows = await this.query<{ deleted: string[] | null; documents: number; signed: number; orphans: number; kept: number }>('clean up ended sessions', `WITH
      gone AS (DELETE FROM ${this.t.sessions} WHERE status IN ('completed', 'failed', 'expired') AND updated_at <= to_timestamp($1) RETURNING sign_ref),
      docs AS (DELETE FROM ${this.t.documents} d USING gone WHERE d.sign_ref = gone.sign_ref RETURNING d.sign_ref),
      signed AS (DELETE FROM ${this.t.signedDocuments} d WHERE d.sign_ref IN (SELECT sign_ref FROM gone)
        OR (d.written_at <= to_timestamp($1) AND NOT EXISTS (SELECT 1 FROM ${this.t.sessions} s WHERE s.sign_ref = d.sign_ref)) RETURNING d.sign_ref),
      orphans AS (DELETE FROM ${this.t.documents} d WHERE d.written_at <= to_timestamp($1)
        AND NOT EXISTS (SELECT 1 FROM ${this.t.sessions} s WHERE s.sign_ref = d.sign_ref) RETURNING d.sign_ref),
      dlv AS (DELETE FROM ${this.t.deliveries} d WHERE d.sign_ref IN (SELECT sign_ref FROM gone)
        OR (d.received_at <= $1 * 1000 AND NOT EXISTS (SELECT 1 FROM ${this.t.sessions} s WHERE s.sign_ref = d.sign_ref)) RETURNING d.sign_ref)
      SELECT (SELECT array_agg(sign_ref ORDER BY sign_ref) FROM gone) AS deleted, (SELECT count(*) FROM docs)::int AS documents, (SELECT count(*) FROM signed)::int AS signed,
        (SELECT count(*) FROM orphans)::int AS orphans, ((SELECT count(*) FROM ${this.t.sessions}) - (SELECT count(*) FROM gone))::int AS kept`, [cutoffS]);
    const r = rows[0];
    for (const signRef of r.deleted ?? []) this.documents.delete(signRef);
    return { deleted: r.deleted ?? [], documents: r.documents, signedDocuments: r.signed, orphanDocuments: r.orphans, tempFiles: 0, kept: r.kept, unreadable: [] };
  }

  // -- kept webhook deliveries ----------------------------------------------------------------------------------

  /**
   * Keep a verified delivery until a step applies it. One statement (`INSERT … ON CONFLICT DO NOTHING`): of two
   * processes given the same event at once, exactly one is told it is fresh (true); the other gets false (a duplicate).
   */
  async rememberDelivery(delivery: VerifiedDelivery): Promise<boolean> {
    const json = deliveryToJson(deliveryFromJson(delivery, 'delivery'));
    const { signRef, type } = delivery.event;
    const rows = await this.query('keep a webhook delivery', `INSERT INTO ${this.t.deliveries} (sign_ref, type, received_at, delivery)
      VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT (sign_ref, type) DO NOTHING RETURNING sign_ref`, [ref(signRef), eventType(type), Math.floor(this.now()), JSON.stringify(json)]);
    return rows.length === 1;
  }

  /** The kept delivery of `type` for `signRef` (the certificate bytes restored), or undefined. */
  async getDelivery(signRef: string, type: SigningEvent['type']): Promise<KeptDelivery | undefined> {
    const rows = await this.query<DeliveryRow>('load a webhook delivery', `SELECT type, applied, received_at, delivery FROM ${this.t.deliveries} WHERE sign_ref = $1 AND type = $2`, [ref(signRef), eventType(type)]);
    return rows[0] ? keptDelivery(rows[0]) : undefined;
  }

  /** The event was applied to its session: a later copy is a duplicate; the user's certificate is dropped; any lease ends. */
  async markDeliveryApplied(signRef: string, type: SigningEvent['type']): Promise<void> {
    await this.query('mark a webhook delivery applied', `UPDATE ${this.t.deliveries} SET ${APPLIED_SET('$3')}
      WHERE sign_ref = $1 AND type = $2 AND NOT applied`, [ref(signRef), eventType(type), JSON.stringify(REDACTED_CERTIFICATE_JSON)]);
  }

  /** Every delivery kept and not applied yet, oldest first. */
  async pendingDeliveries(): Promise<Array<{ signRef: string; type: SigningEvent['type'] }>> {
    const rows = await this.query<{ sign_ref: string; type: SigningEvent['type'] }>('list pending webhook deliveries', `SELECT sign_ref, type FROM ${this.t.deliveries}
      WHERE NOT applied ORDER BY received_at, sign_ref, type`);
    return rows.map((r) => ({ signRef: r.sign_ref, type: r.type }));
  }

  /**
   * Deliveries kept at least `idleMs` ago and still not applied (the process that answered them died, or its step
   * failed), each leased to `owner` for `SESSION_POLICY.leaseMs`: another process's claim skips them until the lease
   * ends; `markDeliveryApplied` ends it. Picked with `FOR UPDATE SKIP LOCKED`: concurrent claimers get disjoint rows.
   */
  async claimDeliveries(options: { owner: string; idleMs: number; limit?: number; now?: number }): Promise<KeptDelivery[]> {
    const { now, limit } = this.dueQuery({ now: options?.now, limit: options?.limit });
    const owner = checkOwner(options?.owner);
    const idleMs = options.idleMs;
    if (typeof idleMs !== 'number' || !Number.isFinite(idleMs) || idleMs < 0) throw new SingpassFlowsError('INVALID_INPUT', 'idleMs: a number of milliseconds ≥ 0', { field: 'idleMs' });
    const rows = await this.query<DeliveryRow & { sign_ref: string }>('claim pending webhook deliveries', `WITH c AS (
        SELECT sign_ref, type FROM ${this.t.deliveries}
        WHERE NOT applied AND received_at <= $1 AND (lease_until IS NULL OR lease_until <= $2)
        ORDER BY received_at, sign_ref, type LIMIT $3 FOR UPDATE SKIP LOCKED)
      UPDATE ${this.t.deliveries} d SET lease_owner = $4, lease_until = $5 FROM c WHERE d.sign_ref = c.sign_ref AND d.type = c.type
      RETURNING d.sign_ref, d.type, d.applied, d.received_at, d.delivery`, [now - Math.ceil(idleMs), now, limit, owner, now + LEASE_MS]);
    // RETURNING keeps no order: oldest first again (sign_ref, type among equal times)
    return rows.sort((a, b) => Number(a.received_at) - Number(b.received_at) || (a.sign_ref < b.sign_ref ? -1 : a.sign_ref > b.sign_ref ? 1 : a.type < b.type ? -1 : 1)).map(keptDelivery);
  }

  /**
   * The deliveries to replay now: kept at least the store's `idleMs` ago and never applied (`claimDeliveries`, leased
   * to `owner`), each with its session's record, for those the record still needs (`isDeliveryStillNeeded`). The
   * others — their session ended or is gone, or a record saved before the delivery was kept had gone past it (a save
   * marks those itself) — are marked applied here.
   */
  async claimDeliveriesToReplay(options: { owner: string; limit?: number; now?: number }): Promise<Array<{ kept: KeptDelivery; record: SessionRecord }>> {
    return replaysStillNeeded(this, await this.claimDeliveries({ ...options, idleMs: this.policy.idleMs }));
  }

  /** Forget every delivery kept for `signRef` (its session ended). */
  async forgetDeliveries(signRef: string): Promise<void> {
    await this.query('forget webhook deliveries', `DELETE FROM ${this.t.deliveries} WHERE sign_ref = $1`, [ref(signRef)]);
  }

  /** End the pool the store created (a pool passed in stays open: it is yours). Later calls fail with STORE_FAILED. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsPool) await this.pool.end();
    else this.pool.removeListener('error', this.onPoolError);
  }

  // -- internals ------------------------------------------------------------------------------------------------

  /** The row's columns from the record: the due rule evaluated here, at every write. */
  private row(record: SessionRecord): { signRef: string; values: unknown[] } {
    if (!record || typeof record !== 'object' || record.format !== 'singpass-flows/signing-session@1' || !record.state || !isRevision(record.revision)) {
      throw new SingpassFlowsError('STATE_INVALID', 'Session Record: pass the "record" a Singpass Sign step output', { field: 'Session Record' });
    }
    const signRef = ref(record.state.signRef);
    const updatedAt = record.state.updatedAt;
    if (typeof updatedAt !== 'number' || !Number.isFinite(updatedAt)) throw new SingpassFlowsError('STATE_INVALID', `Session record ${signRef}: state.updatedAt is not a time`, { field: 'Session Record' });
    const next = nextStep(record, this.policy);
    // A time that never comes (none today) is stored as NULL: never due.
    const dueAt = Number.isFinite(next.at) ? Math.ceil(next.at) : null;
    const stored = withPhase(record);
    return { signRef, values: [signRef, record.revision, record.state.status, next.action, dueAt, updatedAt, JSON.stringify(stored), stored.phase] };
  }

  /** Writes the session's PDF; resolves with the row's version (see DOCUMENT_VERSION). */
  private async writeDocument(c: PoolClient, signRef: string, pdf: Buffer): Promise<string> {
    if (!Buffer.isBuffer(pdf)) throw new SingpassFlowsError('INVALID_INPUT', 'document: the PDF must be a Buffer', { field: 'document' });
    const r = await c.query<{ v: string }>(`INSERT INTO ${this.t.documents} (sign_ref, pdf) VALUES ($1, $2)
      ON CONFLICT (sign_ref) DO UPDATE SET pdf = EXCLUDED.pdf, written_at = now() RETURNING ${DOCUMENT_VERSION} AS v`, [signRef, pdf]);
    return r.rows[0].v;
  }

  private dueQuery(options: ListDueOptions): { now: number; limit: number; actions: SessionAction[] } {
    const o = options ?? {};
    if (o.idleSeconds !== undefined && o.idleSeconds * 1000 !== this.policy.idleMs) {
      throw new SingpassFlowsError('INVALID_INPUT', `idleSeconds: this store decides "due" with the idle time it was created with (${this.policy.idleMs / 1000} s, stored with every record); create it with idleMs: ${o.idleSeconds * 1000} instead`, { field: 'idleSeconds' });
    }
    const now = o.now ?? this.now();
    const limit = o.limit ?? DEFAULT_DUE_LIMIT;
    if (!Number.isFinite(now)) throw new SingpassFlowsError('INVALID_INPUT', 'now: UNIX milliseconds', { field: 'now' });
    if (!Number.isSafeInteger(limit) || limit < 1) throw new SingpassFlowsError('INVALID_INPUT', 'limit: a whole number ≥ 1', { field: 'limit' });
    const actions = o.actions ?? DUE_ACTIONS;
    if (!Array.isArray(actions) || actions.some((a) => !ALL_ACTIONS.includes(a))) throw new SingpassFlowsError('INVALID_INPUT', `actions: any of ${ALL_ACTIONS.join(', ')}`, { field: 'actions' });
    return { now: Math.floor(now), limit, actions };
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

  private async query<R extends QueryResultRow>(what: string, sql: string, values: unknown[] = []): Promise<R[]> {
    return this.withClient(what, async (c) => (await c.query<R>(sql, values)).rows);
  }

  /** One statement or more on one connection, outside a transaction (each statement is atomic on its own). */
  private async withClient<T>(what: string, work: (c: PoolClient) => Promise<T>, needsSchema = true): Promise<T> {
    if (this.closed) throw new SingpassFlowsError('STORE_FAILED', `Session store (PostgreSQL): cannot ${what}: the store was closed`, { retryable: false });
    if (needsSchema && this.autoMigrate) await this.ensureSchema();
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw storeError(e, what, this.secrets, 'connect');
    }
    // A checked-out connection has no pool listener: one lost between two statements would crash the process.
    let lost: unknown;
    const onError = (e: Error): void => void (lost = e);
    client.on('error', onError);
    let failure: unknown;
    try {
      return await work(client);
    } catch (e) {
      failure = e;
      if (e instanceof SingpassFlowsError) throw e;
      throw storeError(e, what, this.secrets, 'query');
    } finally {
      client.removeListener('error', onError);
      // A connection that failed is not given back to the pool (its state is unknown).
      client.release(lost !== undefined || (failure !== undefined && !(failure instanceof SingpassFlowsError)) ? true : undefined);
    }
  }

  /** `work` in one transaction (rolled back when it throws). */
  private async transaction<T>(what: string, needsSchema: boolean, work: (c: PoolClient) => Promise<T>): Promise<T> {
    return this.withClient(what, async (c) => {
      await c.query('BEGIN');
      try {
        const result = await work(c);
        await c.query('COMMIT');
        return result;
      } catch (e) {
        await c.query('ROLLBACK').catch(() => undefined);
        throw e;
      }
    }, needsSchema);
  }

  private async ensureSchema(): Promise<void> {
    if (!this.ready) {
      this.ready = this.migrate().then(() => undefined);
      void this.ready.catch(() => (this.ready = undefined)); // a failed attempt (server down) is retried by the next call
    }
    return this.ready;
  }
}

export interface PgSessionStoreOptions {
  /** Prefix of the store's tables (lower-case letters, digits, `_`; default `singpass_sign_`). */
  tablePrefix?: string;
  /** The engine's scan extension (default: the engine's), for the deadline in the due rule. */
  scanExtensionSeconds?: number;
  /**
   * How long a record in the middle of a step (claimed, at the save point, signed) is left to the execution working
   * on it before it is due for a scheduler (default 45 000 ms: a live run saves within seconds). Part of `due_at`:
   * every process sharing the tables should use the same value.
   */
  idleMs?: number;
  /** How long an ended record is kept before its `forget` step is due (default 7 days). `cleanUp` takes its own. */
  retentionMs?: number;
  /** Clock (UNIX ms) for listDue, claimDue and cleanUp. */
  now?: () => number;
  /** Create or upgrade the tables on first use (default true). False: call `migrate()` yourself (e.g. as a DB owner). */
  autoMigrate?: boolean;
  /**
   * PDFs this process wrote or read lately, kept in memory (default 64 MiB, 15 min unused) and served when the row is
   * still at the same version; `false`: every step reads the PDF from the database.
   */
  documentCache?: DocumentCacheOptions | false;
}

export interface ListDueOptions {
  /** UNIX ms (default: the store's clock). */
  now?: number;
  /** At most this many, the longest due first (default 1000). */
  limit?: number;
  /** Only these next steps (default: all but `forget`, which cleanUp handles). */
  actions?: SessionAction[];
  /** FileSessionStore's parameter: must equal the store's `idleMs` (in seconds) when given. */
  idleSeconds?: number;
  /** `listDue` only: also delete the ended sessions unchanged this long ({@link PgSessionStore.deleteEnded}). */
  retentionSeconds?: number;
}

/** Anything with the `pg.Pool` methods the store uses (a pool from another copy of `pg` fails `instanceof`). */
type PoolLike = Pick<Pool, 'connect' | 'on' | 'removeListener' | 'end'>;

interface DueRow {
  sign_ref: string;
  next_action: string;
  /** int8 arrives as text. */
  due_at: string;
  record: unknown;
}

interface DeliveryRow {
  type: SigningEvent['type'];
  applied: boolean;
  /** int8 arrives as text. */
  received_at: string;
  delivery: unknown;
}

interface Tables {
  schemaVersion: string;
  sessions: string;
  sessionsDue: string;
  sessionsEnded: string;
  documents: string;
  signedDocuments: string;
  deliveries: string;
  deliveriesTodo: string;
}

export const DEFAULT_TABLE_PREFIX = 'singpass_sign_';
const DEFAULT_IDLE_MS = SESSION_POLICY.takeOverIdleMs;
/** Every lease a claim hands out: the policy's, never a caller's. */
const LEASE_MS = SESSION_POLICY.leaseMs;
const DEFAULT_DUE_LIMIT = 1000;
const ALL_ACTIONS: readonly SessionAction[] = ['continueCertificate', 'submitHash', 'finish', 'handOver', 'expire', 'forget'];
const DUE_ACTIONS: SessionAction[] = ['continueCertificate', 'submitHash', 'finish', 'handOver', 'expire'];
/** Longest table/index name suffix: a prefix leaves room for it within PostgreSQL's 63-byte identifiers. */
const LONGEST_SUFFIX = 'signed_documents'.length;

/**
 * A document row's version: when it was written (µs) and its size. Compared for equality only, to tell whether a PDF
 * kept in memory is still the row's (a rewrite gets a new `written_at`).
 */
const DOCUMENT_VERSION = `(extract(epoch FROM written_at) * 1000000)::bigint || ':' || octet_length(pdf)`;

/**
 * Pools the store creates: a bounded wait for a connection and for a statement, so an unreachable or stuck server
 * fails the call (STORE_BUSY) instead of hanging a webhook; TCP keep-alive to notice dead peers.
 */
const POOL_DEFAULTS: PoolConfig = {
  max: 10,
  connectionTimeoutMillis: 10_000,
  idleTimeoutMillis: 30_000,
  query_timeout: 60_000,
  keepAlive: true,
  application_name: 'singpass-flows session store',
};

/** The schema, in order: version N is MIGRATIONS[N - 1]. Append only; never edit a released step. */
const MIGRATIONS: readonly ((t: Tables) => string[])[] = [
  (t) => [
    `CREATE TABLE ${t.sessions} (
      sign_ref text PRIMARY KEY,
      revision integer NOT NULL,
      status text NOT NULL,
      next_action text NOT NULL,
      due_at bigint,
      updated_at timestamptz NOT NULL,
      written_at timestamptz NOT NULL DEFAULT now(),
      lease_owner text,
      lease_until bigint,
      record jsonb NOT NULL)`,
    // "What is due" is a range scan in due order (sign_ref: a stable order among equal times).
    `CREATE INDEX ${t.sessionsDue} ON ${t.sessions} (due_at, sign_ref)`,
    `CREATE INDEX ${t.sessionsEnded} ON ${t.sessions} (updated_at) WHERE status IN ('completed', 'failed', 'expired')`,
    `CREATE TABLE ${t.documents} (sign_ref text PRIMARY KEY, pdf bytea NOT NULL, written_at timestamptz NOT NULL DEFAULT now())`,
    // PDFs are mostly compressed already: store them out of line without another compression pass.
    `ALTER TABLE ${t.documents} ALTER COLUMN pdf SET STORAGE EXTERNAL`,
    `CREATE TABLE ${t.signedDocuments} (sign_ref text PRIMARY KEY, pdf bytea NOT NULL, written_at timestamptz NOT NULL DEFAULT now())`,
    `ALTER TABLE ${t.signedDocuments} ALTER COLUMN pdf SET STORAGE EXTERNAL`,
  ],
  (t) => [
    // Verified webhook deliveries until applied: one per session and event type (the key decides duplicates).
    `CREATE TABLE ${t.deliveries} (
      sign_ref text NOT NULL,
      type text NOT NULL,
      applied boolean NOT NULL DEFAULT false,
      received_at bigint NOT NULL,
      lease_owner text,
      lease_until bigint,
      delivery jsonb NOT NULL,
      PRIMARY KEY (sign_ref, type))`,
    `CREATE INDEX ${t.deliveriesTodo} ON ${t.deliveries} (received_at) WHERE NOT applied`,
  ],
  (t) => [
    // The session's phase (transitions.ts), stored with every write. Rows written before it was stored get the
    // phase their record's fields describe (phaseFromFields, in SQL), in the column and in the record.
    `ALTER TABLE ${t.sessions} ADD COLUMN phase text`,
    `UPDATE ${t.sessions} SET phase = CASE status
        WHEN 'waiting_for_scan' THEN 'waitingForScan'
        WHEN 'certificate_received' THEN CASE
          WHEN record ? 'submitting' AND record ? 'prepared' THEN 'atSavePoint'
          WHEN NOT record ? 'submitting' AND NOT record ? 'prepared' AND record->'state' ? 'certificate' AND record->'state' ? 'nonce' THEN 'certificateClaimed'
          ELSE 'hashSubmitted' END
        WHEN 'hash_submitted' THEN 'hashSubmitted'
        ELSE status END`,
    `UPDATE ${t.sessions} SET record = jsonb_set(record, '{phase}', to_jsonb(phase)) WHERE NOT record ? 'phase'`,
    `ALTER TABLE ${t.sessions} ALTER COLUMN phase SET NOT NULL`,
  ],
];

function tables(p: string): Tables {
  return { schemaVersion: `${p}schema_version`, sessions: `${p}sessions`, sessionsDue: `${p}sessions_due_at`, sessionsEnded: `${p}sessions_ended`, documents: `${p}documents`, signedDocuments: `${p}signed_documents`,
    deliveries: `${p}deliveries`, deliveriesTodo: `${p}deliveries_todo` };
}

/** Only names that need no quoting (and so cannot inject SQL), short enough for every table and index name. */
function checkPrefix(prefix: string): string {
  if (typeof prefix !== 'string' || !/^[a-z_][a-z0-9_]*$/.test(prefix) || prefix.length + LONGEST_SUFFIX > 63) {
    throw new SingpassFlowsError('INVALID_INPUT', `tablePrefix: lower-case letters, digits and "_", starting with a letter or "_", at most ${63 - LONGEST_SUFFIX} characters (e.g. ${DEFAULT_TABLE_PREFIX})`, { field: 'tablePrefix' });
  }
  return prefix;
}

/** A signed 64-bit advisory lock key from the prefix (stable across processes and versions). */
function lockKey(prefix: string): string {
  return createHash('sha256').update(`singpass-flows/session-store/${prefix}`).digest().readBigInt64BE(0).toString();
}

async function schemaVersion(c: PoolClient, t: Tables): Promise<number> {
  const exists = await c.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [t.schemaVersion]);
  if (!exists.rows[0]?.t) return 0;
  const r = await c.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${t.schemaVersion}`);
  return r.rows[0]?.v ?? 0;
}

function newerSchema(found: number, known: number): SingpassFlowsError {
  return new SingpassFlowsError('STORE_FAILED', `Session store (PostgreSQL): the tables are at schema version ${found}, newer than this package knows (${known}); upgrade @singpass-flows/n8n-nodes-singpass on this process`, { retryable: false, schemaVersion: found });
}

function isPool(x: unknown): x is PoolLike {
  return x instanceof Pool || (!!x && typeof x === 'object' && typeof (x as PoolLike).connect === 'function' && typeof (x as PoolLike).end === 'function' && typeof (x as PoolLike).on === 'function');
}

function checkOwner(owner: unknown): string {
  if (typeof owner !== 'string' || owner === '' || owner.length > 200) throw new SingpassFlowsError('INVALID_INPUT', 'owner: name the claiming process (1 to 200 characters), e.g. host:pid', { field: 'owner' });
  return owner;
}

const EVENT_TYPES: readonly SigningEvent['type'][] = ['certificate', 'signature', 'error'];

function eventType(type: unknown): SigningEvent['type'] {
  if (!EVENT_TYPES.includes(type as SigningEvent['type'])) throw new SingpassFlowsError('INVALID_INPUT', `type: one of ${EVENT_TYPES.join(', ')}`, { field: 'type' });
  return type as SigningEvent['type'];
}

/** SET clause of a delivery marked applied: no lease, the certificate replaced by `redacted` (the parameter holding REDACTED_CERTIFICATE_JSON). */
const APPLIED_SET = (redacted: string): string => `applied = true, lease_owner = NULL, lease_until = NULL,
  delivery = CASE WHEN type = 'certificate' THEN jsonb_set(delivery, '{event,certificate}', ${redacted}::jsonb) ELSE delivery END`;

/** The event types a record no longer needs a kept delivery of. */
function deliveriesGonePast(record: SessionRecord): SigningEvent['type'][] {
  return (['certificate', 'signature', 'error'] as const).filter((type) => !isDeliveryStillNeeded(record, type));
}

function keptDelivery(row: DeliveryRow): KeptDelivery {
  return { type: row.type, applied: row.applied, receivedAt: Number(row.received_at), delivery: deliveryFromJson(row.delivery, 'stored delivery') };
}

function isRevision(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 2_147_483_647;
}

function ref(signRef: string): string {
  return checkSignRef(signRef);
}

function parseRecord(value: unknown, signRef: string): SessionRecord {
  const r = value as Partial<SessionRecord> | null;
  if (!r || typeof r !== 'object' || r.format !== 'singpass-flows/signing-session@1' || !r.state || typeof r.revision !== 'number') {
    throw new SingpassFlowsError('STATE_INVALID', `The stored row for ${signRef} is not a session record (not the JSON a Singpass Sign step output)`, { field: 'Session Record' });
  }
  return withPhase(r as SessionRecord);
}


// -- errors -------------------------------------------------------------------------------------------------------

/** Node socket errors of a server that is down, restarting or unreachable. */
const TRANSIENT_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EAI_AGAIN', 'EADDRNOTAVAIL']);
/** node-postgres's own errors (no code) of a lost or slow connection. */
const TRANSIENT_MESSAGE = /timeout exceeded when trying to connect|connection terminated|query read timeout|connection timeout|not queryable|terminating connection/i;

/**
 * A driver or server error as a SingpassFlowsError: STORE_BUSY (retryable) when the server is unreachable, shutting
 * down or starting, timed out, out of connections or asked to retry a transaction; STORE_FAILED otherwise. The
 * message is the driver's, with every password it could contain removed (no `cause`: it may reference the config).
 */
function storeError(e: unknown, what: string, secrets: string[], phase: 'connect' | 'query'): SingpassFlowsError {
  const err = (e ?? {}) as { code?: unknown; message?: unknown; errors?: unknown };
  const inner = Array.isArray(err.errors) ? (err.errors[0] as typeof err | undefined) : undefined; // AggregateError of a multi-address connect
  const code = typeof err.code === 'string' ? err.code : typeof inner?.code === 'string' ? inner.code : undefined;
  const raw = typeof err.message === 'string' && err.message ? err.message : typeof inner?.message === 'string' ? inner.message : String(e);
  const message = redact(raw, secrets);
  const sqlState = code && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  const details: ErrorDetails = { ...(sqlState ? { sqlState } : code ? { errno: code } : {}) };
  const busy = (kind: string): SingpassFlowsError => new SingpassFlowsError('STORE_BUSY', `Session store (PostgreSQL) ${kind}: could not ${what} (${message}). ${phase === 'connect'
    ? 'Nothing was written; retry'
    : 'Retry: compare-and-set makes it safe (a save that did go through is then refused as a conflict at its new revision)'}`, { ...details, retryable: true, phase });
  if (code && TRANSIENT_ERRNO.has(code)) return busy('unreachable');
  if (sqlState) {
    if (sqlState.startsWith('08')) return busy('connection lost');
    if (sqlState === '57P01' || sqlState === '57P02' || sqlState === '57P03') return busy('shutting down or starting');
    if (sqlState === '57014') return busy('statement timed out');
    if (sqlState.startsWith('53')) return busy('out of resources (connections, memory or disk)');
    if (sqlState === '40001' || sqlState === '40P01' || sqlState === '55P03') return busy('busy (lock or serialization conflict)');
    if (sqlState.startsWith('28')) return new SingpassFlowsError('STORE_FAILED', `Session store (PostgreSQL) refused the login: ${message}. Check the user and password of the connection`, { ...details, retryable: false });
    if (sqlState === '22P05' || sqlState === '22021') return new SingpassFlowsError('STATE_INVALID', `Session store (PostgreSQL): could not ${what}: the record holds text PostgreSQL cannot store (${message})`, { ...details, retryable: false });
  } else if (TRANSIENT_MESSAGE.test(raw)) {
    return busy(/timeout/i.test(raw) ? 'timed out' : 'connection lost');
  }
  return new SingpassFlowsError('STORE_FAILED', `Session store (PostgreSQL): could not ${what}: ${message}${sqlState ? ` (SQLSTATE ${sqlState})` : ''}. Check the database, the user's rights and the connection settings`, { ...details, retryable: false });
}

/** Passwords a pool config holds (its own field and the connection string's), to be removed from messages. */
function secretsOf(config: PoolConfig | undefined): string[] {
  const out: string[] = [];
  if (typeof config?.password === 'string' && config.password) out.push(config.password);
  if (typeof config?.connectionString === 'string') {
    try {
      const pw = new URL(config.connectionString).password;
      if (pw) out.push(pw, decodeURIComponent(pw));
    } catch {
      // not a URL (key=value form): the generic rule below still applies
    }
    const kv = /(?:^|\s)password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)/i.exec(config.connectionString);
    if (kv?.[1]) out.push(kv[1].replace(/^'|'$/g, ''));
  }
  return [...new Set(out)].filter((s) => s.length > 0);
}

function redact(text: string, secrets: string[]): string {
  let s = text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)[^@\s]*@/gi, '$1***@').replace(/(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)/gi, '$1***');
  for (const secret of secrets) s = s.split(secret).join('***');
  return s;
}
