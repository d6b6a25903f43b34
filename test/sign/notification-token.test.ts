import { createNotificationTokens } from '../../src/sign';
import { checkSessionField } from '../../src/sign/validate';

const secret = 'a-dsap-held-secret-of-at-least-32-chars!';

describe('createNotificationTokens', () => {
  const tokens = createNotificationTokens({ secret });

  it('issues distinct tokens in the API charset (letters, digits, _ and -), ≤ 255, that it recognises statelessly', () => {
    const a = tokens.issue();
    const b = tokens.issue();
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(a.length).toBeLessThanOrEqual(255);
    expect(checkSessionField('clientNotificationToken', a)).toBe(a);
    // another instance with the same secret (another process) recognises it
    expect(createNotificationTokens({ secret }).isIssued(a)).toBe(true);
    expect(tokens.idOf(a)).toMatch(/^[0-9a-f]{32}$/);
  });

  it('refuses tokens made with another secret, tampered ids or MACs, and garbage', () => {
    const a = tokens.issue();
    const other = createNotificationTokens({ secret: 'another-secret-entirely-0123456789abcdef' }).issue();
    expect(tokens.isIssued(other)).toBe(false);
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'a' ? 'b' : 'a') + s.slice(i + 1);
    expect(tokens.isIssued(flip(a, 6))).toBe(false); // id
    expect(tokens.isIssued(flip(a, a.length - 2))).toBe(false); // mac
    for (const bad of ['', 'sfn1_', 'Bearer x', a + 'x', a.toUpperCase(), undefined as unknown as string, 42 as unknown as string]) {
      expect(tokens.isIssued(bad)).toBe(false);
    }
    expect(tokens.idOf(other)).toBeUndefined();
  });

  it('accepts tokens of a previous secret during a rotation, issues with the new one', () => {
    const old = createNotificationTokens({ secret }).issue();
    const rotated = createNotificationTokens({ secret: 'the-new-secret-after-rotation-0123456789', previousSecrets: [secret] });
    expect(rotated.isIssued(old)).toBe(true);
    expect(createNotificationTokens({ secret }).isIssued(rotated.issue())).toBe(false);
  });

  it('a short or missing secret is INVALID_INPUT naming the setting', () => {
    expect(() => createNotificationTokens({ secret: 'short' })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', details: expect.objectContaining({ field: 'notificationSecret' }) }));
    expect(() => createNotificationTokens({ secret: undefined as never })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    expect(() => createNotificationTokens(undefined as never)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  });
});
