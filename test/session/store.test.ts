/** The default in-memory store (src/session/store.ts): compare-and-set by revision, copies in and out. */
import { MemorySessionStore, type SessionRecord } from '../../src/session';

const record = (signRef: string, revision: number, name = 'a.pdf'): SessionRecord => ({
  format: 'singpass-flows/signing-session@1',
  state: { version: 1, signRef, status: 'waiting_for_scan', expiresAt: 2, challengeCode: 'ABCD', clientNotificationToken: 't', updatedAt: 1 },
  request: { documentName: name, level: 'B-T' },
  document: { length: 1, sha256: '00' },
  revision,
} as unknown as SessionRecord);

describe('MemorySessionStore', () => {
  it('saves a new record only when none exists, and a change only against the stored revision', () => {
    const store = new MemorySessionStore();
    expect(store.put(record('r', 1), 1)).toBe(false); // missing: nothing to change
    expect(store.put(record('r', 1), undefined)).toBe(true);
    expect(store.put(record('r', 1, 'again.pdf'), undefined)).toBe(false); // exists
    expect(store.put(record('r', 3, 'stale.pdf'), 2)).toBe(false); // conflict: stored revision is 1
    expect(store.get('r')!.request.documentName).toBe('a.pdf');
    expect(store.put(record('r', 2, 'b.pdf'), 1)).toBe(true);
    expect(store.put(record('r', 2, 'c.pdf'), 1)).toBe(false); // the same loaded revision saved twice: one wins
    expect(store.get('r')).toMatchObject({ revision: 2, request: { documentName: 'b.pdf' } });
  });

  it('returns copies: changing what get() returned or what put() was given changes nothing stored', () => {
    const store = new MemorySessionStore();
    const r = record('r', 1);
    store.put(r, undefined);
    r.request.documentName = 'changed after put';
    const loaded = store.get('r')!;
    loaded.request.documentName = 'changed after get';
    expect(store.get('r')!.request.documentName).toBe('a.pdf');
    expect(store.list()).toEqual(['r']);
    store.delete('r');
    expect(store.get('r')).toBeUndefined();
  });
});
