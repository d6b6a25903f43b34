import type { PoolClient } from 'pg';
import { SingpassFlowsError } from '../../errors';
import type { SaveOutcome } from '../file-store';
import { REDACTED_CERTIFICATE_JSON } from '../deliveries';
import { nextStep } from '../next-step';
import { withPhase } from '../transitions';
import type { SessionRecord } from '../types';
import { isRevision, ref } from './connection';
import { APPLIED_SET, PgDeliveries, deliveriesGonePast } from './deliveries';

/**
 * The PostgreSQL store's records (`<prefix>sessions`): the record as JSONB and the columns derived from it at every
 * write — `revision`, `status`, `phase`, `next_action` / `due_at` (THE due rule, `nextStep(record, policy)`), and
 * `updated_at`. Every update is compare-and-set in ONE statement (`UPDATE … WHERE sign_ref = $1 AND revision = $2`;
 * a new record: `INSERT … ON CONFLICT DO NOTHING`), never read-then-write; the record and its PDF in one transaction.
 */
export abstract class PgRecords extends PgDeliveries {
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

  /** The row's columns from the record: the due rule evaluated here, at every write. */
  protected row(record: SessionRecord): { signRef: string; values: unknown[] } {
    if (!record || typeof record !== 'object' || record.format !== 'singpass-flows/signing-session@1' || !record.state || !isRevision(record.revision)) {
      throw new SingpassFlowsError('STATE_INVALID', 'Session Record: pass the "record" a Singpass Sign step output', { field: 'Session Record' });
    }
    const signRef = ref(record.state.signRef);
    const updatedAt = record.state.updatedAt;
    if (typeof updatedAt !== 'number' || !Number.isFinite(updatedAt)) throw new SingpassFlowsError('STATE_INVALID', `Session record ${signRef}: state.updatedAt is not a time`, { field: 'Session Record' });
    const next = nextStep(record, this.dueRule);
    // A time that never comes (none today) is stored as NULL: never due.
    const dueAt = Number.isFinite(next.at) ? Math.ceil(next.at) : null;
    const stored = withPhase(record);
    return { signRef, values: [signRef, record.revision, record.state.status, next.action, dueAt, updatedAt, JSON.stringify(stored), stored.phase] };
  }
}

export function parseRecord(value: unknown, signRef: string): SessionRecord {
  const r = value as Partial<SessionRecord> | null;
  if (!r || typeof r !== 'object' || r.format !== 'singpass-flows/signing-session@1' || !r.state || typeof r.revision !== 'number') {
    throw new SingpassFlowsError('STATE_INVALID', `The stored row for ${signRef} is not a session record (not the JSON a Singpass Sign step output)`, { field: 'Session Record' });
  }
  return withPhase(r as SessionRecord);
}

