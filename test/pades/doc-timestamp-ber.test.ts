import { execFile } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { finalizeDocumentTimestamp, listSignatures, prepareDocumentTimestamp } from '../../src/pades';
import { fixture } from '../fixtures/pdfs';
import { extractSignatures, stopPki, testPki, tmpDir } from './helpers';

const run = promisify(execFile);
const dir = tmpDir('ber');
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await stopPki();
});

/** Ask the sandbox TSA directly (not through our client, which normalises tokens) and return its raw token. */
async function rawTimestampToken(digest: Buffer): Promise<Buffer> {
  const req = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: '2.16.840.1.101.3.4.2.1' }),
      hashedMessage: new asn1js.OctetString({ valueHex: new Uint8Array(digest).buffer }),
    }),
    certReq: true,
  });
  const res = await fetch(`${(await testPki()).baseUrl}/ca/tsa`, {
    method: 'POST',
    headers: { 'content-type': 'application/timestamp-query' },
    body: Buffer.from(req.toSchema().toBER(false)),
  });
  const resp = pkijs.TimeStampResp.fromBER(new Uint8Array(await res.arrayBuffer()));
  return Buffer.from(resp.timeStampToken!.toSchema().toBER(false));
}

function eContentIsConstructed(token: Buffer): boolean {
  const ci = asn1js.fromBER(new Uint8Array(token)).result as asn1js.Sequence;
  const sd = (ci.valueBlock.value[1] as asn1js.Constructed).valueBlock.value[0] as asn1js.Sequence;
  const encap = sd.valueBlock.value[2] as asn1js.Sequence;
  return (encap.valueBlock.value[1] as asn1js.Constructed).valueBlock.value[0]!.idBlock.isConstructed;
}

test('a BER timestamp token (constructed OCTET STRING TSTInfo, as pkijs-based TSAs send) is accepted for B-LTA', async () => {
  const pdf = await fixture('classic');
  const { digest, state } = await prepareDocumentTimestamp(pdf);
  const token = await rawTimestampToken(digest);
  expect(eContentIsConstructed(token)).toBe(true); // the case this test is about
  const out = await finalizeDocumentTimestamp(pdf, state, token);
  expect(listSignatures(out)[0]!.contents.equals(token)).toBe(true);

  const pki = await testPki();
  const ext = extractSignatures(out)[0]!;
  const files = Object.fromEntries(
    Object.entries({ tst: ext.cms, data: ext.signed, root: pki.root.certPem, chain: pki.tsa.certPem + pki.intermediate.certPem }).map(([k, v]) => {
      const f = path.join(dir, `${k}-${crypto.randomUUID()}`);
      fs.writeFileSync(f, v);
      return [k, f];
    }),
  );
  const { stdout } = await run('openssl', ['ts', '-verify', '-token_in', '-in', files.tst!, '-data', files.data!, '-CAfile', files.root!, '-untrusted', files.chain!]);
  expect(stdout).toContain('Verification: OK');
});

test('a BER token over other data is still refused (TSA_FAILED)', async () => {
  const pdf = await fixture('classic');
  const { state } = await prepareDocumentTimestamp(pdf);
  const token = await rawTimestampToken(crypto.createHash('sha256').update('other').digest());
  await expect(finalizeDocumentTimestamp(pdf, state, token)).rejects.toMatchObject({ code: 'TSA_FAILED' });
});
