/**
 * The one webhook front door (src/session/front-door.ts): every edge's verdict and HTTP answer, with the real webhook
 * verifier (service JWTs signed here, its key set served on 127.0.0.1), the engine's fakes for the rest
 * (engine-fakes.ts) and plain stores.
 */
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, type JWK } from 'jose';
import { SingpassFlowsError } from '../../src/errors';
import { createWebhookVerifier } from '../../src/sign';
import { receiveDelivery, type FrontDoorStore, type SessionRecord } from '../../src/session';
import { certificateDelivery, loadFakes, pdf, pki, setup, started, SESSION_SECONDS, type Setup } from './engine-fakes';

let server: http.Server;
let keySetUrl: string;
const serviceKey = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const kid = 'front-door-test';
const otherKey = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });

beforeAll(async () => {
  await loadFakes();
  const jwk = { ...(serviceKey.publicKey.export({ format: 'jwk' }) as JWK), kid, use: 'sig' };
  server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  keySetUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/keys.json`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** An engine whose verifier is the real one, checking JWTs against the key set served above. */
function engineSetup(): Setup {
  return setup({ verifier: createWebhookVerifier({ keySetUrl }) });
}

/** The service's certificate delivery for `record`, as it arrives over HTTP (Bearer + {"token": JWT}). */
async function certificateRequest(record: SessionRecord, o: { bearer?: string; nonce?: string; key?: crypto.KeyObject } = {}) {
  const iat = Math.floor(Date.now() / 1000);
  const jwt = await new SignJWT({ sign_ref: record.state.signRef, request_type: 'user_cert', user_cert: pki.users.p256.certDer.toString('base64'), nonce: o.nonce ?? 'nonce-1' })
    .setProtectedHeader({ alg: 'ES256', kid }).setIssuedAt(iat).setExpirationTime(iat + 120).sign(o.key ?? serviceKey.privateKey);
  return { headers: { authorization: `Bearer ${o.bearer ?? record.state.clientNotificationToken}` }, body: Buffer.from(JSON.stringify({ token: jwt })) };
}

/** A store over a map, counting reads; `keep` plays the store's kept deliveries (true: first time). */
function mapStore(records: SessionRecord[], keep?: () => Promise<boolean>): FrontDoorStore & { reads: number } {
  const byRef = new Map(records.map((r) => [r.state.signRef, r]));
  const store = {
    reads: 0,
    get(signRef: string) {
      store.reads++;
      return byRef.get(signRef);
    },
    ...(keep ? { rememberDelivery: keep } : {}),
  };
  return store;
}

describe('receiveDelivery', () => {
  it('a genuine delivery for a waiting session → 200 handOver, bound to its record', async () => {
    const t = engineSetup();
    const s = await started(t);
    const r = await receiveDelivery(t.engine, mapStore([s]), await certificateRequest(s));
    expect(r).toMatchObject({ verdict: 'handOver', response: { status: 200 }, record: s, delivery: { event: { type: 'certificate', signRef: s.state.signRef, nonce: 'nonce-1' } } });
  });

  it('kept by the store: the first time handOver, a copy 200 copy; the store decides, not the verifier\'s memory', async () => {
    const t = engineSetup();
    const s = await started(t);
    const seen = new Set<string>();
    const store = mapStore([s], async () => !seen.has('c') && !!seen.add('c'));
    expect((await receiveDelivery(t.engine, store, await certificateRequest(s))).verdict).toBe('handOver');
    const copy = await receiveDelivery(t.engine, store, await certificateRequest(s));
    expect(copy).toMatchObject({ verdict: 'copy', response: { status: 200 } });
  });

  it('no kept deliveries: an event already in the record (a claimed certificate\'s nonce) is a copy (200)', async () => {
    const t = engineSetup();
    const s = await started(t);
    const claimed = (await t.engine.recordDelivery(s, { ...certificateDelivery(s, undefined, t), event: { ...certificateDelivery(s, undefined, t).event, nonce: 'nonce-1' } as never })).record;
    expect((await receiveDelivery(t.engine, mapStore([claimed]), await certificateRequest(s))).verdict).toBe('copy');
  });

  it('a Bearer this DSAP never issued → 400 refused before any store read', async () => {
    const t = engineSetup();
    const s = await started(t);
    const store = mapStore([s]);
    const r = await receiveDelivery(t.engine, store, await certificateRequest(s, { bearer: 'sfn1_forged_token' }));
    expect(r).toMatchObject({ verdict: 'refused', response: { status: 400 } });
    expect(store.reads).toBe(0);
  });

  it('another session\'s token, or a JWT the service did not sign → 400 refused, the session untouched', async () => {
    const t = engineSetup();
    const a = await started(t);
    const b = await started(t);
    const store = mapStore([a, b]);
    expect(await receiveDelivery(t.engine, store, await certificateRequest(a, { bearer: b.state.clientNotificationToken }))).toMatchObject({ verdict: 'refused', response: { status: 400 }, error: { code: 'WEBHOOK_UNAUTHORIZED' } });
    expect(await receiveDelivery(t.engine, store, await certificateRequest(a, { key: otherKey.privateKey }))).toMatchObject({ verdict: 'refused', response: { status: 400 } });
  });

  it('a new event for a session that ended → 400 SIGN_REF_NOT_FOUND; a copy of the event it applied → 200 copy', async () => {
    const t = engineSetup();
    const s = await started(t);
    t.clock.advance((SESSION_SECONDS + 1) * 1000);
    const expired = t.engine.expire(s).record;
    const r = await receiveDelivery(t.engine, mapStore([expired]), await certificateRequest(s));
    expect(r).toMatchObject({ verdict: 'sessionEnded', response: { status: 400, body: { error: 'SIGN_REF_NOT_FOUND' } }, error: { code: 'SIGN_REF_NOT_FOUND' } });
    const endedAfterClaim = { ...expired, state: { ...expired.state, nonce: 'nonce-1' } };
    expect((await receiveDelivery(t.engine, mapStore([endedAfterClaim]), await certificateRequest(s))).verdict).toBe('copy');
  });

  it('no record after the re-reads → 503 notFound (the service delivers again); saved during the re-reads → handOver', async () => {
    const t = engineSetup();
    const s = await started(t);
    const empty = mapStore([]);
    const r = await receiveDelivery(t.engine, empty, await certificateRequest(s), { notFoundRetriesMs: [5, 5] });
    expect(r).toMatchObject({ verdict: 'notFound', response: { status: 503, body: { error: 'SERVER_SIDE_ERROR' } } });
    expect(empty.reads).toBe(3);
    let reads = 0;
    const late: FrontDoorStore = { get: () => (++reads >= 2 ? s : undefined) };
    expect((await receiveDelivery(t.engine, late, await certificateRequest(s), { notFoundRetriesMs: [5, 5] })).verdict).toBe('handOver');
  });

  it('by default a missing record is read again seven times, the first after 25 ms (a late save is found soon after it)', async () => {
    const t = engineSetup();
    const s = await started(t);
    const empty = mapStore([]);
    const waits: number[] = [];
    const realSetTimeout = global.setTimeout;
    const spy = jest.spyOn(global, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      waits.push(ms ?? 0);
      return realSetTimeout(fn, 0);
    }) as typeof setTimeout);
    try {
      expect((await receiveDelivery(t.engine, empty, await certificateRequest(s))).verdict).toBe('notFound');
    } finally {
      spy.mockRestore();
    }
    expect(empty.reads).toBe(8);
    expect(waits).toEqual([25, 25, 50, 50, 100, 150, 300]);
  });

  it('the store failing to read or to keep → 503 storeDown with the store\'s code', async () => {
    const t = engineSetup();
    const s = await started(t);
    const down: FrontDoorStore = { get: () => { throw new SingpassFlowsError('STORE_BUSY', 'PostgreSQL is restarting', { retryable: true }); } };
    expect(await receiveDelivery(t.engine, down, await certificateRequest(s))).toMatchObject({ verdict: 'storeDown', response: { status: 503 }, error: { code: 'STORE_BUSY' } });
    const unreadable: FrontDoorStore = { get: () => { throw new SingpassFlowsError('STATE_INVALID', 'x.json is not a session record', { retryable: false }); } };
    expect(await receiveDelivery(t.engine, unreadable, await certificateRequest(s))).toMatchObject({ verdict: 'storeDown', response: { status: 503 }, error: { code: 'STATE_INVALID' } });
    const cannotKeep = mapStore([s], async () => { throw new SingpassFlowsError('STORE_FAILED', 'disk full', { retryable: false }); });
    expect(await receiveDelivery(t.engine, cannotKeep, await certificateRequest(s))).toMatchObject({ verdict: 'storeDown', response: { status: 503 }, error: { code: 'STORE_FAILED' } });
  });
});
