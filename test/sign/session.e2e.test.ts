import * as crypto from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import {
  SigningApiClient, applySigningEvent, generateChallengeCode, generateNotificationToken, markHashSubmitted, newSigningSessionState,
  type CertificateEvent, type SignatureEvent, type SigningEvent,
} from '../../src/sign';
import type { Fetch } from '../../src/http';
import { startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => { h = await startHarness(); });
afterAll(async () => { await h?.close(); });
afterEach(() => { h.sign.faults.reset(); });

/** Stand-in for DER SignedAttributes: the user signs sha256(blob) and the signature verifies over the blob. */
const blob = crypto.randomBytes(150);
const documentHash = crypto.createHash('sha256').update(blob).digest('hex');

async function create() {
  const clientNotificationToken = generateNotificationToken();
  const session = await h.client.createSession({ clientNotificationToken, tenantId: 'ACME Pte Ltd' });
  h.tokens.set(session.signRef, clientNotificationToken);
  return { session, clientNotificationToken };
}

async function scannedSession(user = 'p256') {
  const { session, clientNotificationToken } = await create();
  expect(await h.phone.scan(session.signRef, { user })).toBe('acknowledged');
  const [got] = await h.waitFor(1, session.signRef);
  return { session, clientNotificationToken, cert: got.result.event as CertificateEvent };
}

function hashInput(nonce: string, extra: Record<string, string> = {}) {
  return { documentName: 'Tenancy agreement.pdf', documentHash, challengeCode: generateChallengeCode(), nonce, domainName: 'sign.example.sg', ...extra };
}

describe('a whole signing session over real HTTP (our client + webhook verifier ↔ sandbox service + phone)', () => {
  it.each(['p256', 'p384'])('%s user: create → certificate webhook → hash → signature webhook; the signature verifies over the data', async (user) => {
    const before = Math.floor(Date.now() / 1000);
    const { session, clientNotificationToken } = await create();
    expect(session.signRef.length).toBeGreaterThan(0);
    expect(session.qrPayload).toContain(encodeURIComponent(session.signRef));
    expect(session.expiresAt).toBeGreaterThan(before);
    const challengeCode = generateChallengeCode();
    let state = newSigningSessionState(session, { challengeCode, clientNotificationToken });
    expect(state.status).toBe('waiting_for_scan');

    expect(await h.phone.scan(session.signRef, { user })).toBe('acknowledged');
    const [certCall] = await h.waitFor(1, session.signRef);
    expect(certCall.result.response).toEqual({ status: 200 });
    expect(certCall.result.duplicate).toBe(false);
    const cert = certCall.result.event as CertificateEvent;
    expect(cert.type).toBe('certificate');
    expect(cert.nonce.length).toBeGreaterThan(0);
    expect(cert.certificate.der.equals(h.pki.users[user as 'p256' | 'p384'].certDer)).toBe(true);
    expect(cert.certificate.publicKeyAlgorithm).toBe(user === 'p256' ? 'EC P-256' : 'EC P-384');
    expect(cert.certificate.issuer).toContain(new crypto.X509Certificate(h.pki.intermediate.certDer).subject.split('\n')[0]);
    state = applySigningEvent(state, cert);
    expect(state.status).toBe('certificate_received');
    expect(state.certificate).toBe(cert.certificate.base64);

    await h.client.submitDocumentHash(session.signRef, { ...hashInput(cert.nonce), challengeCode, documentHash: documentHash.toUpperCase() });
    state = markHashSubmitted(state, documentHash);
    expect(h.sign.session(session.signRef)?.docHash).toBe(documentHash); // lower-cased on the wire
    expect(h.sign.session(session.signRef)?.challengeCode).toBe(challengeCode);

    expect(await h.phone.approve(session.signRef)).toBe('acknowledged');
    const calls = await h.waitFor(2, session.signRef);
    const sig = calls[1].result.event as SignatureEvent;
    expect(sig).toMatchObject({ type: 'signature', signRef: session.signRef, documentHash });
    const ok = crypto.verify('sha256', blob, { key: new crypto.X509Certificate(cert.certificate.der).publicKey, dsaEncoding: 'der' }, Buffer.from(sig.signature, 'hex'));
    expect(ok).toBe(true);
    state = applySigningEvent(state, sig);
    expect(state.status).toBe('signed');
    expect(state.certificate).toBeUndefined(); // not kept after the session
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
  });

  it('the user declining arrives as an error event with code, message and correlation id', async () => {
    const { session, cert } = await scannedSession();
    await h.client.submitDocumentHash(session.signRef, hashInput(cert.nonce));
    await h.phone.reject(session.signRef);
    const calls = await h.waitFor(2, session.signRef);
    const ev = calls[1].result.event as SigningEvent;
    expect(ev.type).toBe('error');
    if (ev.type !== 'error') return;
    expect(ev.errorCode.length).toBeGreaterThan(0);
    expect(ev.correlationId.length).toBeGreaterThan(0);
  });
});

