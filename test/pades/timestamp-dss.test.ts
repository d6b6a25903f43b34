import { execFile } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import {
  appendDss,
  byteRangeDigest,
  finalizeDocumentTimestamp,
  finalizeSignature,
  listSignatures,
  prepareDocumentTimestamp,
  prepareSignature,
  readDss,
} from '../../src/pades';
import { requestTimestamp } from '../../src/pki';
import { fixture } from '../fixtures/pdfs';
import { extractSignatures, opensslCmsVerify, pdfsig, phoneSign, qpdfCheck, signPdf, stopPki, testPki, tmpDir } from './helpers';

const run = promisify(execFile);
const dir = tmpDir('ts');
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await stopPki();
});
const write = (name: string, b: Buffer | string) => {
  const f = path.join(dir, name);
  fs.writeFileSync(f, b);
  return f;
};
async function tsaUrl(): Promise<string> {
  return `${(await testPki()).baseUrl}/ca/tsa`;
}
async function opensslTsVerify(token: Buffer, data: Buffer): Promise<string> {
  const pki = await testPki();
  const t = write(`tst-${crypto.randomUUID()}.der`, token);
  const d = write(`data-${crypto.randomUUID()}.bin`, data);
  const root = write('root.pem', pki.root.certPem);
  const tsa = write('tsa.pem', pki.tsa.certPem + pki.intermediate.certPem);
  const r = await run('openssl', ['ts', '-verify', '-token_in', '-in', t, '-data', d, '-CAfile', root, '-untrusted', tsa]).catch((e) => e);
  return `${r.stdout ?? ''}${r.stderr ?? ''}`;
}

test('B-T: the timestamp hook gets the signature value and its token is embedded as an unsigned attribute', async () => {
  const pki = await testPki();
  const pdf = await fixture('xrefStream');
  const { state } = await prepareSignature(pdf, { certificate: pki.users.p256.certDer, chain: [pki.intermediate.certDer] });
  const sig = phoneSign(state, pki.users.p256);
  let seen: Buffer | undefined;
  let token: Buffer | undefined;
  const signed = await finalizeSignature(pdf, state, sig, {
    timestamp: async (value) => {
      seen = value;
      token = await requestTimestamp(crypto.createHash('sha256').update(value).digest(), { url: await tsaUrl() });
      return token;
    },
  });
  expect(seen!.equals(sig)).toBe(true);
  expect(await opensslTsVerify(token!, sig)).toContain('Verification: OK');
  const [ext] = extractSignatures(signed);
  expect((await opensslCmsVerify(ext!, dir))[0]).toBe(true);
  const p7s = write('bt.p7s', ext!.cms);
  const { stdout } = await run('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', p7s]);
  expect(stdout).toContain('id-smime-aa-timeStampToken');
  expect(stdout).toContain('id-smime-aa-signingCertificateV2');
  // our SignedAttributes carry no signingTime (the TSA's own attributes, printed under unsignedAttrs, may)
  expect(stdout.split('unsignedAttrs:')[0]).not.toContain('signingTime');
  expect(stdout).toMatch(/signatureAlgorithm:\s*\n\s*algorithm: ecdsa-with-SHA256/);
  expect(await pdfsig(write('bt.pdf', signed))).toContain('Signature is Valid.');
});

test('B-LTA building block: document timestamp over the whole file, first signature stays valid', async () => {
  const pki = await testPki();
  const signed = await signPdf(await fixture('classic'), pki.users.p256);
  const { digest, state } = await prepareDocumentTimestamp(signed);
  const restored = JSON.parse(JSON.stringify(state));
  const token = await requestTimestamp(digest, { url: await tsaUrl() });
  const out = await finalizeDocumentTimestamp(signed, restored, token);
  expect(out.subarray(0, signed.length).equals(signed)).toBe(true);

  const list = listSignatures(out);
  expect(list.map((s) => [s.fieldName, s.type, s.subFilter, s.coversWholeDocument])).toEqual([
    ['Signature1', 'signature', 'ETSI.CAdES.detached', false],
    ['DocTimeStamp1', 'docTimestamp', 'ETSI.RFC3161', true],
  ]);
  expect(byteRangeDigest(out, list[1]!.byteRange).equals(digest)).toBe(true);
  expect(list[1]!.contents.equals(token)).toBe(true);
  const ext = extractSignatures(out)[1]!;
  expect(await opensslTsVerify(ext.cms, ext.signed)).toContain('Verification: OK');
  const file = write('lta.pdf', out);
  expect(await qpdfCheck(file)).toContain('No syntax or stream encoding errors found');
  const report = await pdfsig(file);
  expect(report).toContain('Signature #1');
  expect(report.split('Signature #2')[0]).toContain('Signature is Valid.');
  // pdfsig 22 cannot validate document timestamps; it must still see the field and the whole-document range
  expect(report.split('Signature #2')[1]).toContain('Field Name: DocTimeStamp1');
  expect(report.split('Signature #2')[1]).toContain('Total document signed');
});

