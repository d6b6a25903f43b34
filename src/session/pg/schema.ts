import { createHash } from 'node:crypto';
import type { PoolClient } from 'pg';
import { SingpassFlowsError } from '../../errors';

/** The store's table and index names, from its prefix. */
export interface Tables {
  schemaVersion: string;
  sessions: string;
  sessionsDue: string;
  sessionsEnded: string;
  sessionsForget: string;
  documents: string;
  signedDocuments: string;
  deliveries: string;
  deliveriesTodo: string;
}

export const DEFAULT_TABLE_PREFIX = 'singpass_sign_';
/** Longest table/index name suffix: a prefix leaves room for it within PostgreSQL's 63-byte identifiers. */
const LONGEST_SUFFIX = 'signed_documents'.length;

/** The schema, in order: version N is MIGRATIONS[N - 1]. Append only; never edit a released step. */
export const MIGRATIONS: readonly ((t: Tables) => string[])[] = [
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
  (t) => [
    // Clean-up follows nextStep's `forget` (stored as next_action / due_at at every write), not a list of statuses.
    `DROP INDEX IF EXISTS ${t.sessionsEnded}`,
    `CREATE INDEX ${t.sessionsForget} ON ${t.sessions} (due_at) WHERE next_action = 'forget'`,
  ],
];

export function tables(p: string): Tables {
  return { schemaVersion: `${p}schema_version`, sessions: `${p}sessions`, sessionsDue: `${p}sessions_due_at`, sessionsEnded: `${p}sessions_ended`, sessionsForget: `${p}sessions_forget`, documents: `${p}documents`, signedDocuments: `${p}signed_documents`,
    deliveries: `${p}deliveries`, deliveriesTodo: `${p}deliveries_todo` };
}

/** Only names that need no quoting (and so cannot inject SQL), short enough for every table and index name. */
export function checkPrefix(prefix: string): string {
  if (typeof prefix !== 'string' || !/^[a-z_][a-z0-9_]*$/.test(prefix) || prefix.length + LONGEST_SUFFIX > 63) {
    throw new SingpassFlowsError('INVALID_INPUT', `tablePrefix: lower-case letters, digits and "_", starting with a letter or "_", at most ${63 - LONGEST_SUFFIX} characters (e.g. ${DEFAULT_TABLE_PREFIX})`, { field: 'tablePrefix' });
  }
  return prefix;
}

/** A signed 64-bit advisory lock key from the prefix (stable across processes and versions). */
export function lockKey(prefix: string): string {
  return createHash('sha256').update(`singpass-flows/session-store/${prefix}`).digest().readBigInt64BE(0).toString();
}

export async function schemaVersion(c: PoolClient, t: Tables): Promise<number> {
  const exists = await c.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [t.schemaVersion]);
  if (!exists.rows[0]?.t) return 0;
  const r = await c.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${t.schemaVersion}`);
  return r.rows[0]?.v ?? 0;
}

export function newerSchema(found: number, known: number): SingpassFlowsError {
  return new SingpassFlowsError('STORE_FAILED', `Session store (PostgreSQL): the tables are at schema version ${found}, newer than this package knows (${known}); upgrade @singpass-flows/n8n-nodes-singpass on this process`, { retryable: false, schemaVersion: found });
}
