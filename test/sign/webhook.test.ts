import { SingpassFlowsError } from '../../src/errors';
import * as crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, type JWK } from 'jose';
import { createWebhookVerifier, MemoryDeliveryLog, type WebhookVerifier } from '../../src/sign';

/** A service stand-in for this file only: a key-set server we control and tokens we sign ourselves. */
async function keyServer() {
  const state = { keys: [] as JWK[], cacheControl: 'public, max-age=3600', status: 200, hits: 0 };
  const server = http.createServer((_req, res) => {
    state.hits++;
    res.writeHead(state.status, { 'content-type': 'application/json', 'cache-control': state.cacheControl });
    res.end(JSON.stringify({ keys: state.keys }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/keys.json`;
  return { state, url, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

function serviceKey(kid = crypto.randomBytes(6).toString('hex'), curve = 'P-256') {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: curve });
  return { kid, privateKey, jwk: { ...(publicKey.export({ format: 'jwk' }) as JWK), kid, use: 'sig' } };
}

/** A self-signed P-256 certificate (node:crypto cannot issue one), made by openssl once per run. */
const CERT_B64 = execFileSync('sh', ['-c', 'd=$(mktemp -d) && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=Test -days 3650 -keyout $d/k -outform DER 2>/dev/null | base64 -w0; rm -rf $d']).toString().trim();
const testCertificateBase64 = () => CERT_B64;

let now = Date.now();
const clock = () => now;
const TOKEN = 'notification_token-123';

function claims(type: 'user_cert' | 'signed_doc_hash' | 'error' | string, extra: Record<string, unknown> = {}) {
  const base: Record<string, unknown> = { sign_ref: 'ref-1', request_type: type };
  if (type === 'user_cert') Object.assign(base, { user_cert: testCertificateBase64(), nonce: 'n-1' });
  if (type === 'signed_doc_hash') Object.assign(base, { doc_hash: 'AB'.repeat(32), doc_hash_signature: '3006020101020101' });
  if (type === 'error') Object.assign(base, { error: 'user_cancelled', error_description: 'The user cancelled', ndi_request_id: 'corr-1' });
  return { ...base, ...extra };
}

async function sign(key: ReturnType<typeof serviceKey>, body: Record<string, unknown>, opts: { iat?: number; exp?: number; alg?: string; kid?: string } = {}) {
  const iat = opts.iat ?? Math.floor(now / 1000);
  return new SignJWT(body).setProtectedHeader({ alg: opts.alg ?? 'ES256', kid: opts.kid ?? key.kid }).setIssuedAt(iat).setExpirationTime(opts.exp ?? iat + 120).sign(key.privateKey);
}

const req = (token: string, bearer: string | null = TOKEN, body?: unknown) => ({
  headers: bearer === null ? {} : { authorization: `Bearer ${bearer}` },
  body: Buffer.from(JSON.stringify(body ?? { token })),
  expectedToken: TOKEN,
});

let srv: Awaited<ReturnType<typeof keyServer>>;
let key: ReturnType<typeof serviceKey>;
let verifier: WebhookVerifier;
beforeEach(async () => {
  now = Date.now();
  srv = await keyServer();
  key = serviceKey();
  srv.state.keys = [serviceKey().jwk, key.jwk]; // more than one key, ours not first
  verifier = createWebhookVerifier({ keySetUrl: srv.url, clock });
});
afterEach(() => srv.close());

function expect400(result: Awaited<ReturnType<WebhookVerifier['handle']>>, code: string) {
  expect([result.error?.code, result.response.status]).toEqual([code, 400]);
  expect(result.event).toBeUndefined();
  expect(result.response.status).toBe(400);
  const body = (result.response as { body: Record<string, string> }).body;
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description', 'ndi_request_id']);
  for (const v of Object.values(body)) expect(v).toMatch(/\S/);
}

describe('webhook verification: typed events', () => {
  it('decodes the three events, with aliases tolerated', async () => {
    const cert = await verifier.handle(req(await sign(key, claims('user_cert'))));
    expect(cert.response).toEqual({ status: 200 });
    expect(cert.event).toMatchObject({ type: 'certificate', signRef: 'ref-1', nonce: 'n-1', certificate: { subject: 'CN=Test', publicKeyAlgorithm: 'EC P-256', base64: CERT_B64 } });
    const sig = await verifier.handle(req(await sign(key, claims('signed_doc_hash'))));
    expect(sig.event).toMatchObject({ type: 'signature', documentHash: 'ab'.repeat(32), signature: '3006020101020101' });
    const err = await verifier.handle(req(await sign(key, { sign_ref: 'ref-2', request_type: 'error', error_code: 'x', message: 'm', correlation_id: 'c' })));
    expect(err.event).toMatchObject({ type: 'error', signRef: 'ref-2', errorCode: 'x', message: 'm', correlationId: 'c' });
  });

  it('warmUp loads the key set ahead of the first delivery, without spending the refetch budget', async () => {
    await verifier.warmUp();
    await verifier.warmUp();
    expect(srv.state.hits).toBe(1);
    expect((await verifier.handle(req(await sign(key, claims('user_cert'))))).response.status).toBe(200);
    expect(srv.state.hits).toBe(1);
    const rotated = serviceKey();
    srv.state.keys = [rotated.jwk, key.jwk];
    expect((await verifier.handle(req(await sign(rotated, claims('user_cert', { nonce: 'n-9' }))))).response.status).toBe(200);
    expect(srv.state.hits).toBe(2);
  });

  it('the key set is fetched once for many deliveries', async () => {
    for (let i = 0; i < 5; i++) await verifier.handle(req(await sign(key, claims('error', { ndi_request_id: `c${i}` }))));
    expect(srv.state.hits).toBe(1);
  });
});

describe('webhook verification: refusals answer 400 with the three mandatory fields', () => {
  it('missing and wrong Bearer → WEBHOOK_UNAUTHORIZED, before any key-set fetch', async () => {
    const t = await sign(key, claims('user_cert'));
    expect400(await verifier.handle(req(t, null)), 'WEBHOOK_UNAUTHORIZED');
    expect400(await verifier.handle(req(t, 'notification_token-124')), 'WEBHOOK_UNAUTHORIZED');
    expect400(await verifier.handle(req(t, TOKEN + 'x')), 'WEBHOOK_UNAUTHORIZED');
    expect400(await verifier.handle({ ...req(t), headers: { authorization: `Basic ${TOKEN}` } }), 'WEBHOOK_UNAUTHORIZED');
    expect400(await verifier.handle({ ...req(t), headers: { authorization: [`Bearer ${TOKEN}`, `Bearer ${TOKEN}`] } }), 'WEBHOOK_UNAUTHORIZED');
    expect(srv.state.hits).toBe(0);
    // tokens may contain spaces (letters, digits, _ - and whitespace are allowed)
    const spaced = { ...req(t, 'my token 1'), expectedToken: 'my token 1' };
    expect((await verifier.handle(spaced)).response.status).toBe(200);
    expect400(await verifier.handle({ ...spaced, expectedToken: 'my token' }), 'WEBHOOK_UNAUTHORIZED');
    // a fetch Headers object works too
    expect((await verifier.handle({ ...req(t), headers: new Headers({ Authorization: `Bearer ${TOKEN}` }) })).response.status).toBe(200);
  });

  it('tampered payload → WEBHOOK_TOKEN_INVALID', async () => {
    const t = await sign(key, claims('signed_doc_hash'));
    const [h, p, s] = t.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    payload.doc_hash = 'cd'.repeat(32);
    const forged = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
    expect400(await verifier.handle(req(forged)), 'WEBHOOK_TOKEN_INVALID');
  });

  it('expired token → WEBHOOK_TOKEN_EXPIRED (30 s skew tolerated)', async () => {
    const iat = Math.floor(now / 1000) - 200;
    expect400(await verifier.handle(req(await sign(key, claims('user_cert'), { iat, exp: iat + 120 }))), 'WEBHOOK_TOKEN_EXPIRED');
    const recent = Math.floor(now / 1000) - 140; // expired 20 s ago: within tolerance
    expect((await verifier.handle(req(await sign(key, claims('user_cert'), { iat: recent, exp: recent + 120 })))).response.status).toBe(200);
  });

  it('alg none → WEBHOOK_TOKEN_INVALID', async () => {
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const iat = Math.floor(now / 1000);
    const none = `${enc({ alg: 'none', kid: key.kid })}.${enc({ ...claims('user_cert'), iat, exp: iat + 60 })}.`;
    expect400(await verifier.handle(req(none)), 'WEBHOOK_TOKEN_INVALID');
  });

  it('HS256 keyed with the public key bytes (algorithm confusion) → WEBHOOK_TOKEN_INVALID', async () => {
    const iat = Math.floor(now / 1000);
    for (const secret of [Buffer.from(JSON.stringify(key.jwk)), crypto.createPublicKey({ key: key.jwk as crypto.JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string]) {
      const hs = await new SignJWT(claims('user_cert')).setProtectedHeader({ alg: 'HS256', kid: key.kid }).setIssuedAt(iat).setExpirationTime(iat + 60).sign(Buffer.from(secret));
      expect400(await verifier.handle(req(hs)), 'WEBHOOK_TOKEN_INVALID');
    }
  });

  it('signed by a key not in the set → WEBHOOK_TOKEN_INVALID; token with its own jwk header refused', async () => {
    const stranger = serviceKey(key.kid); // same kid, different key
    expect400(await verifier.handle(req(await sign(stranger, claims('user_cert')))), 'WEBHOOK_TOKEN_INVALID');
    const iat = Math.floor(now / 1000);
    const embedded = await new SignJWT(claims('user_cert')).setProtectedHeader({ alg: 'ES256', kid: key.kid, jwk: key.jwk as never }).setIssuedAt(iat).setExpirationTime(iat + 60).sign(key.privateKey);
    expect400(await verifier.handle(req(embedded)), 'WEBHOOK_TOKEN_INVALID');
  });

  it('unknown request type → WEBHOOK_EVENT_UNKNOWN; missing claims and bad values → WEBHOOK_TOKEN_INVALID', async () => {
    expect400(await verifier.handle(req(await sign(key, claims('something_new')))), 'WEBHOOK_EVENT_UNKNOWN');
    expect400(await verifier.handle(req(await sign(key, claims('user_cert', { nonce: undefined })))), 'WEBHOOK_TOKEN_INVALID');
    expect400(await verifier.handle(req(await sign(key, claims('user_cert', { user_cert: 'bm90IGEgY2VydA==' })))), 'WEBHOOK_TOKEN_INVALID');
    expect400(await verifier.handle(req(await sign(key, claims('signed_doc_hash', { doc_hash: 'abc' })))), 'WEBHOOK_TOKEN_INVALID');
    expect400(await verifier.handle(req(await sign(key, claims('signed_doc_hash', { doc_hash_signature: 'zz' })))), 'WEBHOOK_TOKEN_INVALID');
    const iat = Math.floor(now / 1000);
    expect400(await verifier.handle(req(await sign(key, claims('user_cert'), { iat, exp: iat + 3600 }))), 'WEBHOOK_TOKEN_INVALID');
  });

  it('a signature as raw r||s (64/96/132 bytes) or RSA PKCS#1 (256 bytes, not DER) is taken as sent: it is checked against the certificate when embedded', async () => {
    for (const hex of ['a1'.repeat(64), '7f'.repeat(96), '01'.repeat(132), '7f'.repeat(256)]) {
      const result = await verifier.handle(req(await sign(key, claims('signed_doc_hash', { doc_hash_signature: hex.toUpperCase() }))));
      expect(result.response.status).toBe(200);
      expect(result.event).toMatchObject({ type: 'signature', signature: hex });
    }
  });

  it('a token naming no key (no kid) is refused, even when the set holds a single key that verifies it', async () => {
    srv.state.keys = [key.jwk];
    const iat = Math.floor(now / 1000);
    const noKid = await new SignJWT(claims('user_cert')).setProtectedHeader({ alg: 'ES256' }).setIssuedAt(iat).setExpirationTime(iat + 120).sign(key.privateKey);
    const result = await verifier.handle(req(noKid));
    expect400(result, 'WEBHOOK_TOKEN_INVALID');
    expect(result.error).toMatchObject({ field: 'kid', message: expect.stringMatching(/names no key \("kid" header\)/) });
    expect(srv.state.hits).toBe(0); // refused on its header, before any key lookup
    expect((await verifier.handle(req(await sign(key, claims('user_cert')))))).toMatchObject({ response: { status: 200 } });
  });

  it('bad bodies → 400 WEBHOOK_TOKEN_INVALID, never a throw', async () => {
    expect400(await verifier.handle({ headers: { authorization: `Bearer ${TOKEN}` }, body: 'not json', expectedToken: TOKEN }), 'WEBHOOK_TOKEN_INVALID');
    expect400(await verifier.handle({ headers: { authorization: `Bearer ${TOKEN}` }, body: { token: 42 }, expectedToken: TOKEN }), 'WEBHOOK_TOKEN_INVALID');
    expect400(await verifier.handle({ headers: { authorization: `Bearer ${TOKEN}` }, body: undefined, expectedToken: TOKEN }), 'WEBHOOK_TOKEN_INVALID');
    expect400(await verifier.handle(req('a.b.c')), 'WEBHOOK_TOKEN_INVALID');
  });

  it('a session lookup that finds nothing → 400 SIGN_REF_NOT_FOUND', async () => {
    const t = await sign(key, claims('user_cert'));
    const r = await verifier.handle({ ...req(t), expectedToken: (ref) => (ref === 'other' ? TOKEN : undefined) });
    expect400(r, 'SIGN_REF_NOT_FOUND');
    expect((r.response as { body: Record<string, string> }).body.error).toBe('SIGN_REF_NOT_FOUND');
  });
});

describe('webhook verification: DSAP-side trouble answers 503 so the service retries', () => {
  it('key set unreachable → 503', async () => {
    srv.state.status = 500;
    const r = await verifier.handle(req(await sign(key, claims('user_cert'))));
    expect(r.response.status).toBe(503);
    expect(r.error?.code).toBe('KEY_SET_FETCH_FAILED');
  });

  it('a failing delivery log → 503 WEBHOOK_HANDLER_FAILED', async () => {
    const r = await verifier.handle({ ...req(await sign(key, claims('user_cert'))), seen: { remember: () => { throw new Error('db down'); } } });
    expect(r.response.status).toBe(503);
    expect(r.error?.code).toBe('WEBHOOK_HANDLER_FAILED');
  });

  it('a session store that cannot answer the token lookup (STORE_BUSY, e.g. PostgreSQL restarting) → 503, not a final 400', async () => {
    const t = await sign(key, claims('user_cert'));
    const r = await verifier.handle({ ...req(t), expectedToken: () => Promise.reject(new SingpassFlowsError('STORE_BUSY', 'Session store (PostgreSQL): server not reachable', { retryable: true })) });
    expect(r.response.status).toBe(503);
    expect(r.error?.code).toBe('STORE_BUSY');
  });
});

describe('duplicates, rotation, flood, caching', () => {
  it('the same event twice (even re-signed later) is flagged duplicate; a different event is not', async () => {
    const first = await verifier.handle(req(await sign(key, claims('user_cert'))));
    now += 3000;
    const again = await verifier.handle(req(await sign(key, claims('user_cert')))); // re-signed: new iat
    const other = await verifier.handle(req(await sign(key, claims('user_cert', { nonce: 'n-2' }))));
    expect([first.duplicate, again.duplicate, other.duplicate]).toEqual([false, true, false]);
    expect(again.response.status).toBe(200);
  });

  it('a pluggable delivery log is used instead of the default', async () => {
    const log = new MemoryDeliveryLog({ clock });
    const t = await sign(key, claims('user_cert'));
    await verifier.handle({ ...req(t), seen: log });
    expect(log.size).toBe(1);
    expect((await verifier.handle({ ...req(t), seen: log })).duplicate).toBe(true);
    expect((await verifier.handle(req(t))).duplicate).toBe(false); // default log never saw it
  });

  it('rotation: a new kid causes one refetch and is accepted', async () => {
    await verifier.handle(req(await sign(key, claims('user_cert'))));
    const rotated = serviceKey();
    srv.state.keys = [rotated.jwk, key.jwk];
    now += 5000;
    const r = await verifier.handle(req(await sign(rotated, claims('signed_doc_hash'))));
    expect(r.response.status).toBe(200);
    expect(srv.state.hits).toBe(2);
  });

  it('flood: 100 tokens with random kids cost at most 2 key-set fetches', async () => {
    const tokens = await Promise.all(Array.from({ length: 100 }, async () => sign(serviceKey(), claims('user_cert'))));
    // the first of them loads the set, one unknown kid may refetch it once, then the 30 s cooldown holds
    const results = await Promise.all(tokens.map((t) => verifier.handle(req(t))));
    // refused, but with 503: with a valid Bearer an unknown kid is most likely a rotation we could not fetch yet
    expect(results.every((r) => r.response.status === 503 && r.error?.code === 'WEBHOOK_TOKEN_INVALID' && r.event === undefined)).toBe(true);
    expect(srv.state.hits).toBeGreaterThanOrEqual(1);
    expect(srv.state.hits).toBeLessThanOrEqual(2);
    now += 1000;
    await Promise.all(tokens.slice(0, 20).map((t) => verifier.handle(req(t))));
    expect(srv.state.hits).toBeLessThanOrEqual(2);
  });

  it('Cache-Control: a 1-minute max-age is stretched to 1 h; a 2-hour max-age is honoured', async () => {
    srv.state.cacheControl = 'max-age=60';
    await verifier.handle(req(await sign(key, claims('error', { ndi_request_id: 'a' }))));
    now += 59 * 60 * 1000;
    await verifier.handle(req(await sign(key, claims('error', { ndi_request_id: 'b' }))));
    expect(srv.state.hits).toBe(1);
    now += 2 * 60 * 1000;
    await verifier.handle(req(await sign(key, claims('error', { ndi_request_id: 'c' }))));
    expect(srv.state.hits).toBe(2);

    srv.state.cacheControl = 'public, max-age=7200';
    const v2 = createWebhookVerifier({ keySetUrl: srv.url, clock });
    await v2.handle(req(await sign(key, claims('error', { ndi_request_id: 'd' }))));
    now += 110 * 60 * 1000;
    await v2.handle(req(await sign(key, claims('error', { ndi_request_id: 'e' }))));
    expect(srv.state.hits).toBe(3);
    now += 15 * 60 * 1000;
    await v2.handle(req(await sign(key, claims('error', { ndi_request_id: 'f' }))));
    expect(srv.state.hits).toBe(4);
  });
});
