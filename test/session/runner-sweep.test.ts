/**
 * A sweep that cannot read the store is reported as that (onSweepFailed, with the store's code), not as a refused
 * webhook, and the next interval sweeps again. A copy of an event whose record has gone past it leaves the record to
 * the process working on it.
 */
import { SingpassFlowsError } from '../../src/errors';
import { createSessionRunner, MemorySessionStore } from '../../src/session';
import { certificateDelivery, loadFakes, pdf, setup, storedSession } from './engine-fakes';

beforeAll(loadFakes);

/** A real in-memory store whose listing fails while `down` (a PostgreSQL or folder outage as the sweep meets it). */
class FailingListStore extends MemorySessionStore {
  down = true;
  listed = 0;
  override list(): string[] {
    this.listed++;
    if (this.down) throw new SingpassFlowsError('STORE_BUSY', 'the session store did not answer');
    return super.list();
  }
}

it('reports a failed sweep with the store code, not as a webhook refusal, and sweeps again next interval', async () => {
  const store = new FailingListStore();
  const failures: { code: string; message: string }[] = [];
  const refused: unknown[] = [];
  const runner = createSessionRunner({
    engine: setup().engine, store, sweepIntervalMs: 100,
    onSweepFailed: (f) => void failures.push(f),
    onRefused: (r) => void refused.push(r),
  });
  try {
    await until(() => failures.length >= 2);
    expect(failures[0]).toEqual({ code: 'STORE_BUSY', message: 'the session store did not answer' });
    expect(refused).toEqual([]);
    store.down = false;
    const listedBefore = store.listed;
    await until(() => store.listed > listedBefore);
    const failed = failures.length;
    await until(() => store.listed > listedBefore + 1);
    expect(failures.length).toBe(failed);
  } finally {
    await runner.close();
  }
});

it('a throwing onSweepFailed hook does not stop the sweeps', async () => {
  const store = new FailingListStore();
  let calls = 0;
  const runner = createSessionRunner({ engine: setup().engine, store, sweepIntervalMs: 100, onSweepFailed: () => { calls++; throw new Error('logger down'); } });
  try {
    await until(() => calls >= 3);
  } finally {
    await runner.close();
  }
});

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(ok()).toBe(true);
}

describe('a copy of an event the record has gone past', () => {
  it('is answered 200 and moves nothing here: the hash another process is sending is not sent again', async () => {
    const t = setup();
    const s = (await t.engine.start(pdf, { documentName: 'Copy.pdf', level: 'B-T' })).record;
    const delivery = certificateDelivery(s, undefined, t);
    // another process (a shared store) claimed this event, prepared, and is sending the hash (the call counted)
    const prepared = (await t.engine.prepareCertificate(s, delivery, pdf)).record;
    const sending = { ...prepared, submitting: { ...prepared.submitting!, attempts: 1 } };
    const store = storedSession(sending);
    const refusals: unknown[] = [];
    const runner = createSessionRunner({ engine: t.engine, store, onRefused: (r) => void refusals.push(r) });
    try {
      const answer = await runner.handleWebhook({ headers: { authorization: `Bearer ${s.state.clientNotificationToken}` }, body: { event: delivery.event } });
      expect({ answer, refusals }).toMatchObject({ answer: { status: 200 }, refusals: [] });
      await new Promise((r) => setTimeout(r, 300)); // room for a (wrong) resend
      expect(t.client.hashCalls).toEqual([]);
      expect(store.get(s.state.signRef)).toEqual(sending);
    } finally {
      await runner.close();
    }
  });
});
