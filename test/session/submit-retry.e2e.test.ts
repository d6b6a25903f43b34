/**
 * A TEMPORARY fault of the hash call (service unreachable, timeout, 5xx, 429 — after the HTTP client's own retry) must
 * not fail the session: the service still waits for the hash until the deadline. The engine keeps the record at the
 * save point (`lastSubmitFailure`, step `submitDeferred`) and the runner resubmits the SAME hash with backoff; a
 * refusal for good still fails the session; past the deadline the session expires and nothing more is sent. Against
 * the sandbox over real HTTP (its fault switches answer the hash call 503 / 429 / 501).
 */
import { samplePdf } from '../pades/ltv-helpers';
import { isAtSavePoint, isSubmitDeferred, MemorySessionStore, type SessionRecord } from '../../src/session';
import { startSessionHarness, until, type SessionHarness } from './harness';

let pdf: Buffer;
beforeAll(async () => {
  pdf = await samplePdf('Submit retry');
});

/** Every hash call of one session as the sandbox answered it (faults included). */
const callsOf = (h: SessionHarness, signRef: string) => h.sandbox.sign.hashCalls().filter((c) => c.signRef === signRef);

/** A runner session whose user scans while the service has `fault` switched on. */
async function scanWith(h: SessionHarness, documentName: string, fault: () => void): Promise<string> {
  const s = await h.runner.start(pdf, { documentName, level: 'B-B' });
  fault();
  await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
  return s.signRef;
}

/** The session ended with `code`; the certificate's prepared state and the save point are gone. */
function expectEnded(record: SessionRecord, status: string, code: string): void {
  expect(record.state.status).toBe(status);
  expect(record.error).toMatchObject({ code });
  expect(record.submitting).toBeUndefined();
  expect(record.prepared).toBeUndefined();
  expect(record.lastSubmitFailure).toBeUndefined();
}

describe('runner: the hash call fails temporarily, then the service recovers', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness(); });
  afterAll(() => h.close());

  it('503 several times (each attempt after the client\'s own retry), then up: the same hash is resubmitted with backoff, accepted once, the session completes', async () => {
    const signRef = await scanWith(h, 'Retry.pdf', () => h.sandbox.sign.faults.serviceError(4, 503)); // two deferred submissions (2 HTTP attempts each), the third goes through
    await until(() => h.sandbox.sign.session(signRef)?.state === 'hash_submitted', 'the hash to go through', 20_000);
    const deferred = h.steps.filter((x) => x.signRef === signRef && x.step.step === 'submitDeferred').map((x) => x.step);
    expect(deferred).toEqual([
      expect.objectContaining({ step: 'submitDeferred', code: 'SIGN_SERVICE_ERROR', attempts: 1 }),
      expect.objectContaining({ step: 'submitDeferred', code: 'SIGN_SERVICE_ERROR', attempts: 2 }),
    ]);
    expect(h.steps.some((x) => x.signRef === signRef && x.step.step === 'ended')).toBe(false); // never failed
    const calls = callsOf(h, signRef);
    expect(calls.map((c) => c.status)).toEqual([503, 503, 503, 503, 200]);
    // backoff: the second deferred submission came ≥ 1 s after the first, the accepted one ≥ 2 s after that
    expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(900);
    expect(calls[4]!.at - calls[3]!.at).toBeGreaterThanOrEqual(1900);

    await h.sandbox.phone.approve(signRef);
    const out = await h.runner.outcome(signRef);
    expect(out.record.error).toBeUndefined();
    expect(out.record.result).toEqual({ level: 'B-B', valid: true });
    expect(out.record.lastSubmitFailure).toBeUndefined();
    expect(out.record.state.documentHash).toBe(h.sandbox.sign.session(signRef)!.docHash);
    expect(h.hashes.get(signRef)).toBe(1);
    expect(callsOf(h, signRef).filter((c) => c.status === 200)).toHaveLength(1);
  }, 60_000);

  it('429 (rate-limited) is temporary too', async () => {
    const signRef = await scanWith(h, 'Rate.pdf', () => h.sandbox.sign.faults.rateLimit(1));
    await until(() => h.sandbox.sign.session(signRef)?.state === 'hash_submitted', 'the hash to go through', 20_000);
    expect(h.steps.find((x) => x.signRef === signRef && x.step.step === 'submitDeferred')?.step).toMatchObject({ code: 'SIGN_RATE_LIMITED' });
    expect(callsOf(h, signRef).map((c) => c.status)).toEqual([429, 200]);
  }, 60_000);

  it('a refusal for good (HTTP 501, not retryable) still fails the session at once, no resubmission', async () => {
    const signRef = await scanWith(h, 'Refused.pdf', () => h.sandbox.sign.faults.serviceError(1, 501));
    const out = await h.runner.outcome(signRef);
    expectEnded(out.record, 'failed', 'SIGN_SERVICE_ERROR');
    await new Promise((r) => setTimeout(r, 1500));
    expect(callsOf(h, signRef).map((c) => c.status)).toEqual([501]);
  }, 60_000);
});

