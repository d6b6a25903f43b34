import { SingpassFlowsError } from '../errors';
import { JOSE_CURVE_OF_OPENSSL } from '../keys';
import { children, contentOf, decodeOid, readTlv, type Tlv } from '../pades/der';

/** The user's signing certificate as delivered by the certificate notification. Keep it only for the session. */
export interface UserCertificate {
  der: Buffer;
  base64: string;
  /** Distinguished name, one attribute per line (`C=SG\nCN=…`), as node:crypto's `X509Certificate#subject`. */
  subject: string;
  issuer: string;
  /** Upper-case hex, as `X509Certificate#serialNumber`. */
  serialNumber: string;
  /** ISO 8601. */
  notBefore: string;
  notAfter: string;
  /** e.g. `EC P-256`, `RSA 2048`. */
  publicKeyAlgorithm: string;
}

/**
 * Read the certificate a certificate notification carries, in plain JavaScript. This is a summary for display and
 * for the session record, not a trust decision: the certificate is checked (chain, validity, revocation) before its
 * hash is submitted, and its key when the signature arrives. node:crypto's X509Certificate would cost more than
 * verifying the notification's own ES256 signature (OpenSSL 3 decodes the public key eagerly), so the webhook path
 * reads the DER itself — strictly: one DER SEQUENCE of TBSCertificate, algorithm and BIT STRING with no trailing
 * bytes, each TBSCertificate field of the right type.
 */
export function readUserCertificate(der: Buffer, base64 = der.toString('base64')): UserCertificate {
  try {
    const cert = readTlv(der);
    if (cert.tag !== 0x30 || cert.end !== der.length) throw new Error('not one DER SEQUENCE');
    const [tbs, sigAlg, sigValue, extra] = children(der, cert);
    expect(tbs, 0x30);
    expect(sigAlg, 0x30);
    expect(sigValue, 0x03);
    if (extra) throw new Error('trailing certificate member');
    const fields = children(der, tbs);
    const version = fields[0]?.tag === 0xa0 ? fields.shift() : undefined;
    if (version) expect(children(der, version)[0], 0x02);
    const [serial, signature, issuer, validity, subject, spki] = fields;
    expect(serial, 0x02);
    expect(signature, 0x30);
    const [from, to] = children(der, expect(validity, 0x30));
    return {
      der, base64,
      subject: formatName(der, expect(subject, 0x30)),
      issuer: formatName(der, expect(issuer, 0x30)),
      serialNumber: serialHex(contentOf(der, serial)),
      notBefore: readTime(der, from).toISOString(),
      notAfter: readTime(der, to).toISOString(),
      publicKeyAlgorithm: keyAlgorithm(der, expect(spki, 0x30)),
    };
  } catch (e) {
    if (e instanceof SingpassFlowsError) throw e;
    throw new SingpassFlowsError('WEBHOOK_TOKEN_INVALID', 'The certificate notification carries data that is not an X.509 certificate ("user_cert")', { field: 'user_cert' }, { cause: e });
  }
}

function expect(t: Tlv | undefined, tag: number): Tlv {
  if (!t || t.tag !== tag) throw new Error(`expected DER tag 0x${tag.toString(16)}`);
  return t;
}

/** Dotted OIDs by their DER content in hex: the names in a certificate repeat a handful of OIDs. */
const DOTTED = new Map<string, string>();
function oidOf(der: Buffer, t: Tlv | undefined): string {
  const oid = expect(t, 0x06);
  // toString(…, start, end) rather than a subarray: no Buffer allocated per attribute on this hot path
  const hex = der.toString('hex', oid.contentStart, oid.end);
  let dotted = DOTTED.get(hex);
  if (dotted === undefined) {
    dotted = decodeOid(contentOf(der, oid));
    if (DOTTED.size < 256) DOTTED.set(hex, dotted);
  }
  return dotted;
}

/** OpenSSL's short names (node:crypto prints names with them); others print as the dotted OID, as OpenSSL does. */
const SHORT_NAMES: Record<string, string> = {
  '2.5.4.3': 'CN', '2.5.4.4': 'SN', '2.5.4.5': 'serialNumber', '2.5.4.6': 'C', '2.5.4.7': 'L', '2.5.4.8': 'ST',
  '2.5.4.9': 'street', '2.5.4.10': 'O', '2.5.4.11': 'OU', '2.5.4.12': 'title', '2.5.4.17': 'postalCode',
  '2.5.4.42': 'GN', '2.5.4.43': 'initials', '2.5.4.44': 'generationQualifier', '2.5.4.46': 'dnQualifier',
  '2.5.4.65': 'pseudonym', '2.5.4.97': 'organizationIdentifier', '2.5.4.15': 'businessCategory',
  '1.2.840.113549.1.9.1': 'emailAddress', '0.9.2342.19200300.100.1.25': 'DC', '0.9.2342.19200300.100.1.1': 'UID',
};

/** node:crypto's multi-line form: one RDN per line, `+` between the values of a multi-valued RDN, RFC 2253 escapes. */
function formatName(der: Buffer, name: Tlv): string {
  return children(der, name).map((rdn) => {
    expect(rdn, 0x31);
    return children(der, rdn).map((atv) => {
      const [type, value] = children(der, expect(atv, 0x30));
      const oid = oidOf(der, type);
      if (!value) throw new Error('attribute without value');
      const text = stringValue(der, value);
      // values of other ASN.1 types print as # and their DER in hex (RFC 2253)
      return `${SHORT_NAMES[oid] ?? oid}=${text === undefined ? `#${der.subarray(value.start, value.end).toString('hex').toUpperCase()}` : escapeValue(text)}`;
    }).join(' + ');
  }).join('\n');
}

