import * as crypto from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { listen, mount, type RunningServer } from '../../../sandbox/http';
import { createTestPki, type TestPki } from '../../../sandbox/pki';
import { createSignService, type SignService } from '../../../sandbox/sign';
import { createPhone, type Phone } from '../../../sandbox/phone';
import { startTestDsap, type TestDsap } from './test-dsap';

const SESSIONS = '/doc-signing-sessions';
const hashPath = (ref: string): string => `${SESSIONS}/${encodeURIComponent(ref)}/hash`;

let pki: TestPki;
let server: RunningServer;
let sign: SignService;
let phone: Phone;
let dsap: TestDsap;
let other: TestDsap;

/** Stand-in for DER SignedAttributes: the phone must sign sha256(this) without hashing again. */
const signedAttrs = crypto.randomBytes(120);
const docHash = crypto.createHash('sha256').update(signedAttrs).digest('hex');

function hashBody(nonce: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { doc_name: 'Tenancy agreement.pdf', doc_hash: docHash, challenge_code: '4821', nonce, domain_name: 'dsap.example.sg', ...extra };
}

async function newSession(d: TestDsap = dsap): Promise<string> {
  const r = await d.call(SESSIONS, { client_notification_token: 'tok-' + crypto.randomBytes(6).toString('hex'), tenant_id: 'Tenant 1' });
  expect(r.status).toBe(200);
  return r.body.sign_ref as string;
}

/** Create + scan; returns the nonce of the certificate notification. */
async function scanned(user = 'p256'): Promise<{ ref: string; nonce: string }> {
  const ref = await newSession();
  expect(await phone.scan(ref, { user })).toBe('acknowledged');
  const [cert] = await dsap.waitFor(1, ref);
  return { ref, nonce: cert.claims.nonce as string };
}

beforeAll(async () => {
  pki = await createTestPki({ baseUrl: 'http://127.0.0.1:9', rsaUser: false });
  sign = createSignService({ webhookRetryDelayMs: 20, webhookTimeoutMs: 8000, caCertificates: [pki.root.certDer, pki.intermediate.certDer] });
  phone = createPhone({ sign, users: pki.users as unknown as Record<string, { certDer: Buffer; privateKey: crypto.KeyObject }> });
  server = await listen(mount([sign, phone]));
  sign.setBaseUrl(server.baseUrl);
  const apiBase = `${server.baseUrl}/sign/api/v1`;
  const keysUrl = `${server.baseUrl}/sign/static/.well-known/keys.json`;
  dsap = await startTestDsap({ apiBase, audience: `${server.baseUrl}/sign`, keysUrl });
  other = await startTestDsap({ apiBase, audience: `${server.baseUrl}/sign`, keysUrl });
  for (const d of [dsap, other]) sign.registerClient({ clientId: d.clientId, jwksUrl: d.jwksUrl, notificationUrl: d.webhookUrl, basicSecret: 's3cret-' + d.clientId });
});

afterAll(async () => {
  await phone?.close?.();
  await sign?.close?.();
  await server?.close();
  await dsap?.close();
  await other?.close();
});

afterEach(() => {
  sign.faults.reset();
  dsap.webhookStatuses.length = 0;
});

