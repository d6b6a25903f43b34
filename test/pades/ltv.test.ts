import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPkiServer, type RunningPkiServer } from '../../sandbox/pki';
import { listSignatures, readDss } from '../../src/pades';
import { addDocumentTimestamp } from '../../src/pades/doc-timestamp';
import { addValidationData } from '../../src/pades/ltv';
import { verifyPdfSignatures } from '../../src/pades/verify';
import { parseSignedData, attributeValue } from '../../src/pki/cms';
import { OID } from '../../src/pki/x509';
import { makeNssDb, writePkiFiles } from '../helpers/pki-tools';
import { run, samplePdf, signToLevel, type SignedStages } from './ltv-helpers';

let server: RunningPkiServer;
let dir: string;
let stages: SignedStages;
let nssDir: string;
let tsaUrl: string;

beforeAll(async () => {
  server = await startPkiServer();
  dir = mkdtempSync(join(tmpdir(), 'ltv-test-'));
  writePkiFiles(server.pki, dir);
  nssDir = await makeNssDb(join(dir, 'nss'), server.pki.root.certPem);
  tsaUrl = `${server.baseUrl}/ca/tsa`;
  const { pki } = server;
  stages = await signToLevel(await samplePdf(), { certDer: pki.users.p256.certDer, privateKey: pki.users.p256.privateKey, chain: [pki.intermediate.certDer] }, 'B-LTA', { tsaUrl, trustedRoots: [pki.root.certDer] });
});

afterAll(async () => {
  server.service.setOcspDown(false);
  server.service.setTsaDown(false);
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  server.service.setOcspDown(false);
  server.service.setTsaDown(false);
});

function save(name: string, data: Buffer): string {
  const f = join(dir, name);
  writeFileSync(f, data);
  return f;
}

describe('B-T signature timestamp and B-LTA document timestamp', () => {
  it('each level is an append-only update of the previous one', () => {
    expect(stages.blt!.subarray(0, stages.bt!.length).equals(stages.bt!)).toBe(true);
    expect(stages.blta!.subarray(0, stages.blt!.length).equals(stages.blt!)).toBe(true);
  });

  it('openssl ts -verify accepts the signature timestamp over the signature value', async () => {
    const [sig] = listSignatures(stages.blta!);
    const parsed = parseSignedData(sig!.contents, 'PDF_INVALID', 'sig');
    const si = parsed.signedData.signerInfos[0]!;
    const token = Buffer.from(attributeValue(si, OID.signatureTimeStampToken, true)!.valueBeforeDecodeView);
    const tokenFile = save('sig-tst.der', token);
    const dataFile = save('sig-value.bin', Buffer.from(si.signature.valueBlock.valueHexView));
    const { stdout } = await run('openssl', ['ts', '-verify', '-token_in', '-in', tokenFile, '-data', dataFile, '-CAfile', join(dir, 'root.crt'), '-untrusted', join(dir, 'intermediate.crt')]);
    expect(stdout).toContain('Verification: OK');
  });

  it('openssl ts -verify accepts the document timestamp over the ByteRange bytes', async () => {
    const sigs = listSignatures(stages.blta!);
    const dts = sigs.find((s) => s.type === 'docTimestamp')!;
    expect(dts.coversWholeDocument).toBe(true);
    const [, l1, o2, l2] = dts.byteRange as [number, number, number, number];
    const data = Buffer.concat([stages.blta!.subarray(0, l1), stages.blta!.subarray(o2, o2 + l2)]);
    const { stdout } = await run('openssl', ['ts', '-verify', '-token_in', '-in', save('doc-tst.der', dts.contents), '-data', save('doc-signed.bin', data), '-CAfile', join(dir, 'root.crt'), '-untrusted', join(dir, 'intermediate.crt')]);
    expect(stdout).toContain('Verification: OK');
  });
});

