/**
 * The Node-RED signing nodes' store on PostgreSQL, for several Node-RED instances behind one webhook URL: the core's
 * {@link PgSessionStore} (records with compare-and-set, PDFs, kept deliveries with an atomic "fresh?" and leases)
 * under the names the nodes use. Every instance on the same tables sees every session: a certificate taken by one
 * instance and the signature by another complete the session; what an instance that died left is taken over by the
 * others' sweeps through leases (`claimDue`, `claimDeliveries`), so two instances never work on one record at once.
 */
import type { PoolConfig } from 'pg';
import { SingpassFlowsError } from '../../src/errors';
import { PgSessionStore, SESSION_POLICY, type KeptDelivery, type NextStepPolicy, type SessionAction, type SessionRecord, type VerifiedDelivery } from '../../src/session';
import type { SigningEvent } from '../../src/sign';
import type { SignSessionStore } from './session-store';

/** What the Sign API client config node holds for PostgreSQL (the password is a Node-RED credential). */
export interface PgStoreFields {
  pgHost?: string;
  pgPort?: string | number;
  pgDatabase?: string;
  pgUser?: string;
  pgTablePrefix?: string;
  pgSsl?: boolean | string;
  /** Seconds a session in the middle of a step is left to the instance working on it (default 60). */
  pgTakeOverSeconds?: string | number;
}

export interface PgStoreSettings {
  connection: PoolConfig;
  tablePrefix?: string;
  idleMs: number;
  /** For messages and the status: never the password. */
  where: string;
}

/** Every action the sweep handles, `forget` included (ended records leave after the session policy's retention, as with the folder store). */
const SWEEP_ACTIONS: SessionAction[] = ['continueCertificate', 'submitHash', 'finish', 'expire', 'forget'];
/** At most this many sessions per sweep and instance; the rest wait for the next sweep (or another instance). */
const SWEEP_LIMIT = 100;
const CLEAN_UP_EVERY_MS = 3600 * 1000;

/**
 * The config node's PostgreSQL fields, checked, with messages naming the field as the editor shows it (`clientName`:
 * the config node's name, so a user with several clients knows which one).
 */
export function pgStoreSettings(fields: PgStoreFields, password: string | undefined, clientName: string): PgStoreSettings {
  const text = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');
  const bad = (field: string, why: string) => new SingpassFlowsError('INVALID_INPUT', `Singpass Sign API client "${clientName}", PostgreSQL ${field}: ${why}`, { field: `PostgreSQL ${field}` });
  const host = text(fields.pgHost);
  const database = text(fields.pgDatabase);
  const user = text(fields.pgUser);
  const portText = text(fields.pgPort) || '5432';
  const port = Number(portText);
  const takeOverText = text(fields.pgTakeOverSeconds) || String(SESSION_POLICY.takeOverIdleMs / 1000);
  const takeOver = Number(takeOverText);
  if (!host) throw bad('host', 'is required (the PostgreSQL server\'s host name or address, e.g. db.internal or 127.0.0.1)');
  if (!/^\d+$/.test(portText) || port < 1 || port > 65535) throw bad('port', `"${portText}" is not a port number (1–65535); PostgreSQL's usual port is 5432`);
  if (!database) throw bad('database', 'is required (an existing database; the nodes create their tables in it on first use)');
  if (!user) throw bad('user', 'is required (a user that may create tables in the database, or use tables an admin created)');
  if (!Number.isFinite(takeOver) || takeOver < 1 || takeOver > 3600) throw bad('take over after', `"${takeOverText}" is not a number of seconds between 1 and 3600 (default 60)`);
  const prefix = text(fields.pgTablePrefix);
  return {
    connection: {
      host, port, database, user, password: password ?? '',
      ssl: fields.pgSsl === true || fields.pgSsl === 'true' ? { rejectUnauthorized: true } : undefined,
      application_name: 'singpass-flows node-red',
    },
    ...(prefix ? { tablePrefix: prefix } : {}),
    idleMs: Math.round(takeOver * 1000),
    where: `PostgreSQL database ${database} on ${host}:${port} as ${user}`,
  };
}