describe('client_notification_token with spaces (allowed by the spec)', () => {
  it('is sent, echoed as Bearer by the service and accepted by the verifier', async () => {
    const token = 'my token_1 - ' + crypto.randomBytes(4).toString('hex');
    const session = await h.client.createSession({ clientNotificationToken: token, tenantId: 'Spaced Tenant' });
    h.tokens.set(session.signRef, token);
    expect(await h.phone.scan(session.signRef)).toBe('acknowledged');
    const [call] = await h.waitFor(1, session.signRef);
    expect(call.result.response.status).toBe(200);
  });
});

describe('SIGN_REF_NOT_FOUND is reported and never retried', () => {
  it('unknown sign_ref: one request, code SIGN_REF_NOT_FOUND with the service ids in details', async () => {
    const client = h.newClient({ retry: { attempts: 3, delayMs: 1 } });
    const before = h.sign.securityEvents().length;
    const err = await client.submitDocumentHash('no-such-session-ref', hashInput('nonce')).catch((e) => e);
    expect(err).toMatchObject({ code: 'SIGN_REF_NOT_FOUND', details: { status: 400, serviceCode: 'SIGN_REF_NOT_FOUND', retryable: false } });
    expect(typeof err.details.serviceErrorId).toBe('string');
    expect(client.requestCount).toBe(1);
    expect(h.sign.securityEvents().length).toBe(before + 1);
  });

  it('expired session: SIGN_REF_NOT_FOUND, one request', async () => {
    const { session, cert } = await scannedSession();
    h.sign.faults.expireSession(session.signRef);
    const client = h.newClient({ retry: { attempts: 3, delayMs: 1 } });
    await expect(client.submitDocumentHash(session.signRef, hashInput(cert.nonce))).rejects.toMatchObject({ code: 'SIGN_REF_NOT_FOUND' });
    expect(client.requestCount).toBe(1);
  });
});

describe('assertions: fresh per request, replay rejected', () => {
  it('every request (retries included) carries a new jti, and a hand-replayed assertion is refused', async () => {
    const seen: string[] = [];
    const recording: Fetch = (url, init) => {
      const v = new Headers(init?.headers).get('x-dss-assertion');
      if (v) seen.push(v);
      return fetch(url, init);
    };
    const client = h.newClient({ fetch: recording });
    const { signRef } = await client.createSession({ clientNotificationToken: 'tok', tenantId: 't' });
    h.tokens.set(signRef, 'tok');
    await h.phone.scan(signRef);
    const [c] = await h.waitFor(1, signRef);
    h.sign.faults.serviceError(1, 503);
    await client.submitDocumentHash(signRef, hashInput((c.result.event as CertificateEvent).nonce)); // retried once
    expect(client.requestCount).toBe(3);
    expect(seen).toHaveLength(3);
    const jtis = seen.map((a) => decodeJwt(a).jti);
    expect(new Set(jtis).size).toBe(3);
    for (const a of seen) {
      const claims = decodeJwt(a);
      expect(decodeProtectedHeader(a)).toMatchObject({ typ: 'JWT', alg: 'ES256', kid: h.key.kid });
      expect(claims).toMatchObject({ iss: h.clientId, sub: h.clientId, aud: new URL(h.apiBase).origin });
      expect(claims.exp! - claims.iat!).toBeLessThanOrEqual(120);
      expect(claims.jti).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    // replay the first assertion by hand
    const replay = await fetch(`${h.apiBase}/doc-signing-sessions`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dss-assertion': seen[0] },
      body: JSON.stringify({ client_notification_token: 'tok', tenant_id: 't' }),
    });
    expect(replay.status).toBe(401);
  });
});

