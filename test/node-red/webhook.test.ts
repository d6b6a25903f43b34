/**
 * The signing webhook node's housekeeping with node-red-node-test-helper: records of sessions that ended longer ago
 * than the session policy's retention leave the session store, recent ones stay; a session past its deadline goes
 * out on the error output as expired; a hash prepare signature saved and submit hash has not sent is sent once idle,
 * as the runner and n8n do; a signed PDF not acknowledged within the client's hand-over lease is handed over again on
 * the "finished" output, and past the hand-over window the session ends undelivered. (Deliveries over HTTP are in webhook.e2e.test.ts, finishing and resubmitting in
 * finishing.e2e.test.ts and prepare-submit.e2e.test.ts, the sweep continuing a claimed certificate in sweep.e2e.test.ts.)
 */
import { createSessionStore, SESSION_POLICY, type SessionRecord } from '../../src/session';
import { catchNode, configNodes, sessionDirs, getNode, helper, keys, nextMessage, positioned, rootPem, webhookNodes } from './helper';

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
  // in the folder before Node-RED starts, as a restart finds them: the first sweep resumes them and cleans up
  const before = createSessionStore({ kind: 'folder', folder: sessionDir(), signedDocuments: 'forget' });
  await before.put(record('old', 'completed', now() - SESSION_POLICY.retentionMs / 1000 - 86400), undefined);
  await before.put(record('recent', 'failed', now() - 3600), undefined);
  await before.put(record('overdue', 'waiting_for_scan', now() - 300, now() - 200), undefined);
  await before.put(record('live', 'waiting_for_scan', now()), undefined);
  await before.close?.();
  await helper.load([configNodes, webhookNodes], positioned([
    { id: 'secretNode', type: 'singpass-notification-secret' },
    { id: 'client', type: 'singpass-sign-client', environment: 'custom', baseUrl: 'http://127.0.0.1:9/sign/api/v1', keySetUrl: 'http://127.0.0.1:9/keys.json', clientId: 'dsap', domainName: 'sign.example.sg', tenantId: 'acme', notificationSecret: 'secretNode', trustedRoots: rootPem(), sessionDir: sessionDir() },
    { id: 'f1', type: 'tab' },
    { id: 'webhook', z: 'f1', type: 'singpass-sign-webhook', client: 'client', url: '/hook', wires: [[], [], ['expired']] },
    { id: 'expired', z: 'f1', type: 'helper' },
  ]), { client: { signingKey: keys().jwk }, secretNode: { secret: 'x'.repeat(40) } });
  const store = (helper.getNode('client') as unknown as { store: { get(ref: string): Promise<SessionRecord | undefined> } }).store;

  const msg = await nextMessage(getNode('expired'), 20_000);
  expect(msg).toMatchObject({ signRef: 'overdue', event: { type: 'expired' }, session: { state: { status: 'expired' }, error: { code: 'SESSION_EXPIRED' } } });
  for (let i = 0; i < 100 && (await store.get('old')); i++) await new Promise((r) => setTimeout(r, 100)); // same sweep, any order
  expect(await store.get('old')).toBeUndefined();
  expect((await store.get('recent'))?.state.status).toBe('failed');
  expect((await store.get('live'))?.state.status).toBe('waiting_for_scan');
  expect((await store.get('overdue'))?.state.status).toBe('expired');
}, 60_000);

test('a hash prepare signature saved (no call made) and left idle is sent by the sweep (as by the runner and n8n); past its deadline it expires', async () => {
  const store = await loadWebhook();
  const prepared = (signRef: string, expiresAt: number): SessionRecord => {
    const r = record(signRef, 'certificate_received', now() - 300, expiresAt);
    return { ...r, state: { ...r.state, nonce: 'n0nce' }, prepared: {}, submitting: { documentHash: 'ab'.repeat(32), attempts: 0 } } as unknown as SessionRecord;
  };
  await store.put(prepared('under-review', now() + 120), undefined); // idle for 5 min (past the take-over time), deadline ahead
  await store.put(prepared('overdue', now() - 300), undefined); // deadline (expires_at + 120 s scan extension) passed

  const msg = await nextMessage(getNode('expired'), 20_000);
  expect(msg).toMatchObject({ signRef: 'overdue', event: { type: 'expired' } });
  // the same saved hash is sent; the service (127.0.0.1:9) cannot be reached, so the session waits at the save point
  let left: SessionRecord | undefined;
  for (let i = 0; i < 100 && !(left = await store.get('under-review'))?.lastSubmitFailure; i++) await new Promise((r) => setTimeout(r, 100));
  expect(left?.error).toBeUndefined();
  expect(left?.state.status).toBe('certificate_received');
  expect(left?.submitting).toMatchObject({ documentHash: 'ab'.repeat(32), attempts: 1 }); // counted before it left
  expect(left?.lastSubmitFailure).toMatchObject({ code: 'HTTP_NETWORK', attempts: 1 });
}, 60_000);

