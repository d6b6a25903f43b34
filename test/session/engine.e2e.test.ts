/**
 * The step functions as an n8n-style adapter uses them: every step on a FRESH engine (another process, no shared
 * memory), the record passed as JSON between steps, webhook deliveries checked statelessly and then bound to their
 * session where the record is loaded. Against the sandbox over real HTTP.
 */
import { samplePdf } from '../pades/ltv-helpers';
import { MemorySessionStore, type SessionRecord } from '../../src/session';
import { startSessionHarness, until, type SessionHarness } from './harness';

const json = (r: SessionRecord): SessionRecord => JSON.parse(JSON.stringify(r)) as SessionRecord;

let h: SessionHarness;
let pdf: Buffer;
beforeAll(async () => {
  h = await startSessionHarness({ mode: 'steps' });
  pdf = await samplePdf('Step functions');
});
afterAll(() => h.close());

/** Wait for the next raw webhook POST after `n` and return it. */
async function nextDelivery(n: number) {
  await until(() => h.raw.length > n, 'a webhook delivery');
  return h.raw[n]!;
}

it('start → certificate → signature → finish, each step on another engine, the record as JSON; foreign tokens refused, duplicates no-ops', async () => {
  const started = await h.newEngine().start(pdf, { documentName: 'Steps.pdf', level: 'B-LT' });
  expect(started.record.state.expiresAt).toBe(started.expiresAt); // from the service's expires_at
  const other = await h.newEngine().start(pdf, { documentName: 'Other.pdf', level: 'B-B' });
  let record = json(started.record);

  let n = h.raw.length;
  await h.sandbox.phone.scan(started.signRef, { user: 'p256' });
  const certPost = await nextDelivery(n);

  // The webhook trigger: stateless check on yet another engine.
  const check = await h.newEngine().checkDelivery({ headers: certPost.headers, body: certPost.body });
  expect(check.response.status).toBe(200);
  expect(check.delivery!.event.type).toBe('certificate');

  // A Bearer this DSAP never issued: refused by the stateless check.
  const forged = await h.newEngine().checkDelivery({ headers: { authorization: 'Bearer abcdefghijklmnopqrstuvwxyz0123456789_-' }, body: certPost.body });
  expect(forged.response.status).toBe(400);
  expect(forged.error?.code).toBe('WEBHOOK_UNAUTHORIZED');
  // The genuine JWT presented with ANOTHER session's (genuinely issued) token: passes the stateless check, but the
  // record refuses it and stays as it was.
  const swapped = await h.newEngine().checkDelivery({ headers: { authorization: `Bearer ${other.record.state.clientNotificationToken}` }, body: certPost.body });
  expect(swapped.response.status).toBe(200);
  await expect(h.newEngine().applyDelivery(record, swapped.delivery!, pdf)).rejects.toMatchObject({ code: 'WEBHOOK_UNAUTHORIZED' });
  // …and the other session's record refuses the event for this sign_ref.
  await expect(h.newEngine().applyDelivery(json(other.record), check.delivery!, pdf)).rejects.toMatchObject({ code: 'STATE_INVALID' });
  // Another PDF than the one started with is refused before anything happens.
  await expect(h.newEngine().applyDelivery(record, check.delivery!, Buffer.concat([pdf, Buffer.from('\n')]))).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'pdf' } });
  expect(h.hashes.get(started.signRef)).toBeUndefined();

  n = h.raw.length;
  const applied = await h.newEngine().applyDelivery(record, check.delivery!, pdf);
  record = json(applied.record);
  expect(record.state.status).toBe('hash_submitted');
  expect(record.revision).toBeGreaterThan(started.record.revision);
  expect(record.state.certificate).toBeDefined();
  expect(record.prepared?.documentHash).toBe(record.state.documentHash);
  // The same delivery again (a retry, another execution): nothing happens, never a second hash.
  const again = await h.newEngine().applyDelivery(record, check.delivery!, pdf);
  expect(again.duplicate).toBe(true);
  expect(again.record).toEqual(record);
  expect(h.hashes.get(started.signRef)).toBe(1);

  await h.sandbox.phone.approve(started.signRef);
  const sigPost = await nextDelivery(n);
  const sigCheck = await h.newEngine().checkDelivery({ headers: sigPost.headers, body: sigPost.body });
  expect(sigCheck.delivery!.event.type).toBe('signature');
  record = json((await h.newEngine().applyDelivery(record, sigCheck.delivery!, pdf)).record);
  expect(record.state.status).toBe('signed');

  const f = await h.newEngine().finish(record, pdf);
  expect(f.record.error).toBeUndefined();
  expect(f.record.state.status).toBe('completed');
  expect(f.record.result).toEqual({ level: 'B-LT', valid: true });
  expect(f.pdf!.subarray(0, pdf.length).equals(pdf)).toBe(true);
  // Ended: no certificate, no prepared state.
  expect(f.record.state.certificate).toBeUndefined();
  expect(f.record.prepared).toBeUndefined();
  // A late duplicate of the signature: a no-op on the ended record.
  expect((await h.newEngine().applyDelivery(json(f.record), sigCheck.delivery!, pdf)).duplicate).toBe(true);
});

it('two executions applying the same certificate at once with a compare-and-set claim: exactly one submits the hash', async () => {
  const store = new MemorySessionStore();
  const started = await h.newEngine().start(pdf, { documentName: 'Race.pdf', level: 'B-B' });
  store.put(started.record, undefined);
  const n = h.raw.length;
  await h.sandbox.phone.scan(started.signRef, { user: 'p384' });
  const post = await nextDelivery(n);
  const apply = async () => {
    const engine = h.newEngine();
    const check = await engine.checkDelivery({ headers: post.headers, body: post.body });
    const record = store.get(started.signRef)!;
    return engine.applyDelivery(record, check.delivery!, pdf, { claim: (claimed) => store.put(claimed, record.revision) });
  };
  const results = await Promise.all([apply(), apply(), apply()]);
  expect(results.filter((r) => r.duplicate).length).toBe(2);
  expect(results.filter((r) => !r.duplicate)[0]!.record.state.status).toBe('hash_submitted');
  expect(h.hashes.get(started.signRef)).toBe(1);
});

it('expire: a no-op before the deadline; after it, the session ends SESSION_EXPIRED without personal data', async () => {
  const started = await h.newEngine().start(pdf, { documentName: 'Late.pdf', level: 'B-B' });
  const engine = h.newEngine();
  expect(engine.expire(started.record).record).toBe(started.record);
  expect(engine.deadline(started.record)).toBe(started.expiresAt * 1000);
  const later = h.newEngine({ clock: () => started.expiresAt * 1000 + 1000 });
  const r = later.expire(json(started.record));
  expect(r.record.state.status).toBe('expired');
  expect(r.record.error?.code).toBe('SESSION_EXPIRED');
});
