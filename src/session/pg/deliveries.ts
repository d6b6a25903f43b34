import { SingpassFlowsError } from '../../errors';
import type { SigningEvent } from '../../sign';
import { deliveryFromJson, deliveryToJson } from '../delivery-codec';
import { REDACTED_CERTIFICATE_JSON, isDeliveryStillNeeded, replaysStillNeeded, type DeliveryStore, type KeptDelivery } from '../deliveries';
import type { SessionRecord, VerifiedDelivery } from '../types';
import { checkOwner, ref, } from './connection';
import { PgDocuments } from './documents';

/**
 * The PostgreSQL store's kept webhook deliveries (`<prefix>deliveries`, {@link DeliveryStore}): one per session and
 * event type (`INSERT … ON CONFLICT DO NOTHING`: of processes given the same event, one is told it is fresh), with a
 * lease so that exactly one process replays a delivery another left unapplied (`claimDeliveries`).
 */
export abstract class PgDeliveries extends PgDocuments implements DeliveryStore {
  abstract get(signRef: string): Promise<SessionRecord | undefined>;

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
    const { now, limit } = this.window({ now: options?.now, limit: options?.limit });
    const owner = checkOwner(options?.owner);
    const idleMs = options.idleMs;
    if (typeof idleMs !== 'number' || !Number.isFinite(idleMs) || idleMs < 0) throw new SingpassFlowsError('INVALID_INPUT', 'idleMs: a number of milliseconds ≥ 0', { field: 'idleMs' });
    const rows = await this.query<DeliveryRow & { sign_ref: string }>('claim pending webhook deliveries', `WITH c AS (
        SELECT sign_ref, type FROM ${this.t.deliveries}
        WHERE NOT applied AND received_at <= $1 AND (lease_until IS NULL OR lease_until <= $2)
        ORDER BY received_at, sign_ref, type LIMIT $3 FOR UPDATE SKIP LOCKED)
      UPDATE ${this.t.deliveries} d SET lease_owner = $4, lease_until = $5 FROM c WHERE d.sign_ref = c.sign_ref AND d.type = c.type
      RETURNING d.sign_ref, d.type, d.applied, d.received_at, d.delivery`, [now - Math.ceil(idleMs), now, limit, owner, now + this.policy.leaseMs]);
    // RETURNING keeps no order: oldest first again (sign_ref, type among equal times)
    return rows.sort((a, b) => Number(a.received_at) - Number(b.received_at) || (a.sign_ref < b.sign_ref ? -1 : a.sign_ref > b.sign_ref ? 1 : a.type < b.type ? -1 : 1)).map(keptDelivery);
  }

  /**
   * The deliveries to replay now: kept at least the store's `idleMs` ago and never applied (`claimDeliveries`, leased
   * to `owner`), each with its session's record, for those the record still needs (`isDeliveryStillNeeded`). The
   * others — their session ended or is gone, or a record saved before the delivery was kept had gone past it (a save
   * marks those itself) — are marked applied here.
   */
  async claimDeliveriesToReplay(options: { owner: string; limit?: number; idleMs?: number; now?: number }): Promise<Array<{ kept: KeptDelivery; record: SessionRecord }>> {
    return replaysStillNeeded(this, await this.claimDeliveries({ ...options, idleMs: options.idleMs ?? this.dueRule.idleMs }));
  }

  /** Forget every delivery kept for `signRef` (its session ended). */
  async forgetDeliveries(signRef: string): Promise<void> {
    await this.query('forget webhook deliveries', `DELETE FROM ${this.t.deliveries} WHERE sign_ref = $1`, [ref(signRef)]);
  }
}

interface DeliveryRow {
  type: SigningEvent['type'];
  applied: boolean;
  /** int8 arrives as text. */
  received_at: string;
  delivery: unknown;
}

const EVENT_TYPES: readonly SigningEvent['type'][] = ['certificate', 'signature', 'error'];

function eventType(type: unknown): SigningEvent['type'] {
  if (!EVENT_TYPES.includes(type as SigningEvent['type'])) throw new SingpassFlowsError('INVALID_INPUT', `type: one of ${EVENT_TYPES.join(', ')}`, { field: 'type' });
  return type as SigningEvent['type'];
}

/** SET clause of a delivery marked applied: no lease, the certificate replaced by `redacted` (the parameter holding REDACTED_CERTIFICATE_JSON). */
export const APPLIED_SET = (redacted: string): string => `applied = true, lease_owner = NULL, lease_until = NULL,
  delivery = CASE WHEN type = 'certificate' THEN jsonb_set(delivery, '{event,certificate}', ${redacted}::jsonb) ELSE delivery END`;

/** The event types a record no longer needs a kept delivery of. */
export function deliveriesGonePast(record: SessionRecord): SigningEvent['type'][] {
  return (['certificate', 'signature', 'error'] as const).filter((type) => !isDeliveryStillNeeded(record, type));
}

function keptDelivery(row: DeliveryRow): KeptDelivery {
  return { type: row.type, applied: row.applied, receivedAt: Number(row.received_at), delivery: deliveryFromJson(row.delivery, 'stored delivery') };
}