describe('full session over real HTTP', () => {
  it.each(['p256', 'p384'])('%s user: create → user_cert webhook → hash → signed_doc_hash webhook whose signature verifies over the digest', async (user) => {
    const token = 'my token_1-' + crypto.randomBytes(4).toString('hex');
    const before = Math.floor(Date.now() / 1000);
    const created = await dsap.call(SESSIONS, { client_notification_token: token, tenant_id: 'ACME Pte Ltd' });
    expect(created.status).toBe(200);
    const ref = created.body.sign_ref as string;
    expect(ref).not.toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4/);
    expect(created.body.expires_at).toBeGreaterThanOrEqual(before + 119);
    expect(created.body.expires_at).toBeLessThanOrEqual(before + 121);
    expect(created.body.qr_code.payload).toBe(`https://singpassmobile.sg/docsign?sign_ref=${encodeURIComponent(ref)}`);

    expect(await phone.scan(ref, { user })).toBe('acknowledged');
    const [certNote] = await dsap.waitFor(1, ref);
    expect(certNote.authorization).toBe(`Bearer ${token}`);
    expect(certNote.kid).toBe(sign.currentKid());
    const userCert = pki.users[user as 'p256' | 'p384'];
    expect(certNote.claims).toEqual({
      sign_ref: ref,
      request_type: 'user_cert',
      user_cert: userCert.certDer.toString('base64'),
      nonce: expect.any(String),
      iat: expect.any(Number),
      exp: (certNote.claims.iat as number) + 120,
    });

    const hash = await dsap.call(hashPath(ref), hashBody(certNote.claims.nonce as string, { app_launch_url: 'https://dsap.example.sg/back' }));
    expect(hash).toEqual({ status: 200, body: undefined });
    expect(sign.session(ref)).toMatchObject({ state: 'hash_submitted', challengeCode: '4821', docName: 'Tenancy agreement.pdf' });

    expect(await phone.approve(ref)).toBe('acknowledged');
    const [, sigNote] = await dsap.waitFor(2, ref);
    expect(sigNote.claims).toEqual({
      sign_ref: ref,
      request_type: 'signed_doc_hash',
      doc_hash: docHash,
      doc_hash_signature: expect.stringMatching(/^30[0-9a-f]+$/),
      iat: expect.any(Number),
      exp: (sigNote.claims.iat as number) + 120,
    });
    const sig = Buffer.from(sigNote.claims.doc_hash_signature as string, 'hex');
    const publicKey = new crypto.X509Certificate(userCert.certDer).publicKey;
    expect(crypto.verify('sha256', signedAttrs, { key: publicKey, dsaEncoding: 'der' }, sig)).toBe(true);
    expect(sign.session(ref)?.state).toBe('signed');
  });

  it('scan extends the session lifetime (older docs: +2 min after scanning)', async () => {
    const ref = await newSession();
    const before = sign.session(ref)!.expiresAt;
    await phone.scan(ref);
    expect(sign.session(ref)!.expiresAt).toBeGreaterThanOrEqual(before);
    expect(sign.session(ref)!.expiresAt).toBeGreaterThanOrEqual(Date.now() + 119_000);
  });

  it('a second scan of the same QR code is refused', async () => {
    const { ref } = await scanned();
    await expect(phone.scan(ref)).rejects.toThrow(/already scanned/);
  });
});

describe('create-session validation', () => {
  const cases: [string, Record<string, unknown>][] = [
    ['missing client_notification_token', { tenant_id: 't' }],
    ['missing tenant_id', { client_notification_token: 't' }],
    ['empty token', { client_notification_token: '', tenant_id: 't' }],
    ['token with a forbidden character', { client_notification_token: 'abc$', tenant_id: 't' }],
    ['token of 256 characters', { client_notification_token: 'a'.repeat(256), tenant_id: 't' }],
    ['tenant_id with a dot', { client_notification_token: 'a', tenant_id: 'acme.sg' }],
    ['tenant_id not a string', { client_notification_token: 'a', tenant_id: 5 }],
  ];
  it.each(cases)('%s → 400 ARGUMENTS_NOT_VALID with the error body shape', async (_n, body) => {
    const r = await dsap.call(SESSIONS, body);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ id: expect.any(String), error: 'ARGUMENTS_NOT_VALID', error_description: expect.any(String), trace_id: expect.any(String) });
  });

  it('accepts 255 characters with spaces, "_" and "-"', async () => {
    const r = await dsap.call(SESSIONS, { client_notification_token: 'a_b-c d'.padEnd(255, 'x'), tenant_id: 'T'.repeat(255) });
    expect(r.status).toBe(200);
  });

  it('non-JSON body → 400 CLIENT_SIDE_ERROR', async () => {
    const r = await dsap.call(SESSIONS, 'not json');
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('CLIENT_SIDE_ERROR');
  });
});

