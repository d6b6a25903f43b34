/**
 * The one-time move of sessions an older version kept in Node-RED's context store (node-red/lib/context-import.ts)
 * into the folder store, on real files and a context store with Node-RED's callback API: records, their PDF and
 * their kept deliveries (applied or not) arrive; the context keys and the old PDF leave; a session already in the
 * folder (moved before a crash) keeps the folder's record and gets no old delivery back; a second run changes nothing.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { deliveryToJson, FileSessionStore, withPhase, type SessionRecord, type VerifiedDelivery } from '../../src/session';
import { importContextSessions } from '../../node-red/lib/context-import';
import { nodeRedSessionStore } from '../../node-red/lib/store-factory';
import type { ContextStore } from '../../node-red/lib/types';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-import-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Node-RED's context API over a Map (values stored as JSON, as the localfilesystem store does). */
function context(values: Record<string, unknown>): ContextStore & { data: Map<string, string> } {
  const data = new Map(Object.entries(values).map(([k, v]) => [k, JSON.stringify(v)]));
  return {
    data,
    get: ((key: string, _store: string | undefined, cb: (err: Error | null, v?: unknown) => void) => cb(null, data.has(key) ? JSON.parse(data.get(key)!) : undefined)) as ContextStore['get'],
    set: (key, value, _store, cb) => {
      if (value === undefined) data.delete(key);
      else data.set(key, JSON.stringify(value));
      cb(null);
    },
    keys: (_store, cb) => cb(null, [...data.keys()]),
  };
}

const key = (signRef: string) => Buffer.from(signRef, 'utf8').toString('base64url');

function record(signRef: string, revision: number, status = 'waiting_for_scan'): SessionRecord {
  return {
    format: 'singpass-flows/signing-session@1', revision, request: { documentName: 'a.pdf', level: 'B-B' }, document: { length: 4, sha256: '' },
    state: { signRef, status, updatedAt: 1, expiresAt: 2_000_000_000, challengeCode: 'AB12', clientNotificationToken: 't' },
  } as unknown as SessionRecord;
}

function certificate(signRef: string): VerifiedDelivery {
  const der = Buffer.from('c0ffee', 'hex');
  return { notificationToken: 't', event: { type: 'certificate', signRef, nonce: 'n', issuedAt: 1, certificate: { der, base64: der.toString('base64'), subject: 'CN=x', issuer: 'CN=y', serialNumber: '1', notBefore: '', notAfter: '', publicKeyAlgorithm: 'EC' } } } as unknown as VerifiedDelivery;
}

test('moves records, PDFs and kept deliveries to the folder, then removes them from context; a second run changes nothing', async () => {
  const docs = path.join(dir, 'old-documents');
  fs.mkdirSync(docs);
  fs.writeFileSync(path.join(docs, `${key('s.1')}.pdf`), '%PDF');
  const ctx = context({
    [`singpassSign_${key('s.1')}`]: record('s.1', 3, 'certificate_received'),
    [`singpassSignDelivery_${key('s.1')}`]: { certificate: { type: 'certificate', applied: false, delivery: deliveryToJson(certificate('s.1')) } },
    [`singpassSign_${key('s-2')}`]: record('s-2', 5, 'hash_submitted'),
    [`singpassSignDelivery_${key('s-2')}`]: { certificate: { type: 'certificate', applied: false, delivery: deliveryToJson(certificate('s-2')) } },
    [`singpassSign_${key('s_3')}`]: record('s_3', 4, 'hash_submitted'),
    [`singpassSignDelivery_${key('s_3')}`]: { certificate: { type: 'certificate', applied: true, delivery: deliveryToJson(certificate('s_3')) } },
    somethingElse: { mine: true },
  });
  const files = new FileSessionStore(path.join(dir, 'sessions'));
  // moved before a crash kept context from forgetting it, and gone on since: the folder's record wins, and its old
  // delivery does not come back to be replayed
  await files.save(record('s-2', 6, 'completed'), undefined);

  expect((await importContextSessions({ context: ctx, storeName: '', documentDir: docs }, files)).sort()).toEqual(['s-2', 's.1', 's_3']);
  expect(await files.get('s.1')).toEqual(withPhase(record('s.1', 3, 'certificate_received')));
  expect((await files.get('s-2'))?.revision).toBe(6);
  expect(await files.getDelivery('s-2', 'certificate')).toBeUndefined();
  expect((await files.getDocument('s.1'))?.toString()).toBe('%PDF');
  expect(await files.pendingDeliveries()).toEqual([{ signRef: 's.1', type: 'certificate' }]);
  const kept = await files.getDelivery('s.1', 'certificate');
  expect((kept!.delivery.event as { certificate: { der: Buffer } }).certificate.der.toString('hex')).toBe('c0ffee');
  expect((await files.getDelivery('s_3', 'certificate'))?.applied).toBe(true);
  expect([...ctx.data.keys()]).toEqual(['somethingElse']);
  expect(fs.readdirSync(docs)).toEqual([]);

  expect(await importContextSessions({ context: ctx, storeName: '', documentDir: docs }, files)).toEqual([]);
});

test('the folder store is not used before the import ended: a webhook right at start finds the moved session', async () => {
  const ctx = context({ [`singpassSign_${key('early')}`]: record('early', 1) });
  const store = nodeRedSessionStore({ choice: {}, clientName: 'client', sessionDir: path.join(dir, 'sessions'), legacy: { context: ctx, storeName: '', documentDir: dir } });
  expect((await store.get('early'))?.revision).toBe(1);
});
