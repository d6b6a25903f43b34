/**
 * Test helpers for PAdES: the sandbox PKI's users as signers (the "phone" signs the SignedAttributes), and wrappers
 * around tools we did not write (qpdf, pdfsig, openssl) plus an independent /ByteRange + /Contents extractor.
 */
import { execFile } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { startPkiServer, type IssuedCert, type RunningPkiServer, type TestPki } from '../../sandbox/pki';
import { makeNssDb } from '../helpers/pki-tools';
import { finalizeSignature, prepareSignature, type PrepareSignatureOptions, type PreparedSignature } from '../../src/pades';

const run = promisify(execFile);

let server: Promise<RunningPkiServer> | undefined;
/**
 * The sandbox test PKI, served on 127.0.0.1 (ephemeral port) so pdfsig can reach the AIA OCSP responder (poppler
 * 22's -no-ocsp path reports a stale NSS error as "Unknown issue with Certificate"). Call {@link stopPki} in afterAll.
 */
export async function testPki(): Promise<TestPki> {
  server ??= startPkiServer();
  return (await server).pki;
}
export async function stopPki(): Promise<void> {
  if (server) await (await server).close();
  server = undefined;
}

/** What the phone does: sign SHA-256(SignedAttributes) with the user's key (ECDSA DER or RSA PKCS#1 v1.5). */
export function phoneSign(state: PreparedSignature, user: IssuedCert, documentHash?: string): Buffer {
  const attrs = Buffer.from(state.signedAttributes, 'base64');
  if (documentHash !== undefined) expect(crypto.createHash('sha256').update(attrs).digest('hex')).toBe(documentHash);
  return crypto.sign('sha256', attrs, { key: user.privateKey, dsaEncoding: 'der' });
}

/** prepare → phone → finalize, with the intermediate in the chain. */
export async function signPdf(pdf: Buffer, user: IssuedCert, opts: Partial<PrepareSignatureOptions> = {}): Promise<Buffer> {
  const pki = await testPki();
  const { documentHash, state } = await prepareSignature(pdf, {
    certificate: user.certDer.toString('base64'),
    chain: [pki.intermediate.certDer],
    ...opts,
  });
  return finalizeSignature(pdf, state, phoneSign(state, user, documentHash).toString('hex'));
}

export function tmpDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `pades-${prefix}-`));
}

/** Signatures found by scanning the raw bytes (independent of src/pades' parser). */
export function extractSignatures(pdf: Buffer): Array<{ byteRange: number[]; cms: Buffer; signed: Buffer }> {
  const text = pdf.toString('latin1');
  const out = [];
  for (const m of text.matchAll(/\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g)) {
    const br = m.slice(1, 5).map(Number);
    const hex = text.slice(br[1]! + 1, br[2]! - 1);
    const raw = Buffer.from(hex, 'hex');
    // DER length of the outer SEQUENCE
    let len = raw[1]!;
    let hdr = 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + raw[2 + i]!;
      hdr = 2 + n;
    }
    out.push({
      byteRange: br,
      cms: raw.subarray(0, hdr + len),
      signed: Buffer.concat([pdf.subarray(br[0]!, br[0]! + br[1]!), pdf.subarray(br[2]!, br[2]! + br[3]!)]),
    });
  }
  return out;
}

export async function qpdfCheck(file: string): Promise<string> {
  try {
    const { stdout } = await run('qpdf', ['--check', file]);
    return stdout;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; code?: number };
    return `EXIT ${err.code}\n${err.stdout}\n${err.stderr}`;
  }
}

let nssPromise: Promise<string> | undefined;
let nssDir: string | undefined;
/** An NSS database trusting the test root, one per test file (removed after it). */
export async function nssDb(): Promise<string> {
  const pki = await testPki();
  nssPromise ??= makeNssDb(path.join((nssDir = tmpDir('nss')), 'db'), pki.root.certPem);
  return nssPromise;
}
// jest evaluates this module once per test file that imports it: the database goes with that file
afterAll(() => {
  if (nssDir) fs.rmSync(nssDir, { recursive: true, force: true });
});

/** pdfsig's report (it exits non-zero when a signature is invalid; we want the text either way). */
export async function pdfsig(file: string): Promise<string> {
  const db = await nssDb();
  try {
    const { stdout } = await run('pdfsig', ['-nssdir', `sql:${db}`, file]);
    return stdout;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    return `${err.stdout ?? ''}\n${err.stderr ?? ''}`;
  }
}

/** `openssl cms -verify` of one signature against the test root; returns [ok, output]. */
export async function opensslCmsVerify(sig: { cms: Buffer; signed: Buffer }, dir: string): Promise<[boolean, string]> {
  const pki = await testPki();
  const p7s = path.join(dir, `sig-${crypto.randomUUID()}.p7s`);
  const content = `${p7s}.bin`;
  const root = path.join(dir, 'root.pem');
  fs.writeFileSync(p7s, sig.cms);
  fs.writeFileSync(content, sig.signed);
  fs.writeFileSync(root, pki.root.certPem);
  try {
    const r = await run('openssl', ['cms', '-verify', '-binary', '-inform', 'DER', '-in', p7s, '-content', content, '-CAfile', root, '-purpose', 'any', '-out', '/dev/null']);
    return [true, r.stderr];
  } catch (e) {
    const err = e as { stderr?: string };
    return [false, err.stderr ?? ''];
  }
}
