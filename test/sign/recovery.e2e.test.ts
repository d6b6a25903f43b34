import type { Fetch } from '../../src/http';
import { generateChallengeCode, generateNotificationToken, type CertificateEvent } from '../../src/sign';
import { startHarness, type Harness } from './harness';

/**
 * DSAP-side trouble answered with 503 so the (sandbox) service retries — its real retry spacing (~1 s here, 2 s in
 * the spec's sibling API) is what lets a just-rotated key or a briefly unreachable key set recover.
 */
let h: Harness;
let failKeySetFetches = 0;
const keySetFetch: Fetch = (url, init) => (failKeySetFetches-- > 0 ? Promise.reject(new TypeError('fetch failed')) : fetch(url, init));
/** The verifier's view of time, shifted by the test (JWT checks here tolerate 120 s of skew; the test shifts by 31 s). */
let skewMs = 0;
const clock = () => Date.now() + skewMs;
beforeAll(async () => { h = await startHarness({ sandbox: { webhookRetryDelayMs: 1100 }, verifier: { fetch: keySetFetch, clock, clockToleranceSeconds: 120 } }); });
afterAll(async () => { await h?.close(); });

async function create() {
  const token = generateNotificationToken();
  const s = await h.client.createSession({ clientNotificationToken: token, tenantId: 'recovery' });
  h.tokens.set(s.signRef, token);
  return s;
}

it('key set unreachable at the first webhook: 503, the service retries, accepted on attempt 2', async () => {
  failKeySetFetches = 1;
  const s = await create();
  expect(await h.phone.scan(s.signRef)).toBe('acknowledged');
  const attempts = h.sign.deliveries().filter((d) => d.signRef === s.signRef);
  expect(attempts.map((d) => [d.attempt, d.status])).toEqual([[1, 503], [2, 200]]);
  const refused = h.received.filter((c) => c.result.response.status === 503);
  expect(refused.map((c) => c.result.error?.code)).toEqual(['HTTP_NETWORK']);
});

it('key rotated within the refetch cooldown: unknown kid → 503, and the service\'s retry after the cooldown is accepted', async () => {
  const s = await create();
  await h.phone.scan(s.signRef);
  const [c] = await h.waitFor(1, s.signRef);
  await h.verifier.keySet.refreshIfAllowed(); // an on-demand refetch just now starts the 30 s cooldown…
  h.sign.rotateKeys(); // …and right after it the service rotates
  await h.client.submitDocumentHash(s.signRef, { documentName: 'a.pdf', documentHash: 'ab'.repeat(32), challengeCode: generateChallengeCode(), nonce: (c.result.event as CertificateEvent).nonce, domainName: 'x.sg' });
  const fetches = h.verifier.keySet.fetchCount;
  const approved = h.phone.approve(s.signRef);
  const until = Date.now() + 10_000;
  while (!h.received.some((r) => r.result.response.status === 503 && r.result.error?.code === 'WEBHOOK_TOKEN_INVALID')) {
    if (Date.now() > until) throw new Error('the first signature delivery was not refused with 503: ' + JSON.stringify(h.received.map((r) => [r.result.response.status, r.result.error?.code, r.result.event?.type])));
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(h.verifier.keySet.fetchCount).toBe(fetches); // the cooldown held
  skewMs = 31_000; // before the service's retry (~1 s later) the cooldown has passed, to the key set
  expect(await approved).toBe('acknowledged');
  const sigAttempts = h.sign.deliveries().filter((d) => d.signRef === s.signRef && d.requestType === 'signed_doc_hash');
  expect(sigAttempts.map((d) => d.status)).toEqual([503, 200]);
  const calls = await h.waitFor(2, s.signRef);
  expect(calls[1].result.event?.type).toBe('signature');
  expect(h.verifier.keySet.fetchCount).toBe(fetches + 1);
});