function stringValue(der: Buffer, t: Tlv): string | undefined {
  switch (t.tag) {
    case 0x0c: return der.toString('utf8', t.contentStart, t.end); // UTF8String
    case 0x12: case 0x13: case 0x16: case 0x1a: case 0x14: return der.toString('latin1', t.contentStart, t.end); // Numeric, Printable, IA5, Visible, Teletex
    case 0x1e: return Buffer.from(contentOf(der, t)).swap16().toString('utf16le'); // BMPString (UTF-16BE)
    case 0x1c: { // UniversalString
      const c = contentOf(der, t);
      return String.fromCodePoint(...Array.from({ length: c.length >> 2 }, (_, i) => c.readUInt32BE(i * 4)));
    }
    default: return undefined;
  }
}

/** Anything {@link escapeValue} would change: most names have nothing to escape, and this is one test instead of four. */
const NEEDS_ESCAPE = /[,+"\\<>;\x00-\x1f\x7f]|^[# ]| $/;

/** RFC 2253 escapes, and control characters as \XX (OpenSSL's ESC_2253 | ESC_CTRL). */
function escapeValue(v: string): string {
  if (!NEEDS_ESCAPE.test(v)) return v;
  return v.replace(/[,+"\\<>;]/g, '\\$&')
    .replace(/[\x00-\x1f\x7f]/g, (c) => `\\${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)
    .replace(/^[# ]/, '\\$&')
    .replace(/ $/, '\\ ');
}

function serialHex(content: Buffer): string {
  let i = 0;
  while (i < content.length - 1 && content[i] === 0) i++;
  return content.subarray(i).toString('hex').toUpperCase();
}

/** UTCTime `YYMMDDHHMMSSZ` or GeneralizedTime `YYYYMMDDHHMMSS[.f]Z`, digits read in place (no regex, no substring). */
function readTime(der: Buffer, t: Tlv | undefined): Date {
  const generalized = t?.tag === 0x18;
  if (!t || (t.tag !== 0x17 && !generalized)) throw new Error('bad validity time');
  let pos = t.contentStart;
  const digits = (n: number): number => {
    let v = 0;
    for (const stop = pos + n; pos < stop; pos++) {
      const d = (der[pos] ?? 0) - 0x30;
      if (pos >= t.end || d < 0 || d > 9) throw new Error('bad validity time');
      v = v * 10 + d;
    }
    return v;
  };
  const yy = digits(generalized ? 4 : 2);
  const year = generalized ? yy : (yy < 50 ? 2000 : 1900) + yy;
  const [month, day, hour, minute, second] = [digits(2), digits(2), digits(2), digits(2), digits(2)];
  if (generalized && der[pos] === 0x2e) { // fraction of a second: digits, at least one
    const from = ++pos;
    while (pos < t.end && der[pos] >= 0x30 && der[pos] <= 0x39) pos++;
    if (pos === from) throw new Error('bad validity time');
  }
  if (der[pos] !== 0x5a || pos + 1 !== t.end) throw new Error('bad validity time');
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  if (Number.isNaN(date.getTime())) throw new Error('bad validity time');
  return date;
}

const CURVE_NAMES: Record<string, string> = {
  '1.2.840.10045.3.1.7': 'prime256v1', '1.3.132.0.34': 'secp384r1', '1.3.132.0.35': 'secp521r1',
  '1.2.840.10045.3.1.1': 'prime192v1', '1.3.132.0.10': 'secp256k1', '1.3.132.0.33': 'secp224r1',
};

const MIN_RSA_BITS = 2048;

/** `EC P-256`, `RSA 2048`, … from the SubjectPublicKeyInfo, as the summary has always named them. */
function keyAlgorithm(der: Buffer, spki: Tlv): string {
  const [alg, key] = children(der, spki);
  const [algOid, params] = children(der, expect(alg, 0x30));
  const oid = oidOf(der, algOid);
  const bits = contentOf(der, expect(key, 0x03));
  if (bits.length < 2 || bits[0] !== 0) throw new Error('bad public key BIT STRING');
  if (oid === '1.2.840.10045.2.1') {
    const curveOid = oidOf(der, params);
    const openssl = CURVE_NAMES[curveOid] ?? curveOid;
    return `EC ${JOSE_CURVE_OF_OPENSSL[openssl] ?? openssl}`;
  }
  if (oid === '1.2.840.113549.1.1.1' || oid === '1.2.840.113549.1.1.10') {
    const rsaKey = bits.subarray(1);
    const [modulus] = children(rsaKey, expect(readTlv(rsaKey), 0x30));
    let m = contentOf(rsaKey, expect(modulus, 0x02));
    while (m.length > 1 && m[0] === 0) m = m.subarray(1);
    const length = (m.length - 1) * 8 + (32 - Math.clz32(m[0]));
    if (length < MIN_RSA_BITS) {
      // A signature under such a key can be forged; no qualified CA issues one, so it is not the service talking.
      throw new SingpassFlowsError('WEBHOOK_TOKEN_INVALID', `The certificate notification carries a certificate with a ${length}-bit RSA key ("user_cert"); at least ${MIN_RSA_BITS} bits are required`, { field: 'user_cert' });
    }
    return `${oid.endsWith('.10') ? 'RSA-PSS' : 'RSA'} ${length}`;
  }
  return ({ '1.3.101.112': 'ED25519', '1.3.101.113': 'ED448' } as Record<string, string>)[oid] ?? oid;
}