describe('service errors map to stable codes; retry policy', () => {
  it('create-session is not retried on 5xx unless opted in', async () => {
    const client = h.newClient();
    h.sign.faults.serviceError(1, 503);
    await expect(client.createSession({ clientNotificationToken: 'a', tenantId: 'b' })).rejects.toMatchObject({ code: 'SIGN_SERVICE_ERROR', details: { status: 503, retryable: true } });
    expect(client.requestCount).toBe(1);
    const optedIn = h.newClient({ retry: { createSession: true, delayMs: 1 } });
    h.sign.faults.serviceError(1, 503);
    await expect(optedIn.createSession({ clientNotificationToken: 'a', tenantId: 'b' })).resolves.toHaveProperty('signRef');
    expect(optedIn.requestCount).toBe(2);
  });

  it('hash call gives up after the configured attempts with SIGN_SERVICE_ERROR', async () => {
    const { session, cert } = await scannedSession();
    const client = h.newClient({ retry: { attempts: 2, delayMs: 1 } });
    h.sign.faults.serviceError(2, 502);
    await expect(client.submitDocumentHash(session.signRef, hashInput(cert.nonce))).rejects.toMatchObject({ code: 'SIGN_SERVICE_ERROR', details: { status: 502 } });
    expect(client.requestCount).toBe(2);
  });

  it('429 → SIGN_RATE_LIMITED (not retried); unknown client → SIGN_AUTH_REJECTED; bad nonce → SIGN_REQUEST_REJECTED', async () => {
    const client = h.newClient();
    h.sign.faults.rateLimit(1);
    await expect(client.createSession({ clientNotificationToken: 'a', tenantId: 'b' })).rejects.toMatchObject({ code: 'SIGN_RATE_LIMITED', details: { status: 429 } });
    expect(client.requestCount).toBe(1);
    const stranger = h.newClient({ clientId: 'not-registered' });
    const err = await stranger.createSession({ clientNotificationToken: 'a', tenantId: 'b' }).catch((e) => e);
    expect(err.code).toBe('SIGN_AUTH_REJECTED');
    expect(err.details.status).toBe(401);
    expect(typeof err.details.serviceErrorId).toBe('string');
    const { session } = await scannedSession();
    await expect(h.client.submitDocumentHash(session.signRef, hashInput('wrong-nonce'))).rejects.toMatchObject({ code: 'SIGN_REQUEST_REJECTED', details: { status: 400 } });
  });

  it('a network failure on the hash call is retried; on create-session it is not', async () => {
    let calls = 0;
    const flaky: Fetch = (url, init) => (++calls === 1 ? Promise.reject(new TypeError('fetch failed')) : fetch(url, init));
    const { session, cert } = await scannedSession();
    await h.newClient({ fetch: flaky }).submitDocumentHash(session.signRef, hashInput(cert.nonce));
    expect(calls).toBe(2);
    calls = 0;
    await expect(h.newClient({ fetch: flaky }).createSession({ clientNotificationToken: 'a', tenantId: 'b' })).rejects.toMatchObject({ code: 'HTTP_NETWORK' });
    expect(calls).toBe(1);
  });
});

