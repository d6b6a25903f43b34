/**
 * The signing webhook node's housekeeping with node-red-node-test-helper: records of sessions that ended more than a
 * day ago leave the context store, recent ones stay; a session past its deadline goes out on the error output as
 * expired. (Deliveries over HTTP are in webhook.e2e.test.ts.)
 */
import type { SessionRecord } from '../../src/session';
import { configNodes, documentDir, getNode, helper, keys, nextMessage, positioned, rootPem, webhookNodes } from './helper';

const DOCUMENTS = documentDir();

afterEach(() => helper.unload());

const now = () => Math.floor(Date.now() / 1000);

function record(signRef: string, status: string, updatedAt: number, expiresAt = now() + 120): SessionRecord {
  return {
    format: 'singpass-flows/signing-session@1', revision: 1, request: { documentName: 'a.pdf', level: 'B-B' }, document: { length: 1, sha256: '' },
    state: { signRef, status, updatedAt, expiresAt, createdAt: updatedAt, challengeCode: 'AB12', clientNotificationToken: 't' },
  } as unknown as SessionRecord;
}

test('ended records are forgotten a day after they ended; an overdue session goes out as expired', async () => {
  await helper.load([configNodes, webhookNodes], positioned([
    { id: 'secretNode', type: 'singpass-notification-secret' },
    { id: 'client', type: 'singpass-sign-client', environment: 'custom', baseUrl: 'http://127.0.0.1:9/sign/api/v1', keySetUrl: 'http://127.0.0.1:9/keys.json', clientId: 'dsap', domainName: 'sign.example.sg', tenantId: 'acme', notificationSecret: 'secretNode', trustedRoots: rootPem(), documentDir: DOCUMENTS },
    { id: 'f1', type: 'tab' },
    { id: 'webhook', z: 'f1', type: 'singpass-sign-webhook', client: 'client', url: '/hook', wires: [[], [], ['expired']] },
    { id: 'expired', z: 'f1', type: 'helper' },
  ]), { client: { signingKey: keys().jwk }, secretNode: { secret: 'x'.repeat(40) } });
  const store = (helper.getNode('client') as unknown as { store: { put(r: SessionRecord, rev: undefined): Promise<boolean>; get(ref: string): Promise<SessionRecord | undefined> } }).store;
  await store.put(record('old', 'completed', now() - 2 * 86400), undefined);
  await store.put(record('recent', 'failed', now() - 3600), undefined);
  await store.put(record('overdue', 'waiting_for_scan', now() - 300, now() - 200), undefined);
  await store.put(record('live', 'waiting_for_scan', now()), undefined);

  const msg = await nextMessage(getNode('expired'), 20_000);
  expect(msg).toMatchObject({ signRef: 'overdue', event: { type: 'expired' }, session: { state: { status: 'expired' }, error: { code: 'SESSION_EXPIRED' } } });
  for (let i = 0; i < 100 && (await store.get('old')); i++) await new Promise((r) => setTimeout(r, 100)); // same sweep, any order
  expect(await store.get('old')).toBeUndefined();
  expect((await store.get('recent'))?.state.status).toBe('failed');
  expect((await store.get('live'))?.state.status).toBe('waiting_for_scan');
  expect((await store.get('overdue'))?.state.status).toBe('expired');
}, 60_000);