describe('hash-call validation', () => {
  const bad: [string, (nonce: string) => Record<string, unknown>][] = [
    ['empty doc_name', (n) => hashBody(n, { doc_name: '' })],
    ['doc_name of 256 characters', (n) => hashBody(n, { doc_name: 'd'.repeat(256) })],
    ['doc_hash of 63 characters', (n) => hashBody(n, { doc_hash: docHash.slice(1) })],
    ['doc_hash not hex', (n) => hashBody(n, { doc_hash: 'z'.repeat(64) })],
    ['challenge_code of 3 characters', (n) => hashBody(n, { challenge_code: '123' })],
    ['challenge_code of 5 characters', (n) => hashBody(n, { challenge_code: '12345' })],
    ['missing nonce', (n) => ({ ...hashBody(n), nonce: undefined })],
    ['nonce mismatch', (n) => hashBody(n + 'x')],
    ['missing domain_name', (n) => ({ ...hashBody(n), domain_name: undefined })],
    ['domain_name of 256 characters', (n) => hashBody(n, { domain_name: 'd'.repeat(256) })],
    ['app_launch_url of 256 characters', (n) => hashBody(n, { app_launch_url: 'h'.repeat(256) })],
  ];
  it.each(bad)('%s → 400 ARGUMENTS_NOT_VALID, session still accepts a correct call', async (_n, body) => {
    const { ref, nonce } = await scanned();
    const r = await dsap.call(hashPath(ref), body(nonce));
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('ARGUMENTS_NOT_VALID');
    expect((await dsap.call(hashPath(ref), hashBody(nonce))).status).toBe(200);
  });

  it('accepts the alias "domain" for domain_name and 255-character limits', async () => {
    const { ref, nonce } = await scanned();
    const body = { ...hashBody(nonce, { doc_name: 'n'.repeat(255), app_launch_url: 'h'.repeat(255) }), domain_name: undefined, domain: 'x.sg' };
    expect((await dsap.call(hashPath(ref), body)).status).toBe(200);
    expect(sign.session(ref)?.domainName).toBe('x.sg');
  });

  it('hash before the certificate was delivered → 400 (not accepted)', async () => {
    const ref = await newSession();
    const r = await dsap.call(hashPath(ref), hashBody('whatever'));
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('ARGUMENTS_NOT_VALID');
    expect(sign.session(ref)?.state).toBe('created');
  });

  it('a second hash call for the same session → 400', async () => {
    const { ref, nonce } = await scanned();
    expect((await dsap.call(hashPath(ref), hashBody(nonce))).status).toBe(200);
    expect((await dsap.call(hashPath(ref), hashBody(nonce))).status).toBe(400);
  });

  it('GET /sign/sandbox/hashes lists every hash call with its answer (a fault, the accepted one, the refused repeat)', async () => {
    const { ref, nonce } = await scanned();
    sign.faults.serviceError(1, 503);
    expect((await dsap.call(hashPath(ref), hashBody(nonce))).status).toBe(503);
    expect((await dsap.call(hashPath(ref), hashBody(nonce))).status).toBe(200);
    expect((await dsap.call(hashPath(ref), hashBody(nonce))).status).toBe(400);
    const res = await fetch(`${server.baseUrl}/sign/sandbox/hashes`);
    const { hashes } = (await res.json()) as { hashes: Array<{ signRef: string; docHash?: string; status: number }> };
    expect(hashes.filter((h) => h.signRef === ref).map(({ docHash: d, status }) => ({ docHash: d, status }))).toEqual([
      { docHash: undefined, status: 503 }, { docHash, status: 200 }, { docHash, status: 400 },
    ]);
  });
});

