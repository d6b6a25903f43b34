/**
 * "Never lose a session's state on a fault or restart", between the certificate webhook's 200 and the save point:
 *  - a record CLAIMED at the certificate step (certificate and nonce saved, nothing prepared) whose process then
 *    died is continued from the stored certificate — by `runner.resume()`, and by a replayed certificate event —
 *    with exactly one hash accepted; two executions continuing it at once submit one hash;
 *  - the runner's webhook answers 200 only once the event is in the store (certificate: the claim; signature: the
 *    signed record), so a runner killed right after the 200 still completes the session after a restart, and a
 *    store that fails before the 200 makes it answer 503 (the service retries).
 * Against the sandbox over real HTTP.
 */
import { samplePdf } from '../pades/ltv-helpers';
import {
  createSessionRunner, isCertificateClaimed, MemorySessionStore, stepSaver, type SessionOutcome, type SessionRecord, type SessionRunner, type SigningEngine,
} from '../../src/session';
import { startSessionHarness, StoreFailingWrites, until, type RawDelivery, type SessionHarness } from './harness';

let pdf: Buffer;
beforeAll(async () => {
  pdf = await samplePdf('Claim restart');
});

/** What the service claims in a raw delivery (read only to pick deliveries; never trusted). */
function requestTypeOf(d: RawDelivery): string {
  const token = (JSON.parse(d.body.toString()) as { token: string }).token;
  return (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { request_type: string }).request_type;
}

/** The user's certificate and the prepared state are gone once the session ended. */
function expectNoPersonalData(record: SessionRecord): void {
  expect(record.state.certificate).toBeUndefined();
  expect(record.prepared).toBeUndefined();
  expect(record.submitting).toBeUndefined();
}

/** The session completed at B-B with a signed PDF, the sandbox accepted exactly one hash, no personal data is left. */
function expectCompletedWithOneHash(h: SessionHarness, out: SessionOutcome): void {
  expect(out.record.error).toBeUndefined();
  expect(out.record.result).toEqual({ level: 'B-B', valid: true });
  expect(out.pdf).toBeDefined();
  expect(h.hashes.get(out.record.state.signRef)).toBe(1);
  expectNoPersonalData(out.record);
}

/** A persistent store whose write of the save point is never made: the process died after the claim. */
const diesAfterTheClaim = () => new StoreFailingWrites((r) => r.submitting !== undefined, 'simulated crash: the process died after the claim, before the save point');

describe('runner: the process dies after the claim, before the save point', () => {
  let h: SessionHarness;
  const store = diesAfterTheClaim();
  beforeAll(async () => { h = await startSessionHarness({ runner: { store } }); });
  afterAll(() => h.close());

  it('resume() continues the claimed certificate from the store: one hash accepted, the session completes without personal data', async () => {
    const s = await h.runner.start(pdf, { documentName: 'Claimed.pdf', level: 'B-B' });
    await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
    await until(() => store.crashes === 1, 'the crash after the claim');
    await until(() => h.refused.some((r) => r.signRef === s.signRef), 'the failed step to be reported');
    const left = store.get(s.signRef)!;
    expect(isCertificateClaimed(left)).toBe(true);
    expect(left.state.certificate).toBeDefined();
    expect(h.hashes.get(s.signRef)).toBeUndefined();

    const runner = await h.restartRunner({ engine: h.newEngine(), store });
    expect(await runner.resume()).toBe(1);
    await until(() => h.sandbox.sign.session(s.signRef)?.state === 'hash_submitted', 'the hash after resume()', 15_000);
    await h.sandbox.phone.approve(s.signRef);
    expectCompletedWithOneHash(h, await runner.outcome(s.signRef));
    expectNoPersonalData(store.get(s.signRef)!);
  }, 60_000);

  it('after a restart without resume(), the replayed certificate delivery continues the claimed record (not dropped as a duplicate)', async () => {
    store.armed = true;
    const s = await h.runner.start(pdf, { documentName: 'Replayed.pdf', level: 'B-B' });
    const n = h.raw.length;
    await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
    await until(() => store.crashes === 2, 'the crash after the claim');
    const cert = h.raw.slice(n).find((d) => requestTypeOf(d) === 'user_cert')!;
    expect(isCertificateClaimed(store.get(s.signRef)!)).toBe(true);

    const runner = await h.restartRunner({ engine: h.newEngine(), store });
    const replay = await runner.handleWebhook({ headers: cert.headers, body: cert.body });
    expect(replay.status).toBe(200);
    await until(() => h.sandbox.sign.session(s.signRef)?.state === 'hash_submitted', 'the hash after the replay', 15_000);
    // Replayed again once continued: acknowledged and dropped, no second hash.
    expect((await runner.handleWebhook({ headers: cert.headers, body: cert.body })).status).toBe(200);
    await h.sandbox.phone.approve(s.signRef);
    expectCompletedWithOneHash(h, await runner.outcome(s.signRef));
    expect(h.sandbox.sign.hashCalls().filter((c) => c.signRef === s.signRef)).toHaveLength(1);
  }, 60_000);
});

