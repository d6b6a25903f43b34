/**
 * An approved signature is never lost (the engine and the runner, over real HTTP against the sandbox): the signature
 * event is the second save point; a TSA or OCSP responder that fails for a while leaves the record `signed` with a
 * typed `lastFinishFailure` and finishing is retried with backoff until it goes through (after the service's own
 * deadline too), a restart picks it up, and finishing again never embeds a second signature. A TSA answering an
 * RFC 3161 `rejection` for its own passing reasons (systemFailure, timeNotAvailable, addInfoNotAvailable) is retried
 * like an outage, at every stage. Finishing that fails for good after the user signed (a TSA refusing the request,
 * validation data refused, the window over) still completes with the PDF at the highest level reached, at least
 * B-B, and `result.missing`; only a verdict on the signature fails the session. Independent check: pdfsig and qpdf.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, samplePdf } from '../pades/ltv-helpers';
import { pdfsigSections } from '../pades/foreign-signer';
import { makeNssDb } from '../helpers/pki-tools';
import { verifyPdfSignatures } from '../../src/pades/verify';
import {
  isFinishDeferred, MemorySessionStore, nextStep, type SessionRecord, type SessionStep,
} from '../../src/session';
import { startSessionHarness, until, type SessionHarness } from './harness';

let pdf: Buffer;
let dir: string;
beforeAll(async () => {
  pdf = await samplePdf('Finish retry');
  dir = mkdtempSync(join(tmpdir(), 'finish-retry-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stepsOf = (h: SessionHarness, signRef: string): SessionStep[] => h.steps.filter((x) => x.signRef === signRef).map((x) => x.step);

/** Scans, waits for the hash, approves: the runner has the signature event stored when this returns. */
async function approved(h: SessionHarness, documentName: string, level: 'B-T' | 'B-LT' | 'B-LTA'): Promise<string> {
  const s = await h.runner.start(pdf, { documentName, level });
  await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
  await until(() => h.sandbox.sign.session(s.signRef)?.state === 'hash_submitted', 'the hash');
  await h.sandbox.phone.approve(s.signRef);
  return s.signRef;
}

/** pdfsig's sections of a signed PDF (NSS database trusting the sandbox root) and qpdf's check. */
async function independentCheck(h: SessionHarness, signed: Buffer, name: string): Promise<string[]> {
  const file = join(dir, name);
  writeFileSync(file, signed);
  expect((await run('qpdf', ['--check', file])).stdout).toContain('No syntax or stream encoding errors found');
  const nss = await makeNssDb(join(dir, `nss-${name}`), h.sandbox.pki.root.certPem);
  const report = await run('pdfsig', ['-nssdir', `sql:${nss}`, file]).then((r) => r.stdout, (e: { stdout?: string }) => e.stdout ?? '');
  return pdfsigSections(report);
}