test('a signed PDF not acknowledged within the hand-over lease is handed over again on "finished" (same bytes, same name); past the window the session ends undelivered', async () => {
  await helper.load([configNodes, webhookNodes, catchNode], positioned([
    { id: 'secretNode', type: 'singpass-notification-secret' },
    { id: 'client', type: 'singpass-sign-client', environment: 'custom', baseUrl: 'http://127.0.0.1:9/sign/api/v1', keySetUrl: 'http://127.0.0.1:9/keys.json', clientId: 'dsap', domainName: 'sign.example.sg', tenantId: 'acme', notificationSecret: 'secretNode', trustedRoots: rootPem(), sessionDir: sessionDir(),
      handOverLeaseSeconds: '60', handOverWindowSeconds: '600' },
    { id: 'f1', type: 'tab' },
    { id: 'webhook', z: 'f1', type: 'singpass-sign-webhook', client: 'client', url: '/hook', wires: [[], [], [], ['finished']] },
    { id: 'finished', z: 'f1', type: 'helper' },
    { id: 'catch', z: 'f1', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', z: 'f1', type: 'helper' },
  ]), { client: { signingKey: keys().jwk }, secretNode: { secret: 'x'.repeat(40) } });
  const store = (helper.getNode('client') as unknown as { store: { put(r: SessionRecord, rev: undefined): Promise<boolean>; get(ref: string): Promise<SessionRecord | undefined>; putSignedDocument(ref: string, pdf: Buffer): Promise<void> } }).store;
  const t = Date.now();
  const handingOver = (signRef: string, since: number): SessionRecord => {
    const r = record(signRef, 'completed', Math.floor(since / 1000));
    return { ...r, phase: 'handingOver', request: { documentName: 'Lease.pdf', level: 'B-B' }, result: { level: 'B-B', valid: true }, handOver: { since, attempts: 1, lastAt: since, nextAt: since + 60_000 } } as unknown as SessionRecord;
  };
  const signed = Buffer.from('%PDF-1.7 signed\n%%EOF\n');
  await store.putSignedDocument('lease-passed', signed);
  await store.put(handingOver('lease-passed', t - 120_000), undefined); // handed over 2 min ago, lease 1 min
  await store.put(handingOver('window-closed', t - 700_000), undefined); // handed over before the 10-min window

  // both listen from the start: one sweep takes both sessions, oldest due first
  const nextFinished = nextMessage(getNode('finished'), 20_000);
  const nextCaught = nextMessage(getNode('caught'), 20_000);
  const again = await nextFinished;
  expect(again).toMatchObject({ signRef: 'lease-passed', filename: 'Lease-signed-lease-passed.pdf', handOver: { attempt: 2 }, session: { phase: 'handingOver' } });
  expect((again.payload as Buffer).equals(signed)).toBe(true);
  expect(JSON.stringify(again.session)).not.toContain('"certificate"');
  const leased = await store.get('lease-passed');
  expect(leased?.handOver).toMatchObject({ attempts: 2 });
  expect(leased!.handOver!.nextAt).toBeGreaterThan(Date.now() + 50_000); // leased again, not due at the next sweep

  const gaveUp = await nextCaught;
  expect(gaveUp).toMatchObject({ signRef: 'window-closed', error: { code: 'HANDOVER_UNACKNOWLEDGED', message: expect.stringMatching(/never acknowledged/) }, session: { phase: 'undelivered' } });
  expect((await store.get('window-closed'))?.phase).toBe('undelivered');
}, 60_000);