describe('runner: stopped while the service was down, restarted', () => {
  let h: SessionHarness;
  const store = new MemorySessionStore();
  beforeAll(async () => { h = await startSessionHarness({ runner: { store } }); });
  afterAll(() => h.close());

  it('close() stops the retries; resume() picks the deferred record up and sends the same hash once', async () => {
    const signRef = await scanWith(h, 'Restart.pdf', () => h.sandbox.sign.faults.serviceError(1000, 503));
    await until(() => isSubmitDeferred(store.get(signRef)!), 'the deferred submission');
    await h.runner.close();
    const left = store.get(signRef)!;
    const before = callsOf(h, signRef).length;
    await new Promise((r) => setTimeout(r, 2500));
    expect(callsOf(h, signRef)).toHaveLength(before); // no timer of the closed runner fires
    expect(store.get(signRef)!.revision).toBe(left.revision);

    h.sandbox.sign.faults.reset();
    const runner = await h.restartRunner({ engine: h.newEngine(), store });
    expect(await runner.resume()).toBe(1);
    await until(() => h.sandbox.sign.session(signRef)?.state === 'hash_submitted', 'the hash after the restart');
    await h.sandbox.phone.approve(signRef);
    const out = await runner.outcome(signRef);
    expect(out.record.result).toEqual({ level: 'B-B', valid: true });
    expect(out.record.state.documentHash).toBe(left.submitting!.documentHash);
    expect(callsOf(h, signRef).filter((c) => c.status === 200)).toHaveLength(1);
  }, 60_000);
});

describe('the service stays down past the deadline', () => {
  let h: SessionHarness;
  // expires_at 3 s after create, 1 s of scan extension: the deadline comes while the service is still down
  beforeAll(async () => { h = await startSessionHarness({ sandbox: { sessionTtlSeconds: 3 }, engine: { scanExtensionSeconds: 1 } }); });
  afterAll(() => h.close());

  it('the session expires (SESSION_EXPIRED), never failed, and no hash call is made after the deadline', async () => {
    const signRef = await scanWith(h, 'Down.pdf', () => h.sandbox.sign.faults.serviceError(1000, 503));
    const out = await h.runner.outcome(signRef);
    expectEnded(out.record, 'expired', 'SESSION_EXPIRED');
    const deadline = h.engine.deadline({ ...out.record, state: { ...out.record.state, status: 'certificate_received' } });
    const calls = callsOf(h, signRef);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every((c) => c.status === 503 && c.at <= deadline + 500)).toBe(true);
    await new Promise((r) => setTimeout(r, 3000));
    expect(callsOf(h, signRef)).toHaveLength(calls.length);
    expect(h.steps.some((x) => x.signRef === signRef && x.step.step === 'ended' && x.step.status === 'failed')).toBe(false);
  }, 60_000);
});

describe('step functions (n8n-style): resumeSubmission on the save point', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness({ mode: 'steps' }); });
  afterAll(() => h.close());

  async function atSavePoint(name: string): Promise<SessionRecord> {
    const engine = h.newEngine();
    const started = await engine.start(pdf, { documentName: name, level: 'B-B' });
    const n = h.raw.length;
    await h.sandbox.phone.scan(started.signRef, { user: 'p256' });
    await until(() => h.raw.length > n, 'the certificate webhook');
    const delivery = (await engine.checkDelivery({ headers: h.raw[n]!.headers, body: h.raw[n]!.body })).delivery!;
    return (await engine.prepareCertificate(started.record, delivery, pdf)).record;
  }

  it('a temporary fault returns the record still at the save point (same hash and prepared state, status unchanged) with lastSubmitFailure', async () => {
    const saved = await atSavePoint('Steps.pdf');
    h.sandbox.sign.faults.serviceError(2, 503);
    const steps: string[] = [];
    const r = await h.newEngine().resumeSubmission(saved, { onStep: (s) => void steps.push(s.step) });
    expect(steps).toEqual(['submitDeferred']);
    expect(isAtSavePoint(r.record)).toBe(true);
    // the same state; only its updatedAt moves on (every move sets it: the take-over time counts from it)
    expect({ ...r.record.state, updatedAt: saved.state.updatedAt }).toEqual(saved.state);
    expect(r.record.state.updatedAt).toBeGreaterThanOrEqual(saved.state.updatedAt);
    expect(r.record.submitting).toEqual({ ...saved.submitting, attempts: 1 }); // the same hash; the call is counted
    expect(r.record.prepared).toEqual(saved.prepared);
    expect(r.record.error).toBeUndefined();
    expect(r.record.revision).toBe(saved.revision + 1);
    expect(r.record.lastSubmitFailure).toMatchObject({ code: 'SIGN_SERVICE_ERROR', status: 503, attempts: 1 });
    expect(r.record.lastSubmitFailure!.retryAt - r.record.lastSubmitFailure!.at).toBe(1000);
    const ok = await h.newEngine().resumeSubmission(JSON.parse(JSON.stringify(r.record)) as SessionRecord);
    expect(ok.record.state.status).toBe('hash_submitted');
    expect(ok.record.state.documentHash).toBe(saved.submitting!.documentHash);
    expect(ok.record.lastSubmitFailure).toBeUndefined();
    expect(h.hashes.get(saved.state.signRef)).toBe(1);
  });

  it('the service no longer knows the session (SIGN_REF_NOT_FOUND): failed, as before', async () => {
    const saved = await atSavePoint('Gone.pdf');
    h.sandbox.sign.faults.expireSession(saved.state.signRef);
    const r = await h.newEngine().resumeSubmission(saved);
    expect(r.record.state.status).toBe('failed');
    expect(r.record.error).toMatchObject({ code: 'SIGN_REF_NOT_FOUND' });
  });
});