describe('runner: the TSA or OCSP responder fails for a while after the user approved', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness(); });
  afterAll(() => h.close());

  it('TSA fails 3 requests (HTTP 503), then recovers: the record stays signed with lastFinishFailure, finishing is retried with backoff and completes at B-LTA with one user signature', async () => {
    const tsaBefore = h.sandbox.ca.requestCounts().tsa;
    h.sandbox.ca.failNext('tsa', 3);
    const signRef = await approved(h, 'Tsa down.pdf', 'B-LTA');
    // While it is failing, the stored record keeps the user's signature and says why it waits.
    await until(() => isFinishDeferred(h.store.get(signRef)!), 'the deferred record');
    const waiting = h.store.get(signRef)!;
    expect(waiting.state.status).toBe('signed');
    expect(waiting.state.signature).toMatch(/^[0-9a-f]+$/);
    expect(waiting.prepared).toBeDefined();
    expect(waiting.lastFinishFailure).toMatchObject({ stage: 'embed', code: 'TSA_FAILED', status: 503, attempts: 1 });
    expect(nextStep(waiting)).toEqual({ action: 'finish', at: waiting.lastFinishFailure!.retryAt });

    const out = await h.runner.outcome(signRef);
    expect(out.record.error).toBeUndefined();
    expect(out.record.result).toEqual({ level: 'B-LTA', valid: true });
    expect(out.record.lastFinishFailure).toBeUndefined();
    const deferred = stepsOf(h, signRef).filter((s) => s.step === 'finishDeferred');
    expect(deferred.map((s) => (s as { attempts: number }).attempts)).toEqual([1, 2, 3]);
    // backoff 1, 2, 4 s: the three failed attempts and the good one took at least 1 + 2 + 4 s
    const at = deferred.map((s) => (s as { retryAt: number }).retryAt);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(1900);
    expect(h.sandbox.ca.requestCounts().tsa - tsaBefore).toBe(3 + 2); // the failed ones, then signature + document timestamp
    expect(h.hashes.get(signRef)).toBe(1);

    const report = await verifyPdfSignatures(out.pdf!, { trustedRoots: [h.sandbox.pki.root.certDer] });
    expect(report.signatures.filter((s) => s.type === 'signature')).toHaveLength(1);
    const sections = await independentCheck(h, out.pdf!, 'tsa-down.pdf');
    expect(sections).toHaveLength(2); // the user's signature and the document timestamp
    expect(sections[0]).toContain('Signature Validation: Signature is Valid.');
    expect(sections[0]).toContain('Certificate Validation: Certificate is Trusted.');
    expect(sections[1]).toContain('Signature Field Name: DocTimeStamp'); // pdfsig 22 words its type "unknown"
  }, 60_000);

  it('the TSA answers "systemFailure" (an RFC 3161 rejection that means not now): temporary too', async () => {
    h.sandbox.ca.failNext('tsa', 1, 'systemFailure');
    const signRef = await approved(h, 'Tsa busy.pdf', 'B-T');
    const out = await h.runner.outcome(signRef);
    expect(out.record.result).toEqual({ level: 'B-T', valid: true });
    expect(stepsOf(h, signRef).find((s) => s.step === 'finishDeferred')).toMatchObject({ stage: 'embed', code: 'TSA_FAILED', attempts: 1 });
  }, 60_000);

  it('OCSP fails 2 requests at the validation-data stage, then recovers: completes at B-LT', async () => {
    const signRef = await approved(h, 'Ocsp down.pdf', 'B-LT');
    // armed after the certificate check (which needs OCSP before any hash), so it hits finishing
    h.sandbox.ca.failNext('ocsp', 2);
    const out = await h.runner.outcome(signRef);
    expect(out.record.error).toBeUndefined();
    expect(out.record.result).toEqual({ level: 'B-LT', valid: true });
    const deferred = stepsOf(h, signRef).filter((s) => s.step === 'finishDeferred');
    expect(deferred.length).toBeGreaterThanOrEqual(1);
    expect(deferred[0]).toMatchObject({ stage: 'validationData', code: 'OCSP_FAILED' });
    const report = await verifyPdfSignatures(out.pdf!, { trustedRoots: [h.sandbox.pki.root.certDer] });
    expect(report.newest).toMatchObject({ valid: true, level: 'B-LT' });
    expect(report.signatures.filter((s) => s.type === 'signature')).toHaveLength(1);
  }, 60_000);
});

describe('runner: finishing outlives the service deadline and a restart', () => {
  let h: SessionHarness;
  let store: MemorySessionStore;
  // sessions end 3 s after creation, 2 s after the scan: the TSA outage below lasts longer than that
  beforeAll(async () => { h = await startSessionHarness({ sandbox: { sessionTtlSeconds: 3 }, engine: { scanExtensionSeconds: 2 } }); store = h.store; });
  afterAll(() => h.close());

  it('the TSA is down past the session deadline; the runner is stopped and restarted meanwhile: the signature is still finished', async () => {
    h.sandbox.ca.setTsaDown(true);
    const signRef = await approved(h, 'Late.pdf', 'B-T');
    await until(() => isFinishDeferred(store.get(signRef)!), 'the deferred record');
    await h.restartRunner({}); // the first runner is gone (its timers with it); the record is in the store
    // wait until past the session's own deadline (expires_at, or the scan + 2 s): no event could come any more
    const s = store.get(signRef)!.state;
    const deadline = Math.max(s.expiresAt, (s.scannedAt ?? 0) + 2) * 1000;
    await new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now()) + 1500));
    expect(store.get(signRef)!.state.status).toBe('signed');
    h.sandbox.ca.setTsaDown(false);
    expect(await h.runner.resume()).toBeGreaterThanOrEqual(1);
    const out = await h.runner.outcome(signRef);
    expect(out.record.error).toBeUndefined();
    expect(out.record.result).toEqual({ level: 'B-T', valid: true });
    expect(store.getDocument(signRef)).toBeUndefined(); // the input PDF goes once the session ended
  }, 60_000);
});

