/** The PDFs a store keeps in memory by row version (src/session/document-cache.ts): version, size and idle bounds. */
import { DocumentCache } from '../../src/session/document-cache';

const pdf = (n: number, fill = 1) => Buffer.alloc(n, fill);

describe('DocumentCache', () => {
  it('serves a PDF only at the version it was kept at; another version drops it', () => {
    const c = new DocumentCache();
    c.set('a', 'v1', pdf(10));
    expect(c.versionOf('a')).toBe('v1');
    expect(c.get('a', 'v1')).toEqual(pdf(10));
    expect(c.get('a', 'v2')).toBeUndefined();
    expect(c.versionOf('a')).toBeUndefined();
    expect(c.size).toEqual({ entries: 0, bytes: 0 });
  });

  it('keeps at most maxBytes, the least recently used out first; a PDF larger than the bound is not kept', () => {
    const c = new DocumentCache({ maxBytes: 30 });
    c.set('a', 'v', pdf(10));
    c.set('b', 'v', pdf(10));
    c.set('c', 'v', pdf(10));
    c.get('a', 'v'); // a used last: b is now the oldest
    c.set('d', 'v', pdf(10));
    expect(['a', 'b', 'c', 'd'].filter((k) => c.versionOf(k))).toEqual(['a', 'c', 'd']);
    expect(c.size).toEqual({ entries: 3, bytes: 30 });
    c.set('big', 'v', pdf(31));
    expect(c.versionOf('big')).toBeUndefined();
    expect(c.size.bytes).toBe(30);
    c.set('a', 'v2', pdf(5)); // replaced, not added
    expect(c.size).toEqual({ entries: 3, bytes: 25 });
  });

  it('drops what was not used for maxIdleMs; maxBytes 0 keeps nothing', () => {
    let now = 0;
    const c = new DocumentCache({ maxIdleMs: 1000, now: () => now });
    c.set('a', 'v', pdf(1));
    now = 600;
    c.set('b', 'v', pdf(1));
    now = 1100;
    expect(c.versionOf('a')).toBeUndefined();
    expect(c.get('b', 'v')).toBeDefined();
    now = 2000;
    expect(c.get('b', 'v')).toBeDefined(); // used at 1100
    const off = new DocumentCache({ maxBytes: 0 });
    off.set('a', 'v', pdf(1));
    expect(off.versionOf('a')).toBeUndefined();
  });
});
