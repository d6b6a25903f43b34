import { createCertificateGate } from '../../../src/session/runner-parts/certificate-gate';

const tick = () => new Promise((r) => setImmediate(r));
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('createCertificateGate', () => {
  it('runs at most `concurrency` pieces of work at once; the rest start in arrival order as slots free', async () => {
    const gate = createCertificateGate(2);
    const started: number[] = [];
    const work = [deferred(), deferred(), deferred(), deferred()];
    const runs = work.map((w, i) => gate.withSlot(async () => { started.push(i); await w.promise; }));
    await tick();
    expect(started).toEqual([0, 1]);
    work[1].resolve();
    await tick();
    expect(started).toEqual([0, 1, 2]);
    work[0].resolve();
    await tick();
    expect(started).toEqual([0, 1, 2, 3]);
    work[2].resolve();
    work[3].resolve();
    await Promise.all(runs);
  });

  it('a failing piece of work frees its slot', async () => {
    const gate = createCertificateGate(1);
    await expect(gate.withSlot(async () => { throw new Error('boom'); })).rejects.toThrow('boom');
    let ran = false;
    await gate.withSlot(async () => { ran = true; });
    expect(ran).toBe(true);
  });

  it('yieldTo waits while any certificate is pending, and resolves at once when none is', async () => {
    const gate = createCertificateGate(4);
    await gate.yieldTo();
    gate.pending();
    gate.pending();
    let through = false;
    const waiting = gate.yieldTo().then(() => { through = true; });
    gate.done();
    await tick();
    expect(through).toBe(false);
    gate.done();
    await waiting;
    expect(through).toBe(true);
  });

  it('refuses a concurrency below 1', () => {
    expect(() => createCertificateGate(0)).toThrow(/certificateConcurrency/);
    expect(() => createCertificateGate(Number.NaN)).toThrow(/certificateConcurrency/);
  });
});

describe('createCertificateGate with a limit that moves', () => {
  function movingLimit(start: number) {
    let value = start;
    const listeners: ((n: number) => void)[] = [];
    return {
      current: () => value,
      onChange: (l: (n: number) => void) => void listeners.push(l),
      set(n: number) {
        value = n;
        for (const l of listeners) l(n);
      },
    };
  }

  it('admits waiting work at once when the limit widens, and no more than it allows', async () => {
    const limit = movingLimit(1);
    const gate = createCertificateGate(limit);
    const started: number[] = [];
    const work = [deferred(), deferred(), deferred(), deferred()];
    const runs = work.map((w, i) => gate.withSlot(async () => { started.push(i); await w.promise; }));
    await tick();
    expect(started).toEqual([0]);
    expect(gate.queued()).toBe(3);
    limit.set(3);
    await tick();
    expect(started).toEqual([0, 1, 2]);
    expect(gate.active()).toBe(3);
    for (const w of work) w.resolve();
    await Promise.all(runs);
    expect(gate.active()).toBe(0);
  });

  it('after a narrowing, admits no one until the work in hand is under the new limit', async () => {
    const limit = movingLimit(3);
    const gate = createCertificateGate(limit);
    const started: number[] = [];
    const work = [deferred(), deferred(), deferred(), deferred(), deferred()];
    const runs = work.map((w, i) => gate.withSlot(async () => { started.push(i); await w.promise; }));
    await tick();
    expect(started).toEqual([0, 1, 2]);
    limit.set(1);
    work[0].resolve();
    await tick();
    expect(started).toEqual([0, 1, 2]); // 2 still at work, over the new limit of 1
    work[1].resolve();
    await tick();
    expect(started).toEqual([0, 1, 2]);
    work[2].resolve();
    await tick();
    expect(started).toEqual([0, 1, 2, 3]); // in arrival order
    work[3].resolve();
    work[4].resolve();
    await Promise.all(runs);
    expect(started).toEqual([0, 1, 2, 3, 4]);
  });
});
