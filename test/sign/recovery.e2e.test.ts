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
/** The verifier's view of time, shifted by the test (JWT checks tolerate 30 s, the tests shift by 5 s). */
let skewMs = 0;
const clock = () => Date.now() + skewMs;
beforeAll(async () => { h = await startHarness({ sandbox: { webhookRetryDelayMs: 1100 }, verifier: { fetch: keySetFetch, clock } }); });
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

it('key rotated right after the set was loaded: unknown kid → 503 (refetch not yet allowed), accepted on the retry', async () => {
  const s = await create();
  await h.phone.scan(s.signRef);
  const [c] = await h.waitFor(1, s.signRef);
  h.sign.rotateKeys();
  await h.client.submitDocumentHash(s.signRef, { documentName: 'a.pdf', documentHash: 'ab'.repeat(32), challengeCode: generateChallengeCode(), nonce: (c.result.event as CertificateEvent).nonce, domainName: 'x.sg' });
  const fetches = h.verifier.keySet.fetchCount;
  skewMs = -5000; // to the key set, the signature webhook now arrives right after its load: no refetch allowed
  const approved = h.phone.approve(s.signRef);
  const until = Date.now() + 10_000;
  while (!h.received.some((r) => r.result.response.status === 503 && r.result.error?.code === 'WEBHOOK_TOKEN_INVALID')) {
    if (Date.now() > until) throw new Error('the first signature delivery was not refused with 503');
    await new Promise((r) => setTimeout(r, 50));
  }
  skewMs = 0; // the service waits ~1 s before retrying; by then a refetch is allowed
  expect(await approved).toBe('acknowledged');
  const sigAttempts = h.sign.deliveries().filter((d) => d.signRef === s.signRef && d.requestType === 'signed_doc_hash');
  expect(sigAttempts.map((d) => d.status)).toEqual([503, 200]);
  const calls = await h.waitFor(2, s.signRef);
  expect(calls[1].result.event?.type).toBe('signature');
  expect(h.verifier.keySet.fetchCount).toBe(fetches + 1);
});
