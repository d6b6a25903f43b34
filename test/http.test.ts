import { requireHttpsUrl } from '../src/http';
import { constantTimeEqual, randomToken } from '../src/secrets';

describe('requireHttpsUrl (one rule for service, redirect and app-launch URLs)', () => {
  test('https is accepted; http only on a loopback host and only when allowed', () => {
    expect(requireHttpsUrl('u', 'https://id.singpass.gov.sg/fapi').host).toBe('id.singpass.gov.sg');
    for (const host of ['127.0.0.1:5156', 'localhost:8080', '[::1]:9000']) {
      expect(requireHttpsUrl('u', `http://${host}/cb`, { allowLoopbackHttp: true }).protocol).toBe('http:');
      expect(() => requireHttpsUrl('u', `http://${host}/cb`)).toThrow(/must use https/);
    }
    expect(() => requireHttpsUrl('u', 'http://example.com/cb', { allowLoopbackHttp: true })).toThrow(/must use https/);
  });

  test('custom schemes, relative and missing URLs are refused with INVALID_INPUT naming the field', () => {
    expect(() => requireHttpsUrl('redirectUri', 'myapp://callback')).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', details: expect.objectContaining({ field: 'redirectUri' }) }));
    expect(() => requireHttpsUrl('redirectUri', '/callback')).toThrow(/not a valid absolute URL/);
    expect(() => requireHttpsUrl('baseUrl', undefined, { example: 'https://x/api' })).toThrow(/a URL is required, e.g. https:\/\/x\/api/);
  });
});

describe('secrets', () => {
  test('constantTimeEqual compares content, whatever the lengths', () => {
    expect(constantTimeEqual('token one', 'token one')).toBe(true);
    expect(constantTimeEqual('token one', 'token onE')).toBe(false);
    expect(constantTimeEqual('short', 'a much longer value')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
  });

  test('randomToken: 43 base64url characters, never repeating', () => {
    const seen = new Set(Array.from({ length: 1000 }, () => randomToken()));
    expect(seen.size).toBe(1000);
    for (const t of seen) expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
