/**
 * One-time move of the sessions an older version of these nodes kept in Node-RED's context store (records under
 * `singpassSign_<sign_ref as base64url>`, kept deliveries under `singpassSignDelivery_…`, the PDFs in the old
 * document folder) into the folder store, so sessions in flight at the upgrade still complete. Each session is
 * written to the folder (PDF, deliveries, then the record) before it is removed from context: a crash midway imports
 * it again next start; a session whose record is in the folder already is only removed from context.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { deliveryFromJson, type FileSessionStore, type KeptDelivery, type SessionRecord } from '../../src/session';
import type { ContextStore } from './types';

const RECORD = 'singpassSign_';
const DELIVERY = 'singpassSignDelivery_';

export interface ContextImport {
  /** The config node's global context. */
  context: ContextStore;
  /** The context store the old version used (settings.js name; empty: the default store). */
  storeName: string;
  /** The old document folder (the PDFs waiting for their signature). */
  documentDir: string;
}

/** Move every session found; resolves with the sign_refs moved. A session that cannot be read is left where it is. */
export async function importContextSessions(from: ContextImport, to: FileSessionStore): Promise<string[]> {
  const store = from.storeName || undefined;
  const keys = await new Promise<string[]>((resolve, reject) => from.context.keys(store, (err, k) => (err ? reject(err) : resolve(k ?? []))));
  const moved: string[] = [];
  for (const key of keys.filter((k) => k.startsWith(RECORD))) {
    const record = await read<SessionRecord>(from, store, key);
    const signRef = record?.state?.signRef;
    if (!record || typeof signRef !== 'string' || typeof record.revision !== 'number') continue;
    const encoded = key.slice(RECORD.length);
    const oldPdf = path.join(from.documentDir, `${encoded}.pdf`);
    // Already in the folder (moved before a crash kept context from forgetting it): the folder's record is the
    // truth, and it may have ended since; its old deliveries must not come back to be replayed.
    if (!(await to.get(signRef))) {
      const pdf = await fs.readFile(oldPdf).catch(() => undefined);
      if (pdf && !(await to.getDocument(signRef))) await to.putDocument(signRef, pdf);
      const deliveries = (await read<Record<string, KeptDelivery>>(from, store, DELIVERY + encoded)) ?? {};
      for (const kept of Object.values(deliveries)) {
        if (!kept || typeof kept !== 'object') continue;
        await to.rememberDelivery(deliveryFromJson(kept.delivery, 'kept webhook delivery'));
        if (kept.applied) await to.markDeliveryApplied(signRef, kept.type);
      }
      await to.save(record, undefined); // last: a crash before it imports the session again next start
    }
    await write(from, store, DELIVERY + encoded);
    await write(from, store, key);
    await fs.rm(oldPdf, { force: true });
    moved.push(signRef);
  }
  return moved;
}

function read<T>(from: ContextImport, store: string | undefined, key: string): Promise<T | undefined> {
  return new Promise((resolve, reject) => from.context.get(key, store, (err, v) => (err ? reject(err) : resolve(v === undefined ? undefined : (JSON.parse(JSON.stringify(v)) as T)))));
}

function write(from: ContextImport, store: string | undefined, key: string): Promise<void> {
  return new Promise((resolve, reject) => from.context.set(key, undefined, store, (err) => (err ? reject(err) : resolve())));
}
