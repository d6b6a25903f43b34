/**
 * The Sign API client's "Session store: PostgreSQL" with node-red-node-test-helper and a real PostgreSQL (Debian's
 * binaries, 127.0.0.1): settings are checked at deploy with messages naming the field (never the password); the
 * signing webhook node's sweep works through the store's leases (an overdue session expires, a delivery another
 * instance kept and never applied is taken over once). Two real Node-RED instances behind nginx:
 * two-instances.e2e.test.ts.
 */
import { PgSessionStore, type SessionRecord, type VerifiedDelivery } from '../../src/session';
import { postgresDatabase, type Postgres } from '../helpers/postgres';
import { configNodes, getNode, helper, keys, nextError, nextMessage, positioned, rootPem, webhookNodes } from './helper';

let pg: Postgres;
beforeAll(async () => {
  pg = await postgresDatabase();
}, 120_000);
afterEach(() => helper.unload());
afterAll(async () => {
  await pg?.stop();
});

const now = () => Math.floor(Date.now() / 1000);

function client(fields: Record<string, unknown>) {
  return {
    id: 'client', type: 'singpass-sign-client', name: 'Sign (shared)', environment: 'custom', baseUrl: 'http://127.0.0.1:9/sign/api/v1', keySetUrl: 'http://127.0.0.1:9/keys.json',
    clientId: 'dsap', domainName: 'sign.example.sg', tenantId: 'acme', notificationSecret: 'secretNode', trustedRoots: rootPem(), sessionStore: 'postgres', ...fields,
  };
}

async function load(fields: Record<string, unknown>, pgPassword: string): Promise<void> {
  await helper.load([configNodes, webhookNodes], positioned([
    { id: 'secretNode', type: 'singpass-notification-secret' },
    client(fields),
    { id: 'f1', type: 'tab' },
    { id: 'webhook', z: 'f1', type: 'singpass-sign-webhook', client: 'client', url: '/hook', wires: [['certificate'], [], ['expired'], []] },
    { id: 'certificate', z: 'f1', type: 'helper' },
    { id: 'expired', z: 'f1', type: 'helper' },
  ]), { client: { signingKey: keys().jwk, pgPassword }, secretNode: { secret: 'x'.repeat(40) } });
}

const connection = (prefix: string) => ({ pgHost: '127.0.0.1', pgPort: String(pg.port), pgDatabase: pg.database, pgUser: pg.user, pgTablePrefix: prefix, pgTakeOverSeconds: '1' });

function record(signRef: string, status: string, updatedAt: number, expiresAt = now() + 120): SessionRecord {
  return {
    format: 'singpass-flows/signing-session@1', revision: 1, request: { documentName: 'a.pdf', level: 'B-B' }, document: { length: 1, sha256: '' },
    state: { version: 1, signRef, status, updatedAt, expiresAt, createdAt: updatedAt, challengeCode: 'AB12', clientNotificationToken: 'sfn1_t' },
  } as unknown as SessionRecord;
}

test.each([
  [{ pgHost: '' }, /Singpass Sign API client "Sign \(shared\)", PostgreSQL host: is required/],
  [{ pgPort: '54x' }, /PostgreSQL port: "54x" is not a port number/],
  [{ pgDatabase: ' ' }, /PostgreSQL database: is required/],
  [{ pgUser: '' }, /PostgreSQL user: is required/],
  [{ pgTakeOverSeconds: '0' }, /PostgreSQL take over after: "0" is not a number of seconds/],
])('settings are checked at deploy, naming the field: %j', async (bad, message) => {
  await load({ ...connection('nr_bad_'), ...bad }, 'the-password-1');
  const e = (await nextError(getNode('client'))) as { code: string; message: string };
  expect(e.code).toBe('INVALID_INPUT');
  expect(e.message).toMatch(message);
  expect(e.message).not.toContain('the-password-1');
});

test('a wrong password: the store fails typed (STORE_FAILED, login refused) and no message carries the password', async () => {
  await load(connection('nr_login_'), 'not-the-password-42');
  const store = (helper.getNode('client') as unknown as { store: { get(ref: string): Promise<unknown> } }).store;
  const e = (await store.get('any').catch((x: unknown) => x)) as { code: string; message: string };
  expect(e.code).toBe('STORE_FAILED');
  expect(e.message).toMatch(/refused the login/);
  expect(JSON.stringify(e)).not.toContain('not-the-password-42');
}, 30_000);

test('the sweep works through PostgreSQL: an overdue session expires once; a delivery another instance kept and never applied is taken over once', async () => {
  const prefix = 'nr_sweep_';
  await load(connection(prefix), pg.password);
  // what "another instance" wrote: the same tables, its own pool
  const other = new PgSessionStore(pg.url, { tablePrefix: prefix, idleMs: 1000 });
  try {
    await other.save(record('overdue', 'waiting_for_scan', now() - 300, now() - 200), undefined);
    await other.save(record('scanned', 'waiting_for_scan', now()), undefined);
    const der = Buffer.from('3003020101', 'hex');
    const delivery = { notificationToken: 'sfn1_t', event: { type: 'certificate', signRef: 'scanned', issuedAt: now(), nonce: 'n1', certificate: { der, base64: der.toString('base64'), subject: 'CN=U' } } } as unknown as VerifiedDelivery;
    expect(await other.rememberDelivery(delivery)).toBe(true);
    // a delivery for a session that is gone: nothing to apply, marked applied instead of being claimed forever
    await other.rememberDelivery({ ...delivery, event: { ...delivery.event, signRef: 'gone' } } as VerifiedDelivery);

    const expired = await nextMessage(getNode('expired'), 20_000);
    expect(expired).toMatchObject({ signRef: 'overdue', event: { type: 'expired' } });
    expect((await other.get('overdue'))?.state.status).toBe('expired');
    const taken = await nextMessage(getNode('certificate'), 20_000);
    expect(taken).toMatchObject({ signRef: 'scanned', event: { type: 'certificate', signRef: 'scanned' } });
    expect(JSON.stringify(taken)).not.toContain(der.toString('base64')); // the certificate stays in the store
    // leased to this instance: not out again in the next sweeps (the lease outlasts them); the gone one is settled
    let again = 0;
    getNode('certificate').on('input', () => again++);
    await new Promise((r) => setTimeout(r, 6_000));
    expect(again).toBe(0);
    expect(await other.pendingDeliveries()).toEqual([{ signRef: 'scanned', type: 'certificate' }]);
    expect((await other.getDelivery('gone', 'certificate'))?.applied).toBe(true);
  } finally {
    await other.close();
  }
}, 60_000);
