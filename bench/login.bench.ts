/**
 * Login cost with a client built per workflow execution (as n8n / Node-RED nodes do), against the sandbox providers on
 * 127.0.0.1: requests the client sends and wall time per login, with the process-wide shared caches (default) against
 * a baseline of one cache per client (the former behaviour for any client given its own `fetch`). Both run in this
 * process, interleaved; prints a table and asserts nothing. Run: `npx tsc -p tsconfig.json && node dist/bench/login.bench.js`.
 */
import { listen, mount, sendBytes } from '../sandbox/http';
import { createCorppassFapiProvider, createCorppassProvider, createSingpassProvider } from '../sandbox/login';
import { generateClientKeys, loadEncryptionKey, loadSigningKey } from '../src/keys';
import { createCorppassClient, createSingpassClient, keySetResponse, ProviderCache, type CorppassClientOptions } from '../src/login';
import type { Fetch } from '../src/http';

const LOGINS = 40;

async function main(): Promise<void> {
  const keys = await generateClientKeys();
  const signingKey = await loadSigningKey({ key: keys.signing });
  const encryptionKey = await loadEncryptionKey({ key: keys.encryption });
  let handler: Parameters<typeof listen>[0] = () => undefined;
  const server = await listen((req, res, url) => handler(req, res, url));
  const base = server.baseUrl;
  const corppass = createCorppassProvider({ baseUrl: base });
  const singpass = createSingpassProvider({ baseUrl: base });
  const corppassFapi = createCorppassFapiProvider({ baseUrl: base });
  const rp = { prefix: '/rp', handle: (_q: unknown, res: Parameters<typeof sendBytes>[0]) => { const r = keySetResponse([signingKey, encryptionKey]); sendBytes(res, 200, r.body, r.headers['content-type']); } };
  handler = mount([corppass, corppassFapi, singpass, rp]);
  const redirectUri = `${base}/rp/callback`;
  for (const p of [corppass, corppassFapi, singpass]) p.registerClient({ clientId: 'bench', jwksUrl: `${base}/rp/jwks`, redirectUris: [redirectUri] });
  singpass.misbehave({ dpopNonce: 'stable' }); // a server that keeps its DPoP nonce valid

  const authorize = async (url: string): Promise<string> => (await fetch(url, { redirect: 'manual' })).headers.get('location')!;
  let sent = 0;
  const countingFetch: Fetch = (url, init) => { sent++; return fetch(url, init); };
  const common = { clientId: 'bench', signingKey, decryptionKeys: [encryptionKey], redirectUri, allowInsecureLoopback: true, fetch: countingFetch };

  const logins: Record<string, (cache: ProviderCache | undefined) => Promise<unknown>> = {
    'Singpass FAPI (openid uinfin)': async (providerCache) => {
      const sp = createSingpassClient({ ...common, issuer: singpass.issuer, providerCache });
      const { url, transaction } = await sp.startLogin({ scope: 'openid uinfin' });
      return sp.completeLogin({ transaction, callback: await authorize(url) });
    },
    'Corppass (openid authinfo)': async (providerCache) => {
      const cp = createCorppassClient({ ...common, issuer: corppass.issuer, providerCache } as CorppassClientOptions);
      const { url, transaction } = await cp.startLogin({ scope: 'openid authinfo' });
      return cp.completeLogin({ transaction, callback: await authorize(url) });
    },
    'Corppass FAPI (openid authinfo)': async (providerCache) => {
      const cp = createCorppassClient({ ...common, issuer: corppassFapi.issuer, providerCache, profile: 'fapi' });
      const { url, transaction } = await cp.startLogin({ scope: 'openid authinfo' });
      return cp.completeLogin({ transaction, callback: await authorize(url) });
    },
  };

  const rows: string[] = [];
  for (const [name, login] of Object.entries(logins)) {
    await login(undefined); // warm the shared cache and the DPoP nonce once, as a running process has them
    const stats = { shared: { requests: 0, ms: 0 }, perClient: { requests: 0, ms: 0 } };
    for (let i = 0; i < LOGINS; i++) {
      for (const mode of ['shared', 'perClient'] as const) {
        sent = 0;
        const t = process.hrtime.bigint();
        await login(mode === 'shared' ? undefined : new ProviderCache());
        stats[mode].ms += Number(process.hrtime.bigint() - t) / 1e6;
        stats[mode].requests += sent;
      }
    }
    const per = (m: { requests: number; ms: number }) => `${(m.requests / LOGINS).toFixed(1)} req, ${(m.ms / LOGINS).toFixed(1)} ms`;
    rows.push(`${name.padEnd(32)} shared: ${per(stats.shared).padEnd(20)} one cache per client: ${per(stats.perClient).padEnd(20)} time ratio ${(stats.perClient.ms / stats.shared.ms).toFixed(2)}x`);
  }
  console.log(`Login with a client per execution, ${LOGINS} logins each, sandbox on 127.0.0.1 (requests the client sent; the browser's authorize not counted)`);
  for (const r of rows) console.log(r);
  await server.close();
}

main().catch((e) => { console.error(e); process.exit(1); });
