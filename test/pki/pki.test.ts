import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildChain, caIssuersUrlOf, checkTimestampToken, fetchOcspResponse, ocspUrlOf, requestTimestamp } from '../../src/pki';
import { certDer, parseCertificate } from '../../src/pki/x509';
import { parseSignedData } from '../../src/pki/cms';
import { isSingpassFlowsError } from '../../src/errors';
import type { Fetch } from '../../src/http';
import { startOpensslCa, type OpensslCa } from './openssl-ca';

let ca: OpensslCa;
beforeAll(async () => { ca = await startOpensslCa(); });
afterAll(async () => { await ca?.close(); });
afterEach(() => { ca.faults.ocspDown = false; ca.faults.tsaDown = false; ca.faults.ocspGarbage = false; });

async function code(p: Promise<unknown>): Promise<string> {
  try { await p; return 'resolved'; } catch (e) { return isSingpassFlowsError(e) ? e.code : `other: ${(e as Error).message}`; }
}

describe('AIA', () => {
  it('reads the OCSP and caIssuers URLs of a certificate', () => {
    expect(ocspUrlOf(ca.users.good.der)).toBe(`${ca.baseUrl}/ocsp`);
    expect(caIssuersUrlOf(ca.users.good.der)).toBe(`${ca.baseUrl}/int.crt`);
    expect(ocspUrlOf(ca.intermediate.der)).toBe(`${ca.baseUrl}/ocsp-root`);
    expect(ocspUrlOf(ca.users.noaia.der)).toBeUndefined();
    expect(caIssuersUrlOf(ca.root.der)).toBeUndefined();
  });
});

describe('requestTimestamp (against openssl ts -reply)', () => {
  it('returns a token that openssl ts -verify accepts for the data', async () => {
    const data = Buffer.from('some signature value bytes');
    const token = await requestTimestamp(createHash('sha256').update(data).digest(), { url: `${ca.baseUrl}/tsa` });
    writeFileSync(join(ca.dir, 't1.der'), token);
    writeFileSync(join(ca.dir, 't1.bin'), data);
    const out = execFileSync('openssl', ['ts', '-verify', '-token_in', '-in', 't1.der', '-data', 't1.bin', '-CAfile', 'root.crt', '-untrusted', 'int.crt'], { cwd: ca.dir }).toString();
    expect(out).toContain('Verification: OK');
    const info = checkTimestampToken(token);
    expect(info.policy).toBe('1.3.6.1.4.1.99999.1');
    expect(Math.abs(info.genTime.getTime() - Date.now())).toBeLessThan(60_000);
    expect(info.tsaCertificate).toEqual(ca.tsa.der);
  });

  it('supports SHA-384 imprints and refuses a digest of the wrong length', async () => {
    const d = createHash('sha384').update('x').digest();
    const token = await requestTimestamp(d, { url: `${ca.baseUrl}/tsa`, hashAlgorithm: 'SHA-384' });
    expect(checkTimestampToken(token).hashedMessage).toEqual(d);
    expect(await code(requestTimestamp(d, { url: `${ca.baseUrl}/tsa` }))).toBe('INVALID_INPUT');
  });

  it('TSA down -> TSA_FAILED naming the status', async () => {
    ca.faults.tsaDown = true;
    await expect(requestTimestamp(Buffer.alloc(32, 1), { url: `${ca.baseUrl}/tsa` })).rejects.toMatchObject({ code: 'TSA_FAILED', message: expect.stringContaining('HTTP 503') });
  });

  it('TSA unreachable -> TSA_FAILED (transport cause kept)', async () => {
    await expect(requestTimestamp(Buffer.alloc(32, 1), { url: 'http://127.0.0.1:1/tsa', timeoutMs: 2000 })).rejects.toMatchObject({ code: 'TSA_FAILED', details: { cause: 'HTTP_NETWORK' } });
  });

  it('refuses a replayed answer (nonce mismatch) and an answer for other data', async () => {
    const realFetch = globalThis.fetch as Fetch;
    // First collect a genuine answer, then replay it for a second request.
    let saved: Buffer | undefined;
    const recording: Fetch = async (url, init) => { const r = await realFetch(url, init); saved = Buffer.from(await r.arrayBuffer()); return new Response(new Uint8Array(saved), { status: 200 }); };
    await requestTimestamp(Buffer.alloc(32, 7), { url: `${ca.baseUrl}/tsa`, fetch: recording });
    const replay: Fetch = async () => new Response(new Uint8Array(saved!), { status: 200 });
    await expect(requestTimestamp(Buffer.alloc(32, 7), { url: `${ca.baseUrl}/tsa`, fetch: replay })).rejects.toMatchObject({ code: 'TSA_FAILED', message: expect.stringContaining('nonce') });
    await expect(requestTimestamp(Buffer.alloc(32, 8), { url: `${ca.baseUrl}/tsa`, fetch: replay })).rejects.toMatchObject({ code: 'TSA_FAILED', message: expect.stringContaining('imprint') });
  });

  it('refuses a token whose TSTInfo was altered (signature check)', async () => {
    const token = await requestTimestamp(Buffer.alloc(32, 9), { url: `${ca.baseUrl}/tsa` });
    const idx = token.indexOf(Buffer.alloc(32, 9));
    const bad = Buffer.from(token); bad[idx] ^= 1;
    expect(() => checkTimestampToken(bad)).toThrow(expect.objectContaining({ code: 'TSA_FAILED' }));
  });
});

