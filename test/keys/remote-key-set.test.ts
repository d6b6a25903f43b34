import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT, type JWK } from 'jose';
import { RemoteKeySet, verifyJwsWithKeySet, isSingpassFlowsError } from '../../src';

/** A real key-set server on 127.0.0.1 whose keys, headers and status the test controls. */
async function keyServer() {
  const state = { keys: [] as JWK[], cacheControl: 'max-age=10', status: 200, hits: 0, body: undefined as string | undefined };
  const server = http.createServer((_req, res) => {
    state.hits++;
    res.writeHead(state.status, { 'content-type': 'application/json', 'cache-control': state.cacheControl });
    res.end(state.body ?? JSON.stringify({ keys: state.keys }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/keys.json`;
  return { state, url, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

function ecKey(kid: string, crv: 'P-256' | 'P-384' = 'P-256') {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: crv });
  const jwk = { ...(publicKey.export({ format: 'jwk' }) as JWK), kid, use: 'sig' };
  return { privateKey, jwk };
}

async function token(key: ReturnType<typeof ecKey>, claims: Record<string, unknown> = {}, alg = 'ES256', kid = key.jwk.kid) {
  return new SignJWT(claims).setProtectedHeader({ alg, kid, typ: 'JWT' }).setIssuedAt().setExpirationTime('2m').sign(key.privateKey);
}

describe('RemoteKeySet', () => {
  let srv: Awaited<ReturnType<typeof keyServer>>;
  beforeEach(async () => { srv = await keyServer(); });
  afterEach(() => srv.close());

  test('caches the whole set for at least one hour even when Cache-Control says less', async () => {
    const a = ecKey('a');
    srv.state.keys = [a.jwk];
    let now = 1_700_000_000_000;
    const set = new RemoteKeySet(srv.url, { clock: () => now });
    await set.getKey({ alg: 'ES256', kid: 'a' });
    now += 59 * 60 * 1000;
    await set.getKey({ alg: 'ES256', kid: 'a' });
    expect(srv.state.hits).toBe(1);
    now += 2 * 60 * 1000;
    await set.getKey({ alg: 'ES256', kid: 'a' });
    expect(srv.state.hits).toBe(2);
  });

  test('a key already imported from a fresh set is answered without a promise; an expired set is fetched again', async () => {
    srv.state.keys = [ecKey('a').jwk];
    let now = 1_700_000_000_000;
    const set = new RemoteKeySet(srv.url, { clock: () => now });
    const first = set.getKey({ alg: 'ES256', kid: 'a' });
    expect(first).toBeInstanceOf(Promise); // nothing loaded yet
    const key = await first;
    expect(set.getKey({ alg: 'ES256', kid: 'a' })).toBe(key); // the same KeyObject, synchronously
    now += 61 * 60 * 1000;
    const again = set.getKey({ alg: 'ES256', kid: 'a' });
    expect(again).toBeInstanceOf(Promise);
    await again;
    expect(srv.state.hits).toBe(2);
  });

  test('honours a longer Cache-Control max-age', async () => {
    srv.state.keys = [ecKey('a').jwk];
    srv.state.cacheControl = 'public, max-age=7200';
    let now = 0;
    const set = new RemoteKeySet(srv.url, { clock: () => now });
    await set.getKey({ alg: 'ES256', kid: 'a' });
    now += 90 * 60 * 1000;
    await set.getKey({ alg: 'ES256', kid: 'a' });
    expect(srv.state.hits).toBe(1);
  });

  test('an unknown kid triggers one refetch that finds a rotated key', async () => {
    const a = ecKey('a');
    const b = ecKey('b');
    srv.state.keys = [a.jwk];
    let now = 0;
    const set = new RemoteKeySet(srv.url, { clock: () => now });
    await set.getKey({ alg: 'ES256', kid: 'a' });
    now += 60_000;
    srv.state.keys = [b.jwk, a.jwk];
    await expect(set.getKey({ alg: 'ES256', kid: 'b' })).resolves.toBeDefined();
    expect(srv.state.hits).toBe(2);
  });

  test('a flood of unknown kids costs the routine load plus one refetch per cooldown; concurrent callers share fetches', async () => {
    srv.state.keys = [ecKey('a').jwk];
    let now = 0;
    const set = new RemoteKeySet(srv.url, { clock: () => now, refetchCooldownSeconds: 30 });
    const results = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => set.getKey({ alg: 'ES256', kid: `made-up-${i}` })));
    expect(results.every((r) => r.status === 'rejected' && isSingpassFlowsError(r.reason, 'KEY_NOT_FOUND'))).toBe(true);
    expect(srv.state.hits).toBe(2);
    now += 29_000;
    await expect(set.getKey({ alg: 'ES256', kid: 'other' })).rejects.toThrow();
    expect(srv.state.hits).toBe(2);
    now += 2_000;
    await expect(set.getKey({ alg: 'ES256', kid: 'other' })).rejects.toThrow();
    expect(srv.state.hits).toBe(3);
  });

  test('a key rotated in milliseconds after the routine load is still found (no signature notification lost)', async () => {
    const a = ecKey('a');
    srv.state.keys = [a.jwk];
    const now = 0;
    const set = new RemoteKeySet(srv.url, { clock: () => now });
    await set.getKey({ alg: 'ES256', kid: 'a' });
    srv.state.keys = [a.jwk, ecKey('b').jwk];
    await expect(set.getKey({ alg: 'ES256', kid: 'b' })).resolves.toBeDefined();
    expect(srv.state.hits).toBe(2);
  });

  test('selects by kid and algorithm, never by position; ignores enc keys and decoys sharing the kid', async () => {
    const real = ecKey('k1');
    const decoy384 = ecKey('k1', 'P-384');
    const enc = { ...ecKey('k1').jwk, use: 'enc' };
    srv.state.keys = [enc, decoy384.jwk, real.jwk];
    const set = new RemoteKeySet(srv.url);
    const t = await token(real);
    await expect(verifyJwsWithKeySet(t, set, { algorithms: ['ES256'], errorCode: 'ID_TOKEN_INVALID', what: 'token' })).resolves.toBeDefined();
  });

  test('no kid: accepted with exactly one candidate key, refused with several', async () => {
    const a = ecKey('a');
    srv.state.keys = [a.jwk];
    const noKid = await new SignJWT({}).setProtectedHeader({ alg: 'ES256' }).setIssuedAt().setExpirationTime('1m').sign(a.privateKey);
    await expect(verifyJwsWithKeySet(noKid, new RemoteKeySet(srv.url), { algorithms: ['ES256'], errorCode: 'ID_TOKEN_INVALID', what: 'token' })).resolves.toBeDefined();
    srv.state.keys = [a.jwk, ecKey('b').jwk];
    await expect(verifyJwsWithKeySet(noKid, new RemoteKeySet(srv.url), { algorithms: ['ES256'], errorCode: 'ID_TOKEN_INVALID', what: 'token' })).rejects.toMatchObject({ code: 'ID_TOKEN_INVALID' });
  });

  test('fails closed on a broken key set: HTTP error, not JSON, no keys array, private key material', async () => {
    const cases: Array<[Partial<typeof srv.state>, string]> = [
      [{ status: 500 }, 'KEY_SET_FETCH_FAILED'],
      [{ body: 'not json' }, 'HTTP_UNEXPECTED_RESPONSE'],
      [{ body: '{"nokeys":[]}' }, 'KEY_SET_INVALID'],
      [{ body: JSON.stringify({ keys: [{ ...ecKey('p').jwk, d: 'secret' }] }) }, 'KEY_SET_INVALID'],
    ];
    for (const [change, code] of cases) {
      Object.assign(srv.state, { status: 200, body: undefined }, change);
      await expect(new RemoteKeySet(srv.url).getKey({ alg: 'ES256', kid: 'p' })).rejects.toMatchObject({ code });
    }
  });

  test('keeps using a still-valid cached set when a refresh fails', async () => {
    const a = ecKey('a');
    srv.state.keys = [a.jwk];
    let now = 0;
    const set = new RemoteKeySet(srv.url, { clock: () => now });
    await set.getKey({ alg: 'ES256', kid: 'a' });
    srv.state.status = 503;
    now += 60_000;
    await expect(set.getKey({ alg: 'ES256', kid: 'unknown' })).rejects.toMatchObject({ code: 'KEY_NOT_FOUND' });
    await expect(Promise.resolve(set.getKey({ alg: 'ES256', kid: 'a' }))).resolves.toBeDefined();
  });

  test('an expired set keeps serving its keys while the key host is down (one retry a minute), for staleIfErrorSeconds; then fails closed', async () => {
    const a = ecKey('a');
    srv.state.keys = [a.jwk];
    let now = 1_700_000_000_000;
    const set = new RemoteKeySet(srv.url, { clock: () => now, staleIfErrorSeconds: 2 * 3600 });
    await set.getKey({ alg: 'ES256', kid: 'a' });
    srv.state.status = 503;
    now += 3601_000; // the hour of cache is over and the host answers 503
    await expect(Promise.resolve(set.getKey({ alg: 'ES256', kid: 'a' }))).resolves.toBeDefined();
    expect(srv.state.hits).toBe(2);
    for (let i = 0; i < 5; i++) await set.getKey({ alg: 'ES256', kid: 'a' }); // no new attempt within the minute
    expect(srv.state.hits).toBe(2);
    now += 61_000;
    await set.getKey({ alg: 'ES256', kid: 'a' });
    expect(srv.state.hits).toBe(3);
    await expect(set.getKey({ alg: 'ES256', kid: 'unknown' })).rejects.toMatchObject({ code: 'KEY_SET_FETCH_FAILED' }); // a new kid needs the host
    now += 2 * 3600_000; // past the stale window
    await expect(Promise.resolve(set.getKey({ alg: 'ES256', kid: 'a' }))).rejects.toMatchObject({ code: 'KEY_SET_FETCH_FAILED' });
    srv.state.status = 200; // host back: a fresh set
    now += 61_000;
    await expect(Promise.resolve(set.getKey({ alg: 'ES256', kid: 'a' }))).resolves.toBeDefined();
  });

  test('staleIfErrorSeconds 0: an expired set is never used when the host is down', async () => {
    srv.state.keys = [ecKey('a').jwk];
    let now = 1_700_000_000_000;
    const set = new RemoteKeySet(srv.url, { clock: () => now, staleIfErrorSeconds: 0 });
    await set.getKey({ alg: 'ES256', kid: 'a' });
    srv.state.status = 503;
    now += 3601_000;
    await expect(Promise.resolve(set.getKey({ alg: 'ES256', kid: 'a' }))).rejects.toMatchObject({ code: 'KEY_SET_FETCH_FAILED' });
  });
});

describe('verifyJwsWithKeySet', () => {
  let srv: Awaited<ReturnType<typeof keyServer>>;
  const a = ecKey('a');
  const opts = { algorithms: ['ES256'], errorCode: 'WEBHOOK_TOKEN_INVALID' as const, expiredCode: 'WEBHOOK_TOKEN_EXPIRED' as const, what: 'webhook token' };
  beforeEach(async () => { srv = await keyServer(); srv.state.keys = [a.jwk]; });
  afterEach(() => srv.close());

  test('refuses alg none and HMAC even if the caller lists them', async () => {
    const payload = Buffer.from(JSON.stringify({ iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 60 })).toString('base64url');
    const none = `${Buffer.from('{"alg":"none","kid":"a"}').toString('base64url')}.${payload}.`;
    await expect(verifyJwsWithKeySet(none, new RemoteKeySet(srv.url), { ...opts, algorithms: ['ES256', 'none', 'HS256'] })).rejects.toMatchObject({ code: 'WEBHOOK_TOKEN_INVALID' });
    const { createHmac } = await import('node:crypto');
    const h = Buffer.from('{"alg":"HS256","kid":"a"}').toString('base64url');
    const mac = createHmac('sha256', JSON.stringify(a.jwk)).update(`${h}.${payload}`).digest('base64url');
    await expect(verifyJwsWithKeySet(`${h}.${payload}.${mac}`, new RemoteKeySet(srv.url), { ...opts, algorithms: ['ES256', 'HS256'] })).rejects.toMatchObject({ code: 'WEBHOOK_TOKEN_INVALID' });
  });

  test('expired tokens get the expired code; future iat is refused; header-supplied keys are refused', async () => {
    const expired = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'a' }).setIssuedAt(Math.floor(Date.now() / 1000) - 600).setExpirationTime(Math.floor(Date.now() / 1000) - 300).sign(a.privateKey);
    await expect(verifyJwsWithKeySet(expired, new RemoteKeySet(srv.url), opts)).rejects.toMatchObject({ code: 'WEBHOOK_TOKEN_EXPIRED' });
    const future = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'a' }).setIssuedAt(Math.floor(Date.now() / 1000) + 600).setExpirationTime('20m').sign(a.privateKey);
    await expect(verifyJwsWithKeySet(future, new RemoteKeySet(srv.url), opts)).rejects.toMatchObject({ code: 'WEBHOOK_TOKEN_INVALID' });
    const withJwk = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'a', jwk: a.jwk }).setIssuedAt().setExpirationTime('1m').sign(a.privateKey);
    await expect(verifyJwsWithKeySet(withJwk, new RemoteKeySet(srv.url), opts)).rejects.toThrow(/carries its own key/);
  });

  test('a tampered payload fails, and a signature failure refetches the set once (rotation under the same kid)', async () => {
    const t = await token(a, { n: 1 });
    const [h, , s] = t.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ n: 2, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 60 })).toString('base64url')}.${s}`;
    const set = new RemoteKeySet(srv.url, { refetchCooldownSeconds: 0 });
    await expect(verifyJwsWithKeySet(forged, set, opts)).rejects.toThrow(/invalid signature/);
    expect(srv.state.hits).toBe(2);
    const rotated = ecKey('a');
    srv.state.keys = [rotated.jwk];
    await expect(verifyJwsWithKeySet(await token(rotated), set, opts)).resolves.toBeDefined();
  });
});
