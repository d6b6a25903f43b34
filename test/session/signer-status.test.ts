import { signerStatus, signerAnswer, renderSignerPage, checkSignerLink } from '../../src/session';
import { record, prepared } from './records';

const secret = 'a-signer-link-secret-of-at-least-32-characters';

describe('signerStatus', () => {
  it('walks the signer through scan, approval, signing, in plain words, showing the QR only before the scan', () => {
    const waiting = signerStatus(record('waiting_for_scan', {}, { qrPayload: 'https://app/qr?x' }));
    expect(waiting).toMatchObject({ stage: 'waitingForScan', done: false, challengeCode: '0427', qrPayload: 'https://app/qr?x' });
    const scanned = signerStatus(record('hash_submitted', { prepared }, { documentHash: 'ab'.repeat(32), nonce: 'n' }));
    expect(scanned).toMatchObject({ stage: 'scanned', done: false, challengeCode: '0427' });
    expect(scanned.qrPayload).toBeUndefined();
    expect(signerStatus(record('signed', { prepared }, { signature: 'aa' }))).toMatchObject({ stage: 'approved', done: false });
    const signed = signerStatus(record('completed', { result: { level: 'B-LTA', valid: true } }));
    expect(signed).toMatchObject({ stage: 'signed', done: true, headline: 'Signed', result: { level: 'B-LTA' } });
  });

  it('never hands out the notification token, nonce, certificate, hash or signature', () => {
    const r = record('hash_submitted', { prepared }, { clientNotificationToken: 'SECRET-TOKEN', nonce: 'SECRET-NONCE', certificate: 'SECRET-CERT', documentHash: 'ab'.repeat(32) });
    const json = JSON.stringify(signerStatus(r));
    for (const secretValue of ['SECRET-TOKEN', 'SECRET-NONCE', 'SECRET-CERT', 'ab'.repeat(32)]) expect(json).not.toContain(secretValue);
  });

  it('says why it failed in plain words: declined in the app, revoked certificate, expired', () => {
    const declined = signerStatus(record('failed', { error: { code: 'SIGN_REQUEST_REJECTED', message: 'x' } }, { error: { code: 'user_cancelled', message: 'no', correlationId: 'c' } }));
    expect(declined).toMatchObject({ stage: 'failed', done: true, error: { code: 'SIGN_REQUEST_REJECTED', serviceCode: 'user_cancelled' } });
    expect(declined.detail).toMatch(/declined/);
    expect(signerStatus(record('failed', { error: { code: 'OCSP_REVOKED', message: 'x' } })).detail).toMatch(/revoked/);
    expect(signerStatus(record('expired', { error: { code: 'SESSION_EXPIRED', message: 'x' } }))).toMatchObject({ stage: 'expired', done: true });
    expect(signerStatus(record('failed', { error: { code: 'SOMETHING_NEW', message: 'x' } })).detail).toMatch(/SOMETHING_NEW.*reference ref/);
  });

  it('says a signature completed short of its level is valid and needs no second signing', () => {
    const s = signerStatus(record('completed', { result: { level: 'B-B', valid: true, missing: { requested: 'B-LTA', stage: 'embed', code: 'TSA_FAILED', message: 'm' } } }));
    expect(s.result?.shortOf).toMatchObject({ requested: 'B-LTA' });
    expect(s.result?.shortOf?.reason).toMatch(/do not need to sign again/);
  });

  it('carries the company and the signer place the session was started with', () => {
    const r = record('waiting_for_scan');
    r.request.onBehalfOf = { uen: '202612345K', entityName: 'Acme Widgets Pte Ltd', role: 'Director', eserviceId: 'SIGN' };
    r.request.signer = { position: 2, of: 2, label: 'Tenant', previousSignRef: 'ref-0' };
    expect(signerStatus(r)).toMatchObject({ onBehalfOf: { uen: '202612345K', role: 'Director' }, signer: { position: 2, of: 2 } });
  });
});

describe('signerAnswer and the page', () => {
  it('gives a download link only once signed, and the link opens that session only', () => {
    expect(signerAnswer(record('signed', { prepared }, { signature: 'aa' }), { secret, downloadUrl: (t) => `/dl?key=${t}` }).downloadUrl).toBeUndefined();
    const answer = signerAnswer(record('completed', { result: { level: 'B-LTA', valid: true } }), { secret, downloadUrl: (t) => `/dl?key=${t}` });
    const token = new URL(answer.downloadUrl!, 'http://x').searchParams.get('key');
    expect(() => checkSignerLink({ secret, signRef: 'ref', purpose: 'download', token })).not.toThrow();
    expect(() => checkSignerLink({ secret, signRef: 'other', purpose: 'download', token })).toThrow(expect.objectContaining({ code: 'LINK_INVALID' }));
  });

  it('renders the QR code while waiting and escapes what the flow put in the document name', async () => {
    const r = record('waiting_for_scan', { request: { documentName: '<script>alert(1)</script>', level: 'B-T' } }, { qrPayload: 'https://app/qr?x' });
    const html = await renderSignerPage({ status: signerStatus(r), statusUrl: '/status?key=k' });
    expect(html).toContain('<svg');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>alert(1)');
    // the payload (the Singpass app link) is the target of the page's one "Open in Singpass" link, and nowhere else
    expect(html.split('https://app/qr?x').length - 1).toBe(1);
    expect(html).toContain('<a id="open-app-link" href="https://app/qr?x">Open in Singpass</a>');
  });

  it('never makes a payload that could run script in the page a link target', async () => {
    for (const payload of ['javascript:alert(1)', 'data:text/html,x', 'http://plain.example/docsign', 'not a url']) {
      const html = await renderSignerPage({ status: signerStatus(record('waiting_for_scan', {}, { qrPayload: payload })), statusUrl: '/s' });
      expect(html).toContain('<p id="open-app" hidden>');
      expect(html).toContain('href="#">Open in Singpass');
    }
  });
});
