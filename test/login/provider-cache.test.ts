/**
 * Caches that suit workflow engines, over real HTTP against the sandbox providers on 127.0.0.1:
 * discovery and key sets shared per provider by every client whatever `fetch` it passes, a public refresh, key-set
 * refetches bounded under a flood of unknown kids WITHOUT a blackout after a rotation, and one error code for one
 * provider fault whatever the cache state.
 */
import { SingpassFlowsError } from '../../src/errors';
import type { Fetch } from '../../src/http';
import { generateKeyPairSync } from 'node:crypto';
import { ProviderCache } from '../../src/login';
import { ProviderKeySet } from '../../src/login/provider-keys';
import { authorize, corppassClient, singpassClient, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => { h = await startHarness(); });
afterAll(async () => { await h.close(); });
afterEach(() => { for (const p of [h.corppass, h.singpass]) { p.reset(); p.retireOldKeys(); } });

/** A fetch of its own per "workflow execution", counting the URLs it was asked for. */
function countingFetch(): Fetch & { urls: string[] } {
  const urls: string[] = [];
  const f = (async (url: string, init?: RequestInit) => { urls.push(new URL(url).pathname); return fetch(url, init); }) as Fetch & { urls: string[] };
  f.urls = urls;
  return f;
}

const jwksCalls = (p: { requests(): Array<{ endpoint: string }> }) => p.requests().filter((r) => r.endpoint === 'jwks').length;
const discoveryCalls = (p: { requests(): Array<{ endpoint: string }> }) => p.requests().filter((r) => r.endpoint === 'discovery').length;

async function corppassLogin(options: Parameters<typeof corppassClient>[1]) {
  const cp = corppassClient(h, options);
  const { url, transaction } = await cp.startLogin();
  return cp.completeLogin({ transaction, callback: await authorize(url) });
}

async function rejection(p: Promise<unknown>): Promise<SingpassFlowsError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  if (!(e instanceof SingpassFlowsError)) throw new Error(`expected a SingpassFlowsError, got ${e === undefined ? 'success' : String(e)}`);
  return e;
}

describe('sharing', () => {
  it('clients built per execution with their own fetch share the default cache: discovery and keys are fetched once', async () => {
    const fetches = [countingFetch(), countingFetch(), countingFetch()];
    const d0 = discoveryCalls(h.corppass);
    const j0 = jwksCalls(h.corppass);
    // providerCache: undefined → the process-wide default, as an n8n / Node-RED node gets it.
    for (const f of fetches) await corppassLogin({ fetch: f, providerCache: undefined });
    expect(discoveryCalls(h.corppass) - d0).toBe(1);
    expect(jwksCalls(h.corppass) - j0).toBe(1);
    // Each execution's own fetch did that execution's requests; the later ones only the token call.
    expect(fetches[0].urls).toEqual(['/corppass/.well-known/openid-configuration', '/corppass/mga/sps/oauth/oauth20/token', '/corppass/.well-known/keys']);
    expect(fetches[1].urls).toEqual(['/corppass/mga/sps/oauth/oauth20/token']);
    expect(fetches[2].urls).toEqual(['/corppass/mga/sps/oauth/oauth20/token']);
  });

  it('client.refresh() refetches discovery and keys now; the next login needs no key-set fetch after a rotation', async () => {
    const cache = new ProviderCache();
    await corppassLogin({ providerCache: cache });
    const oldKid = h.corppass.currentKid();
    await h.corppass.rotateKeys();
    h.corppass.retireOldKeys();
    const d0 = discoveryCalls(h.corppass);
    const j0 = jwksCalls(h.corppass);
    const md = await corppassClient(h, { providerCache: cache }).refresh();
    expect(md.issuer).toBe(h.corppass.issuer);
    expect([discoveryCalls(h.corppass) - d0, jwksCalls(h.corppass) - j0]).toEqual([1, 1]);
    await corppassLogin({ providerCache: cache });
    expect(jwksCalls(h.corppass) - j0).toBe(1);
    expect(h.corppass.currentKid()).not.toBe(oldKid);
  });

  it('a failed refresh keeps the cached copies and reports the fault', async () => {
    const cache = new ProviderCache();
    await corppassLogin({ providerCache: cache });
    h.corppass.misbehave({ jwks: 'status500' });
    expect((await rejection(corppassClient(h, { providerCache: cache }).refresh())).code).toBe('KEY_SET_FETCH_FAILED');
    await expect(corppassLogin({ providerCache: cache })).resolves.toMatchObject({ subject: expect.any(Object) });
  });
});

