import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JOSE_CURVE_OF_OPENSSL } from '../../src/keys';
import { readUserCertificate } from '../../src/sign/user-certificate';
import { oid, seq, set, smallInteger, tlv } from '../../src/pades/der';

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

  it('checks name values on arrival although it formats them only when read (odd-length BMPString, code point past U+10FFFF)', () => {
    for (const [tag, value] of [[0x1e, Buffer.from([0x00, 0x41, 0x00])], [0x1c, Buffer.from([0x00, 0x11, 0x00, 0x00])]] as const) {
      expect(() => readUserCertificate(certificateWithSubjectValue(tag, value))).toThrow(expect.objectContaining({ code: 'WEBHOOK_TOKEN_INVALID', details: expect.objectContaining({ field: 'user_cert' }) }));
    }
    // the same structure with a readable BMPString is accepted, and its subject reads as node:crypto prints it
    const good = certificateWithSubjectValue(0x1e, Buffer.from([0x00, 0x41, 0x00, 0x42]));
    expect(readUserCertificate(good).subject).toBe(new X509Certificate(good).subject);
  });

  it('reads validity times as RFC 5280 writes them (UTCTime 50-99 is 19xx, GeneralizedTime with a fraction) and refuses malformed ones', () => {
    const cn = Buffer.from('T');
    const read = (validity: [Buffer, Buffer]) => readUserCertificate(certificateWithSubjectValue(0x0c, cn, validity));
    expect(read([utcTime('491231235959Z'), utcTime('500101000000Z')])).toMatchObject({ notBefore: '2049-12-31T23:59:59.000Z', notAfter: '1950-01-01T00:00:00.000Z' });
    expect(read([generalizedTime('20500101120000Z'), generalizedTime('20991231235959.25Z')])).toMatchObject({ notBefore: '2050-01-01T12:00:00.000Z', notAfter: '2099-12-31T23:59:59.000Z' });
    const bad = [utcTime('2601010000Z'), utcTime('260101000000'), utcTime('26010100000aZ'), utcTime('260101000000Z0'), utcTime('26-101000000Z'),
      generalizedTime('20260101000000.Z'), generalizedTime('260101000000Z'), generalizedTime('20260101000000.5'), tlv(0x04, Buffer.from('260101000000Z'))];
    for (const time of bad) {
      expect(() => read([time, utcTime('270101000000Z')])).toThrow(expect.objectContaining({ code: 'WEBHOOK_TOKEN_INVALID' }));
    }
  });

  it('the summary is a plain object to its readers: spread and JSON carry the formatted fields', () => {
    const der = opensslCertificate(EC('P-256'), '/CN=Plain/O=Org');
    const summary = readUserCertificate(der);
    const { der: _der, ...rest } = { ...summary };
    expect(JSON.parse(JSON.stringify(rest))).toEqual({ base64: der.toString('base64'), ...reference(der) });
    summary.subject = 'CN=Changed';
    expect(summary.subject).toBe('CN=Changed');
  });
});

const utcTime = (s: string) => tlv(0x17, Buffer.from(s, 'latin1'));
const generalizedTime = (s: string) => tlv(0x18, Buffer.from(s, 'latin1'));

/** A certificate (made here, signature not valid: the reader does not check it) whose subject CN has this value. */
function certificateWithSubjectValue(tag: number, value: Buffer, validity: [Buffer, Buffer] = [utcTime('260101000000Z'), utcTime('270101000000Z')]): Buffer {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ecdsaSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const name = (v: Buffer) => seq(set(seq(oid('2.5.4.3'), v)));
  const tbs = seq(tlv(0xa0, smallInteger(2)), smallInteger(1), ecdsaSha256, name(tlv(0x0c, Buffer.from('Issuer'))),
    seq(...validity), name(tlv(tag, value)), publicKey.export({ type: 'spki', format: 'der' }) as Buffer);
  return seq(tbs, ecdsaSha256, tlv(0x03, Buffer.from([0x00, 0x30, 0x00])));
}