describe('step functions: the finishing window, permanent failures, idempotence', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness({ mode: 'steps' }); });
  afterAll(() => h.close());

  /** A session driven through the step functions up to the stored signature (the second save point). */
  async function signedRecord(name: string, level: 'B-B' | 'B-T' | 'B-LTA'): Promise<SessionRecord> {
    const engine = h.newEngine();
    const started = await engine.start(pdf, { documentName: name, level });
    let n = h.raw.length;
    await h.sandbox.phone.scan(started.signRef, { user: 'p256' });
    await until(() => h.raw.length > n, 'the certificate webhook');
    const cert = (await engine.checkDelivery({ headers: h.raw[n]!.headers, body: h.raw[n]!.body })).delivery!;
    const submitted = (await engine.applyDelivery(started.record, cert, pdf)).record;
    expect(submitted.state.status).toBe('hash_submitted');
    n = h.raw.length;
    await h.sandbox.phone.approve(started.signRef);
    await until(() => h.raw.length > n, 'the signature webhook');
    const sig = (await engine.checkDelivery({ headers: h.raw[n]!.headers, body: h.raw[n]!.body })).delivery!;
    return (await engine.applyDelivery(submitted, sig, pdf)).record;
  }

  it('a temporary failure returns the record still signed (same signature and prepared state) with a typed lastFinishFailure; after the finishing window the session ends with the signature at B-B', async () => {
    const signed = await signedRecord('Window.pdf', 'B-T');
    h.sandbox.ca.setTsaDown(true);
    try {
      const engine = h.newEngine({ finishRetryWindowSeconds: 3 });
      const r = await engine.finish(signed, pdf);
      expect(r.deferred).toBe(true);
      expect(r.pdf).toBeUndefined();
      // the same state; only its updatedAt moves on (every move sets it: the take-over time counts from it)
      expect({ ...r.record.state, updatedAt: signed.state.updatedAt }).toEqual(signed.state);
      expect(r.record.state.updatedAt).toBeGreaterThanOrEqual(signed.state.updatedAt);
      expect(r.record.prepared).toEqual(signed.prepared);
      expect(r.record.revision).toBe(signed.revision + 1);
      const f = r.record.lastFinishFailure!;
      expect(f).toMatchObject({ stage: 'embed', code: 'TSA_FAILED', status: 503, attempts: 1 });
      expect(f.retryAt - f.at).toBe(1000);
      expect(f.finishBy).toBe(signed.state.updatedAt * 1000 + 3000);
      // the JSON round trip a store makes keeps everything finishing needs
      const again = await engine.finish(JSON.parse(JSON.stringify(r.record)) as SessionRecord, pdf);
      expect(again.record.lastFinishFailure).toMatchObject({ attempts: 2, finishBy: f.finishBy });
      expect(again.record.lastFinishFailure!.retryAt).toBeLessThanOrEqual(f.finishBy);
      await new Promise((res) => setTimeout(res, Math.max(0, f.finishBy - Date.now()) + 50));
      // the window is over and the TSA still down: the user's signature is handed on at B-B, saying what is missing
      const last = await engine.finish(again.record, pdf);
      expect(last.deferred).toBeUndefined();
      expect(last.record.state.status).toBe('completed');
      expect(last.record.error).toBeUndefined();
      expect(last.record.result).toEqual({ level: 'B-B', valid: true, missing: { requested: 'B-T', stage: 'embed', code: 'TSA_FAILED', message: expect.stringContaining('HTTP 503') } });
      expect(last.record.prepared).toBeUndefined();
      expect(last.record.lastFinishFailure).toBeUndefined();
      const sections = await independentCheck(h, last.pdf!, 'window-over.pdf');
      expect(sections).toHaveLength(1);
      expect(sections[0]).toContain('Signature Validation: Signature is Valid.');
    } finally {
      h.sandbox.ca.setTsaDown(false);
    }
  }, 60_000);

  it('a permanent failure (a signature that does not verify with the user\'s certificate) fails the session with its reason, no retry', async () => {
    const signed = await signedRecord('Broken.pdf', 'B-T');
    const sig = signed.state.signature!;
    const broken: SessionRecord = { ...signed, state: { ...signed.state, signature: sig.slice(0, -4) + (sig.endsWith('00') ? '0101' : '0000') } };
    const r = await h.newEngine().finish(broken, pdf);
    expect(r.deferred).toBeUndefined();
    expect(r.record.state.status).toBe('failed');
    expect(r.record.error!.code).toMatch(/SIGNATURE_INVALID|CERTIFICATE_MISMATCH/);
    expect(r.record.lastFinishFailure).toBeUndefined();
  }, 60_000);

  it('finishing the same stored record twice (a crash after finishing, before the store had the result) embeds the same single signature', async () => {
    const signed = await signedRecord('Twice.pdf', 'B-LTA');
    const first = await h.newEngine().finish(signed, pdf);
    const second = await h.newEngine().finish(signed, pdf);
    for (const f of [first, second]) {
      expect(f.record.result).toEqual({ level: 'B-LTA', valid: true });
      const report = await verifyPdfSignatures(f.pdf!, { trustedRoots: [h.sandbox.pki.root.certDer] });
      const users = report.signatures.filter((s) => s.type === 'signature');
      expect(users).toHaveLength(1);
      expect(users[0]!.fieldName).toBe(signed.prepared!.fieldName);
    }
    const sections = await independentCheck(h, second.pdf!, 'twice.pdf');
    expect(sections.filter((s) => s.includes('Signature Type: ETSI.CAdES.detached'))).toHaveLength(1);
    expect(sections).toHaveLength(2); // and the document timestamp
  }, 60_000);
});