describe('B-LT validation data', () => {
  it('DSS holds the signer and TSA chains, responder certs, and an OCSP response per non-anchor cert (openssl parses each)', async () => {
    const { pki } = server;
    const dss = readDss(stages.blt!);
    for (const c of [pki.users.p256.certDer, pki.intermediate.certDer, pki.root.certDer, pki.tsa.certDer]) {
      expect(dss.certs.some((x) => x.equals(c))).toBe(true);
    }
    expect(dss.certs.some((x) => x.equals(pki.ocspSigners.intermediate.certDer))).toBe(true);
    expect(dss.certs.some((x) => x.equals(pki.ocspSigners.root.certDer))).toBe(true);
    // user, intermediate (shared by both chains), TSA
    expect(dss.ocsps).toHaveLength(3);
    const serials = new Set<string>();
    for (const [i, der] of dss.ocsps.entries()) {
      const { stdout } = await run('openssl', ['ocsp', '-respin', save(`ocsp${i}.der`, der), '-resp_text', '-CAfile', join(dir, 'chain.pem')], {});
      expect(stdout).toContain('Cert Status: good');
      serials.add(/Serial Number: ([0-9A-F]+)/.exec(stdout)![1]!.toLowerCase().replace(/^0+/, ''));
    }
    expect(serials).toEqual(new Set([pki.users.p256.serialHex, pki.intermediate.serialHex, pki.tsa.serialHex].map((s) => s.replace(/^0+/, ''))));
  });

  it('writes a VRI entry keyed by the signature /Contents SHA-1', () => {
    const [sig] = listSignatures(stages.blt!);
    const dss = readDss(stages.blt!);
    expect(Object.keys(dss.vri)).toEqual([sig!.vriKey]);
    expect(dss.vri[sig!.vriKey]!.ocsps).toHaveLength(3);
  });

  it.each(['bb', 'bt', 'blt', 'blta'] as const)('qpdf --check is clean at %s', async (stage) => {
    const pdf = stage === 'bb'
      ? (await signToLevel(await samplePdf(), { certDer: server.pki.users.p384.certDer, privateKey: server.pki.users.p384.privateKey, chain: [server.pki.intermediate.certDer] }, 'B-B', { tsaUrl, trustedRoots: [] })).bb!
      : stages[stage]!;
    const { stdout } = await run('qpdf', ['--check', save(`check-${stage}.pdf`, pdf)]);
    expect(stdout).toContain('No syntax or stream encoding errors found');
  });

  it('pdfsig: signature valid and certificate trusted at B-LTA (AIA OCSP reachable)', async () => {
    const file = save('lta.pdf', stages.blta!);
    const res = await run('pdfsig', ['-nssdir', `sql:${nssDir}`, file]).catch((e: { stdout: string }) => e);
    const out = (res as { stdout: string }).stdout;
    const first = out.split(/Signature #2/)[0]!;
    expect(first).toContain('Signature Validation: Signature is Valid.');
    expect(first).toContain('Certificate Validation: Certificate is Trusted.');
  });

  it('adds validation data for an existing B-LTA again (renewal) without breaking earlier signatures', async () => {
    const again = await addValidationData(stages.blta!, { trustedRoots: [server.pki.root.certDer] });
    const report = await verifyPdfSignatures(again, { trustedRoots: [server.pki.root.certDer] });
    expect(report.signatures.map((s) => [s.type, s.integrity.digestMatches && s.integrity.signatureValid])).toEqual([['signature', true], ['docTimestamp', true]]);
    expect(report.signatures[1]!.revocationDataComplete).toBe(true); // the doc timestamp's TSA chain now has OCSP too
  });
});

describe('refusals', () => {
  it('revoked signer -> OCSP_REVOKED and nothing written', async () => {
    const { pki } = server;
    const bt = (await signToLevel(await samplePdf(), { certDer: pki.users.revoked.certDer, privateKey: pki.users.revoked.privateKey, chain: [pki.intermediate.certDer] }, 'B-T', { tsaUrl, trustedRoots: [] })).bt!;
    await expect(addValidationData(bt, { trustedRoots: [pki.root.certDer] })).rejects.toMatchObject({ code: 'OCSP_REVOKED', message: expect.stringContaining('revoked since') });
  });

  it('OCSP down -> OCSP_FAILED naming the responder', async () => {
    server.service.setOcspDown(true);
    await expect(addValidationData(stages.bt!, { trustedRoots: [server.pki.root.certDer] })).rejects.toMatchObject({ code: 'OCSP_FAILED', message: expect.stringContaining(`${server.baseUrl}/ca/ocsp answered HTTP 503`) });
  });

  it('TSA down -> TSA_FAILED for the signature timestamp and the document timestamp', async () => {
    server.service.setTsaDown(true);
    const { pki } = server;
    await expect(signToLevel(await samplePdf(), { certDer: pki.users.p256.certDer, privateKey: pki.users.p256.privateKey, chain: [] }, 'B-T', { tsaUrl, trustedRoots: [] })).rejects.toMatchObject({ code: 'TSA_FAILED' });
    await expect(addDocumentTimestamp(stages.blt!, { tsaUrl })).rejects.toMatchObject({ code: 'TSA_FAILED' });
  });

  it('a PDF without signatures is refused', async () => {
    await expect(addValidationData(await samplePdf())).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