describe('parseCertificate keeps only the services\' certificates', () => {
  it('CA, OCSP responder and TSA certificates are parsed once and reused; a user\'s certificate is parsed afresh every time (personal data, not kept beyond its session)', () => {
    for (const c of [ca.root, ca.intermediate, ca.ocspSigner, ca.tsa]) expect(parseCertificate(c.der)).toBe(parseCertificate(c.der));
    const user = parseCertificate(ca.users.good.der);
    expect(parseCertificate(ca.users.good.der)).not.toBe(user);
    expect(certDer(user)).toEqual(ca.users.good.der); // its encoding is still known without re-encoding
  });
});

describe('fetchOcspResponse (against openssl ocsp)', () => {
  it('good: verified delegated-responder answer; openssl parses the DER', async () => {
    const r = await fetchOcspResponse(ca.users.good.der, ca.intermediate.der);
    expect(r.status).toBe('good');
    expect(r.responderCertificate).toEqual(ca.ocspSigner.der);
    expect(r.nextUpdate!.getTime()).toBeGreaterThan(Date.now());
    writeFileSync(join(ca.dir, 'o1.der'), r.der);
    const text = execFileSync('openssl', ['ocsp', '-respin', 'o1.der', '-resp_text', '-noverify'], { cwd: ca.dir }).toString();
    expect(text).toContain('Cert Status: good');
    expect(text).toContain(`Serial Number: ${ca.users.good.serial}`);
  });

  it('an answer signed by a certificate the CA did not authorise for OCSP is refused, every time (the responder cache does not remember a refusal as trust)', async () => {
    try {
      for (const [signer, why] of [['tsa', /is not authorised for OCSP signing/], ['look-alike', /was not issued by the certificate's CA/]] as const) {
        ca.faults.ocspSigner = signer;
        for (let i = 0; i < 2; i++) {
          await expect(fetchOcspResponse(ca.users.good.der, ca.intermediate.der)).rejects.toMatchObject({ code: 'OCSP_FAILED', message: expect.stringMatching(why) });
        }
      }
      ca.faults.ocspSigner = 'responder';
      expect((await fetchOcspResponse(ca.users.good.der, ca.intermediate.der)).status).toBe('good');
      ca.faults.ocspSigner = 'look-alike';
      await expect(fetchOcspResponse(ca.users.good.der, ca.intermediate.der)).rejects.toMatchObject({ code: 'OCSP_FAILED' });
    } finally {
      ca.faults.ocspSigner = 'responder';
    }
  });

  it('revoked with revocation time; unknown for a serial the CA never issued', async () => {
    const r = await fetchOcspResponse(ca.users.revoked.der, ca.intermediate.der);
    expect(r.status).toBe('revoked');
    expect(r.revokedAt?.toISOString()).toBe('2024-01-01T00:00:00.000Z');
    expect((await fetchOcspResponse(ca.users.unknown.der, ca.intermediate.der)).status).toBe('unknown');
  });

  it('CA-signed answer (root signs about the intermediate)', async () => {
    const r = await fetchOcspResponse(ca.intermediate.der, ca.root.der);
    expect(r.status).toBe('good');
    expect(r.responderCertificate).toEqual(ca.root.der);
  });

  it('OCSP down / garbage / unreachable / no AIA -> OCSP_FAILED with a clear message', async () => {
    ca.faults.ocspDown = true;
    await expect(fetchOcspResponse(ca.users.good.der, ca.intermediate.der)).rejects.toMatchObject({ code: 'OCSP_FAILED', message: expect.stringMatching(/OCSP responder at http:\/\/127\.0\.0\.1:\d+\/ocsp answered HTTP 503/) });
    ca.faults.ocspDown = false; ca.faults.ocspGarbage = true;
    expect(await code(fetchOcspResponse(ca.users.good.der, ca.intermediate.der))).toBe('OCSP_FAILED');
    ca.faults.ocspGarbage = false;
    expect(await code(fetchOcspResponse(ca.users.good.der, ca.intermediate.der, { url: 'http://127.0.0.1:1/ocsp', timeoutMs: 2000 }))).toBe('OCSP_FAILED');
    await expect(fetchOcspResponse(ca.users.noaia.der, ca.intermediate.der)).rejects.toMatchObject({ code: 'OCSP_FAILED', message: expect.stringContaining('no AIA OCSP URL') });
  });

  it('refuses an answer about another certificate, a replay (nonce), and a stale answer', async () => {
    const realFetch = globalThis.fetch as Fetch;
    let saved: Buffer | undefined;
    const rec: Fetch = async (url, init) => { const r = await realFetch(url, init); saved = Buffer.from(await r.arrayBuffer()); return new Response(new Uint8Array(saved), { status: 200 }); };
    await fetchOcspResponse(ca.users.good.der, ca.intermediate.der, { fetch: rec });
    const replay: Fetch = async () => new Response(new Uint8Array(saved!), { status: 200 });
    await expect(fetchOcspResponse(ca.users.good.der, ca.intermediate.der, { fetch: replay })).rejects.toMatchObject({ code: 'OCSP_FAILED', message: expect.stringContaining('nonce') });
    await expect(fetchOcspResponse(ca.users.noaia.der, ca.intermediate.der, { fetch: replay, url: `${ca.baseUrl}/ocsp` })).rejects.toMatchObject({ code: 'OCSP_FAILED', message: expect.stringContaining('different certificate') });
    const later = () => Date.now() + 3 * 3600_000; // -nmin 60: nextUpdate passed
    await expect(fetchOcspResponse(ca.users.good.der, ca.intermediate.der, { clock: later })).rejects.toMatchObject({ code: 'OCSP_FAILED', message: expect.stringContaining('stale') });
  });

  it('a BasicOCSPResponse with a malformed certs field, or members after it, is refused before anything is trusted', async () => {
    const realFetch = globalThis.fetch as Fetch;
    /** The live answer (our nonce), its BasicOCSPResponse rebuilt by `edit` (members: tbs, alg, signature, [0] certs). */
    const tampered = (edit: (members: asn1js.AsnType[]) => asn1js.AsnType[]): Fetch => async (url, init) => {
      const der = Buffer.from(await (await realFetch(url, init)).arrayBuffer());
      const outer = asn1js.fromBER(new Uint8Array(der)).result as asn1js.Sequence;
      const bytes = (outer.valueBlock.value[1] as asn1js.Constructed).valueBlock.value[0] as asn1js.Sequence;
      const octet = bytes.valueBlock.value[1] as asn1js.OctetString;
      const basic = asn1js.fromBER(octet.valueBlock.valueHexView.slice()).result as asn1js.Sequence;
      const rebuilt = new asn1js.Sequence({ value: edit(basic.valueBlock.value) }).toBER();
      const out = new asn1js.Sequence({ value: [outer.valueBlock.value[0]!, new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 0 }, value: [
        new asn1js.Sequence({ value: [bytes.valueBlock.value[0]!, new asn1js.OctetString({ valueHex: rebuilt })] }),
      ] })] }).toBER();
      return new Response(new Uint8Array(out), { status: 200 });
    };
    const certsField = (value: asn1js.AsnType[]) => new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 0 }, value });
    const unchanged = tampered((m) => m);
    expect((await fetchOcspResponse(ca.users.good.der, ca.intermediate.der, { fetch: unchanged })).status).toBe('good');
    for (const [edit, why] of [
      [(m: asn1js.AsnType[]) => [...m, new asn1js.Integer({ value: 1 })], /BasicOCSPResponse could not be parsed/],
      [(m: asn1js.AsnType[]) => [...m.slice(0, 3), certsField([new asn1js.Integer({ value: 1 })])], /BasicOCSPResponse could not be parsed/],
      [(m: asn1js.AsnType[]) => [...m.slice(0, 3), certsField([new asn1js.Sequence({ value: [new asn1js.Integer({ value: 1 })] })])], /a certificate it carries could not be parsed/],
    ] as const) {
      await expect(fetchOcspResponse(ca.users.good.der, ca.intermediate.der, { fetch: tampered(edit) })).rejects.toMatchObject({ code: 'OCSP_FAILED', message: expect.stringMatching(why) });
    }
  });

  it('refuses an answer signed by a responder the issuer did not authorise', async () => {
    // Ask the intermediate's responder about the intermediate itself: signer ocsp.crt was not issued by the root.
    await expect(fetchOcspResponse(ca.intermediate.der, ca.root.der, { url: `${ca.baseUrl}/ocsp` })).rejects.toMatchObject({ code: 'OCSP_FAILED', message: expect.stringContaining('was not issued by the certificate\'s CA') });
  });

  it('rejects an issuer that did not issue the certificate', async () => {
    expect(await code(fetchOcspResponse(ca.users.good.der, ca.root.der))).toBe('INVALID_INPUT');
  });
});