describe('a hash the service refuses for good', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness(); });
  afterAll(() => h.close());

  it('runner: refused on the first call, the session fails with the service\'s code and message (not "hash submitted" until the deadline)', async () => {
    const s = await h.runner.start(pdf, { documentName: 'Refused.pdf', level: 'B-B' });
    h.sandbox.sign.faults.refuseHash(1, 'document_name contains characters that are not allowed');
    await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
    const out = await h.runner.outcome(s.signRef);
    expect(out.record.state.status).toBe('failed');
    expect(out.record.error!.code).toBe('SIGN_REQUEST_REJECTED');
    expect(out.record.error!.message).toContain('document_name contains characters that are not allowed');
    expect(h.sandbox.sign.hashCalls().filter((c) => c.signRef === s.signRef).map((c) => c.status)).toEqual([400]);
  }, 60_000);
});

describe('step functions (n8n-style): the first call and a resend', () => {
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

  it('the save point counts no call; the first call refused fails the session with the service\'s reason', async () => {
    const saved = await atSavePoint('First.pdf');
    expect(saved.submitting!.attempts).toBe(0);
    h.sandbox.sign.faults.refuseHash(1, 'challenge_code must be 4 digits');
    const r = await h.newEngine().resumeSubmission(saved);
    expect(r.record.state.status).toBe('failed');
    expect(r.record.error).toMatchObject({ code: 'SIGN_REQUEST_REJECTED' });
    expect(r.record.error!.message).toContain('challenge_code must be 4 digits');
  }, 60_000);

  it('a counted call, then the same hash again: "already submitted" from the real service means the first got through', async () => {
    const saved = await atSavePoint('Resend.pdf');
    const saves: SessionRecord[] = [];
    const first = await h.newEngine().resumeSubmission(saved, { save: (rec) => { saves.push(rec); return true; } });
    expect(first.record.state.status).toBe('hash_submitted');
    // the attempt was counted in a saved record BEFORE the call left
    expect(saves).toHaveLength(1);
    expect(saves[0]!.submitting).toEqual({ documentHash: saved.submitting!.documentHash, attempts: 1 });
    // the process died before storing `first`: the stored record is saves[0]; resumed, it is a resend
    const again = await h.newEngine().resumeSubmission(saves[0]!);
    expect(again.record.state.status).toBe('hash_submitted');
    expect(again.record.error).toBeUndefined();
  }, 60_000);

  it('two executions resuming the same save point with compare-and-set: only one makes the call', async () => {
    const saved = await atSavePoint('Race.pdf');
    let stored = saved.revision;
    const cas = (rec: SessionRecord): boolean => {
      if (stored !== saved.revision) return false;
      stored = rec.revision;
      return true;
    };
    const before = h.sandbox.sign.hashCalls().length;
    const [a, b] = await Promise.all([h.newEngine().resumeSubmission(saved, { save: cas }), h.newEngine().resumeSubmission(saved, { save: cas })]);
    expect([a.duplicate === true, b.duplicate === true].sort()).toEqual([false, true]);
    expect(h.sandbox.sign.hashCalls().length - before).toBe(1);
  }, 60_000);
});

