/**
 * The native signature check (a PDF's CMS read by a TLV walk, verified by node:crypto) against the schema-driven
 * check (pkijs `parseSignedData` + `checkSignerInfo`) on the same signatures: ours (P-256, P-384, RSA users, B-B and
 * B-T, with /Contents padding), OpenSSL's CAdES, and byte-altered and truncated copies of each. It accepts only what
 * the schema check finds without a problem, with the same signer, certificates, signing-certificate hash, timestamp
 * token and signature value; and it accepts the signatures this project and OpenSSL make.
 */
import { createHash, sign } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as asn1js from 'asn1js';
import { createTestPki, TimeStampAuthority } from '../../sandbox/pki';
import { finalizeSignature, prepareSignature } from '../../src/pades';
import { timestampSignature } from '../../src/pades/doc-timestamp';
import { attributeValue, certDer, checkSignerInfo, parseSignedData } from '../../src/pki/cms';
import { checkSignatureNatively } from '../../src/pki/signed-data';
import { OID, type HashName } from '../../src/pki/x509';
import type { Fetch } from '../../src/http';
import { fixture } from '../fixtures/pdfs';
import { extractSignatures } from '../pades/helpers';
import { startOpensslCa, type OpensslCa } from './openssl-ca';

let ca: OpensslCa;
beforeAll(async () => { ca = await startOpensslCa(); });
afterAll(async () => { await ca?.close(); });

type Sample = { name: string; cms: Buffer; signed: Buffer; plain: boolean };

async function corpus(): Promise<Sample[]> {
  const pki = await createTestPki({ baseUrl: 'http://127.0.0.1:9' });
  const tsa = new TimeStampAuthority(pki);
  const tsaFetch: Fetch = async (_u, init) => new Response(new Uint8Array(await tsa.respond(Buffer.from(init!.body as Uint8Array))), { status: 200 });
  // a generated PDF and the real-world samples the repository ships
  const pdfs = [await fixture('classic'), ...['consent-form.pdf', 'tenancy-agreement.pdf'].map((f) => readFileSync(join(__dirname, '..', '..', 'assets', 'samples', f)))];
  const samples: Sample[] = [];
  for (const [k, pdf] of pdfs.entries()) for (const user of ['p256', 'p384', 'rsa'] as const) {
    for (const timestamped of [false, true]) {
      if (k > 0 && user !== 'p256') continue;
      const u = pki.users[user]!;
      const { state } = await prepareSignature(pdf, { certificate: u.certDer, chain: [pki.intermediate.certDer] });
      const sig = sign('sha256', Buffer.from(state.signedAttributes, 'base64'), { key: u.privateKey, dsaEncoding: 'der' });
      const out = await finalizeSignature(pdf, state, sig, timestamped ? { timestamp: timestampSignature({ tsaUrl: 'http://127.0.0.1:9/ca/tsa', fetch: tsaFetch }) } : {});
      const s = extractSignatures(out)[0]!;
      const padded = Buffer.from(out.toString('latin1', s.byteRange[1]! + 1, s.byteRange[2]! - 1), 'hex');
      samples.push({ name: `ours pdf ${k} ${user}${timestamped ? ' B-T' : ''}`, cms: s.cms, signed: s.signed, plain: true });
      samples.push({ name: `ours pdf ${k} ${user}${timestamped ? ' B-T' : ''}, with its /Contents padding`, cms: padded, signed: s.signed, plain: true });
    }
  }
  writeFileSync(join(ca.dir, 'signed-data.bin'), 'content signed by openssl');
  const cades = execFileSync('openssl', ['cms', '-sign', '-binary', '-cades', '-md', 'sha256', '-in', 'signed-data.bin', '-signer', ca.users.good.pem, '-inkey', ca.users.good.key,
    '-certfile', ca.intermediate.pem, '-outform', 'DER'], { cwd: ca.dir });
  samples.push({ name: 'openssl CAdES', cms: cades, signed: Buffer.from('content signed by openssl'), plain: true });
  const plainCms = execFileSync('openssl', ['cms', '-sign', '-binary', '-md', 'sha256', '-in', 'signed-data.bin', '-signer', ca.users.good.pem, '-inkey', ca.users.good.key, '-outform', 'DER'], { cwd: ca.dir });
  samples.push({ name: 'openssl without signingCertificateV2', cms: plainCms, signed: Buffer.from('content signed by openssl'), plain: false });
  for (const s of samples.filter((x) => x.plain && !x.name.includes('padding'))) {
    samples.push({ ...s, name: `${s.name}, other content`, signed: Buffer.concat([s.signed, Buffer.from('!')]), plain: false });
    samples.push({ ...s, name: `${s.name}, truncated`, cms: s.cms.subarray(0, s.cms.length - 7), plain: false });
    for (let at = 5; at < s.cms.length; at += 29) {
      const d = Buffer.from(s.cms);
      d[at] ^= 0x02;
      samples.push({ ...s, name: `${s.name}, byte ${at} altered`, cms: d, plain: false });
    }
  }
  return samples;
}

/** The schema check's view of a sample: no problem at all, and what it read. */
function bySchema(cms: Buffer, digestFor: (h: HashName) => Buffer) {
  try {
    const parsed = parseSignedData(cms, 'PDF_INVALID', 'signature');
    const check = checkSignerInfo(parsed, digestFor);
    const si = parsed.signedData.signerInfos[0]!;
    const tst = attributeValue(si, OID.signatureTimeStampToken, true);
    return {
      ok: check.problems.length === 0 && check.messageDigestMatches && check.signatureValid,
      certificates: parsed.certificates.map(certDer),
      signer: check.signerCertificate ? certDer(check.signerCertificate) : undefined,
      signature: Buffer.from(si.signature.valueBlock.valueHexView),
      timestampToken: tst ? Buffer.from(tst.valueBeforeDecodeView) : undefined,
      scv2: attributeValue(si, OID.signingCertificateV2) instanceof asn1js.Sequence,
    };
  } catch (e) {
    return { ok: false, error: String(e) };
  }
}

describe('the native signature check accepts only what the schema check accepts, reading the same', () => {
  it('on our signatures, OpenSSL\'s, and their altered copies', async () => {
    let accepted = 0;
    for (const s of await corpus()) {
      const digestFor = (h: HashName) => createHash(h).update(s.signed).digest();
      const native = checkSignatureNatively(s.cms, digestFor);
      const schema = bySchema(s.cms, digestFor);
      if (s.plain) expect({ sample: s.name, native: native !== undefined }).toEqual({ sample: s.name, native: true });
      if (!native) continue;
      accepted++;
      expect({ sample: s.name, ok: schema.ok, scv2: schema.scv2, error: schema.error }).toEqual({ sample: s.name, ok: true, scv2: true, error: undefined });
      expect({ sample: s.name, certificates: native.certificates, signer: native.signerCertificate, signature: native.signature, timestampToken: native.timestampToken })
        .toEqual({ sample: s.name, certificates: schema.certificates, signer: schema.signer, signature: schema.signature, timestampToken: schema.timestampToken });
    }
    expect(accepted).toBeGreaterThanOrEqual(17);
  });
});
