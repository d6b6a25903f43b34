/**
 * The optional app link (the DSAP's own app the Singpass app returns the user to) set at start: checked there, kept
 * in the record, and sent with the hash to the sandbox over real HTTP (as `app_launch_url`, wire-names.md).
 */
import { fixture } from '../fixtures/pdfs';
import { startSessionHarness, until, type SessionHarness } from './harness';

let h: SessionHarness;
beforeAll(async () => { h = await startSessionHarness(); });
afterAll(async () => { await h?.close(); });

test('set at start, kept in the record and sent with the hash', async () => {
  const appLink = 'https://app.example.sg/signed?from=singpass';
  const s = await h.runner.start(await fixture('classic'), { documentName: 'App link.pdf', level: 'B-B', appLink });
  expect(s.record.request.appLink).toBe(appLink);
  await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
  await until(() => h.sandbox.sign.session(s.signRef)?.state === 'hash_submitted', 'the hash');
  expect(h.sandbox.sign.session(s.signRef)!.appLaunchUrl).toBe(appLink);
  await h.sandbox.phone.approve(s.signRef);
  expect((await h.runner.outcome(s.signRef)).record.state.status).toBe('completed');
}, 60_000);

test('absent: no app link is sent', async () => {
  const s = await h.runner.start(await fixture('classic'), { documentName: 'No app link.pdf', level: 'B-B' });
  expect(s.record.request).not.toHaveProperty('appLink');
  await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
  await until(() => h.sandbox.sign.session(s.signRef)?.state === 'hash_submitted', 'the hash');
  expect(h.sandbox.sign.session(s.signRef)!.appLaunchUrl).toBeUndefined();
}, 60_000);

test('refused before any session is created when it is not an https link of at most 255 characters', async () => {
  const before = h.sandbox.sign.sessions().length;
  for (const appLink of ['http://app.example.sg/x', 'myapp://signed', `https://app.example.sg/${'x'.repeat(250)}`, 'not a link']) {
    await expect(h.runner.start(await fixture('classic'), { documentName: 'x.pdf', level: 'B-B', appLink }))
      .rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/^appLink: /) });
  }
  expect(h.sandbox.sign.sessions()).toHaveLength(before);
});