describe('runner: another process takes over what a dead one left (a shared store, sweepIntervalMs)', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness(); });
  afterAll(() => h.close());

  it('a hash deferred and a finishing deferred by a runner that then stopped are done by the sweep of another runner over the same store', async () => {
    // process A: one session's finishing fails (TSA down), another's hash call fails (service 503); then A stops
    h.sandbox.ca.setTsaDown(true);
    const b = await approved(h, 'Left signed.pdf', 'B-T');
    await until(() => isFinishDeferred(h.store.get(b)!), 'the deferred finishing');
    const a = await h.runner.start(pdf, { documentName: 'Left at the save point.pdf', level: 'B-B' });
    h.sandbox.sign.faults.serviceError(1000, 503);
    await h.sandbox.phone.scan(a.signRef, { user: 'p256' });
    await until(() => h.store.get(a.signRef)?.lastSubmitFailure !== undefined, 'the deferred hash');
    await h.runner.close();
    h.sandbox.sign.faults.reset();
    h.sandbox.ca.setTsaDown(false);
    // process B: a new runner on the same store, no resume(): only its sweep finds them
    const other = await h.restartRunner({ sweepIntervalMs: 200, takeOverAfterMs: 0 });
    const [outA, outB] = await Promise.all([
      (async () => {
        await until(() => h.sandbox.sign.session(a.signRef)?.state === 'hash_submitted', 'the hash sent by the sweep', 20_000);
        await h.sandbox.phone.approve(a.signRef);
        return other.outcome(a.signRef);
      })(),
      other.outcome(b),
    ]);
    expect(outA.record.result).toEqual({ level: 'B-B', valid: true });
    expect(outB.record.result).toEqual({ level: 'B-T', valid: true });
    expect(h.hashes.get(a.signRef)).toBe(1);
  }, 60_000);
});

