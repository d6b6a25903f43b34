import { createPublicKey } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { generateClientKeys, loadSigningKey, type LoadedKey } from '../../src/keys';
import {
  SIGNING_ENVIRONMENTS, SigningApiClient, createDssAssertion, generateChallengeCode, generateNotificationToken, renderQr,
  type DocumentHashInput,
} from '../../src/sign';
import type { Fetch } from '../../src/http';

let key: LoadedKey;
beforeAll(async () => { key = await loadSigningKey({ key: (await generateClientKeys()).signing }); });

const FROZEN = Date.UTC(2025, 0, 2, 3, 4, 5);

describe('createDssAssertion', () => {
  it('has typ/alg/kid and iss=sub=client, aud, iat, exp, a UUIDv4 jti (frozen clock)', async () => {
    const jwt = await createDssAssertion({ clientId: 'dsap-1', key, audience: 'https://staging.sign.singpass.gov.sg', clock: () => FROZEN, lifetimeSeconds: 90 });
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'ES256', kid: key.kid, typ: 'JWT' });
    const claims = decodeJwt(jwt);
    expect(claims).toEqual({
      iss: 'dsap-1', sub: 'dsap-1', aud: 'https://staging.sign.singpass.gov.sg',
      iat: FROZEN / 1000, exp: FROZEN / 1000 + 90, jti: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
    });
    await expect(jwtVerify(jwt, createPublicKey(key.privateKey), { currentDate: new Date(FROZEN + 1000), audience: 'https://staging.sign.singpass.gov.sg' })).resolves.toBeDefined();
  });

  it('default lifetime 60 s; the jti differs every time', async () => {
    const a = decodeJwt(await createDssAssertion({ clientId: 'c', key, audience: 'a', clock: () => FROZEN }));
    const b = decodeJwt(await createDssAssertion({ clientId: 'c', key, audience: 'a', clock: () => FROZEN }));
    expect(a.exp! - a.iat!).toBe(60);
    expect(a.jti).not.toBe(b.jti);
  });

  it('refuses a lifetime over 120 s, an empty client id, an encryption key', async () => {
    await expect(createDssAssertion({ clientId: 'c', key, audience: 'a', lifetimeSeconds: 121 })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'lifetimeSeconds' } });
    await expect(createDssAssertion({ clientId: 'c', key, audience: 'a', lifetimeSeconds: 0 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(createDssAssertion({ clientId: ' ', key, audience: 'a' })).rejects.toMatchObject({ details: { field: 'clientId' } });
    await expect(createDssAssertion({ clientId: 'c', key: { ...key, use: 'enc' }, audience: 'a' })).rejects.toMatchObject({ details: { field: 'key' } });
  });
});

