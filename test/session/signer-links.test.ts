import { checkSignerLink, issueSignerLink } from '../../src/session';

const secret = 'a-signer-link-secret-of-at-least-32-characters';
const now = 1_800_000_000_000;

describe('signer links', () => {
  it('opens the session and purpose it was issued for, until its expiry', () => {
    const { token, expiresAt } = issueSignerLink({ secret, signRef: 'ref-1', purpose: 'download', ttlSeconds: 300, now });
    expect(expiresAt).toBe(new Date(now + 300_000).toISOString());
    expect(() => checkSignerLink({ secret, signRef: 'ref-1', purpose: 'download', token, now: now + 299_000 })).not.toThrow();
    expect(() => checkSignerLink({ secret, signRef: 'ref-1', purpose: 'download', token, now: now + 300_000 })).toThrow(expect.objectContaining({ code: 'LINK_EXPIRED' }));
  });

  it('opens nothing for another session, another purpose, another secret or an altered expiry', () => {
    const { token } = issueSignerLink({ secret, signRef: 'ref-1', purpose: 'page', now });
    const invalid = expect.objectContaining({ code: 'LINK_INVALID' });
    expect(() => checkSignerLink({ secret, signRef: 'ref-2', purpose: 'page', token, now })).toThrow(invalid);
    expect(() => checkSignerLink({ secret, signRef: 'ref-1', purpose: 'download', token, now })).toThrow(invalid);
    expect(() => checkSignerLink({ secret: `${secret}x`, signRef: 'ref-1', purpose: 'page', token, now })).toThrow(invalid);
    const [expiry, mac] = token.split('.');
    expect(() => checkSignerLink({ secret, signRef: 'ref-1', purpose: 'page', token: `${Number(expiry) + 3600}.${mac}`, now })).toThrow(invalid);
    for (const garbage of [undefined, '', 'ref-1', `${expiry}.`, 42]) {
      expect(() => checkSignerLink({ secret, signRef: 'ref-1', purpose: 'page', token: garbage, now })).toThrow(invalid);
    }
  });

  it('reports an expired link only when it was genuinely issued', () => {
    const { token } = issueSignerLink({ secret, signRef: 'ref-1', purpose: 'page', ttlSeconds: 1, now });
    const [expiry] = token.split('.');
    const forged = `${expiry}.${'A'.repeat(43)}`;
    expect(() => checkSignerLink({ secret, signRef: 'ref-1', purpose: 'page', token: forged, now: now + 10_000 })).toThrow(expect.objectContaining({ code: 'LINK_INVALID' }));
  });

  it('keeps links of a rotated-out secret open when it is listed as previous', () => {
    const old = 'the-previous-signer-link-secret-0123456789';
    const { token } = issueSignerLink({ secret: old, signRef: 'ref-1', purpose: 'page', now });
    expect(() => checkSignerLink({ secret, previousSecrets: [old], signRef: 'ref-1', purpose: 'page', token, now })).not.toThrow();
    expect(() => checkSignerLink({ secret, signRef: 'ref-1', purpose: 'page', token, now })).toThrow(expect.objectContaining({ code: 'LINK_INVALID' }));
  });

  it('refuses a short secret, an unknown purpose and an unbounded lifetime', () => {
    expect(() => issueSignerLink({ secret: 'short', signRef: 'ref-1', purpose: 'page' })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', details: expect.objectContaining({ field: 'secret' }) }));
    expect(() => issueSignerLink({ secret, signRef: 'ref-1', purpose: 'admin' as never })).toThrow(/purpose/);
    expect(() => issueSignerLink({ secret, signRef: 'ref-1', purpose: 'page', ttlSeconds: 90 * 24 * 3600 })).toThrow(/ttlSeconds/);
    expect(() => issueSignerLink({ secret, signRef: '../x y', purpose: 'page' })).toThrow(/signRef/);
  });
});
