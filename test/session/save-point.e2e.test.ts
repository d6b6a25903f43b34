/**
 * The save point before the hash call ("never lose a session's state"): a process that dies after the
 * hash reached the service but before the record was written must not lose the session. The record saved at the
 * save point (prepared state + the exact hash) is continued: the same hash is sent again (the service refuses it
 * as already submitted, which means the first got through), never a new one. Against the sandbox over real HTTP.
 */
import { samplePdf } from '../pades/ltv-helpers';
import { isAtSavePoint, MemorySessionStore, type SessionRecord } from '../../src/session';
import { startSessionHarness, StoreFailingWrites, until, type SessionHarness } from './harness';

let pdf: Buffer;
beforeAll(async () => {
  pdf = await samplePdf('Save point');
});

/** Every hash POST the signing API client sent (accepted or refused), by URL. */
function countingFetch(): { fetch: (url: string, init?: RequestInit) => Promise<Response>; hashPosts: () => number } {
  let n = 0;
  return {
    fetch: (url, init) => {
      if (url.endsWith('/hash')) n++;
      return fetch(url, init);
    },
    hashPosts: () => n,
  };
}

describe('step functions: the process dies after the hash call, the certificate event is replayed', () => {
  let h: SessionHarness;
  const counter = countingFetch();
  beforeAll(async () => { h = await startSessionHarness({ mode: 'steps', clientFetch: counter.fetch }); });
  afterAll(() => h.close());

  it('the replay resubmits the saved hash (one hash accepted), and the session completes with the saved prepared state', async () => {
    const store = new MemorySessionStore();
    const started = await h.newEngine().start(pdf, { documentName: 'Crash.pdf', level: 'B-T' });
    store.put(started.record, undefined);
    let n = h.raw.length;
    await h.sandbox.phone.scan(started.signRef, { user: 'p256' });
    await until(() => h.raw.length > n, 'the certificate webhook');
    const certPost = h.raw[n]!;

    // First process: saves at the save point, submits the hash, then dies before its own save (result dropped).
    const first = h.newEngine();
    const delivery = (await first.checkDelivery({ headers: certPost.headers, body: certPost.body })).delivery!;
    const loaded = store.get(started.signRef)!;
    let saved = loaded.revision;
    const save = (r: SessionRecord): boolean => {
      const ok = store.put(r, saved);
      if (ok) saved = r.revision;
      return ok;
    };
    const lost = await first.applyDelivery(loaded, delivery, pdf, { claim: save, save });
    expect(lost.record.state.status).toBe('hash_submitted');
    expect(h.hashes.get(started.signRef)).toBe(1);

    const atSavePoint = store.get(started.signRef)!;
    expect(isAtSavePoint(atSavePoint)).toBe(true);
    expect(atSavePoint.submitting!.documentHash).toBe(lost.record.state.documentHash);
    expect(atSavePoint.prepared).toEqual(lost.record.prepared);

    // After the restart: the kept delivery is replayed on a fresh engine (no shared memory) against the saved record.
    const second = h.newEngine();
    const replayed = await second.applyDelivery(store.get(started.signRef)!, (await second.checkDelivery({ headers: certPost.headers, body: certPost.body })).delivery!, pdf, { save });
    expect(replayed.duplicate).toBeUndefined();
    expect(replayed.record.error).toBeUndefined();
    expect(replayed.record.state.status).toBe('hash_submitted');
    expect(replayed.record.state.documentHash).toBe(atSavePoint.submitting!.documentHash); // the SAME hash
    expect(replayed.record.submitting).toBeUndefined();
    expect(counter.hashPosts()).toBe(2); // sent again, refused as "already submitted"
    expect(h.hashes.get(started.signRef)).toBe(1); // accepted once
    expect(store.put(replayed.record, saved)).toBe(true);
    // Once recorded, the same delivery again is a no-op.
    expect((await second.applyDelivery(store.get(started.signRef)!, delivery, pdf)).duplicate).toBe(true);

    n = h.raw.length;
    await h.sandbox.phone.approve(started.signRef);
    await until(() => h.raw.length > n, 'the signature webhook');
    const sig = (await second.checkDelivery({ headers: h.raw[n]!.headers, body: h.raw[n]!.body })).delivery!;
    const signed = await second.applyDelivery(store.get(started.signRef)!, sig, pdf);
    expect(signed.record.state.status).toBe('signed');
    const f = await h.newEngine().finish(signed.record, pdf);
    expect(f.record.error).toBeUndefined();
    expect(f.record.result).toEqual({ level: 'B-T', valid: true });
    expect(f.record.prepared).toBeUndefined();
    expect(f.record.submitting).toBeUndefined();
    expect(f.record.state.certificate).toBeUndefined();
    expect(counter.hashPosts()).toBe(2);
  });
});

