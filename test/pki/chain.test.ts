/**
 * Path building over natively read certificates against the pkijs-based walk it replaced, on the same inputs: every
 * certificate of an OpenSSL-made CA and of the sandbox as the leaf, with the right anchors, other anchors, none,
 * with and without the intermediates, downloading issuers via AIA or not. The same path and the same problem (code
 * and message) every time.
 */
import { createTestPki, type TestPki } from '../../sandbox/pki';
import { buildChainPartial, buildChainPartialWithSchema, type BuildChainOptions } from '../../src/pki/chain';
import { startOpensslCa, type OpensslCa } from './openssl-ca';

let ca: OpensslCa;
let pki: TestPki;
beforeAll(async () => {
  ca = await startOpensslCa();
  pki = await createTestPki({ baseUrl: 'http://127.0.0.1:9' });
});
afterAll(async () => { await ca?.close(); });

async function outcome(p: Promise<{ chain: Buffer[]; problem?: { code: string; error: { code: string; message: string } } }>): Promise<unknown> {
  try {
    const r = await p;
    return { chain: r.chain.map((c) => c.toString('base64')), problem: r.problem && { code: r.problem.code, error: r.problem.error.code, message: r.problem.error.message } };
  } catch (e) {
    return { thrown: (e as { code?: string }).code ?? String(e), message: (e as Error).message };
  }
}

describe('buildChainPartial (native) gives the pkijs walk\'s path and problem', () => {
  it('for every certificate of both CAs, under every set of options', async () => {
    const leaves: { name: string; der: Buffer | string }[] = [
      ...Object.entries(ca.users).map(([k, u]) => ({ name: `openssl ${k}`, der: u.der })),
      ...(['intermediate', 'ocspSigner', 'tsa', 'root'] as const).map((k) => ({ name: `openssl ${k}`, der: ca[k].der })),
      ...Object.entries(pki.users).map(([k, u]) => ({ name: `sandbox ${k}`, der: u!.certDer })),
      ...(['intermediate', 'tsa', 'root'] as const).map((k) => ({ name: `sandbox ${k}`, der: pki[k].certDer })),
      { name: 'PEM', der: ca.users.good.pem },
      { name: 'garbage', der: Buffer.from('not a certificate') },
      { name: 'padded', der: Buffer.concat([ca.users.good.der, Buffer.from([0])]) },
    ];
    const options: { name: string; o: BuildChainOptions }[] = [
      { name: 'openssl anchors + intermediates', o: { trustedRoots: [ca.root.der], intermediates: [ca.intermediate.der], fetchIssuers: false } },
      { name: 'openssl anchors, AIA', o: { trustedRoots: [ca.root.der] } },
      { name: 'openssl anchors, offline', o: { trustedRoots: [ca.root.der], fetchIssuers: false } },
      { name: 'sandbox anchors + intermediates', o: { trustedRoots: [pki.root.certDer], intermediates: [pki.intermediate.certDer], fetchIssuers: false } },
      { name: 'no anchors, both intermediates', o: { intermediates: [ca.intermediate.der, pki.intermediate.certDer], fetchIssuers: false } },
      { name: 'no options, offline', o: { fetchIssuers: false } },
    ];
    for (const l of leaves) {
      for (const { name, o } of options) {
        const now = await outcome(buildChainPartial(l.der as Buffer, o));
        const before = await outcome(buildChainPartialWithSchema(l.der as Buffer, o));
        expect({ leaf: l.name, options: name, result: now }).toEqual({ leaf: l.name, options: name, result: before });
      }
    }
  });
});