describe('hash_delay_ms fault', () => {
  it('the hash is accepted at once (the session waits for the phone), only the answer comes late', async () => {
    const { ref, nonce } = await scanned();
    const res = await fetch(`${server.baseUrl}/sign/sandbox/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ hash_delay_ms: 600 }) });
    expect(await res.json()).toEqual({ hash_delay_ms: 600 });
    const t0 = Date.now();
    const call = dsap.call(hashPath(ref), hashBody(nonce));
    await new Promise((r) => setTimeout(r, 200));
    expect(sign.session(ref)?.state).toBe('hash_submitted'); // accepted before the answer
    expect((await call).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(590);
  });
});

describe('API routes', () => {
  it.each([`${SESSIONS}x`, `${SESSIONS}/`, `${SESSIONS}/ref`, `${SESSIONS}/ref/hash/x`, `${SESSIONS}//hash`, '/doc-signing'])('%s → 404 NOT_FOUND', async (path) => {
    const r = await dsap.call(path, {});
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('NOT_FOUND');
  });
});

describe('SIGN_REF_NOT_FOUND', () => {
  it('unknown sign_ref → 400 SIGN_REF_NOT_FOUND and a security event', async () => {
    const before = sign.securityEvents().length;
    const r = await dsap.call(hashPath('nope' + crypto.randomBytes(8).toString('hex')), hashBody('n'));
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('SIGN_REF_NOT_FOUND');
    expect(sign.securityEvents().length).toBe(before + 1);
  });

  it('expired session → 400 SIGN_REF_NOT_FOUND, and the phone can no longer scan it', async () => {
    const { ref, nonce } = await scanned();
    sign.faults.expireSession(ref);
    const r = await dsap.call(hashPath(ref), hashBody(nonce));
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('SIGN_REF_NOT_FOUND');
    const ref2 = await newSession();
    sign.faults.expireSession(ref2);
    await expect(phone.scan(ref2)).rejects.toThrow(/expired/);
  });

  it('expires by time: a 1 s session is gone after 1 s', async () => {
    const short = createSignService({ sessionTtlSeconds: 1 });
    const s = await listen(mount([short]));
    try {
      short.setBaseUrl(s.baseUrl);
      const d = await startTestDsap({ apiBase: `${s.baseUrl}/sign/api/v1`, audience: s.baseUrl, keysUrl: `${s.baseUrl}/sign/static/.well-known/keys.json` });
      short.registerClient({ clientId: d.clientId, jwksUrl: d.jwksUrl, notificationUrl: d.webhookUrl });
      const ref = await newSession(d);
      expect(short.session(ref)).toBeDefined();
      await new Promise((r) => setTimeout(r, 1100));
      const r = await d.call(hashPath(ref), hashBody('n'));
      expect(r.body.error).toBe('SIGN_REF_NOT_FOUND');
      await d.close();
    } finally {
      await s.close();
    }
  });

  it("another DSAP's sign_ref → SIGN_REF_NOT_FOUND", async () => {
    const { ref, nonce } = await scanned();
    const r = await other.call(hashPath(ref), hashBody(nonce));
    expect(r.body.error).toBe('SIGN_REF_NOT_FOUND');
  });
});

describe('X-Dss-Assertion checks', () => {
  const ok = { client_notification_token: 't', tenant_id: 't' };
  const rejected = async (assertion: string | Promise<string>, code = 'INVALID_ASSERTION', status = 401): Promise<string> => {
    const r = await dsap.call(SESSIONS, ok, { assertion: await assertion });
    expect({ status: r.status, error: r.body.error }).toEqual({ status, error: code });
    return r.body.error_description as string;
  };

  it('the origin is accepted as aud as well as the service base URL', async () => {
    const r = await dsap.call(SESSIONS, ok, { assertion: await dsap.assertion({ claims: { aud: server.baseUrl } }) });
    expect(r.status).toBe(200);
  });
  it('wrong aud', async () => expect(await rejected(dsap.assertion({ claims: { aud: 'https://staging.sign.singpass.gov.sg' } }))).toMatch(/aud/));
  it('the API URL with /api/v1 is not the audience', () => rejected(dsap.assertion({ claims: { aud: `${server.baseUrl}/sign/api/v1` } })));
  it('replayed jti', async () => {
    const a = await dsap.assertion();
    expect((await dsap.call(SESSIONS, ok, { assertion: a })).status).toBe(200);
    expect(await rejected(a)).toMatch(/replay/);
  });
  it('missing jti', () => rejected(dsap.assertion({ claims: { jti: undefined } })));
  it('expired', () => rejected(dsap.assertion({ claims: { iat: Math.floor(Date.now() / 1000) - 100, exp: Math.floor(Date.now() / 1000) - 10 } })));
  it('lifetime over 120 s', async () => expect(await rejected(dsap.assertion({ claims: { exp: Math.floor(Date.now() / 1000) + 300 } }))).toMatch(/120/));
  it('missing exp', () => rejected(dsap.assertion({ claims: { exp: undefined } })));
  it('iat in the future', () => rejected(dsap.assertion({ claims: { iat: Math.floor(Date.now() / 1000) + 60, exp: Math.floor(Date.now() / 1000) + 100 } })));
  it('iss != sub', () => rejected(dsap.assertion({ claims: { sub: 'someone-else' } })));
  it('unknown client id', () => rejected(dsap.assertion({ claims: { iss: 'nobody', sub: 'nobody' } })));
  it('typ missing or wrong', async () => {
    await rejected(dsap.assertion({ header: { typ: undefined } }));
    await rejected(dsap.assertion({ header: { typ: 'dpop+jwt' } }));
  });
  it('kid missing', () => rejected(dsap.assertion({ header: { kid: undefined } })));
  it('unknown kid', async () => expect(await rejected(dsap.assertion({ header: { kid: 'not-there' } }))).toMatch(/kid/));
  it('signed by a key that is not the published one', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    await rejected(dsap.assertion({ key: privateKey }));
  });
  it('HS256 / RS256 are refused', async () => {
    await rejected(dsap.assertion({ alg: 'HS256', key: crypto.createSecretKey(crypto.randomBytes(32)) }));
    const { privateKey } = await generateKeyPair('RS256');
    await rejected(dsap.assertion({ alg: 'RS256', key: privateKey }));
  });
  it('a non-EC key in the key set is refused even with its kid', async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    dsap.jwks.keys.push({ ...(await exportJWK(publicKey)), kid: 'rsa-1', use: 'sig' });
    try {
      expect(await rejected(dsap.assertion({ header: { kid: 'rsa-1' }, alg: 'ES256', key: (await generateKeyPair('ES256')).privateKey }))).toMatch(/EC/);
      await rejected(dsap.assertion({ header: { kid: 'rsa-1' }, alg: 'RS256', key: privateKey }));
    } finally {
      dsap.jwks.keys.pop();
    }
  });
  it('two X-Dss-Assertion headers → 400', async () => {
    const a = await dsap.assertion();
    const b = await dsap.assertion();
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = require('node:http').request(`${server.baseUrl}/sign/api/v1${SESSIONS}`, { method: 'POST', headers: { 'content-type': 'application/json', 'X-Dss-Assertion': [a, b] } }, (res: import('node:http').IncomingMessage) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode as number, body }));
      });
      req.on('error', reject);
      req.end(JSON.stringify(ok));
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error).toBe('MULTIPLE_ASSERTION_HEADERS');
  });
  it('no credentials → 401 UNAUTHORIZED', () => rejected(Promise.resolve(null as unknown as string), 'UNAUTHORIZED'));
  it('deprecated Basic works only without an assertion header', async () => {
    const basic = 'Basic ' + Buffer.from(`${dsap.clientId}:s3cret-${dsap.clientId}`).toString('base64');
    expect((await dsap.call(SESSIONS, ok, { assertion: null, headers: { authorization: basic } })).status).toBe(200);
    const wrong = 'Basic ' + Buffer.from(`${dsap.clientId}:nope`).toString('base64');
    expect((await dsap.call(SESSIONS, ok, { assertion: null, headers: { authorization: wrong } })).status).toBe(401);
    const bad = await dsap.assertion({ claims: { aud: 'x' } });
    expect((await dsap.call(SESSIONS, ok, { assertion: bad, headers: { authorization: basic } })).status).toBe(401);
  });
  it('unreachable client key set → 401 CLIENT_JWKS_INVALID', async () => {
    const d = await startTestDsap({ apiBase: `${server.baseUrl}/sign/api/v1`, audience: `${server.baseUrl}/sign`, keysUrl: `${server.baseUrl}/sign/static/.well-known/keys.json` });
    sign.registerClient({ clientId: d.clientId, jwksUrl: 'http://127.0.0.1:9/none', notificationUrl: d.webhookUrl });
    const r = await d.call(SESSIONS, ok);
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 401, error: 'CLIENT_JWKS_INVALID' });
    sign.registerClient({ clientId: d.clientId, notificationUrl: d.webhookUrl });
    expect((await d.call(SESSIONS, ok)).body.error).toBe('CLIENT_JWKS_NOT_FOUND');
    await d.close();
  });
  it('a key set without any EC key → 401 CLIENT_JWKS_INVALID', async () => {
    const saved = dsap.jwks.keys.splice(0);
    const { publicKey } = await generateKeyPair('RS256');
    dsap.jwks.keys.push({ ...(await exportJWK(publicKey)), kid: dsap.kid, use: 'sig' });
    const d = await startTestDsap({ apiBase: `${server.baseUrl}/sign/api/v1`, audience: `${server.baseUrl}/sign`, keysUrl: `${server.baseUrl}/sign/static/.well-known/keys.json` });
    try {
      // a fresh client id so the service has no cached copy of the key set
      sign.registerClient({ clientId: d.clientId, jwksUrl: dsap.jwksUrl, notificationUrl: d.webhookUrl });
      const r = await d.call(SESSIONS, ok);
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 401, error: 'CLIENT_JWKS_INVALID' });
    } finally {
      dsap.jwks.keys.splice(0, dsap.jwks.keys.length, ...saved);
      await d.close();
    }
  });
  it('a DSAP key added later (new kid) is found by one refetch', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES384');
    dsap.jwks.keys.push({ ...(await exportJWK(publicKey)), kid: 'new-384', use: 'sig', alg: 'ES384' });
    try {
      const r = await dsap.call(SESSIONS, ok, { assertion: await dsap.assertion({ header: { kid: 'new-384' }, alg: 'ES384', key: privateKey }) });
      expect(r.status).toBe(200);
    } finally {
      dsap.jwks.keys.pop();
    }
  });
});

