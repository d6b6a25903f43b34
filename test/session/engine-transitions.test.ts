/**
 * Every state transition of the session engine (src/session), fast and without HTTP: the signing API client is a
 * scripted fake (its typed errors are checked against the real client's below), deliveries are built as
 * `VerifiedDelivery` objects (and a fake webhook verifier serves `checkDelivery`), the sandbox's test PKI answers
 * OCSP, TSA and AIA requests IN PROCESS through the engine's `fetch`, the user's signature is made with the test
 * user's key over the prepared hash, and a controllable clock replaces sleeping. Each `it` asserts the record's
 * phase, its fields, the steps narrated, the fake client's calls and what `nextStep` says at that stop. The fakes:
 * engine-fakes.ts.
 */
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SingpassFlowsError } from '../../src/errors';
import { generateClientKeys, loadSigningKey } from '../../src/keys';
import { SigningApiClient, type CertificateEvent, type DocumentHashInput } from '../../src/sign';
import {
  finishShortfall, isFinishDeferred, isSessionEnded, isSubmitDeferred, MemorySessionStore, SESSION_POLICY, nextStep, startNextSigner, observeTransitions, sessionPhase, transitionKey, TRANSITIONS, type SessionRecord,
  type VerifiedDelivery,
} from '../../src/session';
import { acknowledgeHandOver, reportHandOverFailure, runDueStep } from '../../src/session/driver';
import {
  atSavePoint, certificateDelivery, expectNoSessionData, expectStop, hashSubmitted, loadFakes, pdf, pki, refuse, SESSION_SECONDS, setup, signaturesIn,
  signatureDelivery, signed, SIGN_API, started, tokens, type Refusal, type Setup,
} from './engine-fakes';

/** Every transition the engine made in this file (the last test checks the table's every row was exercised). */
const exercised = new Set<string>();
/** Every move the engine made in this file, as (from, trigger, verb): the table's rows with each event or step that leads there. */
const exercisedOn = new Set<string>();
const stopObserving = observeTransitions((t, _record, trigger) => {
  exercised.add(transitionKey(t));
  exercisedOn.add(`${t.from}:${trigger ?? '(none)'}:${t.verb}`);
});
afterAll(stopObserving);

beforeAll(loadFakes);


