/**
 * PDFs signed by ANOTHER TOOL: poppler's `pdfsig -add-signature` with an NSS database holding the signer's key and
 * certificate (imported with `pk12util` from an `openssl pkcs12` bundle). No code of ours touches these signatures,
 * so they stand for a document the other party signed before it reached us.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ForeignSigner {
  certPem: string;
  keyPem: string;
  /** Issuer certificates (PEM) put in the bundle, as a signer's tool would hold them. */
  chainPem?: string[];
}

/** A self-signed EC signer made by OpenSSL: its chain can never reach our trusted root. */
export async function selfSignedSigner(dir: string, commonName = 'Other Tool Signer'): Promise<ForeignSigner> {
  const key = path.join(dir, `self-${randomUUID()}.key`);
  const cert = `${key}.crt`;
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert,
    '-subj', `/CN=${commonName}/O=Another Tool/C=SG`, '-days', '30', '-addext', 'keyUsage=critical,digitalSignature,nonRepudiation']);
  return { certPem: fs.readFileSync(cert, 'utf8'), keyPem: fs.readFileSync(key, 'utf8') };
}

/**
 * Signs `pdf` with `pdfsig -add-signature` in a new field `fieldName` and returns the signed PDF: an
 * adbe.pkcs7.detached signature (poppler 22.12 refuses `-etsi` together with `-add-signature`).
 */
export async function signWithPdfsig(pdf: Buffer, signer: ForeignSigner, dir: string, opts: { fieldName: string }): Promise<Buffer> {
  const work = fs.mkdtempSync(path.join(dir, 'pdfsig-'));
  const w = (name: string, data: string | Buffer) => {
    const f = path.join(work, name);
    fs.writeFileSync(f, data, { mode: 0o600 });
    return f;
  };
  const key = w('signer.key', signer.keyPem);
  const cert = w('signer.crt', signer.certPem);
  const bundle = path.join(work, 'signer.p12');
  const chain = signer.chainPem?.length ? ['-certfile', w('chain.pem', signer.chainPem.join(''))] : [];
  await run('openssl', ['pkcs12', '-export', '-inkey', key, '-in', cert, ...chain, '-name', 'foreign', '-passout', 'pass:', '-out', bundle]);
  const db = path.join(work, 'nss');
  fs.mkdirSync(db);
  await run('certutil', ['-N', '-d', `sql:${db}`, '--empty-password']);
  await run('pk12util', ['-i', bundle, '-d', `sql:${db}`, '-W', '']);
  const input = w('in.pdf', pdf);
  const output = path.join(work, 'out.pdf');
  const args = ['-nssdir', `sql:${db}`, '-add-signature', '-nick', 'foreign', '-new-signature-field-name', opts.fieldName,
    '-reason', 'Signed with another tool', input, output];
  // poppler 22.12 sizes /Contents from a trial signature; an ECDSA signature one byte longer than the trial (DER
  // r/s lengths vary) makes it fail with "unable update signature" (seen ~40% of runs here). Signing again is the fix.
  for (let attempt = 1; ; attempt++) {
    try {
      await run('pdfsig', args);
      break;
    } catch (e) {
      if (attempt >= 15 || !String((e as { stderr?: string }).stderr).includes('unable update signature')) throw e;
    }
  }
  const signed = fs.readFileSync(output);
  fs.rmSync(work, { recursive: true, force: true });
  return signed;
}

/** pdfsig's report split per signature: element i is the text of "Signature #(i+1)". */
export function pdfsigSections(report: string): string[] {
  return report.split(/^Signature #\d+:$/m).slice(1);
}