describe('webhook delivery and retries', () => {
  it('503 then success: retried, both attempts recorded', async () => {
    const ref = await newSession();
    dsap.webhookStatuses.push(503);
    expect(await phone.scan(ref)).toBe('acknowledged');
    expect((await dsap.waitFor(2, ref)).map((w) => w.claims.request_type)).toEqual(['user_cert', 'user_cert']);
    const attempts = sign.deliveries().filter((d) => d.signRef === ref);
    expect(attempts.map((a) => [a.attempt, a.status, a.outcome])).toEqual([
      [1, 503, 'retry'],
      [2, 200, 'acknowledged'],
    ]);
    expect(new Set(attempts.map((a) => a.deliveryId)).size).toBe(1);
  });

  it('400 is final: no retry, session in error, client_notification_failed error notification', async () => {
    const ref = await newSession();
    dsap.webhookStatuses.push(400);
    expect(await phone.scan(ref)).toBe('failed');
    const notes = await dsap.waitFor(2, ref);
    expect(notes[1].claims).toMatchObject({ request_type: 'error', error: 'client_notification_failed', ndi_request_id: expect.any(String), error_description: expect.any(String) });
    expect(sign.deliveries().filter((d) => d.signRef === ref && d.requestType === 'user_cert')).toHaveLength(1);
    expect(sign.session(ref)?.state).toBe('error');
    // a hash for a session the service ended says so (not "already submitted": none was)
    const hash = await dsap.call(hashPath(ref), hashBody('whatever'));
    expect({ status: hash.status, error: hash.body.error }).toEqual({ status: 400, error: 'ARGUMENTS_NOT_VALID' });
    expect(JSON.stringify(hash.body)).toMatch(/ended with an error/);
  });

  it('injected connection failures and timeouts are retried; 3 failures exhaust the policy', async () => {
    const ref = await newSession();
    sign.faults.failDeliveries(2, 'connection');
    expect(await phone.scan(ref)).toBe('acknowledged');
    expect(sign.deliveries().filter((d) => d.signRef === ref).map((a) => [a.error, a.simulated, a.outcome])).toEqual([
      ['connection', true, 'retry'],
      ['connection', true, 'retry'],
      [undefined, false, 'acknowledged'],
    ]);
    const ref2 = await newSession();
    sign.faults.failDeliveries(3, 'timeout');
    expect(await phone.scan(ref2)).toBe('failed');
    expect(sign.deliveries().filter((d) => d.signRef === ref2 && d.requestType === 'user_cert').map((a) => a.outcome)).toEqual(['retry', 'retry', 'failed']);
  });

  it('a real timeout (slow webhook) is retried', async () => {
    const slow = createSignService({ webhookRetryDelayMs: 10, webhookTimeoutMs: 1500 });
    let calls = 0;
    const hook = await listen(async (_req, res) => {
      calls++;
      if (calls === 1) await new Promise((r) => setTimeout(r, 3000));
      res.writeHead(200).end();
    });
    const s = await listen(mount([slow]));
    try {
      slow.setBaseUrl(s.baseUrl);
      const d = await startTestDsap({ apiBase: `${s.baseUrl}/sign/api/v1`, audience: s.baseUrl, keysUrl: `${s.baseUrl}/sign/static/.well-known/keys.json` });
      slow.registerClient({ clientId: d.clientId, jwksUrl: d.jwksUrl, notificationUrl: `${hook.baseUrl}/hook` });
      const ref = await newSession(d);
      expect(await slow.userScanned(ref, { certDer: pki.users.p256.certDer })).toBe('acknowledged');
      expect(slow.deliveries().map((a) => [a.error, a.status])).toEqual([
        ['timeout', undefined],
        [undefined, 200],
      ]);
      await d.close();
    } finally {
      await s.close();
      await hook.close();
    }
  });

  it('deliverTwice: the same token arrives twice', async () => {
    sign.faults.deliverTwice(true);
    const ref = await newSession();
    await phone.scan(ref);
    const [a, b] = await dsap.waitFor(2, ref);
    expect(b.token).toBe(a.token);
    expect(sign.deliveries().filter((d) => d.signRef === ref).map((d) => d.duplicate)).toEqual([false, true]);
  });
});

