import { createLoopDelayLimit } from '../../../src/session/runner-parts/loop-delay-limit';

/** Resolves with the next limit the controller sets (no time is asserted: only which way it moved). */
const nextChange = (limit: ReturnType<typeof createLoopDelayLimit>): Promise<number> => new Promise((resolve) => {
  let once = false;
  limit.onChange((n) => {
    if (!once) {
      once = true;
      resolve(n);
    }
  });
});
/** Keep the event loop busy for `ms` (a certificate step hogging it, as far as the loop's delay can tell). */
const hog = (ms: number): void => {
  const end = Date.now() + ms;
  while (Date.now() < end) { /* busy */ }
};

describe('createLoopDelayLimit (on this process\'s real event loop)', () => {
  const base = { min: 2, max: 16, lowDelayMs: 60, highDelayMs: 150, sampleMs: 50 };
  // thresholds no shared machine's scheduling reaches: the loop counts as responsive throughout
  const responsive = { ...base, lowDelayMs: 2000, highDelayMs: 5000 };

  it('widens while work is waiting and the loop is responsive, up to max', async () => {
    const limit = createLoopDelayLimit({ ...responsive, saturated: () => true });
    try {
      expect(limit.current()).toBe(2);
      const seen: number[] = [];
      while (limit.current() < 16) seen.push(await nextChange(limit));
      expect(seen[0]).toBeGreaterThan(2);
      expect(seen).toEqual([...seen].sort((a, b) => a - b)); // only ever wider on an idle loop
      expect(seen[seen.length - 1]).toBe(16);
    } finally {
      limit.stop();
    }
  });

  it('does not widen when no work is waiting (a quiet gate proves nothing)', async () => {
    let waiting = false;
    const limit = createLoopDelayLimit({ ...responsive, saturated: () => waiting });
    try {
      // several sample periods pass on a responsive loop: still the floor
      for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, base.sampleMs));
      expect(limit.current()).toBe(2);
      waiting = true;
      expect(await nextChange(limit)).toBeGreaterThan(2);
    } finally {
      limit.stop();
    }
  });

  it('halves when the loop lags past highDelayMs, never below min', async () => {
    const limit = createLoopDelayLimit({ ...base, initial: 16, saturated: () => false });
    try {
      const seen: number[] = [];
      while (limit.current() > 2) {
        const changed = nextChange(limit);
        let moved = false;
        void changed.then(() => { moved = true; });
        // every timer tick of a sample period comes far later than highDelayMs
        while (!moved) {
          hog(400);
          await new Promise((r) => setTimeout(r, 0));
        }
        seen.push(await changed);
      }
      expect(seen).toEqual([8, 4, 2]);
      hog(400);
      await new Promise((r) => setTimeout(r, base.sampleMs * 2));
      expect(limit.current()).toBe(2);
    } finally {
      limit.stop();
    }
  }, 30_000);

  it('refuses a nonsensical configuration', () => {
    expect(() => createLoopDelayLimit({ ...base, min: 0, saturated: () => true })).toThrow(/certificateConcurrency/);
    expect(() => createLoopDelayLimit({ ...base, max: 1, saturated: () => true })).toThrow(/certificateConcurrency/);
    expect(() => createLoopDelayLimit({ ...base, lowDelayMs: 200, saturated: () => true })).toThrow(/certificateConcurrency/);
    expect(() => createLoopDelayLimit({ ...base, initial: 17, saturated: () => true })).toThrow(/certificateConcurrency/);
  });
});
