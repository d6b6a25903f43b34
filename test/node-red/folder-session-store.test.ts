/**
 * The Node-RED nodes' folder store (the core's folder store as node-red/lib/store-factory.ts builds it) on real
 * files: a folder that cannot be used fails every call with the store codes the webhook node answers 503 on and its
 * sweep reports once (STORE_FAILED / STORE_BUSY), never a raw file-system error; the sweep's due list; signed copies
 * leaving with the retention. (A Node-RED killed after a delivery's 200: folder-session-store.e2e.test.ts.)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SessionRecord, VerifiedDelivery } from '../../src/session';
import { nodeRedSessionStore } from '../../node-red/lib/store-factory';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-folder-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const folderStore = (sessionDir: string) => nodeRedSessionStore({ choice: {}, clientName: 'client', sessionDir });
const delivery = { notificationToken: 't', event: { type: 'signature', signRef: 'x', documentHash: 'ab', signature: '30', issuedAt: 1 } } as unknown as VerifiedDelivery;

test('a folder store that cannot be used fails with STORE_FAILED / STORE_BUSY, never a raw file-system error', async () => {
  fs.writeFileSync(path.join(dir, 'file'), 'x');
  const store = folderStore(path.join(dir, 'file', 'sessions'));
  await expect(store.get('x')).rejects.toMatchObject({ code: 'STORE_FAILED', details: { errno: 'ENOTDIR' } });
  await expect(store.rememberDelivery(delivery)).rejects.toMatchObject({ code: 'STORE_FAILED' });
  await expect(store.claimDue({ owner: 'me' })).rejects.toMatchObject({ code: 'STORE_FAILED' });
  await expect(store.cleanUp()).rejects.toMatchObject({ code: 'STORE_FAILED' });
});

test('claimDue: what each record needs now by nextStep, a changed record read again, an unreadable file named, a deleted one gone', async () => {
  const store = folderStore(path.join(dir, 'sessions'));
  const now = Math.floor(Date.now() / 1000);
  const record = (signRef: string, revision: number, expiresAt: number) => ({
    format: 'singpass-flows/signing-session@1', revision, request: { documentName: 'a.pdf', level: 'B-B' }, document: { length: 1, sha256: '' },
    state: { signRef, status: 'waiting_for_scan', updatedAt: now, expiresAt, challengeCode: 'AB12', clientNotificationToken: 't' },
  }) as unknown as SessionRecord;
  // past the deadline and the policy's scan extension
  const past = now - 600;
  expect(await store.put(record('late', 1, past), undefined)).toBe(true);
  expect(await store.put(record('waiting', 1, now + 600), undefined)).toBe(true);
  fs.writeFileSync(path.join(dir, 'sessions', 'broken.json'), '{');
  const due = async () => (await store.claimDue({ owner: 'me' })).due.map((d) => `${d.record.state.signRef}@${d.record.revision}:${d.action}`);

  expect(await due()).toEqual(['late@1:expire']);
  expect((await store.claimDue({ owner: 'me' })).unreadable).toEqual(['broken']);
  expect(await store.put(record('waiting', 2, past), 1)).toBe(true); // its deadline moved into the past
  expect((await due()).sort()).toEqual(['late@1:expire', 'waiting@2:expire']);
  const [first] = (await store.claimDue({ owner: 'me' })).due;
  first!.record.revision = 99; // a caller's change does not leak into the next sweep
  await store.delete('late');
  expect(await due()).toEqual(['waiting@2:expire']);
});

test('signed PDFs kept for the signer page leave with their session, or with the retention once their record is gone; others stay', async () => {
  const store = folderStore(path.join(dir, 'signed-retention'));
  const pdf = Buffer.from('%PDF-1.7 signed');
  for (const ref of ['forgotten', 'recorded', 'recent']) await store.putSignedDocument(ref, pdf);
  const old = new Date(Date.now() - 8 * 86_400_000);
  for (const ref of ['forgotten', 'recorded']) fs.utimesSync(path.join(dir, 'signed-retention', `${ref}-signed.pdf`), old, old);
  fs.writeFileSync(path.join(dir, 'signed-retention', 'recorded.json'), '{}'); // a record still there (not readable: kept for an admin)
  await store.cleanUp();
  expect(await store.getSignedDocument('forgotten')).toBeUndefined();
  expect(await store.getSignedDocument('recorded')).toEqual(pdf);
  expect(await store.getSignedDocument('recent')).toEqual(pdf);
});