describe('generateChallengeCode / generateNotificationToken', () => {
  it('4 digits, leading zeros kept, roughly uniform over 20 000 draws', () => {
    const n = 20_000;
    const firstDigit = new Array(10).fill(0);
    let leadingZero = 0;
    for (let i = 0; i < n; i++) {
      const c = generateChallengeCode();
      expect(c).toMatch(/^\d{4}$/);
      firstDigit[Number(c[0])]++;
      if (c[0] === '0') leadingZero++;
    }
    expect(leadingZero).toBeGreaterThan(0);
    // each first digit expected n/10 = 2000; allow ±15 % (≈ 7 standard deviations)
    for (const count of firstDigit) expect(Math.abs(count - n / 10)).toBeLessThan(300);
  });

  it('notification tokens use only allowed characters and never repeat', () => {
    const set = new Set(Array.from({ length: 1000 }, () => generateNotificationToken()));
    expect(set.size).toBe(1000);
    for (const t of set) expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('renderQr', () => {
  it('PNG starts with the PNG signature; SVG is an <svg> document', async () => {
    const png = await renderQr('https://singpassmobile.sg/docsign?sign_ref=abc', { format: 'png' });
    expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
    expect(png.readUInt32BE(16)).toBe(320); // IHDR width
    const svg = await renderQr('https://singpassmobile.sg/docsign?sign_ref=abc', { format: 'svg' });
    expect(svg).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    await expect(renderQr('', { format: 'png' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});

/** A fetch that fails the test if the client ever calls it: validation must happen first. */
const neverCalled: Fetch = () => { throw new Error('the service must not be called for invalid input'); };

describe('SigningApiClient input validation (before any call)', () => {
  const client = () => new SigningApiClient({ baseUrl: 'https://staging.sign.singpass.gov.sg/api/v1', clientId: 'c', signingKey: key, fetch: neverCalled });
  const good: DocumentHashInput = { documentName: 'a.pdf', documentHash: 'ab'.repeat(32), challengeCode: '0123', nonce: 'n', domainName: 'sign.example.sg' };

  it.each([
    ['clientNotificationToken', { clientNotificationToken: '', tenantId: 't' }],
    ['clientNotificationToken', { clientNotificationToken: 'x'.repeat(256), tenantId: 't' }],
    ['clientNotificationToken', { clientNotificationToken: 'a.b', tenantId: 't' }],
    ['clientNotificationToken', { clientNotificationToken: 'tök', tenantId: 't' }],
    ['tenantId', { clientNotificationToken: 't', tenantId: '' }],
    ['tenantId', { clientNotificationToken: 't', tenantId: 'y'.repeat(256) }],
    ['tenantId', { clientNotificationToken: 't', tenantId: 'ACME & Co' }],
    ['tenantId', { clientNotificationToken: 't', tenantId: undefined }],
  ])('createSession: %s %#', async (field, input) => {
    await expect(client().createSession(input as never)).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field } });
  });

  it('createSession accepts the bounds: 255 chars, letters, digits, _ - and whitespace', async () => {
    let body: unknown;
    const capture: Fetch = async (_u, init) => { body = JSON.parse(String(init?.body)); return new Response(JSON.stringify({ sign_ref: 'r', expires_at: Math.floor(Date.now() / 1000) + 120, qr_code: { payload: 'p' } }), { status: 201 }); };
    const c = new SigningApiClient({ baseUrl: 'https://x.example/api/v1', clientId: 'c', signingKey: key, fetch: capture });
    await c.createSession({ clientNotificationToken: 'a'.repeat(255), tenantId: 'ACME_Pte - Ltd\t1' });
    expect(body).toEqual({ client_notification_token: 'a'.repeat(255), tenant_id: 'ACME_Pte - Ltd\t1' });
  });

  it.each([
    ['documentName', { documentName: '' }],
    ['documentName', { documentName: 'n'.repeat(256) }],
    ['documentHash', { documentHash: 'ab'.repeat(31) }],
    ['documentHash', { documentHash: 'ab'.repeat(32) + 'a' }],
    ['documentHash', { documentHash: 'zz'.repeat(32) }],
    ['challengeCode', { challengeCode: '123' }],
    ['challengeCode', { challengeCode: '12345' }],
    ['challengeCode', { challengeCode: '12 4' }],
    ['nonce', { nonce: '' }],
    ['domainName', { domainName: '' }],
    ['domainName', { domainName: 'd'.repeat(256) }],
    ['domainName', { domainName: 'https://sign.example.sg' }],
    ['domainName', { domainName: 'bad_host!' }],
    ['appLink', { appLink: 'http://app.example.sg/back' }],
    ['appLink', { appLink: 'not a url' }],
    ['appLink', { appLink: 'https://app.example.sg/' + 'p'.repeat(240) }],
  ])('submitDocumentHash: %s %#', async (field, change) => {
    await expect(client().submitDocumentHash('ref', { ...good, ...change })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field } });
  });

  it('submitDocumentHash: sign_ref must be a plausible path segment', async () => {
    for (const ref of ['', '..', 'a/b c', 'x'.repeat(513)]) {
      await expect(client().submitDocumentHash(ref, good)).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'signRef' } });
    }
  });

  it('submitDocumentHash sends the six wire fields, hash lower-cased, at the bounds', async () => {
    let url = '';
    let body: unknown;
    const capture: Fetch = async (u, init) => { url = u; body = JSON.parse(String(init?.body)); return new Response(null, { status: 200 }); };
    const c = new SigningApiClient({ baseUrl: 'https://x.example/api/v1/', clientId: 'c', signingKey: key, fetch: capture });
    const appLink = 'https://app.example.sg/' + 'p'.repeat(255 - 23);
    await c.submitDocumentHash('r-1_x', { documentName: 'n'.repeat(255), documentHash: 'AB'.repeat(32), challengeCode: 'A1b2', nonce: 'nonce', domainName: 'd'.repeat(63) + '.sg', appLink });
    expect(url).toBe('https://x.example/api/v1/doc-signing-sessions/r-1_x/hash');
    expect(body).toEqual({ doc_name: 'n'.repeat(255), doc_hash: 'ab'.repeat(32), challenge_code: 'A1b2', nonce: 'nonce', domain_name: 'd'.repeat(63) + '.sg', app_launch_url: appLink });
  });

  it('configuration: https required except on loopback; a key or basic credentials required', () => {
    expect(() => new SigningApiClient({ baseUrl: 'http://sign.example/api/v1', clientId: 'c', signingKey: key })).toThrow(expect.objectContaining({ details: expect.objectContaining({ field: 'baseUrl' }) }));
    expect(() => new SigningApiClient({ baseUrl: 'http://127.0.0.1:5156/sign/api/v1', clientId: 'c', signingKey: key })).not.toThrow();
    expect(() => new SigningApiClient({ baseUrl: 'https://x.example/api/v1', clientId: 'c' })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  });
});

describe('SigningApiClient response handling (stubbed fetch)', () => {
  const respond = (status: number, body: unknown): Fetch => async () => new Response(typeof body === 'string' ? body : JSON.stringify(body), { status });
  const client = (f: Fetch, extra = {}) => new SigningApiClient({ baseUrl: 'https://x.example/api/v1', clientId: 'c', signingKey: key, fetch: f, ...extra });
  const input = { clientNotificationToken: 't', tenantId: 't' };

  const at = { clock: () => 1_699_999_880_000 }; // 120 s before the expires_at of these answers
  it('parses the session answer, tolerating a top-level payload alias and numeric-string expiry', async () => {
    await expect(client(respond(200, { sign_ref: 'abc', expires_at: 1700000000, qr_code: { payload: 'https://qr', logo: 'data:x' } }), at).createSession(input))
      .resolves.toEqual({ signRef: 'abc', expiresAt: 1700000000, qrPayload: 'https://qr', qrLogo: 'data:x' });
    await expect(client(respond(201, { sign_ref: 'abc', expires_at: '1700000000', qr_payload: 'https://qr' }), at).createSession(input))
      .resolves.toEqual({ signRef: 'abc', expiresAt: 1700000000, qrPayload: 'https://qr' });
    await expect(client(respond(200, { sign_ref: 'abc', qr_code: { payload: 'x' } })).createSession(input)).rejects.toMatchObject({ code: 'HTTP_UNEXPECTED_RESPONSE', details: { field: 'expires_at' } });
    await expect(client(respond(200, 'oops')).createSession(input)).rejects.toMatchObject({ code: 'HTTP_UNEXPECTED_RESPONSE' });
  });

  it('refuses an answer the rest of the session could not use, before any QR is shown: sign_ref the hash call would refuse, expiry not in whole seconds, past, or too far (milliseconds), an unprintable QR payload', async () => {
    const answer = (over: Record<string, unknown>) => ({ sign_ref: 'abc', expires_at: 1700000000, qr_code: { payload: 'https://qr' }, ...over });
    const refused = async (over: Record<string, unknown>, field: string, message: RegExp) =>
      expect(client(respond(201, answer(over)), at).createSession(input)).rejects.toMatchObject({ code: 'HTTP_UNEXPECTED_RESPONSE', details: { field }, message: expect.stringMatching(message) });
    await refused({ sign_ref: 'x'.repeat(513) }, 'sign_ref', /1 to 512 printable/);
    await refused({ sign_ref: 'a b/c' }, 'sign_ref', /printable/);
    await refused({ sign_ref: '..' }, 'sign_ref', /printable/);
    await refused({ expires_at: 1700000000.5 }, 'expires_at', /whole seconds/);
    await refused({ expires_at: 1700000000 * 1000 }, 'expires_at', /more than a day away \(it looks like milliseconds/);
    await refused({ expires_at: 1700000000 + 2 * 86400 }, 'expires_at', /more than a day away; check/);
    await refused({ expires_at: 1699999000 }, 'expires_at', /already passed; check this machine's clock/);
    await refused({ expires_at: -5 }, 'expires_at', /already passed/);
    await refused({ qr_code: { payload: 'https://qr\n' } }, 'QR payload', /no control characters/);
    await refused({ qr_code: { payload: 'q'.repeat(2954) } }, 'QR payload', /at most 2953/);
    // a minute of clock difference is tolerated; 512 printable characters are a sign_ref
    await expect(client(respond(201, answer({ sign_ref: '~'.repeat(512), expires_at: 1699999850 })), at).createSession(input)).resolves.toMatchObject({ expiresAt: 1699999850 });
  });

  it('maps error answers and keeps id/trace_id/code (and nothing secret) in details', async () => {
    const body = { id: 'err-1', trace_id: 'tr-1', error: 'ARGUMENTS_NOT_VALID', error_description: 'bad tenant' };
    const err = await client(respond(400, body)).createSession(input).catch((e) => e);
    expect(err.toJSON()).toEqual({ code: 'SIGN_REQUEST_REJECTED', message: expect.stringContaining('bad tenant'), details: { status: 400, retryable: false, serviceErrorId: 'err-1', traceId: 'tr-1', serviceCode: 'ARGUMENTS_NOT_VALID' } });
    expect(JSON.stringify(err.toJSON())).not.toMatch(/eyJ/); // no JWT (assertion) anywhere
    await expect(client(respond(403, body)).createSession(input)).rejects.toMatchObject({ code: 'SIGN_AUTH_REJECTED' });
    await expect(client(respond(502, '<html>bad gateway</html>')).createSession(input)).rejects.toMatchObject({ code: 'SIGN_SERVICE_ERROR', details: { status: 502 } });
    await expect(client(respond(400, { ...body, error: 'SIGN_REF_NOT_FOUND' })).submitDocumentHash('r', { documentName: 'a', documentHash: 'a'.repeat(64), challengeCode: '1234', nonce: 'n', domainName: 'x.sg' }))
      .rejects.toMatchObject({ code: 'SIGN_REF_NOT_FOUND' });
  });

  it('a redirect is refused, not followed', async () => {
    const redirect: Fetch = async () => new Response(null, { status: 302, headers: { location: 'https://evil.example/' } });
    await expect(client(redirect).createSession(input)).rejects.toMatchObject({ code: 'HTTP_REDIRECT_REFUSED' });
  });

  it('deprecated Basic auth only when configured, and only without a signing key', async () => {
    let headers = new Headers();
    const capture: Fetch = async (_u, init) => { headers = new Headers(init?.headers); return new Response(JSON.stringify({ sign_ref: 'r', expires_at: Math.floor(Date.now() / 1000) + 120, qr_code: { payload: 'p' } })); };
    await new SigningApiClient({ baseUrl: 'https://x.example/api/v1', clientId: 'c', auth: { basic: { clientId: 'id', clientSecret: 's3' } }, fetch: capture }).createSession(input);
    expect(headers.get('authorization')).toBe(`Basic ${Buffer.from('id:s3').toString('base64')}`);
    expect(headers.get('x-dss-assertion')).toBeNull();
    await client(capture, { auth: { basic: { clientId: 'id', clientSecret: 's3' } } }).createSession(input);
    expect(headers.get('authorization')).toBeNull();
    expect(headers.get('x-dss-assertion')).toMatch(/^eyJ/);
  });
});

describe('SIGNING_ENVIRONMENTS', () => {
  it('staging: the API under /api/v1 and the assertion audience is its origin', async () => {
    let url = '';
    let assertion = '';
    const capture: Fetch = async (u, init) => {
      url = u;
      assertion = new Headers(init?.headers).get('x-dss-assertion') ?? '';
      return new Response(JSON.stringify({ sign_ref: 'r', expires_at: Math.floor(Date.now() / 1000) + 120, qr_code: { payload: 'p' } }));
    };
    await new SigningApiClient({ ...SIGNING_ENVIRONMENTS.staging, clientId: 'c', signingKey: key, fetch: capture }).createSession({ clientNotificationToken: 't', tenantId: 't' });
    expect(url).toBe('https://staging.sign.singpass.gov.sg/api/v1/doc-signing-sessions');
    expect(decodeJwt(assertion).aud).toBe('https://staging.sign.singpass.gov.sg');
    expect(SIGNING_ENVIRONMENTS.production.keySetUrl).toBe('https://static.app.sign.singpass.gov.sg/.well-known/keys.json');
  });
});
