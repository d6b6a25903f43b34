/**
 * The signing webhook node's housekeeping with node-red-node-test-helper: records of sessions that ended more than a
 * day ago leave the session store, recent ones stay; a session past its deadline goes out on the error output as
 * expired; a hash prepare signature saved and submit hash has not sent is left to the flow. (Deliveries over HTTP
 * are in webhook.e2e.test.ts, finishing and resubmitting in finishing.e2e.test.ts and prepare-submit.e2e.test.ts.)
 */
import { SESSION_POLICY, type SessionRecord } from '../../src/session';
import { configNodes, sessionDirs, getNode, helper, keys, nextMessage, positioned, rootPem, webhookNodes } from './helper';

const sessionDir = sessionDirs();

afterEach(() => helper.unload());

/** The webhook node on a client whose service is unreachable (127.0.0.1:9): any hash call would fail as HTTP_NETWORK. */
async function loadWebhook(): Promise<{ put(r: SessionRecord, rev: undefined): Promise<boolean>; get(ref: string): Promise<SessionRecord | undefined> }> {
  await helper.load([configNodes, webhookNodes], positioned([
    { id: 'secretNode', type: 'singpass-notification-secret' },
    { id: 'client', type: 'singpass-sign-client', environment: 'custom', baseUrl: 'http://127.0.0.1:9/sign/api/v1', keySetUrl: 'http://127.0.0.1:9/keys.json', clientId: 'dsap', domainName: 'sign.example.sg', tenantId: 'acme', notificationSecret: 'secretNode', trustedRoots: rootPem(), sessionDir: sessionDir() },
    { id: 'f1', type: 'tab' },
    { id: 'webhook', z: 'f1', type: 'singpass-sign-webhook', client: 'client', url: '/hook', wires: [[], [], ['expired'], []] },
    { id: 'expired', z: 'f1', type: 'helper' },
  ]), { client: { signingKey: keys().jwk }, secretNode: { secret: 'x'.repeat(40) } });
  return (helper.getNode('client') as unknown as { store: Awaited<ReturnType<typeof loadWebhook>> }).store;
}

const now = () => Math.floor(Date.now() / 1000);

function record(signRef: string, status: string, updatedAt: number, expiresAt = now() + 120): SessionRecord {
  return {
    format: 'singpass-flows/signing-session@1', revision: 1, request: { documentName: 'a.pdf', level: 'B-B' }, document: { length: 1, sha256: '' },
    state: { signRef, status, updatedAt, expiresAt, createdAt: updatedAt, challengeCode: 'AB12', clientNotificationToken: 't' },
  } as unknown as SessionRecord;
}

test('ended records are forgotten once the session policy\'s retention passed; an overdue session goes out as expired', async () => {
  await helper.load([configNodes, webhookNodes], positioned([
    { id: 'secretNode', type: 'singpass-notification-secret' },
    { id: 'client', type: 'singpass-sign-client', environment: 'custom', baseUrl: 'http://127.0.0.1:9/sign/api/v1', keySetUrl: 'http://127.0.0.1:9/keys.json', clientId: 'dsap', domainName: 'sign.example.sg', tenantId: 'acme', notificationSecret: 'secretNode', trustedRoots: rootPem(), sessionDir: sessionDir() },
    { id: 'f1', type: 'tab' },
    { id: 'webhook', z: 'f1', type: 'singpass-sign-webhook', client: 'client', url: '/hook', wires: [[], [], ['expired']] },
    { id: 'expired', z: 'f1', type: 'helper' },
  ]), { client: { signingKey: keys().jwk }, secretNode: { secret: 'x'.repeat(40) } });
  const store = (helper.getNode('client') as unknown as { store: { put(r: SessionRecord, rev: undefined): Promise<boolean>; get(ref: string): Promise<SessionRecord | undefined> } }).store;
  await store.put(record('old', 'completed', now() - SESSION_POLICY.retentionMs / 1000 - 86400), undefined);
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

test('a hash prepare signature saved (no call made) is the flow\'s to send: the sweep leaves it, and expires it past its deadline', async () => {
  const store = await loadWebhook();
  const prepared = (signRef: string, expiresAt: number): SessionRecord => ({
    ...record(signRef, 'certificate_received', now() - 300, expiresAt), prepared: {}, submitting: { documentHash: 'ab'.repeat(32), attempts: 0 },
  } as unknown as SessionRecord);
  await store.put(prepared('under-review', now() + 120), undefined); // idle for 5 min, deadline ahead
  await store.put(prepared('overdue', now() - 300), undefined); // deadline (expires_at + 120 s scan extension) passed

  const msg = await nextMessage(getNode('expired'), 20_000);
  expect(msg).toMatchObject({ signRef: 'overdue', event: { type: 'expired' } });
  await new Promise((r) => setTimeout(r, 5_500)); // one more sweep
  const left = await store.get('under-review');
  expect(left?.revision).toBe(1); // untouched: no call counted, no lastSubmitFailure from a call to 127.0.0.1:9
  expect(left?.submitting?.attempts).toBe(0);
  expect(left?.lastSubmitFailure).toBeUndefined();
}, 60_000);
