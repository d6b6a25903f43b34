/**
 * The one rule for "did the session already take this event" (src/session/event-standing.ts), on the stored records
 * of every phase (test/fixtures/session-records/v1), and the engine following it: an event `taken` is a duplicate,
 * one `midStep` continues its step, a `new` one is applied. The front door's use (a copy is answered 200 and nothing
 * runs) is in front-door.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SigningEvent } from '../../src/sign';
import { eventStanding, withPhase, type SessionRecord } from '../../src/session';
import { certificateDelivery, hashSubmitted, loadFakes, pdf, setup, signatureDelivery, signed, started } from './engine-fakes';

beforeAll(loadFakes);

function fixture(name: string): SessionRecord {
  return withPhase(JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'session-records', 'v1', `${name}.json`), 'utf8')) as SessionRecord);
}

const certificate = (r: SessionRecord, nonce = r.state.nonce ?? 'another nonce'): SigningEvent => ({ type: 'certificate', signRef: r.state.signRef, nonce, certificate: {} as never, issuedAt: 0 });
const signature = (r: SessionRecord, o: { signature?: string; documentHash?: string } = {}): SigningEvent => ({
  type: 'signature', signRef: r.state.signRef, signature: o.signature ?? r.state.signature ?? '00', documentHash: o.documentHash ?? r.state.documentHash ?? '00', issuedAt: 0,
});
const error = (r: SessionRecord, o: { correlationId?: string; errorCode?: string } = {}): SigningEvent => ({
  type: 'error', signRef: r.state.signRef, correlationId: o.correlationId ?? r.state.error?.correlationId ?? 'c-1', errorCode: o.errorCode ?? r.state.error?.code ?? 'USER_CANCELLED', message: '', issuedAt: 0,
} as SigningEvent);

describe('eventStanding', () => {
  it('a certificate: new until its nonce is in the record; midStep while claimed or at the save point; taken after', () => {
    expect(eventStanding(fixture('waitingForScan'), certificate(fixture('waitingForScan')))).toBe('new');
    expect(eventStanding(fixture('certificateClaimed'), certificate(fixture('certificateClaimed')))).toBe('midStep');
    expect(eventStanding(fixture('atSavePoint'), certificate(fixture('atSavePoint')))).toBe('midStep');
    for (const phase of ['hashSubmitted', 'signed', 'completed']) expect({ phase, standing: eventStanding(fixture(phase), certificate(fixture(phase))) }).toEqual({ phase, standing: 'taken' });
    // another scan's nonce is not this one
    expect(eventStanding(fixture('hashSubmitted'), certificate(fixture('hashSubmitted'), 'another nonce'))).toBe('new');
  });

  it('a signature: taken when the record holds that signature over that hash', () => {
    const s = fixture('signed');
    expect(eventStanding(s, signature(s))).toBe('taken');
    expect(eventStanding(fixture('completed'), signature(fixture('completed')))).toBe('taken');
    expect(eventStanding(s, signature(s, { signature: 'ff' }))).toBe('new');
    expect(eventStanding(s, signature(s, { documentHash: 'ff'.repeat(32) }))).toBe('new');
    expect(eventStanding(fixture('hashSubmitted'), signature(fixture('signed')))).toBe('new');
  });

  it('an error event: taken when the session failed with that correlation id and code; not by a failure of our own', () => {
    const f = fixture('failed');
    expect(eventStanding(f, error(f))).toBe('taken');
    expect(eventStanding(f, error(f, { correlationId: 'another' }))).toBe('new');
    expect(eventStanding(f, error(f, { errorCode: 'ANOTHER_CODE' }))).toBe('new');
    const ours = { ...f, state: { ...f.state, error: { code: 'OCSP_REVOKED', message: 'revoked', correlationId: '' } } };
    expect(eventStanding(ours, error(ours, { correlationId: '', errorCode: 'USER_CANCELLED' }))).toBe('new');
    expect(eventStanding(fixture('hashSubmitted'), error(fixture('hashSubmitted')))).toBe('new');
  });
});

describe('the engine follows it', () => {
  it('a taken event applied again is a duplicate that changes nothing; a new one moves the record', async () => {
    const t = setup();
    const h = await hashSubmitted(t);
    const cert = certificateDelivery(h, undefined, t);
    expect(eventStanding(h, { ...cert.event, nonce: h.state.nonce! } as SigningEvent)).toBe('taken');
    expect(await t.engine.applyDelivery(h, { ...cert, event: { ...cert.event, nonce: h.state.nonce! } as SigningEvent }, pdf)).toEqual({ record: h, duplicate: true });
    const s = await signed(t);
    const sig = signatureDelivery(s);
    const copy = { ...sig, event: { ...sig.event, signature: s.state.signature!, documentHash: s.state.documentHash! } as SigningEvent };
    expect(eventStanding(s, copy.event)).toBe('taken');
    expect(await t.engine.applyDelivery(s, copy, pdf)).toEqual({ record: s, duplicate: true });
    const w = await started(t);
    const fresh = certificateDelivery(w, undefined, t);
    expect(eventStanding(w, fresh.event)).toBe('new');
    expect((await t.engine.recordDelivery(w, fresh)).record.phase).toBe('certificateClaimed');
  });
});