describe('phone-side errors', () => {
  it('reject → error notification user_cancelled', async () => {
    const { ref, nonce } = await scanned();
    await dsap.call(hashPath(ref), hashBody(nonce));
    await phone.reject(ref);
    const notes = await dsap.waitFor(2, ref);
    expect(notes[1].claims).toEqual({ sign_ref: ref, request_type: 'error', error: 'user_cancelled', error_description: expect.any(String), ndi_request_id: expect.any(String), iat: expect.any(Number), exp: expect.any(Number) });
  });
  it('a signature that does not verify over doc_hash → error notification, never signed_doc_hash', async () => {
    const { ref, nonce } = await scanned();
    await dsap.call(hashPath(ref), hashBody(nonce));
    const wrong = crypto.sign('sha256', Buffer.from(docHash, 'hex'), { key: pki.users.p256.privateKey, dsaEncoding: 'der' }); // hashed twice
    await sign.userSigned(ref, wrong.toString('hex'));
    const notes = await dsap.waitFor(2, ref);
    expect(notes[1].claims).toMatchObject({ request_type: 'error', error: 'signature_invalid' });
  });
  it('phone.error sends an error notification with the chosen code; the session is finished', async () => {
    const { ref } = await scanned();
    expect(await phone.error(ref, 'app_crashed', 'boom')).toBe('acknowledged');
    const notes = await dsap.waitFor(2, ref);
    expect(notes[1].claims).toMatchObject({ request_type: 'error', error: 'app_crashed', error_description: 'boom' });
    await expect(phone.approve(ref)).rejects.toThrow();
  });
  it('a user certificate from another CA is refused at scan', async () => {
    const foreign = await createTestPki({ baseUrl: 'http://127.0.0.1:9', rsaUser: false });
    const ref = await newSession();
    await expect(sign.userScanned(ref, { certDer: foreign.users.p256.certDer })).rejects.toThrow(/sandbox CA/);
  });
  it('the revoked user can still scan (revocation is the DSAP’s OCSP check)', async () => {
    const { ref } = await scanned('revoked');
    expect(sign.session(ref)?.state).toBe('cert_sent');
  });
});

