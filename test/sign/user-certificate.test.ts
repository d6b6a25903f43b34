import { X509Certificate } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JOSE_CURVE_OF_OPENSSL } from '../../src/keys';
import { readUserCertificate } from '../../src/sign/user-certificate';

/** Certificates made by openssl (an independent encoder) with names that need escaping, UTF-8, multi-valued RDNs. */
function opensslCertificate(key: string[], subject: string, extra: string[] = []): Buffer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'usercert-'));
  try {
    execFileSync('openssl', ['req', '-x509', ...key, '-nodes', '-keyout', path.join(dir, 'k'), '-utf8', '-subj', subject, '-days', '30', '-outform', 'DER', '-out', path.join(dir, 'c'), ...extra], { stdio: 'pipe' });
    return fs.readFileSync(path.join(dir, 'c'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What node:crypto's X509Certificate says: the reference the summary must agree with. */
function reference(der: Buffer) {
  const c = new X509Certificate(der);
  const k = c.publicKey;
  const d = k.asymmetricKeyDetails;
  return {
    subject: c.subject, issuer: c.issuer, serialNumber: c.serialNumber,
    notBefore: new Date(c.validFrom).toISOString(), notAfter: new Date(c.validTo).toISOString(),
    publicKeyAlgorithm: k.asymmetricKeyType === 'ec' ? `EC ${JOSE_CURVE_OF_OPENSSL[String(d?.namedCurve)] ?? d?.namedCurve}` : `${k.asymmetricKeyType?.toUpperCase()}${d?.modulusLength ? ` ${d.modulusLength}` : ''}`,
  };
}

const EC = (curve: string) => ['-newkey', 'ec', '-pkeyopt', `ec_paramgen_curve:${curve}`];
const CASES: Array<[string, string[], string, string[]]> = [
  ['P-256, plain', EC('P-256'), '/CN=Test', []],
  ['P-384, multi-valued RDN and an OID without short name', EC('P-384'), '/C=SG/O=Org/CN=Tan Ah Kow+serialNumber=S1234567A/2.5.4.97=NTRSG-123', ['-multivalue-rdn']],
  ['P-521, UTF-8 and a serial with a leading zero byte', EC('P-521'), '/CN=李小龍 café/O=Test', ['-set_serial', '0x00ff01']],
  ['RSA 2048, characters RFC 2253 escapes', ['-newkey', 'rsa:2048'], '/C=SG/O=Acme, Inc. \\+ "x"/OU=a;b <c> \\\\ d/CN= #lead and trail /emailAddress=a@b.sg', []],
  ['RSA-PSS 2048, small serial', ['-newkey', 'rsa-pss', '-pkeyopt', 'rsa_keygen_bits:2048'], '/CN=PSS/DC=example/DC=sg', ['-set_serial', '7']],
  ['Ed25519', ['-newkey', 'ed25519'], '/CN=Edwards/L=Singapore/ST=SG/street=1 Road/title=Dr/GN=A/SN=B', []],
];

describe('readUserCertificate agrees with node:crypto X509Certificate', () => {
  it.each(CASES)('%s', (_name, key, subject, extra) => {
    const der = opensslCertificate(key, subject, extra);
    expect(readUserCertificate(der)).toEqual({ der, base64: der.toString('base64'), ...reference(der) });
  });

  it('refuses what is not a certificate: trailing bytes, truncation, wrong types', () => {
    const der = opensslCertificate(EC('P-256'), '/CN=Test');
    for (const bad of [Buffer.concat([der, Buffer.from([0])]), der.subarray(0, der.length - 1), Buffer.from([0x30, 0x03, 0x02, 0x01, 0x01]), Buffer.from('not a certificate')]) {
      expect(() => readUserCertificate(bad)).toThrow(expect.objectContaining({ code: 'WEBHOOK_TOKEN_INVALID', details: expect.objectContaining({ field: 'user_cert' }) }));
    }
  });
});
