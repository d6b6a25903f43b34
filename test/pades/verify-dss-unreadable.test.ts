/**
 * A file's DSS is data anyone can append: an item that is not a readable certificate is left out of the checks and
 * counted, and the report on every signature still comes out the same as without it.
 */
import { startPkiServer, type RunningPkiServer } from '../../sandbox/pki';
import { appendDss } from '../../src/pades/dss';
import { addValidationData } from '../../src/pades/ltv';
import { verifyPdfSignatures } from '../../src/pades/verify';
import { samplePdf, signToLevel } from './ltv-helpers';

let server: RunningPkiServer;
let root: Buffer;
let bt: Buffer;
let blt: Buffer;
let userCert: Buffer;

beforeAll(async () => {
  server = await startPkiServer();
  const { pki } = server;
  root = pki.root.certDer;
  userCert = pki.users.p256.certDer;
  const signer = { certDer: userCert, privateKey: pki.users.p256.privateKey, chain: [pki.intermediate.certDer] };
  bt = (await signToLevel(await samplePdf(), signer, 'B-T', { tsaUrl: `${server.baseUrl}/ca/tsa`, trustedRoots: [root] })).bt!;
  blt = await addValidationData(bt, { trustedRoots: [root] });
});
afterAll(async () => { await server?.close(); });

const unreadable: [string, () => Buffer][] = [
  ['bytes that are not DER', () => Buffer.from('not a certificate')],
  ['a DER structure that is not a certificate', () => Buffer.from([0x30, 0x03, 0x02, 0x01, 0x05])],
  ['a certificate cut short', () => userCert.subarray(0, 100)],
];

describe.each(unreadable)('a DSS certificate that is %s', (_what, item) => {
  it('is ignored and counted; a B-T signature stays valid at B-T', async () => {
    const withJunk = await appendDss(bt, { certs: [item()], ocsps: [], crls: [] });
    const report = await verifyPdfSignatures(withJunk, { trustedRoots: [root] });
    expect(report).toMatchObject({ valid: true, level: 'B-T', dss: { certs: 0, ignoredCerts: 1 } });
  });

  it('beside the real validation data: B-LT as before, only the readable certificates counted', async () => {
    const before = await verifyPdfSignatures(blt, { trustedRoots: [root] });
    const report = await verifyPdfSignatures(await appendDss(blt, { certs: [item()], ocsps: [], crls: [] }), { trustedRoots: [root] });
    expect(before).toMatchObject({ valid: true, level: 'B-LT' });
    expect(report).toMatchObject({ valid: true, level: 'B-LT', dss: { certs: before.dss.certs, ignoredCerts: 1 } });
    expect(before.dss.ignoredCerts).toBeUndefined();
  });
});