describe('webhook behaviour with the real service', () => {
  it('a doubled delivery is acknowledged and flagged duplicate', async () => {
    h.sign.faults.deliverTwice(true);
    const { session } = await create();
    await h.phone.scan(session.signRef);
    const calls = await h.waitFor(2, session.signRef);
    expect(calls.map((c) => c.result.response.status)).toEqual([200, 200]);
    expect(calls.map((c) => c.result.duplicate)).toEqual([false, true]);
  });

  it('key rotation between the two webhooks: one key-set refetch, the new kid is accepted', async () => {
    const { session, cert } = await scannedSession();
    const fetchesBefore = h.verifier.keySet.fetchCount;
    const oldKid = h.sign.currentKid();
    const newKid = h.sign.rotateKeys();
    expect(newKid).not.toBe(oldKid);
    await h.client.submitDocumentHash(session.signRef, hashInput(cert.nonce));
    await h.phone.approve(session.signRef);
    const calls = await h.waitFor(2, session.signRef);
    expect(calls[1].result.response.status).toBe(200);
    expect(calls[1].result.event?.type).toBe('signature');
    expect(h.verifier.keySet.fetchCount).toBe(fetchesBefore + 1);
  });

  it('a wrong Bearer gets 400 with all three body fields, and the service does not retry a 400', async () => {
    const { session } = await create();
    h.tokens.set(session.signRef, 'a-different-token'); // the DSAP expects another token than the one sent
    const attemptsBefore = h.sign.deliveries().length;
    expect(await h.phone.scan(session.signRef)).toBe('failed');
    const [call] = await h.waitFor(1, '*');
    h.received.length = 0;
    expect(call.result.response.status).toBe(400);
    expect(call.result.error?.code).toBe('WEBHOOK_UNAUTHORIZED');
    const body = (call.result.response as { body: Record<string, string> }).body;
    expect(Object.keys(body).sort()).toEqual(['error', 'error_description', 'ndi_request_id']);
    expect(Object.values(body).every((v) => typeof v === 'string' && v.length > 0)).toBe(true);
    // the failed certificate notification is followed by an error notification (also refused); neither is retried
    const attempts = h.sign.deliveries().slice(attemptsBefore).filter((d) => d.signRef === session.signRef);
    expect(attempts.length).toBeGreaterThanOrEqual(1);
    expect(attempts.every((d) => d.attempt === 1 && d.status === 400 && d.outcome === 'failed')).toBe(true);
  });
});

describe('a lost answer on the hash call', () => {
  it('the retry is refused as "already submitted" and flagged possiblyAccepted; the session did go on', async () => {
    const { session, cert } = await scannedSession();
    let calls = 0;
    // first attempt reaches the service, then the answer is "lost" (timeout)
    const lossy: Fetch = async (url, init) => {
      const res = await fetch(url, init);
      if (++calls === 1) throw Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' });
      return res;
    };
    const err = await h.newClient({ fetch: lossy }).submitDocumentHash(session.signRef, hashInput(cert.nonce)).catch((e) => e);
    expect(calls).toBe(2);
    expect(err).toMatchObject({ code: 'SIGN_REQUEST_REJECTED', details: { status: 400, possiblyAccepted: true } });
    expect(err.message).toMatch(/wait for the signature webhook/);
    expect(await h.phone.approve(session.signRef)).toBe('acknowledged');
    const calls2 = await h.waitFor(2, session.signRef);
    expect(calls2[1].result.event?.type).toBe('signature');
  });
});

describe('deprecated Basic authentication (explicit opt-in)', () => {
  it('works against the service when configured, and a wrong secret is SIGN_AUTH_REJECTED', async () => {
    h.sign.registerClient({ clientId: 'basic-dsap', jwksUrl: `${h.dsapServer.baseUrl}/jwks`, notificationUrl: `${h.dsapServer.baseUrl}/webhook`, basicSecret: 'old-secret' });
    const ok = new SigningApiClient({ baseUrl: h.apiBase, clientId: 'basic-dsap', auth: { basic: { clientId: 'basic-dsap', clientSecret: 'old-secret' } } });
    await expect(ok.createSession({ clientNotificationToken: 'a', tenantId: 'b' })).resolves.toHaveProperty('signRef');
    const bad = new SigningApiClient({ baseUrl: h.apiBase, clientId: 'basic-dsap', auth: { basic: { clientId: 'basic-dsap', clientSecret: 'wrong' } } });
    await expect(bad.createSession({ clientNotificationToken: 'a', tenantId: 'b' })).rejects.toMatchObject({ code: 'SIGN_AUTH_REJECTED' });
  });
});

describe('service key set caching over this whole file', () => {
  it('fetched once, plus once for the rotation — never per webhook', () => {
    expect(h.sign.deliveries().filter((d) => d.status === 200).length).toBeGreaterThan(15);
    expect(h.verifier.keySet.fetchCount).toBe(2);
  });
});
