/**
 * The retention a long-running runner applies: the store's clean-up at start and at each interval, what it deleted
 * reported, a failing store reported and tried again, stopped with the runner; and the memory store's own clean-up
 * (the `forget` step of nextStep: ended sessions only, once the retention passed).
 */
import { MemorySessionStore, type SessionStore } from '../../../src/session/store';
import { startRetention } from '../../../src/session/runner-parts/retention';
import { record } from '../records';

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('MemorySessionStore.cleanUp', () => {
  it('deletes ended sessions past the retention with their PDFs; live ones and recent ones stay', () => {
    const store = new MemorySessionStore();
    const old = Math.floor(Date.now() / 1000) - 3600;
    const sessions = {
      done: record('completed', {}, { signRef: 'done', updatedAt: old }),
      failed: record('failed', {}, { signRef: 'failed', updatedAt: old }),
      fresh: record('completed', {}, { signRef: 'fresh', updatedAt: Math.floor(Date.now() / 1000) }),
      live: record('waiting_for_scan', {}, { signRef: 'live', updatedAt: old, expiresAt: old + 100_000 }),
    };
    for (const [ref, r] of Object.entries(sessions)) {
      store.put(r, undefined);
      store.putDocument(ref, Buffer.from(ref));
      store.putSignedDocument(ref, Buffer.from(`${ref} signed`));
    }
    expect(store.cleanUp({ retentionSeconds: 1800 }).deleted.sort()).toEqual(['done', 'failed']);
    expect(store.list().sort()).toEqual(['fresh', 'live']);
    for (const ref of ['done', 'failed']) expect([store.getDocument(ref), store.getSignedDocument(ref)]).toEqual([undefined, undefined]);
    expect(store.getSignedDocument('fresh')?.toString()).toBe('fresh signed');
    expect(store.cleanUp({ retentionSeconds: 0 }).deleted).toEqual(['fresh']);
  });
});

describe('startRetention', () => {
  it('cleans at start and at each interval, reports what it deleted, and stops', async () => {
    const calls: number[] = [];
    const cleaned: number[] = [];
    const store = { cleanUp: ({ retentionSeconds }: { retentionSeconds: number }) => { calls.push(retentionSeconds); return { deleted: calls.length === 1 ? ['a', 'b'] : [] }; } } as unknown as SessionStore;
    const r = startRetention(store, { intervalMs: 1000, retentionMs: 7_000, onCleaned: (c) => cleaned.push(c.deleted) });
    await wait(50);
    expect(calls).toEqual([7]);
    expect(cleaned).toEqual([2]);
    await wait(1100);
    expect(calls).toEqual([7, 7]);
    expect(cleaned).toEqual([2]); // nothing deleted the second time: nothing reported
    r.stop();
    await wait(1100);
    expect(calls).toHaveLength(2);
  });

  it('a store that cannot be cleaned is reported with its code, and tried again', async () => {
    let n = 0;
    const failures: { code: string; message: string }[] = [];
    const store = { cleanUp: () => { n++; throw Object.assign(new Error('database down'), { code: 'ECONNREFUSED' }); } } as unknown as SessionStore;
    const r = startRetention(store, { intervalMs: 1000, retentionMs: 0, onFailed: (f) => failures.push(f) });
    await wait(1100);
    r.stop();
    expect(n).toBe(2);
    expect(failures[0]).toEqual({ code: 'STORE_FAILED', message: 'database down' });
  });

  it('a store without cleanUp is left alone; intervals under a second are refused', () => {
    expect(() => startRetention(new MemorySessionStore(), { intervalMs: 10, retentionMs: 0 })).toThrow(/cleanUpIntervalMs/);
    const r = startRetention({} as SessionStore, { intervalMs: 1000, retentionMs: 0 });
    r.stop();
  });
});