describe('start and the certificate step', () => {
  it('start keeps the company, the signer place and the QR payload in the record; refuses a bad one before any call', async () => {
    const t = setup();
    const onBehalfOf = { uen: '202612345K', entityName: 'Acme Widgets Pte Ltd', role: 'Director', eserviceId: 'SIGN-DOCS' };
    const signer = { position: 2, of: 2, label: 'Tenant', previousSignRef: 'ref-before' };
    const s = await t.engine.start(pdf, { documentName: 'Lease.pdf', level: 'B-T', onBehalfOf, signer }, t.opts());
    expect(s.record.request).toMatchObject({ onBehalfOf, signer });
    expect(s.record.state.qrPayload).toBe(s.qrPayload);
    const created = t.client.sessions.length;
    await expect(t.engine.start(pdf, { documentName: 'Lease.pdf', signer: { position: 2, of: 2 } }, t.opts())).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'signer.previousSignRef' } });
    expect(t.client.sessions.length).toBe(created);
  });

  it('start → waitingForScan: a session created with a token this DSAP issued; nothing else sent', async () => {
    const t = setup();
    const s = await t.engine.start(pdf, { documentName: 'Contract.pdf', level: 'B-LT' }, t.opts());
    const r = s.record;
    const next = expectStop(r, 'waitingForScan');
    expect(next.at).toBe(s.expiresAt * 1000);
    expect(t.engine.deadline(r)).toBe(next.at);
    expect(r).toMatchObject({ revision: 1, request: { documentName: 'Contract.pdf', level: 'B-LT' }, document: { length: pdf.length } });
    expect(r.state).toMatchObject({ signRef: s.signRef, challengeCode: s.challengeCode, expiresAt: t.clock.now / 1000 + SESSION_SECONDS });
    expect(t.client.sessions).toEqual([{ clientNotificationToken: r.state.clientNotificationToken, tenantId: 'engine transitions' }]);
    expect(tokens.isIssued(r.state.clientNotificationToken)).toBe(true);
    expect(t.steps).toEqual([{ step: 'created', signRef: s.signRef, qrPayload: s.qrPayload, challengeCode: s.challengeCode, expiresAt: s.expiresAt }]);
    expect(t.client.hashCalls).toEqual([]);
  });

  it('recordDelivery: certificate → certificateClaimed (nothing checked or sent) → continueCertificate → atSavePoint (saved, attempts 1) → hashSubmitted', async () => {
    const t = setup();
    const s = await started(t);
    t.clock.advance(5000);
    const delivery = certificateDelivery(s, undefined, t);
    const claimed = await t.engine.recordDelivery(s, delivery, t.opts());
    expect(claimed.duplicate).toBeUndefined();
    const next = expectStop(claimed.record, 'certificateClaimed');
    expect(next.at).toBe(t.clock.now); // idle 0: due at once
    expect(claimed.record.revision).toBe(s.revision + 1);
    expect(claimed.record.state).toMatchObject({ status: 'certificate_received', nonce: (delivery.event as CertificateEvent).nonce, certificate: pki.users.p256.certDer.toString('base64'), scannedAt: t.clock.now / 1000 });
    expect(t.taken()).toEqual([]);
    expect(t.net.requests).toEqual({ ocsp: 0, tsa: 0, certificates: 0 });
    expect(t.client.hashCalls).toEqual([]);
    // The replayed event on the claimed record without `save` cannot tell a dead claimer from a busy one: a duplicate.
    expect(await t.engine.applyDelivery(claimed.record, delivery, pdf)).toEqual({ record: claimed.record, duplicate: true });

    const { save, saved } = t.saver();
    const out = await t.engine.continueCertificate(claimed.record, pdf, t.opts({ save }));
    expect(t.taken()).toEqual(['certificate', 'certificateChecked', 'prepared', 'submitted']);
    // The save point is saved (the attempt counted) BEFORE the hash leaves.
    expect(t.log).toEqual(['save(attempts=1)', 'hash(resubmission=false)']);
    expectStop(saved[0], 'atSavePoint');
    expect(saved[0].revision).toBe(claimed.record.revision + 1);
    expect(saved[0].submitting).toEqual({ documentHash: expect.stringMatching(/^[0-9a-f]{64}$/), attempts: 1 });
    expect(saved[0].prepared).toBeDefined();
    const { documentHash } = saved[0].submitting!;
    expect(t.client.hashCalls).toEqual([{
      signRef: s.state.signRef, resubmission: false,
      input: { documentName: 'Contract.pdf', documentHash, challengeCode: s.state.challengeCode, nonce: claimed.record.state.nonce, domainName: 'transitions.example.sg' },
    }]);
    const done = expectStop(out.record, 'hashSubmitted');
    expect(done.at).toBe(t.engine.deadline(out.record));
    expect(out.record.state).toMatchObject({ status: 'hash_submitted', documentHash });
    expect(out.record.submitting).toBeUndefined();
    expect(out.record.prepared).toEqual(saved[0].prepared);
    expect(out.record.revision).toBe(saved[0].revision + 1);
    expect(t.net.requests.ocsp).toBe(1); // the user's certificate, before any hash
  });

  it('the certificate event replayed on a claimed record: recordDelivery → the same claim; with save → continued like continueCertificate', async () => {
    const t = setup();
    const s = await started(t);
    const cert = certificateDelivery(s, undefined, t);
    const claimed = (await t.engine.recordDelivery(s, cert)).record;
    expect(await t.engine.recordDelivery(claimed, cert)).toEqual({ record: claimed });
    const { save, saved } = t.saver();
    const out = await t.engine.applyDelivery(claimed, cert, pdf, t.opts({ save }));
    expect(t.taken()).toEqual(['certificate', 'certificateChecked', 'prepared', 'submitted']);
    expect(saved.map((x) => sessionPhase(x))).toEqual(['atSavePoint']);
    expect(t.log).toEqual(['save(attempts=1)', 'hash(resubmission=false)']);
    expectStop(out.record, 'hashSubmitted');
  });

  it('prepareCertificate → atSavePoint with attempts 0, nothing sent → resumeSubmission: first call (not a resend) accepted → hashSubmitted', async () => {
    const t = setup();
    const s = await started(t);
    const r = await t.engine.prepareCertificate(s, certificateDelivery(s, undefined, t), pdf, t.opts());
    expect(t.taken()).toEqual(['certificate', 'certificateChecked', 'prepared']);
    expect(t.client.hashCalls).toEqual([]);
    const next = expectStop(r.record, 'atSavePoint');
    expect(next.at).toBe(t.clock.now);
    expect(r.record.submitting).toEqual({ documentHash: expect.stringMatching(/^[0-9a-f]{64}$/), attempts: 0 });
    expect(isSubmitDeferred(r.record)).toBe(false);

    t.clock.advance(2000);
    const { save, saved } = t.saver();
    const out = await t.engine.resumeSubmission(r.record, t.opts({ save }));
    expect(t.log).toEqual(['save(attempts=1)', 'hash(resubmission=false)']);
    expect(saved[0].revision).toBe(r.record.revision + 1);
    // the count's save is a change: a scheduler's take-over idle time starts from it, not from the save point
    expect(saved[0].state.updatedAt).toBe(t.clock.now / 1000);
    expect(nextStep(saved[0], { idleMs: 5000 }).at).toBe(t.clock.now + 5000);
    expect(t.client.hashCalls.map((c) => c.input.documentHash)).toEqual([r.record.submitting!.documentHash]);
    expect(t.taken()).toEqual(['submitted']);
    expectStop(out.record, 'hashSubmitted');
    expect(out.record.state.documentHash).toBe(r.record.submitting!.documentHash);
    expect(out.record.submitting).toBeUndefined();
  });

  it('prepareCertificate replayed: at the save point → the same record, nothing sent; on a claimed record with save → continued to the save point only', async () => {
    const t = setup();
    const s = await started(t);
    const cert = certificateDelivery(s, undefined, t);
    const prepared = (await t.engine.prepareCertificate(s, cert, pdf)).record;
    expect(await t.engine.prepareCertificate(prepared, cert, pdf)).toEqual({ record: prepared });
    expect(await t.engine.recordDelivery(prepared, cert)).toEqual({ record: prepared });
    const claimed = (await t.engine.recordDelivery(s, cert)).record;
    expect(await t.engine.prepareCertificate(claimed, cert, pdf)).toEqual({ record: claimed, duplicate: true }); // the claimer may be at work
    t.taken();
    const { save, saved } = t.saver();
    const out = await t.engine.prepareCertificate(claimed, cert, pdf, t.opts({ save }));
    expect(t.taken()).toEqual(['certificate', 'certificateChecked', 'prepared']);
    expect(saved.map((x) => x.submitting?.attempts)).toEqual([0]);
    expectStop(out.record, 'atSavePoint');
    expect(t.client.hashCalls).toEqual([]);
  });

  it('no option chooses how far a step goes (the verb does): StepOptions and RunDueStepOptions hold no boolean', () => {
    const body = (file: string, name: string): string => {
      const source = readFileSync(join(__dirname, '..', '..', 'src', 'session', file), 'utf8');
      return new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`).exec(source)![1];
    };
    const steps = body('types.ts', 'StepOptions');
    expect(steps.match(/^ {2}(\w+)\?:/gm)).toEqual(['  onStep?:', '  claim?:', '  save?:']);
    for (const options of [steps, body('driver.ts', 'RunDueStepOptions')]) expect(options.match(/^ {2}\w+\?: boolean/gm)).toBeNull();
  });

  it('first hash call refused (400) → failed with the service\'s code and message; the certificate and prepared state dropped', async () => {
    const t = setup();
    const s = await started(t);
    t.client.answer(refuse.rejected('certificate not delivered yet'));
    const out = await t.engine.applyDelivery(s, certificateDelivery(s, undefined, t), pdf, t.opts());
    expect(t.client.hashCalls.map((c) => c.resubmission)).toEqual([false]);
    expect(t.taken()).toEqual(['certificate', 'certificateChecked', 'prepared', 'ended']);
    expectStop(out.record, 'failed');
    expect(out.record.error).toEqual({ code: 'SIGN_REQUEST_REJECTED', message: 'The signing service rejected the request to submit the document hash (HTTP 400): certificate not delivered yet', serviceCode: 'ARGUMENTS_NOT_VALID' });
    expect(out.record.state.error).toMatchObject({ code: 'SIGN_REQUEST_REJECTED' });
    expectNoSessionData(out.record);

    // Same from the save point with nothing sent yet (resumeSubmission's first call).
    const t2 = setup();
    const r = await atSavePoint(t2);
    t2.client.answer(refuse.rejected('a field the service does not accept'));
    const out2 = await t2.engine.resumeSubmission(r, t2.opts());
    expect(t2.client.hashCalls.map((c) => c.resubmission)).toEqual([false]);
    expect(t2.taken()).toEqual(['ended']);
    expectStop(out2.record, 'failed');
    expect(out2.record.error?.message).toContain('a field the service does not accept');
  });

  it('temporary failures (503, 429, timeout) → atSavePoint + lastSubmitFailure (attempts, retryAt with backoff 1, 2, 4 s) → resend accepted → hashSubmitted', async () => {
    const t = setup();
    const s = await started(t);
    t.client.answer(refuse.unavailable(), refuse.rateLimited(), refuse.timeout());
    const r1 = await t.engine.applyDelivery(s, certificateDelivery(s, undefined, t), pdf, t.opts());
    const failedAt = t.clock.now;
    expect(t.taken()).toEqual(['certificate', 'certificateChecked', 'prepared', 'submitDeferred']);
    expect(t.steps).toEqual([]);
    const next1 = expectStop(r1.record, 'atSavePoint');
    expect(isSubmitDeferred(r1.record)).toBe(true);
    expect(r1.record.state.status).toBe('certificate_received'); // never failed
    expect(r1.record.lastSubmitFailure).toEqual({ code: 'SIGN_SERVICE_ERROR', message: expect.stringContaining('HTTP 503'), status: 503, at: failedAt, attempts: 1, retryAt: failedAt + 1000 });
    expect(next1.at).toBe(failedAt + 1000);
    expect(r1.record.submitting?.attempts).toBe(1);

    const { save, saved } = t.saver();
    t.clock.to(next1.at);
    const r2 = await t.engine.resumeSubmission(r1.record, t.opts({ save }));
    expect(t.steps).toEqual([{ step: 'submitDeferred', code: 'SIGN_RATE_LIMITED', message: expect.any(String), attempts: 2, retryAt: next1.at + 2000 }]);
    t.taken();
    expect(r2.record.lastSubmitFailure).toMatchObject({ code: 'SIGN_RATE_LIMITED', status: 429, attempts: 2, retryAt: next1.at + 2000 });
    expect(r2.record.submitting?.attempts).toBe(2);

    t.clock.to(r2.record.lastSubmitFailure!.retryAt);
    const r3 = await t.engine.resumeSubmission(r2.record, t.opts({ save }));
    expect(t.taken()).toEqual(['submitDeferred']);
    expect(r3.record.lastSubmitFailure).toMatchObject({ code: 'HTTP_TIMEOUT', attempts: 3, retryAt: t.clock.now + 4000 });
    expect(r3.record.lastSubmitFailure!.status).toBeUndefined();
    expect(expectStop(r3.record, 'atSavePoint').at).toBe(t.clock.now + 4000);

    t.clock.to(r3.record.lastSubmitFailure!.retryAt);
    const out = await t.engine.resumeSubmission(r3.record, t.opts({ save }));
    expect(t.taken()).toEqual(['submitted']);
    expectStop(out.record, 'hashSubmitted');
    expect(out.record.lastSubmitFailure).toBeUndefined();
    expect(out.record.submitting).toBeUndefined();
    // the SAME hash every time; every call after the first is a resend; each counted and saved before it left
    expect(new Set(t.client.hashCalls.map((c) => c.input.documentHash))).toEqual(new Set([r1.record.submitting!.documentHash]));
    expect(t.client.hashCalls.map((c) => c.resubmission)).toEqual([false, true, true, true]);
    expect(saved.map((x) => x.submitting?.attempts)).toEqual([2, 3, 4]);
    expect(t.log.slice(1)).toEqual(['save(attempts=2)', 'hash(resubmission=true)', 'save(attempts=3)', 'hash(resubmission=true)', 'save(attempts=4)', 'hash(resubmission=true)']);
  });

  it('a temporary failure near the deadline: retryAt is the deadline, and past it resumeSubmission expires the session without a call', async () => {
    const t = setup({ scanExtensionSeconds: 30 });
    const s = await started(t);
    t.client.answer(refuse.unavailable(), refuse.unavailable());
    const r1 = await t.engine.applyDelivery(s, certificateDelivery(s, undefined, t), pdf);
    const deadline = t.engine.deadline(r1.record);
    expect(deadline).toBe(s.state.expiresAt * 1000); // scanned at once: expires_at is later than the scan + 30 s
    t.clock.to(deadline - 500);
    const r2 = await t.engine.resumeSubmission(r1.record, t.opts());
    expect(r2.record.lastSubmitFailure).toMatchObject({ attempts: 2, retryAt: deadline });
    expect(expectStop(r2.record, 'atSavePoint', { scanExtensionSeconds: 30 }).at).toBe(deadline);
    t.taken();
    t.clock.to(deadline);
    const out = await t.engine.resumeSubmission(r2.record, t.opts());
    expect(t.client.hashCalls).toHaveLength(2);
    expect(t.taken()).toEqual(['ended']);
    expectStop(out.record, 'expired');
    expect(out.record.error?.code).toBe('SESSION_EXPIRED');
    expectNoSessionData(out.record);
  });

  it('resend refused as "already submitted" (possiblyAccepted) → hashSubmitted: an earlier call got through', async () => {
    const t = setup();
    const s = await started(t);
    t.client.answer(refuse.timeout(), refuse.rejected('a document hash was already submitted for this session'));
    const r1 = await t.engine.applyDelivery(s, certificateDelivery(s, undefined, t), pdf);
    expect(isSubmitDeferred(r1.record)).toBe(true);
    t.clock.to(r1.record.lastSubmitFailure!.retryAt);
    const out = await t.engine.resumeSubmission(r1.record, t.opts());
    expect(t.client.hashCalls.map((c) => c.resubmission)).toEqual([false, true]);
    expect(t.taken()).toEqual(['submitted']);
    expectStop(out.record, 'hashSubmitted');
    expect(out.record.error).toBeUndefined();
    expect(out.record.state.documentHash).toBe(r1.record.submitting!.documentHash);
    expect(out.record.prepared).toEqual(r1.record.prepared);
  });

  it('died after the save point (saved record counts 1 call): resumeSubmission and the replayed certificate event resend the SAME hash; "already submitted" → hashSubmitted', async () => {
    const t = setup();
    const s = await started(t);
    const cert = certificateDelivery(s, undefined, t);
    const { save, saved } = t.saver();
    t.client.answer(refuse.timeout()); // the process "dies" during the call: only the save point is in the store
    await t.engine.applyDelivery(s, cert, pdf, { save });
    const stored = saved[0];
    expect(stored.submitting?.attempts).toBe(1);
    expect(stored.lastSubmitFailure).toBeUndefined();
    expectStop(stored, 'atSavePoint');

    const already = refuse.rejected('a document hash was already submitted for this session');
    t.client.answer(already, already);
    const resumed = await t.engine.resumeSubmission(stored, t.opts());
    expect(t.taken()).toEqual(['submitted']);
    expectStop(resumed.record, 'hashSubmitted');
    const replayed = await t.engine.applyDelivery(stored, cert, pdf, t.opts());
    expect(t.taken()).toEqual(['submitted']); // nothing checked or prepared again
    expectStop(replayed.record, 'hashSubmitted');
    expect(replayed.record.state.documentHash).toBe(stored.submitting!.documentHash);
    expect(t.client.hashCalls.map((c) => [c.input.documentHash, c.resubmission])).toEqual([
      [stored.submitting!.documentHash, false], [stored.submitting!.documentHash, true], [stored.submitting!.documentHash, true],
    ]);
    expect(t.net.requests.ocsp).toBe(1);
  });

  it('an old record at the save point without a count (saved before calls were counted) → its call is a resend', async () => {
    const t = setup();
    const r = await atSavePoint(t);
    const old: SessionRecord = { ...r, submitting: { documentHash: r.submitting!.documentHash } };
    t.client.answer(refuse.rejected('a document hash was already submitted for this session'));
    const out = await t.engine.resumeSubmission(old, t.opts());
    expect(t.client.hashCalls.map((c) => c.resubmission)).toEqual([true]);
    expectStop(out.record, 'hashSubmitted');
  });

  it('a 5xx the client marks not retryable (501) → failed SIGN_SERVICE_ERROR, not deferred', async () => {
    const t = setup();
    const s = await started(t);
    t.client.answer(refuse.notImplemented());
    const out = await t.engine.applyDelivery(s, certificateDelivery(s, undefined, t), pdf, t.opts());
    expect(t.taken()).toEqual(['certificate', 'certificateChecked', 'prepared', 'ended']);
    expectStop(out.record, 'failed');
    expect(out.record.error?.code).toBe('SIGN_SERVICE_ERROR');
    expectNoSessionData(out.record);
  });

  it('a resend refused for good (SIGN_REF_NOT_FOUND) → failed with that code, even on a resend', async () => {
    const t = setup();
    const s = await started(t);
    t.client.answer(refuse.unavailable(), refuse.signRefNotFound());
    const r1 = await t.engine.applyDelivery(s, certificateDelivery(s, undefined, t), pdf);
    t.clock.to(r1.record.lastSubmitFailure!.retryAt);
    const out = await t.engine.resumeSubmission(r1.record, t.opts());
    expect(t.client.hashCalls.map((c) => c.resubmission)).toEqual([false, true]);
    expect(t.taken()).toEqual(['ended']);
    expectStop(out.record, 'failed');
    expect(out.record.error).toEqual({ code: 'SIGN_REF_NOT_FOUND', message: expect.stringContaining('start a new session'), serviceCode: 'SIGN_REF_NOT_FOUND' });
    expectNoSessionData(out.record);
  });

  it('resubmitHash on an uncounted record (attempts 0): "already submitted" → hashSubmitted; resumeSubmission\'s same refusal fails the session', async () => {
    const t = setup();
    const r = await atSavePoint(t);
    expect(r.submitting?.attempts).toBe(0);
    const already = refuse.rejected('a document hash was already submitted for this session');
    t.client.answer(already, already);
    const out = await t.engine.resubmitHash(r, t.opts());
    expect(t.taken()).toEqual(['submitted']);
    expectStop(out.record, 'hashSubmitted');
    // the same record, nothing says a call was made: the refusal is the service's verdict on a first call
    const first = await t.engine.resumeSubmission(r, t.opts());
    expect(t.taken()).toEqual(['ended']);
    expectStop(first.record, 'failed');
    expect(first.record.error?.code).toBe('SIGN_REQUEST_REJECTED');
    expect(t.client.hashCalls.map((c) => c.resubmission)).toEqual([true, false]);
  });

  it('save() losing the compare-and-set → duplicate: true and no hash call (certificate step and resumeSubmission)', async () => {
    const t = setup();
    const s = await started(t);
    const { save, saved } = t.saver(false);
    const claimed = await t.engine.applyDelivery(s, certificateDelivery(s, undefined, t), pdf, t.opts({ save }));
    expect(claimed.duplicate).toBe(true);
    expect(saved).toHaveLength(1);
    expectStop(saved[0], 'atSavePoint');
    // what this execution had before its save point: the claim; the winner's record is in the store
    expectStop(claimed.record, 'certificateClaimed');
    expect(t.taken()).toEqual(['certificate', 'certificateChecked', 'prepared']);

    const r = await atSavePoint(t);
    const out = await t.engine.resumeSubmission(r, t.opts({ save }));
    expect(out).toEqual({ record: r, duplicate: true });
    expect(saved[1].submitting?.attempts).toBe(1);
    expect(t.taken()).toEqual([]);
    expect(t.client.hashCalls).toEqual([]);
  });

  it('past the deadline → resumeSubmission expires the session (SESSION_EXPIRED), no call', async () => {
    const t = setup();
    const r = await atSavePoint(t);
    const next = expectStop(r, 'atSavePoint');
    expect(next.at).toBe(t.clock.now);
    t.clock.to(t.engine.deadline(r));
    const out = await t.engine.resumeSubmission(r, t.opts());
    expect(t.client.hashCalls).toEqual([]);
    expect(t.steps).toEqual([{ step: 'ended', status: 'expired', error: out.record.error }]);
    expectStop(out.record, 'expired');
    expect(out.record.error).toEqual({ code: 'SESSION_EXPIRED', message: expect.stringContaining('before the user approved') });
    expectNoSessionData(out.record);
  });

  it('revoked user certificate → failed OCSP_REVOKED, no hash call', async () => {
    const t = setup();
    const s = await started(t);
    const out = await t.engine.applyDelivery(s, certificateDelivery(s, pki.users.revoked, t), pdf, t.opts());
    expect(t.taken()).toEqual(['certificate', 'ended']);
    expect(t.net.requests.ocsp).toBe(1);
    expect(t.client.hashCalls).toEqual([]);
    expectStop(out.record, 'failed');
    expect(out.record.error).toEqual({ code: 'OCSP_REVOKED', message: expect.stringContaining('is revoked') });
    expectNoSessionData(out.record);
  });

  it('OCSP responder down during the certificate check → failed OCSP_FAILED before any hash (the user is waiting)', async () => {
    const t = setup();
    const s = await started(t);
    t.net.failNext('ocsp', 1);
    const out = await t.engine.applyDelivery(s, certificateDelivery(s, undefined, t), pdf, t.opts());
    expect(t.taken()).toEqual(['certificate', 'ended']);
    expect(t.client.hashCalls).toEqual([]);
    expectStop(out.record, 'failed');
    expect(out.record.error?.code).toBe('OCSP_FAILED');
  });
});

describe('webhook events', () => {
  it('signature → signed (the second save point: signature and prepared state kept), no service call', async () => {
    const t = setup();
    const h = await hashSubmitted(t);
    const calls = t.client.hashCalls.length;
    t.clock.advance(20_000);
    const d = signatureDelivery(h);
    const out = await t.engine.applyDelivery(h, d, pdf, t.opts());
    expect(t.steps).toEqual([{ step: 'signature', event: d.event }]);
    const next = expectStop(out.record, 'signed');
    expect(next.at).toBe(t.clock.now); // no failure yet: finish now
    expect(isFinishDeferred(out.record)).toBe(false);
    expect(t.engine.deadline(out.record)).toBe(Infinity);
    expect(out.record.state).toMatchObject({ status: 'signed', signature: (d.event as { signature: string }).signature, documentHash: h.state.documentHash, updatedAt: t.clock.now / 1000 });
    expect(out.record.state.certificate).toBeUndefined();
    expect(out.record.prepared).toEqual(h.prepared);
    expect(out.record.revision).toBe(h.revision + 1);
    expect(t.client.hashCalls).toHaveLength(calls);
  });

  it('signature over the saved hash on a record still at the save point → signed (the hash evidently got through)', async () => {
    const t = setup();
    const r = await atSavePoint(t);
    const out = await t.engine.applyDelivery(r, signatureDelivery(r), pdf, t.opts());
    expect(t.taken()).toEqual(['signature']);
    expectStop(out.record, 'signed');
    expect(out.record.state.documentHash).toBe(r.submitting!.documentHash);
    expect(out.record.submitting).toBeUndefined();
    expect(t.client.hashCalls).toEqual([]);
  });

  it('signature over another hash → STATE_INVALID, record untouched', async () => {
    const t = setup();
    const h = await hashSubmitted(t);
    const before = structuredClone(h);
    const other = randomBytes(32).toString('hex');
    await expect(t.engine.applyDelivery(h, signatureDelivery(h, { documentHash: other }), pdf, t.opts())).rejects.toMatchObject({ code: 'STATE_INVALID', message: expect.stringContaining('different document hash') });
    expect(h).toEqual(before);
    expectStop(h, 'hashSubmitted');
    expect(t.steps).toEqual([]);
  });

  it('a signature before any hash → STATE_INVALID, record untouched', async () => {
    const t = setup();
    const s = await started(t);
    const before = structuredClone(s);
    await expect(t.engine.applyDelivery(s, signatureDelivery(s, { documentHash: randomBytes(32).toString('hex') }), pdf)).rejects.toMatchObject({ code: 'STATE_INVALID' });
    expect(s).toEqual(before);
  });

  it('token of another session → WEBHOOK_UNAUTHORIZED (checkDelivery passes it: this DSAP issued it), record untouched; a Bearer never issued is refused by checkDelivery', async () => {
    const t = setup();
    const a = await started(t);
    const b = await started(t);
    const before = structuredClone(a);
    const genuine = certificateDelivery(a, undefined, t);
    const request = (bearer: string) => ({ headers: { authorization: `Bearer ${bearer}` }, body: { event: genuine.event } });

    const foreign = await t.engine.checkDelivery(request(b.state.clientNotificationToken));
    expect(foreign.response).toEqual({ status: 200 });
    expect(foreign.delivery).toEqual({ event: genuine.event, notificationToken: b.state.clientNotificationToken });
    await expect(t.engine.applyDelivery(a, foreign.delivery!, pdf, t.opts())).rejects.toMatchObject({ code: 'WEBHOOK_UNAUTHORIZED' });
    expect(a).toEqual(before);
    expect(t.steps).toEqual([]);
    expect(t.net.requests.ocsp).toBe(0);

    const forged = await t.engine.checkDelivery(request(`sfn1_${'0'.repeat(32)}_${'A'.repeat(43)}`));
    expect(forged.delivery).toBeUndefined();
    expect(forged.error?.code).toBe('WEBHOOK_UNAUTHORIZED');
    expect(t.verifier.expected.at(-1)).toBe(''); // the engine passed no token to match: not one it issued

    // the genuine delivery goes through
    const ok = await t.engine.checkDelivery(request(a.state.clientNotificationToken));
    expect(ok.delivery).toEqual(genuine);
    const out = await t.engine.applyDelivery(a, ok.delivery!, pdf);
    expectStop(out.record, 'hashSubmitted');
    expect(t.client.hashCalls).toHaveLength(1);
  });

  it('an event for another sign_ref → STATE_INVALID, record untouched', async () => {
    const t = setup();
    const a = await started(t);
    const b = await started(t);
    const before = structuredClone(a);
    const d = certificateDelivery(b, undefined, t);
    await expect(t.engine.applyDelivery(a, { ...d, notificationToken: a.state.clientNotificationToken }, pdf)).rejects.toMatchObject({ code: 'STATE_INVALID' });
    expect(a).toEqual(before);
  });

  it('duplicate certificate and signature events → duplicate: true, nothing done (never a second hash)', async () => {
    const t = setup();
    const s = await started(t);
    const cert = certificateDelivery(s, undefined, t);
    const h = (await t.engine.applyDelivery(s, cert, pdf)).record;
    t.taken();
    expect(await t.engine.applyDelivery(h, cert, pdf, t.opts())).toEqual({ record: h, duplicate: true });
    const sig = signatureDelivery(h);
    const sd = (await t.engine.applyDelivery(h, sig, pdf)).record;
    t.taken();
    expect(await t.engine.applyDelivery(sd, sig, pdf, t.opts())).toEqual({ record: sd, duplicate: true });
    expect(await t.engine.applyDelivery(sd, cert, pdf, t.opts())).toEqual({ record: sd, duplicate: true });
    expect(t.steps).toEqual([]);
    expect(t.client.hashCalls).toHaveLength(1);
    expect(t.net.requests.ocsp).toBe(1);
  });

  it('error event → failed SIGN_REQUEST_REJECTED with the service\'s code and message; the same event again is a duplicate', async () => {
    const t = setup();
    const h = await hashSubmitted(t);
    const d: VerifiedDelivery = {
      event: { type: 'error', signRef: h.state.signRef, errorCode: 'USER_CANCELLED', message: 'The user declined', correlationId: randomUUID(), issuedAt: Math.floor(t.clock.now / 1000) },
      notificationToken: h.state.clientNotificationToken,
    };
    const out = await t.engine.applyDelivery(h, d, pdf, t.opts());
    expect(t.steps).toEqual([{ step: 'ended', status: 'failed', error: out.record.error }]);
    expectStop(out.record, 'failed');
    expect(out.record.error).toEqual({ code: 'SIGN_REQUEST_REJECTED', message: 'The signing session ended with an error from the service: USER_CANCELLED The user declined', serviceCode: 'USER_CANCELLED' });
    expect(out.record.state.error).toMatchObject({ code: 'USER_CANCELLED', correlationId: (d.event as { correlationId: string }).correlationId });
    expectNoSessionData(out.record);
    expect(await t.engine.applyDelivery(out.record, d, pdf)).toEqual({ record: out.record, duplicate: true });
  });

  const errorEvent = (r: SessionRecord, t: Setup): VerifiedDelivery => ({
    event: { type: 'error', signRef: r.state.signRef, errorCode: 'SESSION_TIMEOUT', message: 'The service ended the session', correlationId: randomUUID(), issuedAt: Math.floor(t.clock.now / 1000) },
    notificationToken: r.state.clientNotificationToken,
  });

  it.each([
    ['waitingForScan', (t: Setup) => started(t)],
    ['certificateClaimed', async (t: Setup) => { const s = await started(t); return (await t.engine.recordDelivery(s, certificateDelivery(s, undefined, t))).record; }],
    ['atSavePoint', (t: Setup) => atSavePoint(t)],
  ] as const)('error event while %s → failed SIGN_REQUEST_REJECTED, no hash call, nothing left of the session', async (phase, at) => {
    const t = setup();
    const r = await at(t);
    expectStop(r, phase);
    const out = await t.engine.applyDelivery(r, errorEvent(r, t), pdf);
    expectStop(out.record, 'failed');
    expect(out.record.error?.code).toBe('SIGN_REQUEST_REJECTED');
    expectNoSessionData(out.record);
    expect(t.client.hashCalls).toEqual([]);
  });

  it('error event on a signed session → STATE_INVALID, record untouched (the signature is kept and finished)', async () => {
    const t = setup();
    const s = await signed(t);
    await expect(t.engine.applyDelivery(s, errorEvent(s, t), pdf)).rejects.toMatchObject({ code: 'STATE_INVALID' });
    expectStop(s, 'signed');
  });
});

describe('finish', () => {
  it.each(['B-B', 'B-T', 'B-LT', 'B-LTA'] as const)('signed → finish → completed at %s (one user signature, verified)', async (level) => {
    const t = setup();
    const r = await signed(t, level);
    t.taken();
    const tsaBefore = t.net.requests.tsa;
    const f = await t.engine.finish(r, pdf, t.opts());
    expect(f.deferred).toBeUndefined();
    const names = t.taken();
    expect(names).toEqual([
      'embedded', ...(level === 'B-LT' || level === 'B-LTA' ? ['validationData'] : []), ...(level === 'B-LTA' ? ['documentTimestamp'] : []), 'verified', 'ended',
    ]);
    expectStop(f.record, 'handingOver');
    expect(f.record.result).toEqual({ level, valid: true });
    expect(f.record.error).toBeUndefined();
    expectNoSessionData(f.record);
    expect(f.report?.newest?.level).toBe(level);
    expect(t.net.requests.tsa - tsaBefore).toBe({ 'B-B': 0, 'B-T': 1, 'B-LT': 1, 'B-LTA': 2 }[level]);
    const { report, signatures } = await signaturesIn(f.pdf!, t);
    expect(signatures).toHaveLength(1);
    expect(report.newest).toMatchObject({ level, valid: true });
    expect(t.client.hashCalls).toHaveLength(1);
  });

  it('finish with the TSA failing → signed + lastFinishFailure (stage, attempts, retryAt, finishBy) → finish again → completed, one signature', async () => {
    const t = setup();
    const r = await signed(t, 'B-T');
    const signedAt = r.state.updatedAt * 1000;
    t.taken();
    t.net.failNext('tsa', 2);
    t.clock.advance(3000);
    const f1 = await t.engine.finish(r, pdf, t.opts());
    expect(f1.deferred).toBe(true);
    expect(f1.pdf).toBeUndefined();
    const failure = { stage: 'embed', code: 'TSA_FAILED', message: expect.stringContaining('answered HTTP 503'), status: 503, at: t.clock.now, attempts: 1, retryAt: t.clock.now + 1000, finishBy: signedAt + 86_400_000 };
    expect(f1.record.lastFinishFailure).toEqual(failure);
    expect(t.steps).toEqual([{ step: 'finishDeferred', stage: 'embed', code: 'TSA_FAILED', message: failure.message, attempts: 1, retryAt: failure.retryAt }]);
    t.taken();
    expect(expectStop(f1.record, 'signed').at).toBe(failure.retryAt);
    expect(isFinishDeferred(f1.record)).toBe(true);
    expect(f1.record.state.signature).toBe(r.state.signature);
    expect(f1.record.prepared).toEqual(r.prepared);
    expect(f1.record.revision).toBe(r.revision + 1);

    t.clock.to(failure.retryAt);
    const f2 = await t.engine.finish(f1.record, pdf, t.opts());
    expect(t.taken()).toEqual(['finishDeferred']);
    expect(f2.record.lastFinishFailure).toMatchObject({ attempts: 2, retryAt: t.clock.now + 2000, finishBy: failure.finishBy });

    t.clock.to(f2.record.lastFinishFailure!.retryAt);
    const f3 = await t.engine.finish(f2.record, pdf, t.opts());
    expect(t.taken()).toEqual(['embedded', 'verified', 'ended']);
    expectStop(f3.record, 'handingOver');
    expect(f3.record.result).toEqual({ level: 'B-T', valid: true });
    expectNoSessionData(f3.record);
    expect(t.net.requests.tsa).toBe(3);
    expect((await signaturesIn(f3.pdf!, t)).signatures).toHaveLength(1);
  });

  it('finish with the OCSP responder failing at B-LT → deferred at stage validationData; then completed', async () => {
    const t = setup();
    const r = await signed(t, 'B-LT');
    t.taken();
    t.net.failNext('ocsp', 1);
    const f1 = await t.engine.finish(r, pdf, t.opts());
    expect(f1.deferred).toBe(true);
    expect(f1.record.lastFinishFailure).toEqual({
      stage: 'validationData', code: 'OCSP_FAILED', message: expect.stringContaining('answered HTTP 503'), status: 503,
      at: t.clock.now, attempts: 1, retryAt: t.clock.now + 1000, finishBy: r.state.updatedAt * 1000 + 86_400_000,
    });
    expect(t.taken()).toEqual(['embedded', 'finishDeferred']);
    expectStop(f1.record, 'signed');
    t.clock.to(f1.record.lastFinishFailure!.retryAt);
    const f2 = await t.engine.finish(f1.record, pdf, t.opts());
    expectStop(f2.record, 'handingOver');
    expect(f2.record.result).toEqual({ level: 'B-LT', valid: true });
    expect((await signaturesIn(f2.pdf!, t)).signatures).toHaveLength(1);
  });

  it('finish with the TSA failing at the document timestamp (B-LTA) → deferred at stage documentTimestamp; then completed', async () => {
    const t = setup();
    const r = await signed(t, 'B-LTA');
    t.taken();
    t.net.failNext('tsa', 1, 1); // the signature timestamp goes through, the document timestamp fails
    const f1 = await t.engine.finish(r, pdf, t.opts());
    expect(f1.deferred).toBe(true);
    expect(f1.record.lastFinishFailure).toMatchObject({ stage: 'documentTimestamp', code: 'TSA_FAILED', status: 503, attempts: 1 });
    expect(t.taken()).toEqual(['embedded', 'validationData', 'finishDeferred']);
    t.clock.to(f1.record.lastFinishFailure!.retryAt);
    const f2 = await t.engine.finish(f1.record, pdf, t.opts());
    expectStop(f2.record, 'handingOver');
    expect(f2.record.result).toEqual({ level: 'B-LTA', valid: true });
    // restarted from the input PDF: one signature, one document timestamp
    const { report, signatures } = await signaturesIn(f2.pdf!, t);
    expect(signatures).toHaveLength(1);
    expect(report.signatures.filter((s) => s.type !== 'signature')).toHaveLength(1);
  });

  it('finish past finishBy with the TSA still failing → completed at B-B, the signature embedded without its timestamp; result.missing says why', async () => {
    const t = setup();
    const r = await signed(t, 'B-T');
    t.net.failNext('tsa', 10);
    const f1 = await t.engine.finish(r, pdf);
    const { finishBy } = f1.record.lastFinishFailure!;
    expect(finishBy).toBe(r.state.updatedAt * 1000 + 86_400_000);
    t.taken();
    t.clock.to(finishBy);
    const f2 = await t.engine.finish(f1.record, pdf, t.opts());
    expect(f2.deferred).toBeUndefined();
    const ended = t.steps.at(-1);
    expect(t.taken()).toEqual(['embedded', 'verified', 'ended']);
    expectStop(f2.record, 'handingOver');
    expect(f2.record.error).toBeUndefined();
    const missing = { requested: 'B-T', stage: 'embed', code: 'TSA_FAILED', message: expect.stringContaining('answered HTTP 503') };
    expect(f2.record.result).toEqual({ level: 'B-B', valid: true, missing });
    expect(finishShortfall(f2.record)).toEqual(missing);
    expect(ended).toEqual({ step: 'ended', status: 'completed', missing });
    expectNoSessionData(f2.record);
    expect(t.net.requests.tsa).toBe(2);
    const { report, signatures } = await signaturesIn(f2.pdf!, t);
    expect(signatures).toHaveLength(1);
    expect(report.newest).toMatchObject({ level: 'B-B', valid: true });
  });

  it('finishRetryWindowSeconds 0: a temporary failure ends the session at once, with what was reached (B-LT of B-LTA)', async () => {
    const t = setup({ finishRetryWindowSeconds: 0 });
    const r = await signed(t, 'B-LTA');
    t.net.failNext('tsa', 1, 1); // the signature timestamp goes through, the document timestamp fails
    const f = await t.engine.finish(r, pdf);
    expectStop(f.record, 'handingOver');
    expect(f.record.result).toEqual({ level: 'B-LT', valid: true, missing: expect.objectContaining({ requested: 'B-LTA', stage: 'documentTimestamp', code: 'TSA_FAILED' }) });
    expect((await signaturesIn(f.pdf!, t)).report.newest).toMatchObject({ level: 'B-LT', valid: true });
  });

  it('finish with a broken signature (another key over the right hash) → failed SIGNATURE_INVALID, nothing embedded, no timestamp asked', async () => {
    const t = setup();
    const h = await hashSubmitted(t, 'B-T');
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const r = (await t.engine.applyDelivery(h, signatureDelivery(h, { key: stranger }), pdf)).record;
    expectStop(r, 'signed'); // the signature is only checked when embedding
    const f = await t.engine.finish(r, pdf, t.opts());
    expect(f.deferred).toBeUndefined();
    expect(f.pdf).toBeUndefined();
    expect(t.taken()).toEqual(['ended']);
    expectStop(f.record, 'failed');
    expect(f.record.error?.code).toBe('SIGNATURE_INVALID');
    expect(f.record.result).toEqual({ level: null, valid: false });
    expect(t.net.requests.tsa).toBe(0);
    expectNoSessionData(f.record);
  });

  it('finish refuses a session that is not signed, and a PDF that is not the session\'s (record untouched)', async () => {
    const t = setup();
    const h = await hashSubmitted(t);
    await expect(t.engine.finish(h, pdf)).rejects.toMatchObject({ code: 'STATE_INVALID' });
    const r = (await t.engine.applyDelivery(h, signatureDelivery(h), pdf)).record;
    const before = structuredClone(r);
    await expect(t.engine.finish(r, Buffer.concat([pdf, Buffer.from('\n')]))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(r).toEqual(before);
  });
});

describe('expiry', () => {
  it('before the scan → expired at expires_at (nextStep and deadline agree)', async () => {
    const t = setup();
    const s = await started(t);
    const next = expectStop(s, 'waitingForScan');
    expect(next.at).toBe(t.engine.deadline(s));
    t.clock.to(next.at - 1000);
    expect(t.engine.expire(s).record).toBe(s);
    t.clock.to(next.at);
    const out = t.engine.expire(s).record;
    expectStop(out, 'expired');
    expect(out.error).toEqual({ code: 'SESSION_EXPIRED', message: expect.stringContaining('before the user scanned the QR code') });
    expect(out.revision).toBe(s.revision + 1);
    expect(t.engine.expire(out).record).toBe(out); // ended: a no-op
    expect(t.client.hashCalls).toEqual([]);
  });

  it('after the scan → expired only at the scan + scanExtensionSeconds (past expires_at)', async () => {
    const t = setup({ scanExtensionSeconds: 30 });
    const s = await started(t);
    t.clock.advance(100_000); // scanned 20 s before expires_at: the scan + 30 s is later
    const h = (await t.engine.applyDelivery(s, certificateDelivery(s, undefined, t), pdf)).record;
    const deadline = (s.state.expiresAt + 10) * 1000;
    expect(t.engine.deadline(h)).toBe(deadline);
    expect(expectStop(h, 'hashSubmitted', { scanExtensionSeconds: 30 }).at).toBe(deadline);
    t.clock.to(s.state.expiresAt * 1000 + 5000);
    expect(t.engine.expire(h).record).toBe(h);
    t.clock.to(deadline);
    const out = t.engine.expire(h).record;
    expectStop(out, 'expired');
    expect(out.error).toEqual({ code: 'SESSION_EXPIRED', message: expect.stringContaining('before the user approved') });
    expectNoSessionData(out);
  });

  it('a signed session never expires (its finishing has its own window)', async () => {
    const t = setup({ scanExtensionSeconds: 30 });
    const r = await signed(t);
    t.clock.advance(30 * 86_400_000);
    expect(t.engine.expire(r).record).toBe(r);
    expect(t.engine.deadline(r)).toBe(Infinity);
  });

  it('a claimed certificate continued past the deadline → expired, nothing checked or sent', async () => {
    const t = setup({ scanExtensionSeconds: 30 });
    const s = await started(t);
    const claimed = (await t.engine.recordDelivery(s, certificateDelivery(s, undefined, t))).record;
    expect(expectStop(claimed, 'certificateClaimed', { scanExtensionSeconds: 30 }).at).toBe(t.clock.now);
    t.clock.to(t.engine.deadline(claimed));
    const { save, saved } = t.saver();
    const out = await t.engine.continueCertificate(claimed, pdf, t.opts({ save }));
    expect(t.taken()).toEqual(['ended']);
    expectStop(out.record, 'expired');
    expectNoSessionData(out.record);
    expect(saved).toEqual([]);
    expect(t.client.hashCalls).toEqual([]);
    expect(t.net.requests.ocsp).toBe(0);
  });
});

describe('the fake client throws what the real SigningApiClient throws', () => {
  // One real client per answer, over a fetch that gives the service's HTTP answer; compared with the fake's factory.
  const signRef = 'ref-for-the-comparison';
  const input: DocumentHashInput = { documentName: 'a.pdf', documentHash: 'ab'.repeat(32), challengeCode: 'AB12', nonce: 'n', domainName: 'transitions.example.sg' };
  const json = (status: number, body: unknown) => () => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const cases: [string, () => Response | never, Refusal, boolean][] = [
    ['400 first call', json(400, { error: 'ARGUMENTS_NOT_VALID', error_description: 'certificate not delivered yet' }), refuse.rejected('certificate not delivered yet'), false],
    ['400 resubmission', json(400, { error: 'ARGUMENTS_NOT_VALID', error_description: 'already submitted' }), refuse.rejected('already submitted'), true],
    ['404 sign_ref', json(404, { error: 'SIGN_REF_NOT_FOUND', error_description: 'no such session' }), refuse.signRefNotFound(), false],
    ['501', () => new Response('', { status: 501 }), refuse.notImplemented(), false],
    ['429', () => new Response('', { status: 429 }), refuse.rateLimited(), false],
    ['503', () => new Response('busy', { status: 503 }), refuse.unavailable(), false],
    ['timeout', () => { throw Object.assign(new Error('The operation timed out'), { name: 'TimeoutError' }); }, refuse.timeout(), false],
  ];
  it.each(cases)('%s', async (_name, answer, fake, resubmission) => {
    const signingKey = await loadSigningKey({ key: (await generateClientKeys()).signing });
    const real = new SigningApiClient({ baseUrl: SIGN_API, clientId: 'transitions', signingKey, sleep: async () => {}, fetch: async () => answer() });
    const thrown = await real.submitDocumentHash(signRef, input, { resubmission }).then(() => undefined, (e: unknown) => e);
    expect(thrown).toBeInstanceOf(SingpassFlowsError);
    expect((thrown as SingpassFlowsError).toJSON()).toEqual(fake(signRef, resubmission).toJSON());
  });
});

describe('records of the version before the hand-over (phase stored, completed meaning handed on)', () => {
  it('a signed one finishes into the hand-over by its due step; a completed one stays completed, never handed over again', async () => {
    const t = setup();
    const store = new MemorySessionStore();
    const sig = await signed(t, 'B-T');
    store.put(sig, undefined); // exactly as that version stored it: the phase, no hand-over
    store.putDocument(sig.state.signRef, pdf);
    const r = await runDueStep(t.engine, store, sig.state.signRef, { now: t.clock.now });
    expectStop(r.record!, 'handingOver');
    expect(r.handOver?.attempt).toBe(1);
    const { handOver: _none, ...before } = (await acknowledgeHandOver(store, sig.state.signRef, { clock: t.clock.fn })).record!;
    const old = { ...before, phase: 'completed' as const }; // what that version's completed record held
    const legacy = new MemorySessionStore();
    legacy.put(old, undefined);
    expect(nextStep(legacy.get(old.state.signRef)!).action).toBe('forget');
    expect(await runDueStep(t.engine, legacy, old.state.signRef, { now: t.clock.now + 365 * 86_400_000 })).toMatchObject({ action: 'none' });
  });
});

describe('records written before the phase was stored', () => {
  /** As the previous version wrote it: the same fields, no phase. */
  const previousVersion = (r: SessionRecord): SessionRecord => {
    const { phase: _phase, ...rest } = r;
    return rest as SessionRecord;
  };

  it('a claimed certificate, a save point and a signed session continue by their due step to completed, one hash, one signature', async () => {
    const t = setup();
    const s = await started(t, 'B-T');
    const claimed = previousVersion((await t.engine.recordDelivery(s, certificateDelivery(s, undefined, t))).record);
    expect(claimed.phase).toBeUndefined();
    expect(nextStep(claimed).action).toBe('continueCertificate');
    const { save } = t.saver();
    const submitted = (await t.engine.continueCertificate(claimed, pdf, { save })).record;
    expectStop(submitted, 'hashSubmitted');

    const u = setup();
    const atSave = previousVersion(await atSavePoint(u, 'B-T'));
    expect(nextStep(atSave).action).toBe('submitHash');
    const resumed = (await u.engine.resumeSubmission(atSave)).record;
    expectStop(resumed, 'hashSubmitted');
    expect(u.client.hashCalls).toHaveLength(1);

    const sig = previousVersion((await u.engine.applyDelivery(resumed, signatureDelivery(resumed), pdf)).record);
    expect(nextStep(sig).action).toBe('finish');
    const done = await u.engine.finish(sig, pdf);
    expectStop(done.record, 'handingOver');
    expect((await signaturesIn(done.pdf!, u)).signatures).toHaveLength(1);
  });

  it('a waiting session expires by its due step', async () => {
    const t = setup();
    const s = previousVersion(await started(t));
    expect(nextStep(s).action).toBe('expire');
    t.clock.advance((SESSION_SECONDS + 1) * 1000);
    expectStop(t.engine.expire(s).record, 'expired');
  });
});

describe('several signers in order', () => {
  it('completed → nameNextSigner → completed: the next signer\'s session starts on the signed PDF once, and the record names it', async () => {
    const t = setup();
    const store = new MemorySessionStore();
    const s = await t.engine.start(pdf, { documentName: 'Lease.pdf', level: 'B-T', signer: { position: 1, of: 2, label: 'Tenant' } }, t.opts());
    const ref = s.signRef;
    store.put(s.record, undefined);
    expect(await startNextSigner(t.engine, store, { previousSignRef: ref })).toMatchObject({ outcome: 'waiting' });
    const h = (await t.engine.applyDelivery(s.record, certificateDelivery(s.record, undefined, t), pdf)).record;
    const sg = (await t.engine.applyDelivery(h, signatureDelivery(h), pdf)).record;
    const f = await t.engine.finish(sg, pdf, t.opts());
    expectStop(f.record, 'handingOver');
    store.put(f.record, 1);
    store.putSignedDocument(ref, f.pdf!);
    const sessions = t.client.sessions.length;
    const r = await startNextSigner(t.engine, store, { previousSignRef: ref, label: 'Landlord', clock: t.clock.fn });
    if (r.outcome !== 'started') throw new Error(r.outcome);
    expect(r.started).toBeDefined();
    expect(r.record.request).toMatchObject({ documentName: 'Lease.pdf', level: 'B-LTA', signer: { position: 2, of: 2, label: 'Landlord', previousSignRef: ref } });
    expect(r.record.document.sha256).not.toBe(s.record.document.sha256);
    expect(store.getDocument(r.record.state.signRef)).toEqual(f.pdf);
    const named = store.get(ref)!;
    expect(named).toEqual({ ...f.record, nextSigner: { signRef: r.record.state.signRef }, revision: f.record.revision + 1, state: { ...f.record.state, updatedAt: Math.floor(t.clock.now / 1000) } });
    // asked again: the same session, nothing new at the service
    expect(await startNextSigner(t.engine, store, { previousSignRef: ref })).toEqual({ outcome: 'started', record: store.get(r.record.state.signRef) });
    expect(t.client.sessions.length).toBe(sessions + 1);
    // the last signer has no one after
    expect(await startNextSigner(t.engine, store, { previousSignRef: r.record.state.signRef })).toMatchObject({ outcome: 'noNextSigner' });
  });
});

describe('what leads to each move: the same row reached by an event, a due step or the deadline', () => {
  const PAST = (SESSION_SECONDS + 600) * 1000; // past any session's deadline, the scan extension too
  async function claimedBy(t: Setup, user = pki.users.p256) {
    const s = await started(t);
    const cert = certificateDelivery(s, user, t);
    return { cert, claimed: (await t.engine.recordDelivery(s, cert)).record };
  }
  async function savePointOf(t: Setup) {
    const s = await started(t);
    const cert = certificateDelivery(s, undefined, t);
    return { cert, saved: (await t.engine.prepareCertificate(s, cert, pdf)).record };
  }

  it('continueCertificate on a claim whose certificate is revoked: refuseCertificate → failed, no hash', async () => {
    const t = setup();
    const { claimed } = await claimedBy(t, pki.users.revoked);
    const out = await t.engine.continueCertificate(claimed, pdf, { save: t.saver().save });
    expectStop(out.record, 'failed');
    expect(out.record.error?.code).toBe('OCSP_REVOKED');
    expect(t.client.hashCalls).toEqual([]);
  });

  it('continueCertificate whose hash call fails temporarily (deferHash), for good (refuseHash), or temporarily past the deadline (expire)', async () => {
    const deferred = setup();
    deferred.client.answer(refuse.unavailable());
    expectStop((await deferred.engine.continueCertificate((await claimedBy(deferred)).claimed, pdf, { save: deferred.saver().save })).record, 'atSavePoint');

    const refused = setup();
    refused.client.answer(refuse.rejected('a field the service does not accept'));
    expectStop((await refused.engine.continueCertificate((await claimedBy(refused)).claimed, pdf, { save: refused.saver().save })).record, 'failed');

    const late = setup();
    late.client.answer(() => {
      late.clock.advance(PAST); // the call outlived the session
      return refuse.unavailable()();
    });
    const out = await late.engine.continueCertificate((await claimedBy(late)).claimed, pdf, { save: late.saver().save });
    expectStop(out.record, 'expired');
  });

  it('the certificate event replayed on a save point: the same hash counted and sent again (countHashCall); past the deadline with the call failing, expired', async () => {
    const t = setup();
    const { cert, saved } = await savePointOf(t);
    const { save } = t.saver();
    expectStop((await t.engine.applyDelivery(saved, cert, pdf, { save })).record, 'hashSubmitted');
    expect(t.client.hashCalls.map((h) => h.input.documentHash)).toEqual([saved.submitting!.documentHash]);

    const late = setup();
    const lateSaved = await savePointOf(late);
    late.client.answer(() => {
      late.clock.advance(PAST);
      return refuse.unavailable()();
    });
    expectStop((await late.engine.applyDelivery(lateSaved.saved, lateSaved.cert, pdf, { save: late.saver().save })).record, 'expired');
  });

  it('past the deadline: a claim and a save point expire by the due step (expire) and by the replayed certificate event, without a call', async () => {
    const t = setup();
    const { claimed, cert } = await claimedBy(t);
    const { saved } = await savePointOf(t);
    t.clock.advance(PAST);
    expectStop(t.engine.expire(claimed).record, 'expired');
    expectStop(t.engine.expire(saved).record, 'expired');
    expectStop((await t.engine.applyDelivery(claimed, cert, pdf, { save: t.saver().save })).record, 'expired');
    expect(t.client.hashCalls).toEqual([]);
  });
});

describe('the hand-over: a finished session ends when the flow has its signed PDF', () => {
  const policy = { handOverLeaseMs: 60_000, handOverWindowMs: 3_600_000 };
  /** A signed session in a store, finished by its due step: the first hand-over comes with it. */
  async function finished(t: Setup) {
    const store = new MemorySessionStore();
    const s = await signed(t, 'B-T');
    store.put(s, undefined);
    store.putDocument(s.state.signRef, pdf);
    const r = await runDueStep(t.engine, store, s.state.signRef, { now: t.clock.now, policy });
    return { store, signRef: s.state.signRef, r };
  }

  it('signed → finish → handingOver: the signed PDF stored, then handed over (saved and leased before it leaves); the PDF being signed deleted', async () => {
    const t = setup();
    const { store, signRef, r } = await finished(t);
    expect(r.action).toBe('finish');
    expectStop(r.record!, 'handingOver');
    expect(r.handOver).toMatchObject({ signRef, fileName: `Contract-signed-${signRef}.pdf`, attempt: 1 });
    expect(r.handOver!.pdf).toEqual(store.getSignedDocument(signRef));
    expect((await signaturesIn(r.handOver!.pdf, t)).signatures).toHaveLength(1);
    expect(store.getDocument(signRef)).toBeUndefined();
    expect(store.get(signRef)).toEqual(r.record);
    expect(r.record!.handOver).toEqual({ since: t.clock.now, attempts: 1, lastAt: t.clock.now, nextAt: t.clock.now + policy.handOverLeaseMs });
    expect(nextStep(r.record!)).toEqual({ action: 'handOver', at: t.clock.now + policy.handOverLeaseMs });
    expect(isSessionEnded(r.record!)).toBe(false);
    // not due before the lease passed: nothing handed over twice
    expect(await runDueStep(t.engine, store, signRef, { now: t.clock.now + policy.handOverLeaseMs - 1, policy })).toMatchObject({ action: 'none' });
  });

  it('handingOver → acknowledge → completed: ended, acknowledging again changes nothing; nothing due but forget', async () => {
    const t = setup();
    const { store, signRef } = await finished(t);
    t.clock.advance(2_000);
    const a = await acknowledgeHandOver(store, signRef, { clock: t.clock.fn });
    expect(a.moved).toBe(true);
    expectStop(a.record!, 'completed');
    expect(a.record!.handOver!.acknowledgedAt).toBe(t.clock.now);
    expect(isSessionEnded(a.record!)).toBe(true);
    expect(await acknowledgeHandOver(store, signRef, { clock: t.clock.fn })).toEqual({ moved: false, record: a.record });
    expect(store.getSignedDocument(signRef)).toBeDefined(); // the signer's download link still works until forgotten
  });

  it('not acknowledged within the lease: handed over again, the same bytes and file name; a reported storage failure comes back after a backoff', async () => {
    const t = setup();
    const { store, signRef, r } = await finished(t);
    t.clock.advance(policy.handOverLeaseMs);
    const again = await runDueStep(t.engine, store, signRef, { now: t.clock.now, policy });
    expect(again.action).toBe('handOver');
    expect(again.handOver).toEqual({ ...r.handOver, attempt: 2 });
    expectStop(again.record!, 'handingOver');
    const failed = await reportHandOverFailure(store, signRef, { code: 'SFTP_DOWN', message: 'connect ECONNREFUSED 127.0.0.1:22' }, { clock: t.clock.fn, policy });
    expectStop(failed.record!, 'handingOver');
    expect(failed.record!.handOver).toMatchObject({ attempts: 2, lastFailure: { code: 'SFTP_DOWN', message: 'connect ECONNREFUSED 127.0.0.1:22', at: t.clock.now }, nextAt: t.clock.now + 2_000 });
    t.clock.advance(2_000);
    const third = await runDueStep(t.engine, store, signRef, { now: t.clock.now, policy });
    expect(third.handOver).toEqual({ ...r.handOver, attempt: 3 });
    expect((await acknowledgeHandOver(store, signRef, { clock: t.clock.fn })).record!.phase).toBe('completed');
  });

  it('never acknowledged within the window: undelivered with the reason, the PDF kept; a late acknowledgement still completes it', async () => {
    const t = setup();
    const { store, signRef } = await finished(t);
    t.clock.advance(policy.handOverWindowMs);
    const gaveUp = await runDueStep(t.engine, store, signRef, { now: t.clock.now, policy });
    expect(gaveUp.handOver).toBeUndefined();
    expectStop(gaveUp.record!, 'undelivered');
    expect(gaveUp.record!.handOver!.undelivered).toMatchObject({ code: 'HANDOVER_UNACKNOWLEDGED', at: t.clock.now });
    expect(gaveUp.record!.handOver!.undelivered!.message).toMatch(/handed to the flow 1 time\(s\).*never acknowledged/);
    expect(store.getSignedDocument(signRef)).toBeDefined();
    expect(nextStep(gaveUp.record!)).toEqual({ action: 'forget', at: t.clock.now + SESSION_POLICY.retentionMs });
    const late = await acknowledgeHandOver(store, signRef, { clock: t.clock.fn });
    expectStop(late.record!, 'completed');
    expect(late.record!.handOver!.undelivered).toBeUndefined();
  });

  it('two schedulers due at once: one hands over, the other loses the compare-and-set and hands nothing', async () => {
    const t = setup();
    const { store, signRef } = await finished(t);
    t.clock.advance(policy.handOverLeaseMs);
    const [a, b] = await Promise.all([
      runDueStep(t.engine, store, signRef, { now: t.clock.now, policy }),
      runDueStep(t.engine, store, signRef, { now: t.clock.now, policy }),
    ]);
    expect([a, b].filter((x) => x.handOver).length).toBe(1);
    expect([a, b].filter((x) => x.lost).length).toBe(1);
  });

  it('a session with no signed PDF is not acknowledged (STATE_INVALID, record unchanged)', async () => {
    const t = setup();
    const store = new MemorySessionStore();
    const s = await signed(t, 'B-T');
    store.put(s, undefined);
    await expect(acknowledgeHandOver(store, s.state.signRef)).rejects.toMatchObject({ code: 'STATE_INVALID' });
    expect(store.get(s.state.signRef)).toEqual(s);
  });

  it('an undelivered and a completed session still name their next signer', async () => {
    const t = setup();
    for (const end of ['undelivered', 'completed'] as const) {
      const store = new MemorySessionStore();
      const s = await t.engine.start(pdf, { documentName: 'Lease.pdf', level: 'B-T', signer: { position: 1, of: 2 } }, t.opts());
      const h = (await t.engine.applyDelivery(s.record, certificateDelivery(s.record, undefined, t), pdf)).record;
      const sg = (await t.engine.applyDelivery(h, signatureDelivery(h), pdf)).record;
      store.put(sg, undefined);
      store.putDocument(s.signRef, pdf);
      await runDueStep(t.engine, store, s.signRef, { now: t.clock.now, policy });
      if (end === 'completed') await acknowledgeHandOver(store, s.signRef, { clock: t.clock.fn });
      else await runDueStep(t.engine, store, s.signRef, { now: t.clock.now + policy.handOverWindowMs, policy: { ...policy, handOverWindowMs: 0 } });
      expect(store.get(s.signRef)!.phase).toBe(end);
      const r = await startNextSigner(t.engine, store, { previousSignRef: s.signRef, clock: t.clock.fn });
      expect(r.outcome).toBe('started');
      expect(store.get(s.signRef)!.phase).toBe(end);
    }
  });
});

describe('the state machine', () => {
  it('every row of TRANSITIONS was exercised by the tests above (a row no step takes is dead or untested)', () => {
    const missing = TRANSITIONS.map(transitionKey).filter((k) => !exercised.has(k));
    expect(missing).toEqual([]);
  });

  it('every (from, trigger, verb) of TRANSITIONS was exercised, and every move named what led to it', () => {
    const table = TRANSITIONS.flatMap((t) => t.on.map((on) => `${t.from}:${on}:${t.verb}`));
    expect(table.filter((k) => !exercisedOn.has(k))).toEqual([]);
    expect([...exercisedOn].filter((k) => !table.includes(k))).toEqual([]);
  });
});