describe('parseSignedData (a CMS made by openssl cms)', () => {
  /** A detached CMS signed by the "good" user, carrying its certificate and the intermediate's. */
  const opensslCms = (): Buffer => {
    writeFileSync(join(ca.dir, 'cms-content.txt'), 'content');
    return execFileSync('openssl', ['cms', '-sign', '-binary', '-in', 'cms-content.txt', '-signer', ca.users.good.pem, '-inkey', ca.users.good.key,
      '-certfile', ca.intermediate.pem, '-outform', 'DER'], { cwd: ca.dir });
  };

  it('returns the certificates as the exact bytes the CMS carries; the CA\'s is parsed once, the user\'s afresh', () => {
    const cms = opensslCms();
    const first = parseSignedData(cms, 'PDF_INVALID', 'The signature');
    const second = parseSignedData(cms, 'PDF_INVALID', 'The signature');
    expect(first.certificates.map(certDer).sort(Buffer.compare)).toEqual([ca.users.good.der, ca.intermediate.der].sort(Buffer.compare));
    const pick = (p: typeof first, d: Buffer) => p.certificates.find((c) => certDer(c).equals(d));
    expect(pick(second, ca.intermediate.der)).toBe(pick(first, ca.intermediate.der));
    expect(pick(second, ca.users.good.der)).not.toBe(pick(first, ca.users.good.der));
    expect(first.signedData.signerInfos).toHaveLength(1);
  });

  it('a CMS carrying a malformed certificate is refused with the caller\'s code, naming what was parsed', () => {
    const cms = opensslCms();
    const contentInfo = asn1js.fromBER(new Uint8Array(cms)).result as asn1js.Sequence;
    const signedData = (contentInfo.valueBlock.value[1] as asn1js.Constructed).valueBlock.value[0] as asn1js.Sequence;
    const members = signedData.valueBlock.value.map((m) => m.idBlock.tagClass === 3 && m.idBlock.tagNumber === 0
      ? new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 0 }, value: [new asn1js.Sequence({ value: [new asn1js.Integer({ value: 1 })] })] })
      : m);
    const broken = Buffer.from(new asn1js.Sequence({ value: [contentInfo.valueBlock.value[0]!, new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 0 }, value: [
      new asn1js.Sequence({ value: members }),
    ] })] }).toBER());
    expect(() => parseSignedData(broken, 'PDF_INVALID', 'The signature "Signature1"')).toThrow(expect.objectContaining({
      code: 'PDF_INVALID', message: 'The signature "Signature1" carries a certificate that could not be parsed',
    }));
  });
});

