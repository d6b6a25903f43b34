/**
 * The native timestamp-token check against the schema-driven one (pkijs) on the same tokens: OpenSSL's and the
 * sandbox TSA's (as sent, and as requestTimestamp keeps them), SHA-256 and SHA-384 imprints, with the padding a PDF's
 * /Contents adds, and every one of them with a byte altered here and there, truncated, or checked against other
 * data. The same result or the same error, every time; the tokens a TSA sends are accepted natively.
 */
import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import { createTestPki, TimeStampAuthority } from '../../sandbox/pki';
import { requestTimestamp } from '../../src/pki';
import { checkTimestampToken, checkTimestampTokenWithSchema, derEncapsulatedContent } from '../../src/pki/timestamp';
import { checkTimestampTokenNatively } from '../../src/pki/timestamp-token';
import { isSingpassFlowsError } from '../../src/errors';
import type { Fetch } from '../../src/http';
import { startOpensslCa, type OpensslCa } from './openssl-ca';

let ca: OpensslCa;
beforeAll(async () => { ca = await startOpensslCa(); });
afterAll(async () => { await ca?.close(); });

function outcome(f: () => object): unknown {
  try {
    return JSON.parse(JSON.stringify(f(), (_k, v: unknown) => (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer' ? Buffer.from((v as { data: number[] }).data).toString('hex') : v)));
  } catch (e) {
    return isSingpassFlowsError(e) ? { code: e.code, message: e.message } : { thrown: String(e) };
  }
}

/** The token inside a TimeStampResp, as the TSA sent it (no DER rewriting). */
function tokenOf(resp: Buffer): Buffer {
  const seq = asn1js.fromBER(new Uint8Array(resp)).result as asn1js.Sequence;
  return Buffer.from(seq.valueBlock.value[1]!.valueBeforeDecodeView);
}

describe('the native timestamp-token check gives the schema-driven check\'s verdict', () => {
  it('on every token of the corpus and its altered copies, with and without the data it should cover', async () => {
    const pki = await createTestPki({ baseUrl: 'http://127.0.0.1:9', rsaUser: false });
    const tsa = new TimeStampAuthority(pki);
    const raw: Buffer[] = [];
    const sandboxFetch: Fetch = async (_url, init) => {
      const resp = await tsa.respond(Buffer.from(init!.body as Uint8Array));
      raw.push(tokenOf(resp));
      return new Response(new Uint8Array(resp), { status: 200 });
    };
    const tokens: { name: string; der: Buffer; digest: Buffer; hash: 'sha256' | 'sha384'; plain: boolean }[] = [];
    for (const [hash, alg] of [['sha256', 'SHA-256'], ['sha384', 'SHA-384']] as const) {
      const digest = createHash(hash).update(`data ${hash}`).digest();
      tokens.push({ name: `openssl ${hash}`, der: await requestTimestamp(digest, { url: `${ca.baseUrl}/tsa`, hashAlgorithm: alg }), digest, hash, plain: true });
      tokens.push({ name: `sandbox ${hash}`, der: await requestTimestamp(digest, { url: 'http://127.0.0.1:9/ca/tsa', hashAlgorithm: alg, fetch: sandboxFetch }), digest, hash, plain: true });
      tokens.push({ name: `sandbox ${hash} as sent`, der: raw[raw.length - 1]!, digest, hash, plain: false });
    }
    for (const t of tokens.slice()) {
      tokens.push({ ...t, name: `${t.name}, /Contents padding`, der: Buffer.concat([t.der, Buffer.alloc(64)]) });
      tokens.push({ ...t, name: `${t.name}, truncated`, der: t.der.subarray(0, t.der.length - 9), plain: false });
      for (let at = 3; at < t.der.length; at += 29) {
        const d = Buffer.from(t.der);
        d[at] ^= 0x04;
        tokens.push({ ...t, name: `${t.name}, byte ${at} altered`, der: d, plain: false });
      }
    }
    tokens.push({ name: 'not DER', der: Buffer.from('not a token'), digest: Buffer.alloc(32), hash: 'sha256', plain: false });

    let nativeAccepted = 0;
    const refusals = new Set<string>();
    for (const t of tokens) {
      if (t.plain) expect({ token: t.name, native: checkTimestampTokenNatively(t.der) !== undefined }).toEqual({ token: t.name, native: true });
      const other = createHash(t.hash).update('other data').digest();
      for (const expected of [undefined, { digest: t.digest, hashAlgorithm: t.hash }, { digest: other, hashAlgorithm: t.hash }]) {
        const now = outcome(() => checkTimestampToken(t.der, expected));
        const before = outcome(() => checkTimestampTokenWithSchema(t.der, expected));
        expect({ token: t.name, expected: !!expected, verdict: now }).toEqual({ token: t.name, expected: !!expected, verdict: before });
        if (checkTimestampTokenNatively(t.der, expected)) nativeAccepted++;
        const message = (before as { message?: string }).message;
        if (message) refusals.add(message.replace(/\(.*\)/, '').trim());
      }
    }
    expect(nativeAccepted).toBeGreaterThan(10);
    expect(refusals.size).toBeGreaterThan(3); // the altered copies reach several reasons to refuse
  });
});

describe('requestTimestamp', () => {
  it('sends the TimeStampReq pkijs built (v1, the imprint, our nonce, certReq) and keeps the token as the TSA sent it', async () => {
    const pkijs = await import('pkijs');
    const pki = await createTestPki({ baseUrl: 'http://127.0.0.1:9', rsaUser: false });
    const tsa = new TimeStampAuthority(pki);
    let sent: Buffer | undefined;
    let answer: Buffer | undefined;
    const fetch: Fetch = async (_u, init) => {
      sent = Buffer.from(init!.body as Uint8Array);
      answer = await tsa.respond(sent);
      return new Response(new Uint8Array(answer), { status: 200 });
    };
    const digest = createHash('sha256').update('imprint').digest();
    const token = await requestTimestamp(digest, { url: 'http://127.0.0.1:9/ca/tsa', fetch });
    const req = new pkijs.TimeStampReq({ schema: asn1js.fromBER(new Uint8Array(sent!)).result });
    expect(Buffer.from(req.toSchema().toBER(false))).toEqual(sent);
    expect({ version: req.version, certReq: req.certReq, alg: req.messageImprint.hashAlgorithm.algorithmId, imprint: Buffer.from(req.messageImprint.hashedMessage.valueBlock.valueHexView) })
      .toEqual({ version: 1, certReq: true, alg: '2.16.840.1.101.3.4.2.1', imprint: digest });
    expect(checkTimestampToken(token).nonce).toEqual(Buffer.from(req.nonce!.valueBlock.valueHexView));
    // the sandbox TSA sends its TSTInfo as a constructed OCTET STRING: rewritten to DER as the asn1js rewrite does
    expect(token).toEqual(derEncapsulatedContent(tokenOf(answer!)));
    expect(tokenOf(answer!).equals(token)).toBe(false);
  });
});
