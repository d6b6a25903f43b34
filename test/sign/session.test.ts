import {
  MemoryDeliveryLog, applySigningEvent, expireSigningSession, failSigningSession, markHashSubmitted, newSigningSessionState,
  type CertificateEvent, type SignatureEvent, type SigningSessionState,
} from '../../src/sign';

let now = Date.UTC(2025, 5, 1);
const clock = () => now;
const session = { signRef: 'ref-1', qrPayload: 'https://qr', expiresAt: now / 1000 + 120 };
const cert: CertificateEvent = {
  type: 'certificate', signRef: 'ref-1', nonce: 'n-1', issuedAt: 0,
  certificate: { der: Buffer.from('c'), base64: 'Yw==', subject: 'CN=x', issuer: 'CN=ca', serialNumber: '01', notBefore: '', notAfter: '', publicKeyAlgorithm: 'EC P-256' },
};
const hash = 'ab'.repeat(32);
const sig: SignatureEvent = { type: 'signature', signRef: 'ref-1', documentHash: hash, signature: '3000', issuedAt: 0 };
const start = (): SigningSessionState => newSigningSessionState(session, { challengeCode: '0042', clientNotificationToken: 'tok' }, clock);

describe('SigningSessionState', () => {
  it('walks waiting_for_scan → certificate_received → hash_submitted → signed, dropping the certificate at the end', () => {
    let s = start();
    expect(s).toEqual({ version: 1, signRef: 'ref-1', expiresAt: session.expiresAt, status: 'waiting_for_scan', challengeCode: '0042', qrPayload: session.qrPayload, clientNotificationToken: 'tok', updatedAt: now / 1000 });
    s = applySigningEvent(s, cert, clock);
    expect(s).toMatchObject({ status: 'certificate_received', nonce: 'n-1', certificate: 'Yw==' });
    s = markHashSubmitted(s, hash.toUpperCase(), clock);
    expect(s).toMatchObject({ status: 'hash_submitted', documentHash: hash });
    const before = s;
    s = applySigningEvent(s, sig, clock);
    expect(s.status).toBe('signed');
    expect(s.signature).toBe('3000');
    expect('certificate' in s).toBe(false);
    expect(before.status).toBe('hash_submitted'); // inputs are not modified
  });

  it('refuses events that do not fit the session', () => {
    const s = start();
    expect(() => applySigningEvent(s, { ...cert, signRef: 'other' })).toThrow(expect.objectContaining({ code: 'STATE_INVALID' }));
    expect(() => applySigningEvent(s, sig)).toThrow(/no hash submitted/);
    expect(() => markHashSubmitted(s, hash)).toThrow(expect.objectContaining({ code: 'STATE_INVALID' }));
    const submitted = markHashSubmitted(applySigningEvent(s, cert), hash);
    expect(() => applySigningEvent(submitted, { ...sig, documentHash: 'cd'.repeat(32) })).toThrow(/different document hash/);
    expect(() => applySigningEvent(submitted, cert)).toThrow(/while the session is hash_submitted/);
    const done = applySigningEvent(submitted, sig);
    expect(() => applySigningEvent(done, sig)).toThrow(/already signed/);
  });

  it('an error event or a local failure ends the session without the certificate', () => {
    const scanned = applySigningEvent(start(), cert);
    const failed = applySigningEvent(scanned, { type: 'error', signRef: 'ref-1', errorCode: 'user_cancelled', message: 'no', correlationId: 'c', issuedAt: 0 });
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'user_cancelled', message: 'no', correlationId: 'c' } });
    expect(failed.certificate).toBeUndefined();
    const local = failSigningSession(scanned, { code: 'SIGN_REF_NOT_FOUND', message: 'gone' }, clock);
    expect(local.status).toBe('failed');
    expect(local.certificate).toBeUndefined();
  });

  it('only an unscanned session expires by the clock', () => {
    const s = start();
    now += 119_000;
    expect(expireSigningSession(s, clock).status).toBe('waiting_for_scan');
    now += 1000;
    expect(expireSigningSession(s, clock).status).toBe('expired');
    expect(expireSigningSession(applySigningEvent(s, cert), clock).status).toBe('certificate_received');
  });
});

describe('MemoryDeliveryLog', () => {
  it('remembers keys until they expire and caps its size', () => {
    const log = new MemoryDeliveryLog({ clock, maxEntries: 3 });
    expect(log.remember('a', now + 1000)).toBe(true);
    expect(log.remember('a', now + 1000)).toBe(false);
    now += 1000;
    expect(log.remember('a', now + 1000)).toBe(true); // expired → new again
    for (const k of ['b', 'c', 'd']) log.remember(k, now + 10_000);
    expect(log.size).toBe(3);
    expect(log.remember('a', now + 1000)).toBe(true); // oldest dropped by the cap
  });
});