describe('step functions: a claimed record continued from the store', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness({ mode: 'steps' }); });
  afterAll(() => h.close());

  /** A session scanned, claimed in `store` by an execution that then died; with its certificate delivery. */
  async function claimedThenCrashed(store: MemorySessionStore, name: string, engine: SigningEngine = h.newEngine()): Promise<{ signRef: string; cert: RawDelivery }> {
    const started = await engine.start(pdf, { documentName: name, level: 'B-B' });
    store.put(started.record, undefined);
    const n = h.raw.length;
    await h.sandbox.phone.scan(started.signRef, { user: 'p256' });
    await until(() => h.raw.length > n, 'the certificate webhook');
    const cert = h.raw[n]!;
    const delivery = (await engine.checkDelivery({ headers: cert.headers, body: cert.body })).delivery!;
    const loaded = store.get(started.signRef)!;
    await expect(engine.applyDelivery(loaded, delivery, pdf, {
      claim: (claimed) => {
        expect(store.put(claimed, loaded.revision)).toBe(true);
        throw new Error('simulated crash right after the claim was saved');
      },
    })).rejects.toThrow('simulated crash');
    expect(isCertificateClaimed(store.get(started.signRef)!)).toBe(true);
    return { signRef: started.signRef, cert };
  }

  it('the replayed certificate event proceeds on the claimed record: the hash is sent once and the record is at hash_submitted', async () => {
    const store = new MemorySessionStore();
    const { signRef, cert } = await claimedThenCrashed(store, 'Replay.pdf');
    const engine = h.newEngine();
    const delivery = (await engine.checkDelivery({ headers: cert.headers, body: cert.body })).delivery!;
    const loaded = store.get(signRef)!;
    const saver = stepSaver(store, loaded);
    const r = await engine.applyDelivery(loaded, delivery, pdf, { save: saver.save });
    expect(r.duplicate).toBeUndefined();
    expect(r.record.state.status).toBe('hash_submitted');
    expect(h.hashes.get(signRef)).toBe(1);
    expect(store.put(r.record, saver.expected)).toBe(true);
    expect((await h.newEngine().applyDelivery(store.get(signRef)!, delivery, pdf, { save: saver.save })).duplicate).toBe(true);
    expect(h.hashes.get(signRef)).toBe(1);
  });

  it('two executions continuing the same claimed record at once: one submits, the other loses the compare-and-set save point and sends nothing', async () => {
    const store = new MemorySessionStore();
    const { signRef } = await claimedThenCrashed(store, 'Race.pdf');
    const loaded = store.get(signRef)!;
    const results = await Promise.all([0, 1].map(() => {
      const saver = stepSaver(store, loaded);
      return h.newEngine().continueCertificate(JSON.parse(JSON.stringify(loaded)) as SessionRecord, pdf, { save: saver.save });
    }));
    expect(results.filter((r) => r.duplicate)).toHaveLength(1);
    expect(results.find((r) => !r.duplicate)!.record.state.status).toBe('hash_submitted');
    expect(h.sandbox.sign.hashCalls().filter((c) => c.signRef === signRef)).toHaveLength(1);
    expect(h.hashes.get(signRef)).toBe(1);
    // without a compare-and-set save point it is refused (another execution may be continuing it)
    await expect(h.newEngine().continueCertificate(loaded, pdf)).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'save' } });
  });

  it('continued past the deadline: expired, the certificate dropped, nothing sent', async () => {
    const store = new MemorySessionStore();
    const { signRef } = await claimedThenCrashed(store, 'Late.pdf');
    const loaded = store.get(signRef)!;
    const late = h.newEngine({ clock: () => h.engine.deadline(loaded) + 5000 });
    const r = await late.continueCertificate(loaded, pdf, { save: stepSaver(store, loaded).save });
    expect(r.record.state.status).toBe('expired');
    expect(r.record.error).toMatchObject({ code: 'SESSION_EXPIRED' });
    expectNoPersonalData(r.record);
    expect(h.sandbox.sign.hashCalls().filter((c) => c.signRef === signRef)).toHaveLength(0);
  });
});