test('a timestamp token over other data is refused (TSA_FAILED)', async () => {
  const pdf = await fixture('classic');
  const { state } = await prepareDocumentTimestamp(pdf);
  const token = await requestTimestamp(crypto.createHash('sha256').update('other').digest(), { url: await tsaUrl() });
  await expect(finalizeDocumentTimestamp(pdf, state, token)).rejects.toMatchObject({ code: 'TSA_FAILED' });
});

describe.each(['classic', 'xrefStream'] as const)('appendDss on a signed %s file', (name) => {
  test('adds /DSS with certs, OCSPs, CRLs and VRI; merges a second update without duplicates', async () => {
    const pki = await testPki();
    const signed = await signPdf(await fixture(name), pki.users.p256);
    const [sig] = listSignatures(signed);
    const ocsp1 = crypto.randomBytes(300);
    const ocsp2 = crypto.randomBytes(200);
    const crl = crypto.randomBytes(100);
    const once = await appendDss(signed, {
      certs: [pki.users.p256.certDer, pki.intermediate.certDer],
      ocsps: [ocsp1],
      crls: [crl],
      vri: { [sig!.vriKey.toLowerCase()]: { certs: [pki.users.p256.certDer], ocsps: [ocsp1] } },
    });
    expect(once.subarray(0, signed.length).equals(signed)).toBe(true);
    const d1 = readDss(once);
    expect(d1.certs.map((c) => c.toString('hex'))).toEqual([pki.users.p256.certDer, pki.intermediate.certDer].map((c) => c.toString('hex')));
    expect(d1.ocsps).toEqual([ocsp1]);
    expect(d1.crls).toEqual([crl]);
    expect(Object.keys(d1.vri)).toEqual([sig!.vriKey]);
    expect(d1.vri[sig!.vriKey]).toEqual({ certs: [pki.users.p256.certDer], ocsps: [ocsp1], crls: [] });

    const twice = await appendDss(once, { certs: [pki.intermediate.certDer, pki.root.certDer], ocsps: [ocsp2], vri: { [sig!.vriKey]: { ocsps: [ocsp2] } } });
    const d2 = readDss(twice);
    expect(d2.certs).toHaveLength(3);
    expect(d2.ocsps).toEqual([ocsp1, ocsp2]);
    expect(d2.vri[sig!.vriKey]!.ocsps).toEqual([ocsp1, ocsp2]);
    expect(d2.vri[sig!.vriKey]!.certs).toEqual([pki.users.p256.certDer]);

    // PDF 1.7 catalog announces the DSS (ESIC extension level 5), once
    const { PDFDocument, PDFDict, PDFName } = await import('pdf-lib');
    const doc = await PDFDocument.load(twice);
    const esic = doc.catalog.lookup(PDFName.of('Extensions'), PDFDict).lookup(PDFName.of('ESIC'), PDFDict);
    expect(esic.get(PDFName.of('ExtensionLevel'))!.toString()).toBe('5');
    expect(twice.subarray(once.length).toString('latin1')).not.toContain('/ESIC');

    const file = write(`dss-${name}.pdf`, twice);
    expect(await qpdfCheck(file)).toContain('No syntax or stream encoding errors found');
    expect(await pdfsig(file)).toContain('Signature is Valid.');
    // the newest section keeps the original xref style
    const tail = twice.subarray(once.length).toString('latin1');
    if (name === 'classic') expect(tail).toMatch(/\nxref\n/);
    else expect(tail).toMatch(/\/Type \/XRef/);
  });
});

test('appendDss refuses malformed input', async () => {
  const pdf = await fixture('classic');
  await expect(appendDss(pdf, { certs: ['x' as unknown as Buffer], ocsps: [] })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  await expect(appendDss(pdf, { certs: [], ocsps: [], vri: { nothex: {} } })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
});
