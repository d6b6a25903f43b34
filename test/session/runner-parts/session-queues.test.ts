import { createSessionQueues } from '../../../src/session/runner-parts/session-queues';

const tick = () => new Promise((r) => setImmediate(r));

describe('createSessionQueues', () => {
  it('runs one session\'s work in arrival order, one at a time; other sessions alongside', async () => {
    const q = createSessionQueues(() => undefined);
    const log: string[] = [];
    let release!: () => void;
    const first = new Promise<void>((r) => (release = r));
    void q.enqueue('a', async () => { log.push('a1 start'); await first; log.push('a1 end'); });
    void q.enqueue('a', async () => { log.push('a2'); });
    void q.enqueue('b', async () => { log.push('b1'); });
    await tick();
    expect(log).toEqual(['a1 start', 'b1']);
    expect(q.busy('a')).toBe(true);
    release();
    await q.drained();
    await tick();
    expect(log).toEqual(['a1 start', 'b1', 'a1 end', 'a2']);
    expect(q.busy('a')).toBe(false);
    expect(q.busy('b')).toBe(false);
  });

  it('a failing piece of work is reported with its session and the chain goes on', async () => {
    const errors: Array<[string, unknown]> = [];
    const q = createSessionQueues((signRef, e) => errors.push([signRef, e]));
    const boom = new Error('boom');
    void q.enqueue('a', async () => { throw boom; });
    let after = false;
    await q.enqueue('a', async () => { after = true; });
    expect(errors).toEqual([['a', boom]]);
    expect(after).toBe(true);
  });
});
