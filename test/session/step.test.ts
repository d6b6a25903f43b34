/**
 * The one entry point of a stored session (src/session/step.ts): a front end names what happened (an event, a due
 * step, its storage's answer) and the transitions table and `nextStep` choose what runs — over a MemorySessionStore
 * and the engine's fakes (engine-fakes.ts).
 */
import { MemorySessionStore, step, type SessionRecord } from '../../src/session';
import {
  atSavePoint, certificateDelivery, expectStop, loadFakes, pki, SESSION_SECONDS, storedSession, setup, signatureDelivery, signaturesIn, started, hashSubmitted, signed,
} from './engine-fakes';

beforeAll(loadFakes);

const stored = async (record: SessionRecord): Promise<MemorySessionStore> => storedSession(record);

describe('step: an event', () => {
  it('a certificate is only claimed (no call); `through` runs what the same event leads to in the table: check, prepare, the hash call', async () => {
    const t = setup();
    const s = await started(t);
    const store = await stored(s);
    const delivery = certificateDelivery(s, undefined, t);
    const claimed = await step(store, s.state.signRef, { on: 'event', delivery }, { engine: t.engine });
    expect(claimed).toMatchObject({ on: 'event', action: 'none', moved: true, signingEnded: false });
    expectStop(claimed.record!, 'certificateClaimed');
    expect(t.client.hashCalls).toEqual([]);

    // the same event again, through: the claim is there already; the table's certificate rows continue it
    const through = await step(store, s.state.signRef, { on: 'event', delivery, through: true }, { engine: t.engine });
    expect(through).toMatchObject({ action: 'continueCertificate', moved: true, signingEnded: false });
    expectStop(through.record!, 'hashSubmitted');
    expect(t.client.hashCalls).toHaveLength(1);
  });

  it('a signature, through: applied and nothing more (finishing is its own trigger, not the signature\'s)', async () => {
    const t = setup();
    const h = await hashSubmitted(t);
    const store = await stored(h);
    const r = await step(store, h.state.signRef, { on: 'event', delivery: signatureDelivery(h), through: true }, { engine: t.engine });
    expect(r).toMatchObject({ action: 'none', moved: true, signingEnded: false });
    expectStop(r.record!, 'signed');
    expect(store.getSignedDocument(h.state.signRef)).toBeUndefined();
  });

  it('an event the ended session does not take: refused, the record untouched', async () => {
    const t = setup();
    const s = await started(t);
    const store = await stored(s);
    t.clock.advance((SESSION_SECONDS + 121) * 1000);
    const expired = await step(store, s.state.signRef, { on: 'due', now: t.clock.now }, { engine: t.engine });
    expect(expired).toMatchObject({ action: 'expire', moved: true, signingEnded: true });
    const late = await step(store, s.state.signRef, { on: 'event', delivery: certificateDelivery(s, undefined, t), through: true }, { engine: t.engine });
    expect(late).toMatchObject({ moved: false, refused: { code: 'STATE_INVALID' } });
    expect(store.get(s.state.signRef)).toEqual(expired.record);
  });
});

describe('step: due and named steps', () => {
  it('due: the step the phase calls for when its time has come; a named step other than the phase\'s: nothing', async () => {
    const t = setup();
    const sig = await signed(t);
    const store = await stored(sig);
    // the record calls for finish: a timer that planned a hash resend, or an early expiry, finds nothing to do
    expect(await step(store, sig.state.signRef, { on: 'submitHash' }, { engine: t.engine })).toMatchObject({ action: 'none', moved: false });
    expect(await step(store, sig.state.signRef, { on: 'expire' }, { engine: t.engine })).toMatchObject({ action: 'none', moved: false });
    expect(await step(store, sig.state.signRef, { on: 'due', now: t.clock.now, idleMs: 45_000 }, { engine: t.engine })).toMatchObject({ action: 'none', moved: false });
    const done = await step(store, sig.state.signRef, { on: 'due', now: t.clock.now }, { engine: t.engine });
    expect(done).toMatchObject({ on: 'due', action: 'finish', moved: true, signingEnded: true, handOver: { attempt: 1 } });
    expectStop(done.record!, 'handingOver');
    expect((await signaturesIn(done.handOver!.pdf, t)).signatures).toHaveLength(1);
  });

  it('prepare then sendHash: the save point saved with nothing sent, then the saved hash sent once', async () => {
    const t = setup();
    const s = await started(t);
    const store = await stored(s);
    const prepared = await step(store, s.state.signRef, { on: 'prepare', delivery: certificateDelivery(s, undefined, t) }, { engine: t.engine });
    expect(prepared).toMatchObject({ on: 'prepare', prepared: true, moved: true });
    expectStop(prepared.record!, 'atSavePoint');
    expect(t.client.hashCalls).toEqual([]);
    const sent = await step(store, s.state.signRef, { on: 'sendHash' }, { engine: t.engine });
    expect(sent).toMatchObject({ action: 'submitHash', moved: true });
    expectStop(sent.record!, 'hashSubmitted');
    expect(await step(store, s.state.signRef, { on: 'sendHash' }, { engine: t.engine })).toMatchObject({ action: 'none', moved: false });
    expect(t.client.hashCalls).toHaveLength(1);
  });

  it('a step that needs the engine, without one: a programming error, nothing touched', async () => {
    const t = setup();
    const s = await atSavePoint(t);
    const store = await stored(s);
    await expect(step(store, s.state.signRef, { on: 'due' })).rejects.toThrow(/needs the signing engine/);
    expect(store.get(s.state.signRef)).toEqual(s);
  });
});

