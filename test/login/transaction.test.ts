/** The transaction shape check: a FAPI login's DPoP key is checked with the rest, never left to fail mid-callback. */
import { generateDpopKey } from '../../src/login/dpop';
import { assertTransactionShape, openTransaction, sealTransaction, type LoginTransaction } from '../../src/login/transaction';

const SECRET = 'a-transaction-secret-of-at-least-32-bytes';
const tx: LoginTransaction = {
  v: 1, provider: 'singpass', id: 'tx1', issuer: 'https://id.example.sg/fapi', clientId: 'c', redirectUri: 'https://rp.example/cb', state: 'S'.repeat(43),
  nonce: 'N'.repeat(43), codeVerifier: 'V'.repeat(43), scope: 'openid', dpopKey: generateDpopKey(), createdAt: Date.now(), expiresAt: Date.now() + 60_000,
};

/** Thrown by f, whatever it is (a raw TypeError included). */
const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('did not throw');
};

describe('the DPoP key of a transaction', () => {
  const good = tx.dpopKey!;
  const malformed: Record<string, unknown> = {
    'a d that is no P-256 scalar': { ...good, d: 'AAAA' },
    'a d of another key': { ...good, d: generateDpopKey().d },
    'x/y that are not a point': { ...good, x: 'not-base64url!', y: 'AA' },
    'no x': { kty: 'EC', crv: 'P-256', d: good.d, y: good.y },
    'another curve': { ...good, crv: 'P-384' },
    'a string': 'not a key',
  };

  it.each(Object.entries(malformed))('with %s is LOGIN_STATE_INVALID in the shape check and when a sealed transaction is opened', (_why, dpopKey) => {
    // the same transaction with its own key, or none (legacy Corppass), passes
    expect(() => assertTransactionShape(tx)).not.toThrow();
    expect(() => assertTransactionShape({ ...tx, provider: 'corppass', dpopKey: undefined })).not.toThrow();
    expect(openTransaction(sealTransaction(tx, SECRET), SECRET).dpopKey).toEqual(good);
    const bad = { ...tx, dpopKey } as LoginTransaction;
    expect(thrown(() => assertTransactionShape(bad))).toMatchObject({ code: 'LOGIN_STATE_INVALID', message: expect.stringMatching(/DPoP key/) });
    expect(thrown(() => openTransaction(sealTransaction(bad, SECRET), SECRET))).toMatchObject({ code: 'LOGIN_STATE_INVALID' });
  });
});
