/**
 * The Node-RED nodes' folder store (node-red/lib/folder-session-store.ts) on real files: a folder that cannot be used
 * fails every call with the store codes the webhook node answers 503 on and its sweep reports once (STORE_FAILED /
 * STORE_BUSY), never a raw file-system error. (A Node-RED killed after a delivery's 200: folder-session-store.e2e.test.ts.)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { VerifiedDelivery } from '../../src/session';
import { FolderNodeRedStore } from '../../node-red/lib/folder-session-store';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-folder-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const delivery = { notificationToken: 't', event: { type: 'signature', signRef: 'x', documentHash: 'ab', signature: '30', issuedAt: 1 } } as unknown as VerifiedDelivery;

test('a folder store that cannot be used fails with STORE_FAILED / STORE_BUSY, never a raw file-system error', async () => {
  fs.writeFileSync(path.join(dir, 'file'), 'x');
  const store = new FolderNodeRedStore(path.join(dir, 'file', 'sessions'), { retentionMs: 1000 });
  await expect(store.get('x')).rejects.toMatchObject({ code: 'STORE_FAILED', details: { errno: 'ENOTDIR' } });
  await expect(store.rememberDelivery(delivery)).rejects.toMatchObject({ code: 'STORE_FAILED' });
  await expect(store.dueSessions({})).rejects.toMatchObject({ code: 'STORE_FAILED' });
});