describe('step: the flow\'s word on a hand-over (no engine needed)', () => {
  it('handOverFailed keeps the failure and hands over again later; acknowledge completes; twice is harmless', async () => {
    const t = setup();
    const sig = await signed(t);
    const store = await stored(sig);
    const done = await step(store, sig.state.signRef, { on: 'finish' }, { engine: t.engine });
    expectStop(done.record!, 'handingOver');
    const failed = await step(store, sig.state.signRef, { on: 'handOverFailed', failure: { code: 'SFTP_DOWN', message: 'connection refused' } });
    expect(failed).toMatchObject({ on: 'handOverFailed', moved: true, record: { handOver: { lastFailure: { code: 'SFTP_DOWN' } } } });
    const ack = await step(store, sig.state.signRef, { on: 'acknowledge' });
    expect(ack).toMatchObject({ moved: true, signingEnded: false });
    expectStop(ack.record!, 'completed');
    expect(await step(store, sig.state.signRef, { on: 'acknowledge' })).toMatchObject({ moved: false, record: ack.record });
    expect(await step(store, 'no-such-session', { on: 'acknowledge' })).toEqual({ on: 'acknowledge', action: 'none', moved: false, signingEnded: false });
  });
});

describe('step: signing over', () => {
  it('a refused certificate ends signing: the PDF being signed and the kept deliveries leave the store; a signature does not end it', async () => {
    const t = setup();
    const s = await started(t);
    const store = Object.assign(await stored(s), { forgetDeliveries: jest.fn(async () => undefined) });
    const r = await step(store, s.state.signRef, { on: 'event', delivery: certificateDelivery(s, pki.users.revoked, t), through: true }, { engine: t.engine });
    expect(r).toMatchObject({ action: 'continueCertificate', moved: true, signingEnded: true });
    expectStop(r.record!, 'failed');
    expect(store.getDocument(s.state.signRef)).toBeUndefined();
    expect(store.forgetDeliveries.mock.calls).toEqual([[s.state.signRef]]);
    expect(t.client.hashCalls).toEqual([]);

    const h = await hashSubmitted(t);
    const other = Object.assign(await stored(h), { forgetDeliveries: jest.fn(async () => undefined) });
    await step(other, h.state.signRef, { on: 'event', delivery: signatureDelivery(h) }, { engine: t.engine });
    expect(other.getDocument(h.state.signRef)).toBeDefined(); // finishing still needs it
    expect(other.forgetDeliveries).not.toHaveBeenCalled();
  });

  it('a store failing while it removes them does not undo the step: the record is saved, the clean-up removes the rest later', async () => {
    const t = setup();
    const s = await started(t);
    const store = Object.assign(await stored(s), { forgetDeliveries: jest.fn(async () => { throw new Error('store down'); }) });
    t.clock.advance((SESSION_SECONDS + 121) * 1000);
    const r = await step(store, s.state.signRef, { on: 'expire' }, { engine: t.engine });
    expect(r).toMatchObject({ action: 'expire', moved: true, signingEnded: true });
    expectStop(store.get(s.state.signRef)!, 'expired');
  });
});
