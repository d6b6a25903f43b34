/**
 * The session driver (src/session/driver.ts): the step each stored phase calls for, run when due, saved with
 * compare-and-set — over a MemorySessionStore and the engine's fakes (engine-fakes.ts: scripted signing client, test
 * PKI in process, a clock the test moves).
 */
import { MemorySessionStore, type SessionRecord } from '../../src/session';
import { prepareStored, recordEvent, runDueStep, runStepNow, submitStoredHash } from '../../src/session/driver';
import {
  atSavePoint, certificateDelivery, expectStop, loadFakes, pdf, pki, refuse, SESSION_SECONDS, setup, signatureDelivery, signaturesIn, started, storedSession, hashSubmitted, type Setup,
} from './engine-fakes';

beforeAll(loadFakes);

const stored = async (record: SessionRecord): Promise<MemorySessionStore> => storedSession(record);

async function claimed(t: Setup): Promise<SessionRecord> {
  const s = await started(t);
  return (await t.engine.recordDelivery(s, certificateDelivery(s, undefined, t))).record;
}

describe('runDueStep', () => {
  it('a claimed certificate: chain, OCSP, prepare, the save point saved BEFORE the hash leaves, then hashSubmitted saved', async () => {
    const t = setup();
    const c = await claimed(t);
    const store = await stored(c);
    const revisionsAtCall: number[] = [];
    const submit = t.client.submitDocumentHash.bind(t.client);
    t.client.submitDocumentHash = async (...args) => {
      revisionsAtCall.push(store.get(c.state.signRef)!.revision);
      return submit(...args);
    };
    const r = await runDueStep(t.engine, store, c.state.signRef, { now: t.clock.now });
    expect(r.action).toBe('continueCertificate');
    expectStop(r.record!, 'hashSubmitted');
    expect(store.get(c.state.signRef)).toEqual(r.record);
    expect(t.client.hashCalls).toHaveLength(1);
    expect(revisionsAtCall).toEqual([c.revision + 1]); // the save point was in the store when the hash left
  });

  it('not yet due (a step in progress within the idle time) → nothing; once idle that long → taken over', async () => {
    const t = setup();
    const c = await claimed(t);
    const store = await stored(c);
    expect(await runDueStep(t.engine, store, c.state.signRef, { now: t.clock.now, idleMs: 45_000 })).toEqual({ action: 'none', record: c });
    expect(t.client.hashCalls).toEqual([]);
    const r = await runDueStep(t.engine, store, c.state.signRef, { now: t.clock.now + 45_000, idleMs: 45_000 });
    expect(r.action).toBe('continueCertificate');
  });

  it('a save point no call was counted for (a Prepare step, then the process died) → the SAME hash sent as a resend that may have been made', async () => {
    const t = setup();
    const s = await atSavePoint(t);
    const store = await stored(s);
    const r = await runDueStep(t.engine, store, s.state.signRef, { now: t.clock.now });
    expect(r.action).toBe('submitHash');
    expectStop(r.record!, 'hashSubmitted');
    expect(t.client.hashCalls.map((c) => [c.input.documentHash, c.resubmission])).toEqual([[s.submitting!.documentHash, true]]);
  });

  it('signed → finished: the signed PDF stored before the record says finished, handed over with it, one signature', async () => {
    const t = setup();
    const h = await hashSubmitted(t);
    const sig = (await t.engine.applyDelivery(h, signatureDelivery(h), pdf)).record;
    const store = await stored(sig);
    const order: string[] = [];
    const put = store.put.bind(store);
    store.put = (record, expected) => (order.push(`record:${record.state.status}`), put(record, expected));
    const putSigned = store.putSignedDocument.bind(store);
    store.putSignedDocument = (ref, bytes) => (order.push('signed pdf'), putSigned(ref, bytes));
    const r = await runDueStep(t.engine, store, sig.state.signRef, { now: t.clock.now });
    expect(r.action).toBe('finish');
    expectStop(r.record!, 'handingOver');
    expect(order).toEqual(['signed pdf', 'record:completed']);
    expect(store.getSignedDocument(sig.state.signRef)!.equals(r.pdf!)).toBe(true);
    expect(r.handOver).toMatchObject({ signRef: sig.state.signRef, attempt: 1 });
    expect(r.handOver!.pdf.equals(r.pdf!)).toBe(true);
    expect((await signaturesIn(r.pdf!, t)).signatures).toHaveLength(1);
  });

  it('finishing failing temporarily → the deferred record saved, not due before retryAt; runStepNow runs it anyway', async () => {
    const t = setup();
    const h = await hashSubmitted(t);
    const sig = (await t.engine.applyDelivery(h, signatureDelivery(h), pdf)).record;
    const store = await stored(sig);
    t.net.failNext('tsa', 1000);
    const r = await runDueStep(t.engine, store, sig.state.signRef, { now: t.clock.now });
    expectStop(r.record!, 'signed');
    expect(store.get(sig.state.signRef)!.lastFinishFailure).toMatchObject({ stage: 'embed', attempts: 1 });
    expect((await runDueStep(t.engine, store, sig.state.signRef, { now: t.clock.now })).action).toBe('none');
    t.net.failNext('tsa', 0);
    const again = await runStepNow(t.engine, store, sig.state.signRef, { now: t.clock.now });
    expectStop(again.record!, 'handingOver');
  });

  it('past the deadline: a waiting session and a claimed one expire, without the PDF and without a call', async () => {
    const t = setup();
    const w = await started(t);
    const c = await claimed(t);
    const store = await stored(w);
    expect(store.put(c, undefined)).toBe(true); // no PDF stored for this one
    t.clock.advance((SESSION_SECONDS + 121) * 1000);
    for (const record of [w, c]) {
      const r = await runDueStep(t.engine, store, record.state.signRef, { now: t.clock.now });
      expect(r.action).toBe('expire');
      expectStop(r.record!, 'expired');
      expect(r.record!.error?.code).toBe('SESSION_EXPIRED');
    }
    expect(t.client.hashCalls).toEqual([]);
  });

  it('compare-and-set lost to another process → lost, the other\'s record returned, nothing sent after the loss', async () => {
    const t = setup();
    const s = await atSavePoint(t);
    const store = await stored(s);
    // another process counts its own call first
    const put = store.put.bind(store);
    let first = true;
    store.put = (record, expected) => {
      if (first) {
        first = false;
        put({ ...store.get(s.state.signRef)!, submitting: { ...s.submitting!, attempts: 1 }, revision: s.revision + 1 }, s.revision);
      }
      return put(record, expected);
    };
    const r = await runDueStep(t.engine, store, s.state.signRef, { now: t.clock.now });
    expect(r).toMatchObject({ action: 'submitHash', lost: true });
    expect(r.record!.revision).toBe(s.revision + 1);
    expect(t.client.hashCalls).toEqual([]);
  });

  it('only: a step the caller runs elsewhere is left alone; no PDF in the store → documentMissing, nothing done; ended or gone → none', async () => {
    const t = setup();
    const c = await claimed(t);
    const store = new MemorySessionStore();
    store.put(c, undefined);
    expect(await runDueStep(t.engine, store, c.state.signRef, { now: t.clock.now, only: ['finish'] })).toEqual({ action: 'none', record: c });
    expect(await runDueStep(t.engine, store, c.state.signRef, { now: t.clock.now })).toEqual({ action: 'continueCertificate', record: c, documentMissing: true });
    expect(await runDueStep(t.engine, store, 'no-such-session', { now: t.clock.now })).toEqual({ action: 'none' });
    const w = await started(t);
    t.clock.advance((SESSION_SECONDS + 1) * 1000);
    const ended = t.engine.expire(w).record;
    store.put(ended, undefined);
    expect(await runDueStep(t.engine, store, ended.state.signRef, { now: t.clock.now + 10 * 86_400_000 })).toEqual({ action: 'none', record: ended });
    expect(t.client.hashCalls).toEqual([]);
  });
});

