import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { SingpassFlowsError } from '../../errors';
import { createFileExclusive, readFileIfExists, removeFile, syncDir, writeFileAtomic } from '../../files';
import type { SigningEvent } from '../../sign';
import { REDACTED_CERTIFICATE_JSON, replaysStillNeeded, type DeliveryStore, type KeptDelivery } from '../deliveries';
import { deliveryFromJson, deliveryToJson } from '../delivery-codec';
import type { SessionRecord, VerifiedDelivery } from '../types';
import { isSignRef, namesIn, ref } from './base';
import { FolderDocuments } from './documents';

/**
 * The folder store's kept webhook deliveries ({@link DeliveryStore}): one file per session and event,
 * `.deliveries/<signRef>.<type>.json`, created with `createFileExclusive` (temporary file, fsync, hard link): of
 * processes given the same event exactly one is told it is fresh, and a process killed right after its webhook
 * answered 200 leaves the whole delivery on disk.
 */
export abstract class FolderDeliveries extends FolderDocuments implements DeliveryStore {
  abstract get(signRef: string): Promise<SessionRecord | undefined>;

  /** `<dir>/.deliveries/<signRef>.<type>.json` (the type is one of three fixed words, so names never collide). */
  deliveryPath(signRef: string, type: SigningEvent['type']): string {
    return path.join(this.dir, DELIVERIES, `${ref(signRef)}.${eventType(type)}.json`);
  }

  /**
   * Keep a verified delivery until a step applies it; false when this event (sign_ref + type) was kept already. The
   * file appears whole or not at all (hard link of an fsynced temporary file), and only one caller can create it.
   */
  async rememberDelivery(delivery: VerifiedDelivery): Promise<boolean> {
    const json = deliveryToJson(deliveryFromJson(delivery, 'delivery'));
    const { signRef, type } = delivery.event;
    const file = this.deliveryPath(signRef, type);
    await fsp.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const kept: KeptDeliveryFile = { type, applied: false, receivedAt: Math.floor(this.now()), delivery: json };
    return createFileExclusive(file, JSON.stringify(kept));
  }

  /** The kept delivery of `type` for `signRef` (the certificate bytes restored), or undefined. */
  async getDelivery(signRef: string, type: SigningEvent['type']): Promise<KeptDelivery | undefined> {
    const kept = await this.readDelivery(this.deliveryPath(signRef, type));
    return kept && { type: kept.type, applied: kept.applied, receivedAt: kept.receivedAt, delivery: deliveryFromJson(kept.delivery, 'kept webhook delivery') };
  }

  /**
   * The event was applied: a later copy is a duplicate; the user's certificate is not kept beyond that. Under the
   * record's lock, so it cannot bring back a delivery `forgetDeliveries` just removed.
   */
  async markDeliveryApplied(signRef: string, type: SigningEvent['type']): Promise<void> {
    const file = this.deliveryPath(signRef, type);
    const lock = await this.lock(ref(signRef));
    try {
      const kept = await this.readDelivery(file);
      if (!kept || kept.applied) return;
      const event = kept.delivery.event as Record<string, unknown>;
      const delivery = event.type === 'certificate' ? { ...kept.delivery, event: { ...event, certificate: { ...REDACTED_CERTIFICATE_JSON } } } : kept.delivery;
      await writeFileAtomic(file, JSON.stringify({ ...kept, applied: true, delivery }));
    } finally {
      await lock.release();
    }
  }

  /** Every delivery kept and not applied yet, oldest first. Unreadable files are skipped (cleanUp leaves them too). */
  async pendingDeliveries(): Promise<Array<{ signRef: string; type: SigningEvent['type'] }>> {
    const out: Array<{ signRef: string; type: SigningEvent['type']; receivedAt: number }> = [];
    for (const name of await this.deliveryNames()) {
      const kept = await this.readDelivery(path.join(this.dir, DELIVERIES, name)).catch(() => undefined);
      const signRef = (kept?.delivery.event as { signRef?: unknown } | undefined)?.signRef;
      if (kept && !kept.applied && typeof signRef === 'string') out.push({ signRef, type: kept.type, receivedAt: kept.receivedAt ?? 0 });
    }
    out.sort((a, b) => a.receivedAt - b.receivedAt || (a.signRef < b.signRef ? -1 : a.signRef > b.signRef ? 1 : a.type < b.type ? -1 : 1));
    return out.map(({ signRef, type }) => ({ signRef, type }));
  }