describe('buildChain', () => {
  it('downloads issuers via AIA up to the trusted root', async () => {
    const before = ca.requests.certs;
    const chain = await buildChain(ca.users.good.der, { trustedRoots: [ca.root.der] });
    expect(chain).toEqual([ca.users.good.der, ca.intermediate.der, ca.root.der]);
    expect(ca.requests.certs - before).toBe(1); // intermediate downloaded; the root came from trustedRoots
  });

  it('uses given intermediates without network and stops at a self-signed root when no anchors are given', async () => {
    const before = ca.requests.certs;
    const chain = await buildChain(ca.users.noaia.der, { intermediates: [ca.intermediate.der], fetchIssuers: true });
    expect(chain).toEqual([ca.users.noaia.der, ca.intermediate.der, ca.root.der]);
    expect(ca.requests.certs - before).toBe(1); // the root via the intermediate's AIA
  });

  it('CHAIN_INCOMPLETE when an issuer is missing or the root is not trusted', async () => {
    expect(await code(buildChain(ca.users.noaia.der, {}))).toBe('CHAIN_INCOMPLETE');
    expect(await code(buildChain(ca.users.good.der, { fetchIssuers: false }))).toBe('CHAIN_INCOMPLETE');
    expect(await code(buildChain(ca.users.good.der, { trustedRoots: [ca.tsa.der] }))).toBe('CHAIN_INCOMPLETE');
  });
});
