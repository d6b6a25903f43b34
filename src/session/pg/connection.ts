import { Pool, type PoolClient, type PoolConfig, type QueryResultRow } from 'pg';
import { SingpassFlowsError } from '../../errors';
import { checkSignRef } from '../../sign/validate';
import type { NextStepPolicy } from '../next-step';
import { dueRule, storePolicy, type StorePolicy } from '../store';
import type { DocumentCacheOptions } from '../document-cache';
import { storeError, secretsOf, redact } from './errors';
import { MIGRATIONS, checkPrefix, lockKey, newerSchema, schemaVersion, tables, DEFAULT_TABLE_PREFIX, type Tables } from './schema';

/**
 * The PostgreSQL store's connection and schema: the pool (its own or the caller's), the store's policy and clock,
 * statements with their failures worded as STORE_BUSY / STORE_FAILED (never the password), transactions, and the
 * migrations, applied on first use. The documents, deliveries and records layers build on it (pg-store.ts).
 */
export class PgConnection {
  /** The validated table-name prefix. */
  readonly prefix: string;
  /** The advisory lock key migrations of this prefix hold (bigint, as text): derived from the prefix. */
  readonly migrationLockKey: string;
  protected readonly pool: Pool;
  protected readonly ownsPool: boolean;
  /** The timings the store works by (SESSION_POLICY unless changed): due times, leases, retention. */
  readonly policy: StorePolicy;
  /** {@link policy} as `nextStep` takes it: what `due_at` is computed with at every write. */
  protected readonly dueRule: Required<NextStepPolicy>;
  protected readonly now: () => number;
  protected readonly autoMigrate: boolean;
  protected readonly secrets: string[];
  protected readonly t: Tables;
  protected readonly onPoolError = (e: Error): void => {
    // An idle connection lost (server restarted, admin shutdown): the pool drops it and connects anew on the next
    // call. Without a listener Node would crash the process on this event.
    this.lastPoolError = redact(e.message, this.secrets);
  };
  /** The front end's words for a failure (e.g. the credential field to fix); the error itself by default. */
  protected readonly nameFailure: (e: SingpassFlowsError) => Error;
  /** Where the records are, for messages and logs: the database, host and port (never the password). */
  readonly where: string;
  /** The last error of an idle connection (log-safe), for diagnostics. */
  lastPoolError: string | undefined;
  protected ready: Promise<void> | undefined;
  protected closed = false;

  /**
   * @param connection a `pg.Pool` of yours (you end it; `close()` leaves it open), or a connection string / `pg`
   * pool config for a pool the store creates (and ends in `close()`).
   */
  constructor(connection: string | PoolConfig | PoolLike, options: PgSessionStoreOptions = {}) {
    this.prefix = checkPrefix(options.tablePrefix ?? DEFAULT_TABLE_PREFIX);
    this.t = tables(this.prefix);
    this.migrationLockKey = lockKey(this.prefix);
    this.policy = storePolicy({
      ...options.policy,
      ...(options.idleMs !== undefined ? { takeOverIdleMs: options.idleMs } : {}),
      ...(options.retentionMs !== undefined ? { retentionMs: options.retentionMs } : {}),
      ...(options.scanExtensionSeconds !== undefined ? { scanExtensionSeconds: options.scanExtensionSeconds } : {}),
    });
    this.dueRule = dueRule(this.policy);
    this.now = options.now ?? Date.now;
    this.nameFailure = options.nameFailure ?? ((e) => e);
    this.autoMigrate = options.autoMigrate ?? true;
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
    this.where = options.where ?? whereOf(isPool(connection) ? (connection as { options?: PoolConfig }).options : typeof connection === 'string' ? { connectionString: connection } : connection);
  }


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