export class PgNodeRedStore implements SignSessionStore {
  readonly shared = true;
  readonly idleMs: number;
  readonly pg: PgSessionStore;
  readonly where: string;

  constructor(settings: PgStoreSettings, policy: { retentionMs: number }) {
    this.idleMs = settings.idleMs;
    this.where = settings.where;
    // The due rule is evaluated at every write with THIS policy (due_at column): every instance on the tables
    // should use the same take-over time (they share the flow, so the same config node).
    this.pg = new PgSessionStore(settings.connection, { tablePrefix: settings.tablePrefix, idleMs: settings.idleMs, retentionMs: policy.retentionMs });
    this.retentionMs = policy.retentionMs;
  }

  private readonly retentionMs: number;

  get(signRef: string): Promise<SessionRecord | undefined> {
    return this.pg.get(signRef);
  }

  put(record: SessionRecord, expectedRevision: number | undefined): Promise<boolean> {
    return this.pg.put(record, expectedRevision);
  }

  delete(signRef: string): Promise<void> {
    return this.pg.delete(signRef);
  }

  list(): Promise<string[]> {
    return this.pg.list();
  }

  getDocument(signRef: string): Promise<Buffer | undefined> {
    return this.pg.getDocument(signRef);
  }

  putDocument(signRef: string, pdf: Buffer): Promise<void> {
    return this.pg.putDocument(signRef, pdf);
  }

  deleteDocument(signRef: string): Promise<void> {
    return this.pg.deleteDocument(signRef);
  }

  putSignedDocument(signRef: string, pdf: Buffer): Promise<void> {
    return this.pg.putSignedDocument(signRef, pdf);
  }

  getSignedDocument(signRef: string): Promise<Buffer | undefined> {
    return this.pg.getSignedDocument(signRef);
  }

  /** One `INSERT … ON CONFLICT DO NOTHING`: of instances given the same event at once, exactly one gets true. */
  rememberDelivery(delivery: VerifiedDelivery): Promise<boolean> {
    return this.pg.rememberDelivery(delivery);
  }

  getDelivery(signRef: string, type: SigningEvent['type']): Promise<KeptDelivery | undefined> {
    return this.pg.getDelivery(signRef, type);
  }

  markDeliveryApplied(signRef: string, type: SigningEvent['type']): Promise<void> {
    return this.pg.markDeliveryApplied(signRef, type);
  }

  pendingDeliveries(): Promise<Array<{ signRef: string; type: SigningEvent['type'] }>> {
    return this.pg.pendingDeliveries();
  }

  forgetDeliveries(signRef: string): Promise<void> {
    return this.pg.forgetDeliveries(signRef);
  }

  /** Due sessions by the `due_at` index, each leased to `owner` for the core's SESSION_POLICY.leaseMs (the policy is the one the store was built with). */
  async dueSessions(_policy: NextStepPolicy, owner: string): Promise<Array<{ record: SessionRecord; action: SessionAction }>> {
    await this.housekeeping();
    const { due } = await this.pg.claimDue({ owner, actions: SWEEP_ACTIONS, limit: SWEEP_LIMIT });
    return due.map((d) => ({ record: d.record, action: d.action }));
  }

  claimDeliveriesToReplay(options: { owner: string }): Promise<Array<{ kept: KeptDelivery; record: SessionRecord }>> {
    return this.pg.claimDeliveriesToReplay({ owner: options.owner, limit: SWEEP_LIMIT });
  }

  close(): Promise<void> {
    return this.pg.close();
  }

  private lastCleanUp = 0;

  /**
   * At most hourly: what no record's `forget` step reaches — a PDF whose record was never written (a crash between
   * the two writes of *start signing*), deliveries of sessions that are gone — leaves with the store's `cleanUp`
   * (ended records past the retention too, which the sweep's `forget` would otherwise do one by one).
   */
  private async housekeeping(): Promise<void> {
    if (Date.now() - this.lastCleanUp < CLEAN_UP_EVERY_MS) return;
    this.lastCleanUp = Date.now();
    await this.pg.cleanUp({ retentionSeconds: this.retentionMs / 1000 });
  }
}