describe('key rotation and unknown kids', () => {
  const SPACING_MS = 250;

  it('a flood of made-up kids costs at most one key-set fetch per spacing interval', async () => {
    const cache = new ProviderCache({ refetchSpacingMs: SPACING_MS });
    await corppassLogin({ providerCache: cache }); // warm
    const jwksUri = (await corppassClient(h, { providerCache: cache }).metadata()).jwksUri;
    const keys = cache.keySet(jwksUri);
    const j0 = jwksCalls(h.corppass);
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 60 }, async (_, i) => {
      await new Promise((r) => setTimeout(r, i * 15)); // spread over ~0.9 s
      return Promise.resolve(keys.getKey({ alg: 'ES256', kid: `made-up-${i}` })).then(() => 'found', (e: SingpassFlowsError) => e.code);
    }));
    const elapsed = Date.now() - started;
    expect(new Set(results)).toEqual(new Set(['KEY_NOT_FOUND']));
    const fetched = jwksCalls(h.corppass) - j0;
    expect(fetched).toBeGreaterThanOrEqual(1);
    // One immediately, then at most one per spacing for the rest of the flood (bound computed from the measured time).
    expect(fetched).toBeLessThanOrEqual(2 + Math.ceil(elapsed / SPACING_MS));
    // A kid already missing from a set fetched after it was asked for is not fetched again within the cooldown.
    await expect(keys.getKey({ alg: 'ES256', kid: 'after-the-flood' })).rejects.toMatchObject({ code: 'KEY_NOT_FOUND' });
    const j1 = jwksCalls(h.corppass);
    await expect(keys.getKey({ alg: 'ES256', kid: 'after-the-flood' })).rejects.toMatchObject({ code: 'KEY_NOT_FOUND' });
    expect(jwksCalls(h.corppass)).toBe(j1);
  });

  it('no blackout: a rotation right after a refetch spent on an unknown kid still logs in (was: every login failed for 30 s)', async () => {
    const cache = new ProviderCache({ refetchSpacingMs: SPACING_MS });
    await corppassLogin({ providerCache: cache });
    const keys = cache.keySet((await corppassClient(h, { providerCache: cache }).metadata()).jwksUri);
    await expect(keys.getKey({ alg: 'ES256', kid: 'bogus-before-rotation' })).rejects.toMatchObject({ code: 'KEY_NOT_FOUND' });
    await h.corppass.rotateKeys();
    const j0 = jwksCalls(h.corppass);
    await expect(corppassLogin({ providerCache: cache })).resolves.toMatchObject({ subject: expect.any(Object) });
    expect(jwksCalls(h.corppass) - j0).toBe(1);
  });

  it('no blackout during a flood: a rotated key is found while made-up kids keep arriving', async () => {
    const cache = new ProviderCache({ refetchSpacingMs: SPACING_MS });
    await singpassClient(h, { providerCache: cache }).metadata();
    const sp = singpassClient(h, { providerCache: cache });
    const first = await sp.startLogin({ scope: 'openid' });
    await sp.completeLogin({ transaction: first.transaction, callback: await authorize(first.url) }); // warm
    const keys = cache.keySet((await sp.metadata()).jwksUri);
    let flooding = true;
    const flood = (async () => {
      for (let i = 0; flooding; i++) {
        await Promise.resolve(keys.getKey({ alg: 'ES256', kid: `flood-${i}` })).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    try {
      await new Promise((r) => setTimeout(r, 100));
      await h.singpass.rotateKeys();
      const { url, transaction } = await sp.startLogin({ scope: 'openid' });
      await expect(sp.completeLogin({ transaction, callback: await authorize(url) })).resolves.toMatchObject({ sub: expect.any(String) });
    } finally {
      flooding = false;
      await flood;
    }
  });
});

describe('ProviderKeySet, with a scripted key-set server (unit)', () => {
  it('a fetch already under way when the provider rotated does not hide the new kid: the lookup takes its own slot', async () => {
    const jwk = (kid: string) => ({ ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'ES256' });
    const [k1, k2] = [jwk('k1'), jwk('k2')];
    let published = [k1];
    let fetches = 0;
    const scripted: Fetch = async () => {
      fetches++;
      const body = JSON.stringify({ keys: published }); // composed when the request arrives…
      if (fetches === 2) await new Promise((r) => setTimeout(r, 150)); // …and the reload below delivers it late
      return new Response(body, { status: 200 });
    };
    const set = new ProviderKeySet('https://keys.example/jwks', { refetchSpacingMs: 50 });
    const io = { fetch: scripted };
    await set.getKey({ alg: 'ES256', kid: 'k1' }, io);
    const slowReload = set.reload(io); // fetch 2: answers with k1 only
    await new Promise((r) => setTimeout(r, 20));
    published = [k1, k2]; // the provider rotates while that answer is on its way
    await expect(set.getKey({ alg: 'ES256', kid: 'k2' }, io)).resolves.toBeDefined(); // fetch 3, after fetch 2
    await slowReload;
    expect(fetches).toBe(3);
  });
});

describe('one fault, one code, whatever the cache state', () => {
  it.each([
    ['status500', 'KEY_SET_FETCH_FAILED'],
    ['notJson', 'KEY_SET_INVALID'],
    ['privateKey', 'KEY_SET_INVALID'],
  ] as const)('key set answering %s while the ID token needs a fetch: %s with a cold and with a warm cache', async (fault, code) => {
    // Cold: nothing cached, the first load meets the broken answer.
    h.corppass.misbehave({ jwks: fault });
    const cold = await rejection(corppassLogin({ providerCache: new ProviderCache() }));
    h.corppass.reset();
    // Warm: a good set is cached; the provider rotates, and the refetch the new kid needs meets the same answer.
    const warmCache = new ProviderCache();
    await corppassLogin({ providerCache: warmCache });
    await h.corppass.rotateKeys();
    h.corppass.misbehave({ jwks: fault });
    const warm = await rejection(corppassLogin({ providerCache: warmCache }));
    expect([cold.code, warm.code]).toEqual([code, code]);
  });
});