  /** End the pool the store created (a pool passed in stays open: it is yours). Later calls fail with STORE_FAILED. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsPool) await this.pool.end();
    else this.pool.removeListener('error', this.onPoolError);
  }

  protected async query<R extends QueryResultRow>(what: string, sql: string, values: unknown[] = []): Promise<R[]> {
    return this.withClient(what, async (c) => (await c.query<R>(sql, values)).rows);
  }

  /** One statement or more on one connection, outside a transaction (each statement is atomic on its own). */
  protected async withClient<T>(what: string, work: (c: PoolClient) => Promise<T>, needsSchema = true): Promise<T> {
    if (this.closed) throw new SingpassFlowsError('STORE_FAILED', `Session store (PostgreSQL): cannot ${what}: the store was closed`, { retryable: false });
    if (needsSchema && this.autoMigrate) await this.ensureSchema();
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw this.nameFailure(storeError(e, what, this.secrets, 'connect'));
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
      if (e instanceof SingpassFlowsError) throw this.nameFailure(e);
      throw this.nameFailure(storeError(e, what, this.secrets, 'query'));
    } finally {
      client.removeListener('error', onError);
      // A connection that failed is not given back to the pool (its state is unknown).
      client.release(lost !== undefined || (failure !== undefined && !(failure instanceof SingpassFlowsError)) ? true : undefined);
    }
  }

  /** The clock reading and row limit of a due list or a claim, checked (`limit` default 1000). */
  protected window(o: { now?: number; limit?: number }): { now: number; limit: number } {
    const now = o.now ?? this.now();
    const limit = o.limit ?? DEFAULT_DUE_LIMIT;
    if (!Number.isFinite(now)) throw new SingpassFlowsError('INVALID_INPUT', 'now: UNIX milliseconds', { field: 'now' });
    if (!Number.isSafeInteger(limit) || limit < 1) throw new SingpassFlowsError('INVALID_INPUT', 'limit: a whole number ≥ 1', { field: 'limit' });
    return { now: Math.floor(now), limit };
  }

  /** `work` in one transaction (rolled back when it throws). */
  protected async transaction<T>(what: string, needsSchema: boolean, work: (c: PoolClient) => Promise<T>): Promise<T> {
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

  protected async ensureSchema(): Promise<void> {
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
  /**
   * The timings (default `SESSION_POLICY`): every process sharing the tables should pass the same, since due times
   * are computed at every write. `idleMs`, `retentionMs` and `scanExtensionSeconds` below change one of them.
   */
  policy?: Partial<StorePolicy>;
  /** The engine's scan extension (default: the engine's), for the deadline in the due rule. */
  scanExtensionSeconds?: number;
  /**
   * How long a record in the middle of a step (claimed, at the save point, signed) is left to the execution working
   * on it before it is due for a scheduler (default 45 000 ms: a live run saves within seconds). Part of `due_at`:
   * every process sharing the tables should use the same value.
   */
  idleMs?: number;
  /** How long an ended record is kept before its `forget` step is due (default: the policy's). */
  retentionMs?: number;
  /** How messages name the database (default: from the connection, e.g. `PostgreSQL database d on h:5432`). */
  where?: string;
  /** How a front end words the store's failures (e.g. naming the credential field most likely wrong). */
  nameFailure?: (e: SingpassFlowsError) => Error;
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

/** `PostgreSQL database <d> on <host>:<port>` from a pool config (a connection string read without its password). */
function whereOf(config: PoolConfig | undefined): string {
  let { host, port, database } = config ?? {};
  if (typeof config?.connectionString === 'string') {
    try {
      const u = new URL(config.connectionString);
      host ??= u.hostname || undefined;
      port ??= u.port ? Number(u.port) : undefined;
      database ??= decodeURIComponent(u.pathname.replace(/^\//, '')) || undefined;
    } catch {
      // key=value form: named by what the config says
    }
  }
  return `PostgreSQL database ${database ?? '(default)'} on ${host ?? 'localhost'}:${port ?? 5432}`;
}

/** Anything with the `pg.Pool` methods the store uses (a pool from another copy of `pg` fails `instanceof`). */
export type PoolLike = Pick<Pool, 'connect' | 'on' | 'removeListener' | 'end'>;

const DEFAULT_DUE_LIMIT = 1000;

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

function isPool(x: unknown): x is PoolLike {
  return x instanceof Pool || (!!x && typeof x === 'object' && typeof (x as PoolLike).connect === 'function' && typeof (x as PoolLike).end === 'function' && typeof (x as PoolLike).on === 'function');
}

export function checkOwner(owner: unknown): string {
  if (typeof owner !== 'string' || owner === '' || owner.length > 200) throw new SingpassFlowsError('INVALID_INPUT', 'owner: name the claiming process (1 to 200 characters), e.g. host:pid', { field: 'owner' });
  return owner;
}

export function isRevision(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 2_147_483_647;
}

export function ref(signRef: string): string {
  return checkSignRef(signRef);
}