describe('recordEvent', () => {
  it('a certificate is only claimed and saved; the same event again leaves the record as it is; an ended session refuses it', async () => {
    const t = setup();
    const s = await started(t);
    const store = await stored(s);
    const delivery = certificateDelivery(s, undefined, t);
    const first = await recordEvent(t.engine, store, delivery);
    expect(first.moved).toBe(true);
    expectStop(first.record!, 'certificateClaimed');
    expect(store.get(s.state.signRef)).toEqual(first.record);
    expect(t.client.hashCalls).toEqual([]);
    expect(await recordEvent(t.engine, store, delivery)).toEqual({ moved: false, record: first.record });
    t.clock.advance((SESSION_SECONDS + 121) * 1000);
    const ended = await runDueStep(t.engine, store, s.state.signRef, { now: t.clock.now });
    expectStop(ended.record!, 'expired');
    const late = await recordEvent(t.engine, store, certificateDelivery(s, undefined, t));
    expect(late).toMatchObject({ moved: false, record: ended.record, refused: { code: 'STATE_INVALID' } });
  });
});

describe('prepareStored and submitStoredHash (a front end that shows Prepare and Submit as steps of their own)', () => {
  it('prepare: claimed, checked, prepared and the save point saved, nothing sent; submit: the call counted in the store before it leaves, then hash_submitted saved', async () => {
    const t = setup();
    const s = await started(t);
    const store = await stored(s);
    const delivery = certificateDelivery(s, undefined, t);
    const p = await prepareStored(t.engine, store, delivery);
    expect(p).toMatchObject({ action: 'continueCertificate', prepared: true });
    expect(p.lost).toBeUndefined();
    expectStop(p.record!, 'atSavePoint');
    expect(store.get(s.state.signRef)).toEqual(p.record);
    expect(t.client.hashCalls).toEqual([]);
    const countedAtCall: (number | undefined)[] = [];
    const submit = t.client.submitDocumentHash.bind(t.client);
    t.client.submitDocumentHash = async (...args) => {
      countedAtCall.push(store.get(s.state.signRef)!.submitting?.attempts);
      return submit(...args);
    };
    const h = await submitStoredHash(t.engine, store, s.state.signRef);
    expect(h.action).toBe('submitHash');
    expectStop(h.record!, 'hashSubmitted');
    expect(store.get(s.state.signRef)).toEqual(h.record);
    // the first call: not a resubmission (a refusal would be the service's verdict), counted before it left
    expect(t.client.hashCalls.map((c) => [c.input.documentHash, c.resubmission])).toEqual([[p.record!.submitting!.documentHash, false]]);
    expect(countedAtCall).toEqual([1]);
    // again (a second run, the same item): nothing left to send
    expect(await submitStoredHash(t.engine, store, s.state.signRef)).toEqual({ action: 'none', record: h.record });
    expect(t.client.hashCalls).toHaveLength(1);
  });

  it('a claim the webhook saved is continued; the same event again (a redelivery) changes nothing: prepared false, the stored record', async () => {
    const t = setup();
    const c = await claimed(t);
    const store = await stored(c);
    const delivery = { event: { ...certificateDelivery(c, undefined, t).event, nonce: c.state.nonce! }, notificationToken: c.state.clientNotificationToken };
    const p = await prepareStored(t.engine, store, delivery);
    expect(p.prepared).toBe(true);
    expectStop(p.record!, 'atSavePoint');
    const again = await prepareStored(t.engine, store, delivery);
    expect(again).toEqual({ action: 'none', record: p.record, prepared: false });
    expect(t.client.hashCalls).toEqual([]);
  });

  it('a revoked certificate ends the session, saved, with no hash; submit then sends nothing', async () => {
    const t = setup();
    const s = await started(t);
    const store = await stored(s);
    const p = await prepareStored(t.engine, store, certificateDelivery(s, pki.users.revoked, t));
    expect(p.prepared).toBe(false);
    expectStop(p.record!, 'failed');
    expect(p.record!.error!.code).toBe('OCSP_REVOKED');
    expect(store.get(s.state.signRef)).toEqual(p.record);
    expect(await submitStoredHash(t.engine, store, s.state.signRef)).toEqual({ action: 'none', record: p.record });
    expect(t.client.hashCalls).toEqual([]);
  });

  it('a first call the service refuses ends the session with its reason; one it cannot take now keeps the save point with retryAt', async () => {
    const t = setup();
    t.client.answer(refuse.rejected('hash refused'), refuse.unavailable());
    for (const phase of ['failed', 'atSavePoint'] as const) {
      const s = await started(t);
      const store = await stored(s);
      await prepareStored(t.engine, store, certificateDelivery(s, undefined, t));
      const h = await submitStoredHash(t.engine, store, s.state.signRef);
      expectStop(h.record!, phase);
      expect(store.get(s.state.signRef)).toEqual(h.record);
      if (phase === 'atSavePoint') expect(h.record!.lastSubmitFailure).toMatchObject({ attempts: 1, retryAt: expect.any(Number) });
    }
  });

  it('two runs submitting at once: the first to count its call sends, the other is lost and sends nothing', async () => {
    const t = setup();
    const s = await atSavePoint(t);
    const store = await stored(s);
    const [a, b] = await Promise.all([submitStoredHash(t.engine, store, s.state.signRef), submitStoredHash(t.engine, store, s.state.signRef)]);
    expect([a.lost === true, b.lost === true].sort()).toEqual([false, true]);
    expect(t.client.hashCalls).toHaveLength(1);
    expectStop(store.get(s.state.signRef)!, 'hashSubmitted');
  });

  it('no such session → none; no PDF in the store → documentMissing, nothing done', async () => {
    const t = setup();
    const s = await started(t);
    const store = new MemorySessionStore();
    expect(await prepareStored(t.engine, store, certificateDelivery(s, undefined, t))).toEqual({ action: 'none', prepared: false });
    expect(await submitStoredHash(t.engine, store, s.state.signRef)).toEqual({ action: 'none' });
    store.put(s, undefined);
    expect(await prepareStored(t.engine, store, certificateDelivery(s, undefined, t))).toEqual({ action: 'continueCertificate', record: s, documentMissing: true, prepared: false });
    expect(store.get(s.state.signRef)).toEqual(s);
  });
});