describe('service keys and rotation', () => {
  it('key set: Cache-Control public max-age=3600, EC public keys only', async () => {
    const res = await fetch(`${server.baseUrl}/sign/static/.well-known/keys.json`);
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    const { keys } = (await res.json()) as { keys: Record<string, string>[] };
    expect(keys.length).toBeGreaterThanOrEqual(1);
    for (const k of keys) {
      expect(k).toEqual({ kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: expect.any(String), use: 'sig', alg: 'ES256' });
    }
  });
  it('rotateKeys: new kid published and used; old kid still published until retired', async () => {
    const oldKid = sign.currentKid();
    const newKid = sign.faults.rotateKeys();
    expect(newKid).not.toBe(oldKid);
    const kids = async (): Promise<string[]> => ((await (await fetch(`${server.baseUrl}/sign/static/.well-known/keys.json`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid).sort();
    expect(await kids()).toEqual(expect.arrayContaining([oldKid, newKid]));
    const { ref } = await scanned();
    expect(dsap.received.find((w) => w.claims.sign_ref === ref)?.kid).toBe(newKid);
    sign.retireOldKeys();
    expect(await kids()).toEqual([newKid]);
  });
  it('old keys disappear after the grace period', async () => {
    let now = Date.now();
    const s = createSignService({ keyGraceSeconds: 10, clock: () => now });
    const first = s.currentKid();
    s.rotateKeys();
    expect(s.publishedKeys().keys.map((k) => k.kid)).toContain(first);
    now += 11_000;
    expect(s.publishedKeys().keys.map((k) => k.kid)).not.toContain(first);
  });
  it('keys come in random order', () => {
    const s = createSignService();
    s.rotateKeys();
    s.rotateKeys();
    const orders = new Set(Array.from({ length: 30 }, () => s.publishedKeys().keys.map((k) => k.kid).join()));
    expect(orders.size).toBeGreaterThan(1);
  });
});

describe('service fault switches', () => {
  it('serviceError(1) → one 500 SERVER_SIDE_ERROR, then normal', async () => {
    sign.faults.serviceError(1);
    const r = await dsap.call(SESSIONS, { client_notification_token: 't', tenant_id: 't' });
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 500, error: 'SERVER_SIDE_ERROR' });
    await newSession();
  });
  it('serviceError(1, 503) and rateLimit(1) → 503 / 429 TOO_MANY_REQUESTS', async () => {
    sign.faults.serviceError(1, 503);
    expect((await dsap.call(SESSIONS, {})).status).toBe(503);
    sign.faults.rateLimit(1);
    const r = await dsap.call(SESSIONS, {});
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 429, error: 'TOO_MANY_REQUESTS' });
  });
});