describe('step functions: prepareCertificate, then resumeSubmission (the record is saved by the caller between two steps, as in n8n)', () => {
  let h: SessionHarness;
  const counter = countingFetch();
  beforeAll(async () => { h = await startSessionHarness({ mode: 'steps', clientFetch: counter.fetch }); });
  afterAll(() => h.close());

  it('the certificate step stops at the save point with no hash call; resumeSubmission sends it; a replay of either sends no new hash', async () => {
    const engine = h.newEngine();
    const started = await engine.start(pdf, { documentName: 'Split.pdf', level: 'B-B' });
    const n = h.raw.length;
    await h.sandbox.phone.scan(started.signRef, { user: 'p256' });
    await until(() => h.raw.length > n, 'the certificate webhook');
    const delivery = (await engine.checkDelivery({ headers: h.raw[n]!.headers, body: h.raw[n]!.body })).delivery!;

    const prepared = await engine.prepareCertificate(started.record, delivery, pdf);
    expect(isAtSavePoint(prepared.record)).toBe(true);
    expect(prepared.record.prepared).toBeDefined();
    expect(counter.hashPosts()).toBe(0);
    // the certificate event replayed on the saved record: the same save point, still nothing sent
    const again = await h.newEngine().prepareCertificate(prepared.record, delivery, pdf);
    expect(again.record.submitting).toEqual(prepared.record.submitting);
    expect(counter.hashPosts()).toBe(0);

    const submitted = await h.newEngine().resumeSubmission(prepared.record);
    expect(submitted.record.state.status).toBe('hash_submitted');
    expect(submitted.record.state.documentHash).toBe(prepared.record.submitting!.documentHash);
    expect(submitted.record.submitting).toBeUndefined();
    // the stored save point resumed again by a scheduler (the process died after the call, before the store had the
    // result, so the record counts no call): resubmitHash, refused as already submitted → waits for the signature
    const replayed = await h.newEngine().resubmitHash(prepared.record);
    expect(replayed.record.state.status).toBe('hash_submitted');
    expect(counter.hashPosts()).toBe(2);
    expect(h.hashes.get(started.signRef)).toBe(1);
  });
});

/** A persistent store whose write of the hash_submitted record is never made: the process died just before it. */
const diesBeforeRecordingTheHash = () => new StoreFailingWrites((r) => r.state.status === 'hash_submitted', 'simulated crash: the process died before writing the record');

describe('runner: the process dies between the hash call and the record write, then restarts', () => {
  let h: SessionHarness;
  const counter = countingFetch();
  const store = diesBeforeRecordingTheHash();
  beforeAll(async () => { h = await startSessionHarness({ runner: { store }, clientFetch: counter.fetch }); });
  afterAll(() => h.close());

  it('resume() resubmits the saved hash; the user approves the first one and the session completes', async () => {
    const s = await h.runner.start(pdf, { documentName: 'Restart.pdf', level: 'B-B' });
    await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
    await until(() => store.crashes === 1, 'the crash after the hash call');
    await until(() => h.refused.some((r) => r.signRef === s.signRef), 'the failed step to be reported');
    expect(h.hashes.get(s.signRef)).toBe(1);
    const left = store.get(s.signRef)!;
    expect(isAtSavePoint(left)).toBe(true);

    // The restarted process: a new runner and engine over the store that survived.
    const runner = await h.restartRunner({ engine: h.newEngine(), store });
    expect(await runner.resume()).toBe(1);
    await h.sandbox.phone.approve(s.signRef);
    const out = await runner.outcome(s.signRef);
    expect(out.record.error).toBeUndefined();
    expect(out.record.result).toEqual({ level: 'B-B', valid: true });
    expect(out.record.state.documentHash).toBe(left.submitting!.documentHash);
    expect(h.hashes.get(s.signRef)).toBe(1);
    expect(counter.hashPosts()).toBe(2);
    expect(out.record.prepared).toBeUndefined();
    expect(out.record.submitting).toBeUndefined();
    expect(out.record.state.certificate).toBeUndefined();
    expect(out.pdf).toBeDefined();
  });
});
