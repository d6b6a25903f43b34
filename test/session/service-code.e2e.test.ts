/**
 * The signing service's own error code kept beside ours in the record, over real HTTP to the sandbox: a temporary
 * failure of the hash call (`lastSubmitFailure.serviceCode`) and a refusal for good (`error.serviceCode`, what
 * `sessionFailure` and every front end's output read).
 */
import { sessionFailure } from '../../src/session';
import { fixture } from '../fixtures/pdfs';
import { startSessionHarness, until, type SessionHarness } from './harness';

let h: SessionHarness;
beforeAll(async () => { h = await startSessionHarness(); });
afterAll(async () => { await h?.close(); });

test('a hash call the service cannot take just now keeps its code in lastSubmitFailure', async () => {
  const s = await h.runner.start(await fixture('classic'), { documentName: 'Busy.pdf', level: 'B-B' });
  h.sandbox.sign.faults.serviceError(2, 503); // the first submission and the client's own retry
  await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
  await until(() => h.steps.some((x) => x.signRef === s.signRef && x.step.step === 'submitDeferred'), 'the deferred hash');
  const kept = await h.store.get(s.signRef);
  expect(kept?.lastSubmitFailure).toMatchObject({ code: 'SIGN_SERVICE_ERROR', status: 503, serviceCode: 'SERVER_SIDE_ERROR' });
}, 30_000);

test('a hash the service refuses for good: our code and the service\'s in the ended record', async () => {
  const s = await h.runner.start(await fixture('classic'), { documentName: 'Refused.pdf', level: 'B-B' });
  h.sandbox.sign.faults.refuseHash(1, 'doc_name not valid (sandbox fault)');
  await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
  const out = await h.runner.outcome(s.signRef);
  expect(sessionFailure(out.record)).toMatchObject({ code: 'SIGN_REQUEST_REJECTED', serviceCode: 'ARGUMENTS_NOT_VALID' });
}, 30_000);