describe('phone simulator', () => {
  it('auto mode scans and approves by itself', async () => {
    phone.auto({ user: 'p384', delayMs: 10 });
    try {
      const ref = await newSession();
      const [cert] = await dsap.waitFor(1, ref);
      expect(cert.claims.user_cert).toBe(pki.users.p384.certDer.toString('base64'));
      await dsap.call(hashPath(ref), hashBody(cert.claims.nonce as string));
      const [, signed] = await dsap.waitFor(2, ref);
      expect(signed.claims.request_type).toBe('signed_doc_hash');
      const key = new crypto.X509Certificate(pki.users.p384.certDer).publicKey;
      expect(crypto.verify('sha256', signedAttrs, { key, dsaEncoding: 'der' }, Buffer.from(signed.claims.doc_hash_signature as string, 'hex'))).toBe(true);
    } finally {
      phone.auto(false);
    }
  });
  it('POST /phone/auto {scan: off}: new sessions wait for a scan; what is scanned is still approved by itself', async () => {
    const auto = (body: unknown): Promise<Response> => fetch(`${server.baseUrl}/phone/auto`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await auto({ scan: 'off' })).status).toBe(400); // automatic mode is off
    phone.auto({ delayMs: 10 });
    try {
      expect((await auto({ scan: 'maybe' })).status).toBe(400);
      expect(await (await auto({ scan: 'off' })).json()).toEqual({ result: 'automatic scanning off' });
      const ref = await newSession();
      await new Promise((r) => setTimeout(r, 150));
      expect(sign.session(ref)?.state).toBe('created'); // not scanned by itself
      expect(await phone.scan(ref)).toBe('acknowledged');
      const [cert] = await dsap.waitFor(1, ref);
      await dsap.call(hashPath(ref), hashBody(cert.claims.nonce as string));
      expect((await dsap.waitFor(2, ref))[1].claims.request_type).toBe('signed_doc_hash'); // approved by itself
      await auto({ scan: 'on' });
      const next = await newSession();
      expect((await dsap.waitFor(1, next))[0].claims.request_type).toBe('user_cert');
    } finally {
      phone.auto(false);
    }
  });
  it('HTTP routes: POST /phone/scan (by QR payload), GET /phone lists the session, approve', async () => {
    const created = await dsap.call(SESSIONS, { client_notification_token: 'x', tenant_id: 'y' });
    const ref = created.body.sign_ref as string;
    const page = await (await fetch(`${server.baseUrl}/phone`)).text();
    expect(page).toContain(ref);
    const scan = await fetch(`${server.baseUrl}/phone/scan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ qr: created.body.qr_code.payload, user: 'p384' }) });
    expect(await scan.json()).toEqual({ result: 'acknowledged' });
    const [cert] = await dsap.waitFor(1, ref);
    await dsap.call(hashPath(ref), hashBody(cert.claims.nonce as string));
    expect(await (await fetch(`${server.baseUrl}/phone`)).text()).toContain('4821');
    // the list the phone page polls: document, domain and challenge code of the session waiting for approval
    const listed = (await (await fetch(`${server.baseUrl}/phone/sessions`)).json()) as Record<string, unknown>[];
    expect(listed.find((s) => s.sign_ref === ref)).toMatchObject({ state: 'hash_submitted', document_name: 'Tenancy agreement.pdf', domain_name: 'dsap.example.sg', challenge_code: '4821' });
    const form = await fetch(`${server.baseUrl}/phone/approve`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `sign_ref=${encodeURIComponent(ref)}` });
    expect(form.status).toBe(303);
    expect((await dsap.waitFor(2, ref))[1].claims.request_type).toBe('signed_doc_hash');
    const again = await fetch(`${server.baseUrl}/phone/approve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sign_ref: ref }) });
    expect(again.status).toBe(400);
  });
});

describe('sandbox control routes (for demos without a test harness)', () => {
  const post = (path: string, body: unknown): Promise<Response> =>
    fetch(`${server.baseUrl}/sign/sandbox${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('POST /sandbox/faults switches faults on; bad values are refused', async () => {
    expect(await (await post('/faults', { service_error: 1, service_error_status: 502 })).json()).toEqual({ service_error: 1 });
    expect((await dsap.call(SESSIONS, { client_notification_token: 't', tenant_id: 't' })).status).toBe(502);
    expect((await post('/faults', { service_error: -1 })).status).toBe(400);
    expect((await post('/faults', { fail_deliveries: 1, delivery_failure: 'nope' })).status).toBe(400);
    const rotated = (await (await post('/faults', { rotate_keys: true })).json()) as { rotated_to: string };
    expect(rotated.rotated_to).toBe(sign.currentKid());
  });
  it('GET /sandbox/deliveries lists the attempts', async () => {
    await post('/faults', { fail_deliveries: 1, delivery_failure: 504 });
    const { ref } = await scanned();
    const { deliveries } = (await (await fetch(`${server.baseUrl}/sign/sandbox/deliveries`)).json()) as { deliveries: { signRef: string; status: number }[] };
    expect(deliveries.filter((d) => d.signRef === ref).map((d) => d.status)).toEqual([504, 200]);
  });
  it('POST /sandbox/clients registers a DSAP', async () => {
    const r = await post('/clients', { client_id: 'via-http', notification_url: 'http://127.0.0.1:9/h', jwks_url: 'http://127.0.0.1:9/j' });
    expect(r.status).toBe(200);
    expect(sign.clients().find((c) => c.clientId === 'via-http')).toEqual({ clientId: 'via-http', notificationUrl: 'http://127.0.0.1:9/h', jwksUrl: 'http://127.0.0.1:9/j' });
  });
});