/** A store that can be "killed" (every call throws) and revived: the process is gone, its disk is not. */
class KillableStore extends MemorySessionStore {
  dead = false;
  private check(): void {
    if (this.dead) throw new Error('simulated kill: the process is gone');
  }
  override get(signRef: string): SessionRecord | undefined { this.check(); return super.get(signRef); }
  override put(record: SessionRecord, expectedRevision: number | undefined): boolean { this.check(); return super.put(record, expectedRevision); }
  override list(): string[] { this.check(); return super.list(); }
  override getDocument(signRef: string): Buffer | undefined { this.check(); return super.getDocument(signRef); }
  override putDocument(signRef: string, bytes: Buffer): void { this.check(); super.putDocument(signRef, bytes); }
  override deleteDocument(signRef: string): void { this.check(); super.deleteDocument(signRef); }
}

describe('runner: killed right after the webhook\'s 200, then restarted', () => {
  let h: SessionHarness;
  const runners: SessionRunner[] = [];
  // 'steps': the sandbox's deliveries are only recorded; the test hands each to the runner alive at that moment.
  beforeAll(async () => { h = await startSessionHarness({ mode: 'steps' }); });
  afterAll(async () => {
    for (const r of runners) await r.close();
    await h.close();
  });

  const newRunner = (store: KillableStore): SessionRunner => {
    const r = createSessionRunner({ engine: h.newEngine(), store });
    runners.push(r);
    return r;
  };
  /** Answer `d` with `runner`, then kill the process at once (before anything scheduled behind the answer runs). */
  async function answerThenKill(runner: SessionRunner, store: KillableStore, d: RawDelivery): Promise<void> {
    const answer = await runner.handleWebhook({ headers: d.headers, body: d.body });
    store.dead = true;
    expect(answer.status).toBe(200);
    await runner.close();
    await new Promise((r) => setTimeout(r, 200)); // whatever the dead runner had scheduled fails on the dead store
    store.dead = false;
  }

  it('the certificate event and then the signature event survive a kill right after their 200: one hash, the session completes', async () => {
    const store = new KillableStore();
    const first = newRunner(store);
    const s = await first.start(pdf, { documentName: 'Killed.pdf', level: 'B-B' });
    let n = h.raw.length;
    await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
    await until(() => h.raw.length > n, 'the certificate webhook');
    await answerThenKill(first, store, h.raw[n]!);
    expect(store.get(s.signRef)!.state.status).toBe('certificate_received'); // the claim was saved before the 200

    const second = newRunner(store);
    expect(await second.resume()).toBe(1);
    await until(() => h.sandbox.sign.session(s.signRef)?.state === 'hash_submitted', 'the hash after the restart', 15_000);
    await until(() => store.get(s.signRef)!.state.status === 'hash_submitted', 'the submitted record');
    n = h.raw.length;
    await h.sandbox.phone.approve(s.signRef);
    await until(() => h.raw.length > n, 'the signature webhook');
    await answerThenKill(second, store, h.raw[n]!);
    expect(store.get(s.signRef)!.state.status).toBe('signed'); // the signature was saved before the 200

    const third = newRunner(store);
    expect(await third.resume()).toBe(1);
    expectCompletedWithOneHash(h, await third.outcome(s.signRef));
  }, 60_000);
});

describe('runner: the store fails while the certificate event is being saved', () => {
  let h: SessionHarness;
  // the write of the claim fails once (a database hiccup): the webhook must not have answered 200 yet
  const store = new StoreFailingWrites(isCertificateClaimed, 'simulated store failure while saving the claim');
  beforeAll(async () => { h = await startSessionHarness({ runner: { store } }); });
  afterAll(() => h.close());

  it('the delivery is answered 503, not 200; the service\'s retry (flagged a duplicate by the delivery log) is saved and the session completes with one hash', async () => {
    const s = await h.runner.start(pdf, { documentName: 'Store hiccup.pdf', level: 'B-B' });
    await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
    const attempts = () => h.sandbox.sign.deliveries().filter((d) => d.signRef === s.signRef && d.requestType === 'user_cert');
    await until(() => attempts().some((d) => d.outcome !== 'retry'), 'the certificate delivery to end');
    expect(store.crashes).toBe(1);
    expect(attempts().map((d) => d.status)).toEqual([503, 200]);
    await until(() => h.sandbox.sign.session(s.signRef)?.state === 'hash_submitted', 'the hash', 15_000);
    await h.sandbox.phone.approve(s.signRef);
    expectCompletedWithOneHash(h, await h.runner.outcome(s.signRef));
  }, 60_000);
});
