/**
 * DPoP as Singpass requires it: every proof carries `exp` ≤ `iat` + 120 s, and a server's `DPoP-Nonce` is
 * remembered per origin, across client instances, so a server that keeps its nonce valid is challenged once — not
 * on every call or every workflow execution. Real HTTP against the sandbox Singpass FAPI provider.
 */
import { ProviderCache } from '../../src/login';
import { DpopNonces } from '../../src/login/dpop';
import { authorize, endpointsSince, lastSeq, singpassClient, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => { h = await startHarness(); });
afterAll(async () => { await h.close(); });
afterEach(() => { h.singpass.reset(); });

/** One whole login with a NEW client instance (as a workflow engine does per execution) sharing `cache`. */
async function loginOnce(cache: ProviderCache) {
  const sp = singpassClient(h, { providerCache: cache });
  const { url, transaction } = await sp.startLogin({ scope: 'openid uinfin' });
  return sp.completeLogin({ transaction, callback: await authorize(url) });
}

it('every proof (PAR, token, userinfo) carries exp, at most 120 s after iat, and the provider accepts it', async () => {
  const from = lastSeq(h.singpass);
  await loginOnce(new ProviderCache());
  const proofs = h.singpass.requests().filter((r) => r.seq > from && r.dpop).map((r) => ({ endpoint: r.endpoint, ...(r.dpop![0]!.payload as { iat?: unknown; exp?: unknown }) }));
  expect(proofs.map((p) => p.endpoint)).toEqual(['par', 'token', 'userinfo']);
  for (const p of proofs) {
    expect(p.exp).toEqual(expect.any(Number));
    expect((p.exp as number) - (p.iat as number)).toBeGreaterThan(0);
    expect((p.exp as number) - (p.iat as number)).toBeLessThanOrEqual(120);
  }
});

it('a nonce that stays valid costs one challenge per process: later calls and later client instances reuse it', async () => {
  h.singpass.misbehave({ dpopNonce: 'stable' });
  const cache = new ProviderCache();
  await loginOnce(cache); // warms discovery and keys
  const from = lastSeq(h.singpass);
  await loginOnce(cache);
  await loginOnce(cache);
  // Protocol minimum per login: PAR, (browser) authorize, token, userinfo — no use_dpop_nonce round trip.
  expect(endpointsSince(h.singpass, from)).toEqual(['par', 'authorize', 'token', 'userinfo', 'par', 'authorize', 'token', 'userinfo']);
  expect(h.singpass.requests().filter((r) => r.seq > from && r.error === 'use_dpop_nonce')).toHaveLength(0);
});

/** A harness on a new port: an origin whose nonce this process has never seen. */
async function withFreshOrigin(run: (x: Harness) => Promise<void>): Promise<void> {
  const x = await startHarness();
  try {
    await run(x);
  } finally {
    await x.close();
  }
}

async function loginAt(x: Harness) {
  const sp = singpassClient(x, { providerCache: new ProviderCache() });
  const { url, transaction } = await sp.startLogin({ scope: 'openid uinfin' });
  return sp.completeLogin({ transaction, callback: await authorize(url) });
}

it('the nonce learnt from a challenge is sent on the next calls even when the 200 carries none', () => withFreshOrigin(async (x) => {
  x.singpass.misbehave({ dpopNonce: 'stable' });
  await loginAt(x);
  const calls = x.singpass.requests().filter((r) => ['par', 'token', 'userinfo'].includes(r.endpoint)).map((r) => `${r.endpoint}${r.error ? `:${r.error}` : ''}`);
  expect(calls).toEqual(['par:use_dpop_nonce', 'par', 'token', 'userinfo']);
}));

it('a server that rotates its nonce after every response costs exactly one retry per call (items 60–62)', () => withFreshOrigin(async (x) => {
  x.singpass.misbehave({ dpopNonce: 'require' });
  await loginAt(x);
  const calls = x.singpass.requests().filter((r) => ['par', 'token', 'userinfo'].includes(r.endpoint)).map((r) => `${r.endpoint}${r.error ? `:${r.error}` : ''}`);
  expect(calls).toEqual(['par:use_dpop_nonce', 'par', 'token:use_dpop_nonce', 'token', 'userinfo:use_dpop_nonce', 'userinfo']);
}));

describe('DpopNonces', () => {
  it('keys nonces by origin and forgets the least recently used origin beyond its bound', () => {
    const n = new DpopNonces(2);
    n.set('https://a.example/par', 'n1');
    expect(n.get('https://a.example/token')).toBe('n1');
    expect(n.get('https://b.example/par')).toBeUndefined();
    n.set('https://b.example/x', 'n2');
    n.get('https://a.example/'); // a is now the most recently used
    n.set('https://c.example/x', 'n3');
    expect(n.get('https://b.example/x')).toBeUndefined();
    expect(n.get('https://a.example/x')).toBe('n1');
    expect(n.get('https://c.example/x')).toBe('n3');
  });
});
