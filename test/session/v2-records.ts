/**
 * Records of the version before the hand-over (test/fixtures/session-records/v2: the phase stored, no hand-over; a
 * `completed` one was handed on by its flow then), held to ONE rule on every durable store — the folder store
 * (file-store.test.ts) and PostgreSQL (pg-store.test.ts) call {@link expectPreviousVersionRecordsContinue} on records
 * each wrote the way that version did:
 * - each fixture loads with the phase its file names (README.md), no hand-over, the revision it had;
 * - the due lists (`listDue`, `claimDue`) list every live one with the step `nextStep` gives it, never an ended one
 *   and never a hand-over; the core driver does nothing to an ended one (a `completed` one is not handed over again);
 * - a `signed` one, and one whose finish was deferred (`lastFinishFailure`), finishes into the hand-over through the
 *   entry point (`step`, trigger `due`), is acknowledged and ends `completed`, then is never due again;
 * - clean-up (`cleanUp`) deletes the ended ones once the retention passed, and nothing else (what becomes of their
 *   signed PDFs is each store's policy: the caller checks it).
 * The fixtures' own signed records were signed under a test PKI that is gone (no OCSP for their certificate), so the
 * ones driven to the hand-over are made now by the engine fakes the fixtures came from (engine-fakes.ts), cut to the
 * fields the fixture of that phase holds (checked: the same fields, no more, no fewer).
 */
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { dueRule, nextStep, step, type DurableSessionStore, type SessionPhase, type SessionRecord } from '../../src/session';
import { expectStop, loadFakes, pdf as fakesPdf, pki, setup, signed } from './engine-fakes';

export const V2_FIXTURES = path.join(__dirname, '../fixtures/session-records/v2');
/** The PDF the fixtures were signed over (document.sha256 in each). */
export const V2_DOCUMENT = readFileSync(path.join(__dirname, '../fixtures/session-records/v1/document.pdf'));

const DAY = 86_400_000;
const ENDED: readonly SessionPhase[] = ['completed', 'failed', 'expired'];

/** A record as the previous version stored it, and the PDF it kept with it (none for an ended one). */
export interface PreviousVersionRecord {
  record: SessionRecord;
  pdf?: Buffer;
}

export interface PreviousVersionHarness {
  /** A store that reads its clock from {@link clock} (its `now` option), opened on what `write` left. */
  store: DurableSessionStore & { listDue(options: { idleSeconds: number }): Promise<{ due: { signRef: string; action: string }[] }> };
  /** The store's clock (UNIX ms), moved by the checks. */
  clock: { now: number };
  /** Store the records exactly as the previous version did (files; rows of its schema), before the store is used. */
  write(records: PreviousVersionRecord[]): Promise<void>;
}

/** Each v2 fixture, with a sign_ref of its own (`v2-<file>`: one session was captured at several phases). */
export function v2Fixtures(): { file: string; signRef: string; phase: SessionPhase; record: SessionRecord }[] {
  return readdirSync(V2_FIXTURES).filter((f) => f.endsWith('.json')).sort().map((file) => {
    const r = JSON.parse(readFileSync(path.join(V2_FIXTURES, file), 'utf8')) as SessionRecord;
    const signRef = `v2-${file.replace(/\.json$/, '')}`;
    return { file, signRef, phase: file.replace(/(-deferred)?\.json$/, '') as SessionPhase, record: { ...r, state: { ...r.state, signRef } } };
  });
}