describe('issue 24: a TSA that answers `rejection`', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness(); });
  afterAll(async () => {
    h.sandbox.ca.failNext('tsa', 0);
    h.sandbox.ca.setTsaBusy(false);
    await h.close();
  });

  it('overloaded (every request refused systemFailure), then the load drops: the record waits signed, then completes at B-T', async () => {
    h.sandbox.ca.setTsaBusy(0);
    let signRef: string;
    try {
      signRef = await approved(h, 'Tsa overloaded.pdf', 'B-T');
      await until(() => isFinishDeferred(h.store.get(signRef)!), 'the deferred record');
      expect(h.store.get(signRef)!.lastFinishFailure).toMatchObject({ stage: 'embed', code: 'TSA_FAILED', message: expect.stringContaining('systemFailure') });
    } finally {
      h.sandbox.ca.setTsaBusy(false);
    }
    const out = await h.runner.outcome(signRef);
    expect(out.record.result).toEqual({ level: 'B-T', valid: true });
    expect(h.sandbox.ca.requestCounts().tsaBusy).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it.each(['systemFailure', 'timeNotAvailable', 'addInfoNotAvailable'] as const)('%s for the first 2 requests (the TSA\'s passing trouble): retried, completes at B-LTA with one user signature', async (failure) => {
    h.sandbox.ca.failNext('tsa', 2, failure);
    const signRef = await approved(h, `Tsa ${failure}.pdf`, 'B-LTA');
    const out = await h.runner.outcome(signRef);
    expect(out.record.error).toBeUndefined();
    expect(out.record.result).toEqual({ level: 'B-LTA', valid: true });
    const deferred = stepsOf(h, signRef).filter((s) => s.step === 'finishDeferred');
    expect(deferred).toEqual([1, 2].map((attempts) => expect.objectContaining({ stage: 'embed', code: 'TSA_FAILED', attempts, message: expect.stringContaining(failure) })));
    const report = await verifyPdfSignatures(out.pdf!, { trustedRoots: [h.sandbox.pki.root.certDer] });
    expect(report.newest).toMatchObject({ level: 'B-LTA', valid: true });
    expect(report.signatures.filter((s) => s.type === 'signature')).toHaveLength(1);
  }, 60_000);

  it('refusing for good (badRequest): not retried; the session completes with the signature at B-B, stored and handed on like any result, and says what is missing', async () => {
    const tsaBefore = h.sandbox.ca.requestCounts().tsa;
    h.sandbox.ca.failNext('tsa', 1000, 'badRequest');
    let signRef: string;
    try {
      signRef = await approved(h, 'Tsa refuses.pdf', 'B-LTA');
      const out = await h.runner.outcome(signRef);
      expect(out.record.state.status).toBe('completed');
      expect(out.record.error).toBeUndefined();
      expect(out.record.result).toEqual({
        level: 'B-B', valid: true,
        missing: { requested: 'B-LTA', stage: 'embed', code: 'TSA_FAILED', message: expect.stringContaining('badRequest') },
      });
      expect(stepsOf(h, signRef).filter((s) => s.step === 'finishDeferred')).toEqual([]);
      expect(h.sandbox.ca.requestCounts().tsa - tsaBefore).toBe(1);
      // stored as the session's signed PDF, exactly as a complete result is
      expect(h.store.getSignedDocument(signRef)).toEqual(out.pdf);
      const report = await verifyPdfSignatures(out.pdf!, { trustedRoots: [h.sandbox.pki.root.certDer] });
      expect(report.newest).toMatchObject({ level: 'B-B', valid: true });
      const sections = await independentCheck(h, out.pdf!, 'tsa-refuses.pdf');
      expect(sections).toHaveLength(1); // the user's signature, no timestamp
      expect(sections[0]).toContain('Signature Validation: Signature is Valid.');
      expect(sections[0]).toContain('Certificate Validation: Certificate is Trusted.');
      expect(sections[0]).not.toContain('Timestamp');
    } finally {
      h.sandbox.ca.failNext('tsa', 0);
    }
    expect(h.hashes.get(signRef)).toBe(1);
  }, 60_000);
});

