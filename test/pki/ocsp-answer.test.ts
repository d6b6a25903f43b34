/**
 * The native OCSP check (TLV walk + node:crypto) against the schema-driven one (pkijs) it replaced, on the same
 * inputs: every answer of the corpus (an OpenSSL responder and the sandbox's, good / revoked / unknown / invalidity
 * date / CA-signed / signed by a TSA or a look-alike responder, plus tampered, truncated and padded copies), about the
 * right and the wrong certificate, at three times. Same result or the same error, every time.
 */
import * as pkijs from 'pkijs';
import * as asn1js from 'asn1js';
import { createTestPki, OcspResponder, type TestPki } from '../../sandbox/pki';
import { fetchOcspResponse } from '../../src/pki';
import { checkOcspResponse, checkOcspResponseWithSchema, matchingOcspResponses } from '../../src/pki/ocsp';
import { readOcspAnswer } from '../../src/pki/ocsp-answer';
import { certificateView } from '../../src/pki/certificate-view';
import { parseCertificate } from '../../src/pki/x509';
import { isSingpassFlowsError } from '../../src/errors';
import type { Fetch } from '../../src/http';
import { startOpensslCa, type OpensslCa } from './openssl-ca';

let ca: OpensslCa;
let pki: TestPki;
beforeAll(async () => {
  ca = await startOpensslCa();
  pki = await createTestPki({ baseUrl: 'http://127.0.0.1:9' });
});
afterAll(async () => { await ca?.close(); });

/** Asks through `fetchOcspResponse` and keeps the answer's bytes whatever the verdict. */
async function answerFor(cert: Buffer, issuer: Buffer, options: { url?: string; via?: (req: Buffer) => Promise<Buffer> } = {}): Promise<Buffer> {
  let saved: Buffer | undefined;
  const fetch: Fetch = async (url, init) => {
    saved = options.via
      ? await options.via(Buffer.from(init!.body as Uint8Array))
      : Buffer.from(await (await globalThis.fetch(url, init)).arrayBuffer());
    return new Response(new Uint8Array(saved), { status: 200 });
  };
  await fetchOcspResponse(cert, issuer, { fetch, url: options.url }).catch(() => undefined);
  return saved!;
}