  /**
   * The deliveries to replay now (the PostgreSQL store's rule, for one host): kept at least `idleMs` ago (default the
   * policy's take-over time) and never applied, each with its session's record, for those the record still needs
   * (`isDeliveryStillNeeded`); the others are marked applied here. No lease: two processes of one host may both
   * replay one event, and the record's compare-and-set lets one go on.
   */
  async claimDeliveriesToReplay(options: { owner?: string; limit?: number; idleMs?: number; now?: number } = {}): Promise<Array<{ kept: KeptDelivery; record: SessionRecord }>> {
    const idleMs = options.idleMs ?? this.policy.takeOverIdleMs;
    const now = options.now ?? this.now();
    const stale: KeptDelivery[] = [];
    for (const { signRef, type } of await this.pendingDeliveries()) {
      const kept = await this.getDelivery(signRef, type).catch(() => undefined);
      if (kept && !kept.applied && now - (kept.receivedAt ?? 0) >= idleMs) stale.push(kept);
    }
    return replaysStillNeeded(this, options.limit === undefined ? stale : stale.slice(0, options.limit));
  }

  /** Forget every delivery kept for `signRef` (its session ended). */
  async forgetDeliveries(signRef: string): Promise<void> {
    const r = ref(signRef);
    const lock = await this.lock(r);
    try {
      let removed = false;
      for (const type of EVENT_TYPES) removed = (await removeFile(this.deliveryPath(r, type))) || removed;
      if (removed) await syncDir(path.join(this.dir, DELIVERIES));
    } finally {
      await lock.release();
    }
  }

  /** The delivery files (`<signRef>.<type>.json`), not the temporary ones. */
  protected async deliveryNames(): Promise<string[]> {
    return (await namesIn(path.join(this.dir, DELIVERIES))).filter((n) => !n.startsWith('.') && deliveryOwner(n) !== undefined);
  }

  protected async readDelivery(file: string): Promise<KeptDeliveryFile | undefined> {
    const text = await readFileIfExists(file, 'utf8');
    if (text === undefined) return undefined;
    let kept: Partial<KeptDeliveryFile> | undefined;
    try {
      kept = JSON.parse(text) as Partial<KeptDeliveryFile>;
    } catch {
      kept = undefined;
    }
    if (!kept || typeof kept !== 'object' || !EVENT_TYPES.includes(kept.type as SigningEvent['type']) || typeof kept.applied !== 'boolean' || !kept.delivery || typeof kept.delivery !== 'object') {
      throw new SingpassFlowsError('STATE_INVALID', `${path.basename(file)} is not a kept webhook delivery`, { field: 'delivery' });
    }
    return kept as KeptDeliveryFile;
  }
}

/** The folder of kept deliveries (a name starting with `.`: the store's own). */
export const DELIVERIES = '.deliveries';
export const EVENT_TYPES: SigningEvent['type'][] = ['certificate', 'signature', 'error'];

/** A kept delivery as its file holds it: the delivery in the core codec's JSON form (the certificate as base64). */
interface KeptDeliveryFile {
  type: SigningEvent['type'];
  applied: boolean;
  receivedAt?: number;
  delivery: Record<string, unknown>;
}

function eventType(type: unknown): SigningEvent['type'] {
  if (!EVENT_TYPES.includes(type as SigningEvent['type'])) throw new SingpassFlowsError('INVALID_INPUT', `type: "${String(type)}" is not a signing event type (certificate, signature, error)`, { field: 'type' });
  return type as SigningEvent['type'];
}

/** The signRef of a delivery file name `<signRef>.<type>.json`, or undefined for any other name. */
export function deliveryOwner(name: string): string | undefined {
  for (const type of EVENT_TYPES) {
    const suffix = `.${type}.json`;
    if (name.endsWith(suffix) && isSignRef(name.slice(0, -suffix.length))) return name.slice(0, -suffix.length);
  }
  return undefined;
}