describe('issue 24: step functions, every finishing stage', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness({ mode: 'steps' }); });
  afterAll(async () => {
    h.sandbox.ca.failNext('tsa', 0);
    await h.close();
  });

  /** The delivery of `type` for `signRef` among the recorded webhook POSTs (the sandbox sends them in any order). */
  async function deliveryOf(engine: ReturnType<SessionHarness['newEngine']>, signRef: string, type: string) {
    for (let seen = 0; ; ) {
      const n = h.raw.length;
      for (const r of h.raw.slice(seen, n)) {
        const c = await engine.checkDelivery({ headers: r.headers, body: r.body });
        if (c.delivery?.event.signRef === signRef && c.delivery.event.type === type) return c.delivery;
      }
      seen = n;
      await until(() => h.raw.length > n, `the ${type} webhook`);
    }
  }

  /** A session driven through the step functions up to the stored signature; safe to run several at once. */
  async function signedRecord(name: string, level: 'B-T' | 'B-LT' | 'B-LTA'): Promise<SessionRecord> {
    const engine = h.newEngine();
    const started = await engine.start(pdf, { documentName: name, level });
    await h.sandbox.phone.scan(started.signRef, { user: 'p256' });
    const submitted = (await engine.applyDelivery(started.record, await deliveryOf(engine, started.signRef, 'certificate'), pdf)).record;
    expect(submitted.state.status).toBe('hash_submitted');
    await h.sandbox.phone.approve(started.signRef);
    return (await engine.applyDelivery(submitted, await deliveryOf(engine, started.signRef, 'signature'), pdf)).record;
  }

  it('10 sessions finishing at once, the TSA answering addInfoNotAvailable to the first 6 requests: every one is retried and completes at B-LTA', async () => {
    const records: SessionRecord[] = [];
    for (let i = 0; i < 10; i++) records.push(await signedRecord(`Load ${i}.pdf`, 'B-LTA'));
    // the 6 requests that come first, from whichever sessions: as a TSA refusing while it is overloaded
    h.sandbox.ca.failNext('tsa', 6, 'addInfoNotAvailable');
    const outcomes = await Promise.all(records.map(async (record) => {
      const engine = h.newEngine(); // one process each
      const deferrals: string[] = [];
      let r = record;
      for (let attempt = 0; attempt < 30; attempt++) {
        // the scheduler's retry at retryAt, without waiting for it
        const f = await engine.finish(r, pdf);
        if (!f.deferred) return { f, deferrals };
        deferrals.push(`${f.record.lastFinishFailure!.stage} ${f.record.lastFinishFailure!.code}`);
        r = f.record;
      }
      throw new Error(`still deferred: ${deferrals.join(', ')}`);
    }));
    for (const { f } of outcomes) {
      expect(f.record.error).toBeUndefined();
      expect(f.record.result).toEqual({ level: 'B-LTA', valid: true });
      const report = await verifyPdfSignatures(f.pdf!, { trustedRoots: [h.sandbox.pki.root.certDer] });
      expect(report.newest).toMatchObject({ level: 'B-LTA', valid: true });
      expect(report.signatures.filter((s) => s.type === 'signature')).toHaveLength(1);
    }
    const deferrals = outcomes.flatMap((o) => o.deferrals);
    expect(deferrals.length).toBeGreaterThanOrEqual(6);
    expect(new Set(deferrals.map((d) => d.split(' ')[1]))).toEqual(new Set(['TSA_FAILED']));
  }, 180_000);

  it('the document timestamp answered timeNotAvailable: deferred at stage documentTimestamp, then completed at B-LTA', async () => {
    const record = await signedRecord('Doc timestamp busy.pdf', 'B-LTA');
    const engine = h.newEngine();
    // armed once the signature timestamp is in: the next TSA request is the document timestamp's
    const f1 = await engine.finish(record, pdf, { onStep: (s) => { if (s.step === 'validationData') h.sandbox.ca.failNext('tsa', 1, 'timeNotAvailable'); } });
    expect(f1.deferred).toBe(true);
    expect(f1.record.lastFinishFailure).toMatchObject({ stage: 'documentTimestamp', code: 'TSA_FAILED', attempts: 1 });
    const f2 = await engine.finish(f1.record, pdf);
    expect(f2.record.result).toEqual({ level: 'B-LTA', valid: true });
  }, 60_000);

  it('the document timestamp refused for good (unacceptedPolicy): completed at B-LT with the PDF, missing the document timestamp', async () => {
    const record = await signedRecord('Doc timestamp refused.pdf', 'B-LTA');
    const f = await h.newEngine().finish(record, pdf, { onStep: (s) => { if (s.step === 'validationData') h.sandbox.ca.failNext('tsa', 1, 'unacceptedPolicy'); } });
    expect(f.deferred).toBeUndefined();
    expect(f.record.state.status).toBe('completed');
    expect(f.record.result).toEqual({ level: 'B-LT', valid: true, missing: expect.objectContaining({ requested: 'B-LTA', stage: 'documentTimestamp', code: 'TSA_FAILED' }) });
    expect(f.validationData).toBeDefined();
    const report = await verifyPdfSignatures(f.pdf!, { trustedRoots: [h.sandbox.pki.root.certDer] });
    expect(report.newest).toMatchObject({ level: 'B-LT', valid: true });
    expect(report.signatures).toHaveLength(1); // no document timestamp
    const sections = await independentCheck(h, f.pdf!, 'doc-timestamp-refused.pdf');
    expect(sections).toHaveLength(1);
    expect(sections[0]).toContain('Signature Validation: Signature is Valid.');
  }, 60_000);

  it('validation data refused for good (the OCSP responder answers 403): completed at B-T, missing the validation data', async () => {
    const record = await signedRecord('Ocsp refused.pdf', 'B-LT');
    h.sandbox.ca.failNext('ocsp', 1000, 403);
    try {
      const f = await h.newEngine().finish(record, pdf);
      expect(f.deferred).toBeUndefined();
      expect(f.record.result).toEqual({ level: 'B-T', valid: true, missing: expect.objectContaining({ requested: 'B-LT', stage: 'validationData' }) });
      const report = await verifyPdfSignatures(f.pdf!, { trustedRoots: [h.sandbox.pki.root.certDer] });
      expect(report.newest).toMatchObject({ level: 'B-T', valid: true });
    } finally {
      h.sandbox.ca.failNext('ocsp', 0);
    }
  }, 60_000);
});