function outcome(f: () => { result: object; nonce?: Buffer }): unknown {
  try {
    return JSON.parse(JSON.stringify(f(), (_k, v: unknown) => (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer' ? Buffer.from((v as { data: number[] }).data).toString('hex') : v)));
  } catch (e) {
    return isSingpassFlowsError(e) ? { code: e.code, message: e.message } : { thrown: String(e) };
  }
}

type Pair = { name: string; cert: Buffer; issuer: Buffer };

async function corpus(): Promise<{ answers: { name: string; der: Buffer; plain: boolean }[]; pairs: Pair[] }> {
  ca.revoke('compromised', new Date('2024-05-01T00:00:00Z'), new Date('2024-03-01T00:00:00Z'));
  const live: { name: string; der: Buffer }[] = [];
  for (const u of ['good', 'revoked', 'unknown', 'compromised'] as const) live.push({ name: `openssl ${u}`, der: await answerFor(ca.users[u].der, ca.intermediate.der) });
  live.push({ name: 'openssl CA-signed', der: await answerFor(ca.intermediate.der, ca.root.der) });
  for (const signer of ['tsa', 'look-alike'] as const) {
    ca.faults.ocspSigner = signer;
    live.push({ name: `openssl signed by ${signer}`, der: await answerFor(ca.users.good.der, ca.intermediate.der) });
  }
  ca.faults.ocspSigner = 'responder';
  const responder = new OcspResponder(pki);
  pki.revoke(pki.users.revoked.serialHex, 'keyCompromise');
  for (const u of ['p256', 'p384', 'revoked', 'rsa'] as const) {
    live.push({ name: `sandbox ${u}`, der: await answerFor(pki.users[u]!.certDer, pki.intermediate.certDer, { via: (req) => responder.respond(req) }) });
  }
  live.push({ name: 'sandbox CA-signed', der: await answerFor(pki.intermediate.certDer, pki.root.certDer, { via: (req) => responder.respond(req) }) });

  const answers: { name: string; der: Buffer; plain: boolean }[] = live.map((a) => ({ ...a, plain: true }));
  for (const a of live) {
    const flip = (at: number) => { const d = Buffer.from(a.der); d[at] ^= 0x01; return d; };
    answers.push({ name: `${a.name}, signature altered`, der: flip(a.der.length - 3), plain: true });
    answers.push({ name: `${a.name}, a signed byte altered`, der: flip(Math.floor(a.der.length / 3)), plain: false });
    answers.push({ name: `${a.name}, truncated`, der: a.der.subarray(0, a.der.length - 5), plain: false });
    answers.push({ name: `${a.name}, a byte appended`, der: Buffer.concat([a.der, Buffer.from([0])]), plain: false });
  }
  answers.push({ name: 'not DER', der: Buffer.from('not der'), plain: false });
  answers.push({ name: 'tryLater', der: Buffer.from('30030a0103', 'hex'), plain: false });
  // the same answer re-encoded by asn1js with an indefinite length: BER, left to the schema reading
  const ber = asn1js.fromBER(new Uint8Array(live[0]!.der)).result;
  ber.lenBlock.isIndefiniteForm = true;
  answers.push({ name: 'openssl good, BER', der: Buffer.from(ber.toBER(false)), plain: false });

  const pairs: Pair[] = [
    ...(['good', 'revoked', 'unknown', 'compromised', 'noaia'] as const).map((u) => ({ name: `openssl ${u}`, cert: ca.users[u].der, issuer: ca.intermediate.der })),
    { name: 'openssl intermediate', cert: ca.intermediate.der, issuer: ca.root.der },
    ...(['p256', 'p384', 'revoked', 'rsa'] as const).map((u) => ({ name: `sandbox ${u}`, cert: pki.users[u]!.certDer, issuer: pki.intermediate.certDer })),
    { name: 'sandbox intermediate', cert: pki.intermediate.certDer, issuer: pki.root.certDer },
  ];
  return { answers, pairs };
}

describe('the native OCSP check gives the schema-driven check\'s verdict', () => {
  it('on every answer of the corpus, about every certificate, now, three hours on and before the answer was made', async () => {
    const { answers, pairs } = await corpus();
    const clocks = [() => Date.now(), () => Date.now() + 3 * 3600_000, () => Date.parse('2020-01-01T00:00:00Z')];
    let compared = 0;
    const verdicts = new Set<string>();
    for (const a of answers) {
      // the answers as a responder sends them are read natively (the schema reading is not what is being measured)
      if (a.plain) expect({ name: a.name, native: readOcspAnswer(a.der) !== undefined }).toEqual({ name: a.name, native: true });
      for (const p of pairs) {
        for (const clock of clocks) {
          const native = outcome(() => checkOcspResponse(a.der, certificateView(p.cert), certificateView(p.issuer), { clock }));
          const schema = outcome(() => checkOcspResponseWithSchema(a.der, parseCertificate(p.cert), parseCertificate(p.issuer), { clock }));
          expect({ answer: a.name, about: p.name, verdict: native }).toEqual({ answer: a.name, about: p.name, verdict: schema });
          verdicts.add(JSON.stringify((native as { result?: { status: string }; message?: string }).result?.status ?? (native as { message?: string }).message?.replace(/"[^"]*"/g, '""')));
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(1500);
    // the corpus reaches every verdict: each status, and each reason to refuse
    for (const v of ['"good"', '"revoked"', '"unknown"']) expect(verdicts).toContain(v);
    for (const why of ['different certificate', 'signature does not verify', 'not authorised for OCSP signing', 'was not issued by the certificate\'s CA', 'stale', 'in the future', 'not valid DER', 'could not be parsed']) {
      expect({ why, reached: [...verdicts].some((v) => v.includes(why)) }).toEqual({ why, reached: true });
    }
  });

  it('matchingOcspResponses finds the same answers for a certificate read natively as for one parsed by pkijs', async () => {
    const { answers, pairs } = await corpus();
    const all = answers.map((a) => a.der);
    let found = 0;
    for (const p of pairs) {
      for (const checkFreshness of [true, false]) {
        const byView = matchingOcspResponses(all, certificateView(p.cert), certificateView(p.issuer), { checkFreshness });
        const bySchema = matchingOcspResponses(all, parseCertificate(p.cert), parseCertificate(p.issuer), { checkFreshness });
        expect({ about: p.name, results: byView }).toEqual({ about: p.name, results: bySchema });
        found += byView.length;
      }
    }
    expect(found).toBeGreaterThan(pairs.length); // most pairs have an answer in the corpus, some several
  });

  it('checks a delegated responder\'s answer with the key its ResponderID names: no verification with the CA\'s key that fails, by name or by key hash', async () => {
    // delegated responders and CAs answering themselves, named by name (both responders' default) and by key hash
    const cases = [
      { name: 'sandbox p256', der: await answerFor(pki.users.p256.certDer, pki.intermediate.certDer, { via: (req) => new OcspResponder(pki).respond(req) }), cert: pki.users.p256.certDer, issuer: pki.intermediate.certDer },
      { name: 'sandbox intermediate', der: await answerFor(pki.intermediate.certDer, pki.root.certDer, { via: (req) => new OcspResponder(pki).respond(req) }), cert: pki.intermediate.certDer, issuer: pki.root.certDer },
      { name: 'openssl good', der: await answerFor(ca.users.good.der, ca.intermediate.der), cert: ca.users.good.der, issuer: ca.intermediate.der },
      { name: 'openssl CA-signed', der: await answerFor(ca.intermediate.der, ca.root.der), cert: ca.intermediate.der, issuer: ca.root.der },
    ];
    ca.faults.ocspResponderId = 'key';
    try {
      cases.push({ name: 'openssl good, by key', der: await answerFor(ca.users.good.der, ca.intermediate.der), cert: ca.users.good.der, issuer: ca.intermediate.der });
      cases.push({ name: 'openssl CA-signed, by key', der: await answerFor(ca.intermediate.der, ca.root.der), cert: ca.intermediate.der, issuer: ca.root.der });
    } finally {
      ca.faults.ocspResponderId = 'name';
    }
    expect(cases.map((c) => Object.keys(readOcspAnswer(c.der)!.responderId)[0])).toEqual(['byName', 'byName', 'byName', 'byName', 'byKey', 'byKey']);
    const crypto = require('node:crypto') as typeof import('node:crypto');
    const verify = jest.spyOn(crypto, 'verify');
    try {
      for (const c of cases) {
        verify.mockClear();
        const r = checkOcspResponse(c.der, certificateView(c.cert), certificateView(c.issuer));
        expect({ about: c.name, status: r.result.status }).toEqual({ about: c.name, status: 'good' });
        expect({ about: c.name, failed: verify.mock.results.filter((x) => x.value === false).length }).toEqual({ about: c.name, failed: 0 });
      }
    } finally {
      verify.mockRestore();
    }
  });

  it('reads the revocation time and the invalidity date as the schema reading does', async () => {
    const der = await answerFor(ca.users.compromised.der, ca.intermediate.der);
    const { result } = checkOcspResponse(der, parseCertificate(ca.users.compromised.der), parseCertificate(ca.intermediate.der));
    expect({ status: result.status, revokedAt: result.revokedAt?.toISOString(), invalidSince: result.invalidSince?.toISOString() })
      .toEqual({ status: 'revoked', revokedAt: '2024-05-01T00:00:00.000Z', invalidSince: '2024-03-01T00:00:00.000Z' });
  });

  it('sends the request pkijs built: a CertID (SHA-1) and the nonce extension, DER that re-encodes to itself', async () => {
    let sent: Buffer | undefined;
    const answer = await answerFor(ca.users.good.der, ca.intermediate.der);
    await fetchOcspResponse(ca.users.good.der, ca.intermediate.der, { fetch: async (_u, init) => { sent = Buffer.from(init!.body as Uint8Array); return new Response(new Uint8Array(answer)); } }).catch(() => undefined);
    const req = new pkijs.OCSPRequest({ schema: asn1js.fromBER(new Uint8Array(sent!)).result });
    expect(Buffer.from(req.toSchema(true).toBER(false))).toEqual(sent);
    const id = req.tbsRequest.requestList[0]!.reqCert;
    const user = parseCertificate(ca.users.good.der);
    expect({ alg: id.hashAlgorithm.algorithmId, serial: Buffer.from(id.serialNumber.valueBlock.valueHexView).toString('hex'), nonce: req.tbsRequest.requestExtensions?.[0]?.extnID })
      .toEqual({ alg: '1.3.14.3.2.26', serial: Buffer.from(user.serialNumber.valueBlock.valueHexView).toString('hex'), nonce: '1.3.6.1.5.5.7.48.1.2' });
  });
});