/** Runs the checks above; resolves with the sign_refs driven to the hand-over (their signed PDFs: the store's policy). */
export async function expectPreviousVersionRecordsContinue(h: PreviousVersionHarness): Promise<{ driven: string[] }> {
  const { store, clock } = h;
  const rule = dueRule(store.policy);
  const fixtures = v2Fixtures();
  expect(fixtures.map((f) => f.phase).sort()).toEqual(['atSavePoint', 'atSavePoint', 'certificateClaimed', 'completed', 'expired', 'failed', 'hashSubmitted', 'signed', 'signed', 'waitingForScan']);
  const fixture = (file: string): SessionRecord => fixtures.find((f) => f.file === file)!.record;

  // Signed records to drive to the hand-over, made now as the fixtures were, stored in that version's shape.
  if (!pki) await loadFakes();
  const t = setup();
  const plain = asPreviousVersion(await signed(t, 'B-LT'), fixture('signed.json'));
  t.net.failNext('tsa', 1);
  const deferredRun = await t.engine.finish(await signed(t, 'B-LT'), fakesPdf);
  expect(deferredRun.deferred).toBe(true);
  const deferred = asPreviousVersion(deferredRun.record, fixture('signed-deferred.json'));

  await h.write([
    ...fixtures.map((f) => ({ record: f.record, ...(ENDED.includes(f.phase) ? {} : { pdf: V2_DOCUMENT }) })),
    { record: plain, pdf: fakesPdf }, { record: deferred, pdf: fakesPdf },
  ]);

  // 1. Each loads as it was: the phase its file names, no hand-over, the same revision.
  for (const f of fixtures) {
    const loaded = await store.get(f.signRef);
    expect({ file: f.file, phase: loaded?.phase, handOver: loaded?.handOver, revision: loaded?.revision }).toEqual({ file: f.file, phase: f.phase, handOver: undefined, revision: f.record.revision });
  }
  const completed = (await store.get('v2-completed'))!;
  expect(nextStep(completed, rule).action).toBe('forget');

  // 2. The signed ones finish into the hand-over through the driver, are acknowledged, and end completed.
  const finishAt = Math.max(plain.state.updatedAt * 1000 + rule.idleMs, deferred.lastFinishFailure!.retryAt);
  expect(await step(store, deferred.state.signRef, { on: 'due', now: deferred.lastFinishFailure!.retryAt - 1 }, { engine: t.engine })).toMatchObject({ action: 'none' }); // not before its retry time
  const claimed = await store.claimDue({ owner: 'v2-records', now: finishAt });
  expect(claimed.due.filter((d) => !d.signRef.startsWith('v2-')).map((d) => [d.signRef, d.action]).sort()).toEqual([[plain.state.signRef, 'finish'], [deferred.state.signRef, 'finish']].sort());
  for (const d of claimed.due) await store.releaseClaim(d.signRef, 'v2-records');
  t.clock.to(finishAt);
  for (const r of [plain, deferred]) {
    const signRef = r.state.signRef;
    const run = await step(store, signRef, { on: 'due', now: finishAt }, { engine: t.engine });
    expect(run.action).toBe('finish');
    expectStop(run.record!, 'handingOver');
    expect(run.handOver).toMatchObject({ signRef, attempt: 1 });
    expect((await store.get(signRef))).toMatchObject({ phase: 'handingOver', revision: run.record!.revision });
    expect((await store.getSignedDocument(signRef))!.equals(run.handOver!.pdf)).toBe(true);
    const ack = await step(store, signRef, { on: 'acknowledge' }, { clock: t.clock.fn });
    expect(ack.moved).toBe(true);
    const done = (await store.get(signRef))!;
    expect(done.phase).toBe('completed');
    expect(done.handOver?.acknowledgedAt).toBe(t.clock.now);
    expect(nextStep(done, rule).action).toBe('forget');
    expect(await step(store, signRef, { on: 'due', now: finishAt + 365 * DAY }, { engine: t.engine })).toMatchObject({ action: 'none' });
  }

  // 3. A year after the fixtures, every live one is due with the step its phase calls for; no ended one, no hand-over;
  //    the driver does nothing to an ended one.
  const t0 = Math.max(...fixtures.map((f) => f.record.state.updatedAt * 1000));
  clock.now = t0 + 365 * DAY;
  const live = Object.fromEntries(fixtures.filter((f) => !ENDED.includes(f.phase)).map((f) => [f.signRef, nextStep(f.record, rule).action]));
  expect(live).toEqual({
    'v2-atSavePoint': 'submitHash', 'v2-atSavePoint-deferred': 'submitHash', 'v2-certificateClaimed': 'continueCertificate', 'v2-hashSubmitted': 'expire',
    'v2-signed': 'finish', 'v2-signed-deferred': 'finish', 'v2-waitingForScan': 'expire',
  });
  const listed = (await store.listDue({ idleSeconds: rule.idleMs / 1000 })).due;
  const claimedLater = (await store.claimDue({ owner: 'v2-records' })).due;
  for (const due of [listed, claimedLater]) {
    const byRef = Object.fromEntries(due.filter((d) => d.signRef.startsWith('v2-')).map((d) => [d.signRef, d.action]));
    expect(byRef).toEqual(live);
    expect(due.map((d) => d.action)).not.toContain('handOver');
  }
  for (const d of claimedLater) await store.releaseClaim(d.signRef, 'v2-records');
  for (const f of fixtures.filter((x) => ENDED.includes(x.phase))) {
    expect({ file: f.file, ...(await step(store, f.signRef, { on: 'due', now: clock.now }, { engine: t.engine })) }).toMatchObject({ file: f.file, action: 'none', record: { revision: f.record.revision } });
  }
  expect(await store.get('v2-completed')).toEqual(completed); // not handed over again, nor changed

  // 4. Clean-up: nothing before the retention passed; then exactly the ended ones.
  clock.now = t0 + DAY;
  expect((await store.cleanUp()).deleted.filter((r) => r.startsWith('v2-'))).toEqual([]);
  clock.now = Math.max(t0, t.clock.now) + 365 * DAY;
  const cleaned = await store.cleanUp();
  expect(cleaned.deleted.sort()).toEqual(['v2-completed', 'v2-expired', 'v2-failed', plain.state.signRef, deferred.state.signRef].sort());
  expect((await store.list()).sort()).toEqual(Object.keys(live).sort());
  return { driven: [plain.state.signRef, deferred.state.signRef] };
}

/**
 * `record` cut to the fields `fixture` (the previous version's record at the same phase) holds, recursively; fails
 * unless it then holds exactly those fields.
 */
function asPreviousVersion(record: SessionRecord, fixture: SessionRecord): SessionRecord {
  const cut = (value: unknown, shape: unknown): unknown => (isObject(value) && isObject(shape)
    ? Object.fromEntries(Object.keys(value).filter((k) => k in shape).map((k) => [k, cut(value[k], shape[k])]))
    : value);
  const old = cut(record, fixture) as SessionRecord;
  expect(fieldsOf(old)).toEqual(fieldsOf(fixture));
  return old;
}

/** Every field path of a record (objects only; arrays and values are leaves). */
function fieldsOf(value: unknown, at = ''): string[] {
  return isObject(value) ? Object.keys(value).flatMap((k) => [`${at}${k}`, ...fieldsOf(value[k], `${at}${k}.`)]).sort() : [];
}

function isObject(x: unknown): x is Record<string, unknown> {
  return !!x && typeof x === 'object' && !Array.isArray(x) && !Buffer.isBuffer(x);
}
