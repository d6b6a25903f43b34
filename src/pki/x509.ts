import { createHash, createPublicKey, verify as cryptoVerify, X509Certificate, type KeyObject } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { SingpassFlowsError, invalidInput, type ErrorCode } from '../errors';
import { OID } from './oid';

export { OID };

export type HashName = 'sha1' | 'sha256' | 'sha384' | 'sha512';

const HASH_BY_OID: Record<string, HashName> = {
  [OID.sha1]: 'sha1',
  [OID.sha256]: 'sha256',
  [OID.sha384]: 'sha384',
  [OID.sha512]: 'sha512',
};

/** Signature algorithm OID -> hash; `undefined` hash means "take it from the digestAlgorithm" (CMS allows that). */
const SIG_ALGS: Record<string, { hash?: HashName; kind: 'ec' | 'rsa' }> = {
  '1.2.840.10045.4.1': { hash: 'sha1', kind: 'ec' },
  [OID.ecdsaWithSha256]: { hash: 'sha256', kind: 'ec' },
  '1.2.840.10045.4.3.3': { hash: 'sha384', kind: 'ec' },
  '1.2.840.10045.4.3.4': { hash: 'sha512', kind: 'ec' },
  '1.2.840.10045.2.1': { kind: 'ec' }, // id-ecPublicKey: seen in the wild inside CMS
  '1.2.840.113549.1.1.1': { kind: 'rsa' }, // rsaEncryption: CMS convention, hash from digestAlgorithm
  '1.2.840.113549.1.1.5': { hash: 'sha1', kind: 'rsa' },
  [OID.sha256WithRsa]: { hash: 'sha256', kind: 'rsa' },
  '1.2.840.113549.1.1.12': { hash: 'sha384', kind: 'rsa' },
  '1.2.840.113549.1.1.13': { hash: 'sha512', kind: 'rsa' },
};

export function hashNameOf(oid: string): HashName | undefined {
  return HASH_BY_OID[oid];
}

export function hashOidOf(name: HashName): string {
  return OID[name];
}

export function digest(hash: HashName, ...parts: Uint8Array[]): Buffer {
  const h = createHash(hash);
  for (const p of parts) h.update(p);
  return h.digest();
}

/** Accepts DER bytes, a PEM block, or base64 DER (what webhooks and config files carry). */
export function toDer(input: Buffer | Uint8Array | string): Buffer {
  if (typeof input !== 'string') return Buffer.from(input);
  const pem = /-----BEGIN [A-Z0-9 ]+-----([\s\S]*?)-----END [A-Z0-9 ]+-----/.exec(input);
  const b64 = (pem ? pem[1] : input).replace(/\s+/g, '');
  return Buffer.from(b64, 'base64');
}

/** Splits a PEM bundle (several certificates) into DER buffers; a DER input is returned as one item. */
export function certsFromPemOrDer(input: Buffer | string): Buffer[] {
  const text = typeof input === 'string' ? input : input.toString('latin1');
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g);
  if (blocks) return blocks.map((b) => toDer(b));
  return [toDer(input)];
}

export function toArrayBuffer(b: Uint8Array): ArrayBuffer {
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}

/**
 * asn1js by default also tries to decode the contents of every OCTET STRING and BIT STRING as BER, in case they hide
 * a structure: an OCSP response's whole BasicOCSPResponse, each extension value, each signature. pkijs and this code
 * decode those contents where they need them, so the speculative pass only doubles the work (an OCSP response: 0.9
 * → 0.05 ms without it).
 */
export const BER_OPTIONS = { parseEmbedded: false } as const;

/** Parses DER with asn1js and fails with `code` (a stable, caller-chosen error) instead of a parser exception. */
export function parseAsn1(der: Uint8Array, code: ErrorCode, what: string): asn1js.AsnType {
  const asn = asn1js.fromBER(toArrayBuffer(der), BER_OPTIONS);
  if (asn.offset === -1) throw new SingpassFlowsError(code, `${what} is not valid DER`);
  return asn.result;
}

// pkijs parsing and re-encoding are slow (tens of ms per certificate on a busy machine) and verification touches
// the same few certificates many times: cache parsed certificates (treated as immutable) and their encodings — but
// only the service's own: CAs, OCSP responders and TSAs. A user's signing certificate is personal data and is not
// kept beyond its session; it is parsed again where it is needed.
const PARSED = new Map<string, pkijs.Certificate>();
const PARSED_MAX = 512;
const DER_OF = new WeakMap<object, Buffer>();

export function parseCertificate(der: Uint8Array, code: ErrorCode = 'CHAIN_INCOMPLETE'): pkijs.Certificate {
  const key = createHash('sha256').update(der).digest('base64');
  const hit = PARSED.get(key);
  if (hit) return hit;
  try {
    const cert = new pkijs.Certificate({ schema: parseAsn1(der, code, 'Certificate') });
    DER_OF.set(cert, Buffer.from(der));
    if (!isServiceCertificate(cert)) return cert;
    if (PARSED.size >= PARSED_MAX) PARSED.delete(PARSED.keys().next().value!);
    PARSED.set(key, cert);
    return cert;
  } catch (e) {
    if (e instanceof SingpassFlowsError) throw e;
    throw new SingpassFlowsError(code, 'A certificate could not be parsed', {}, { cause: e });
  }
}

/** A CA, OCSP responder or TSA certificate: what may stay in the parse cache (a user's certificate may not). */
function isServiceCertificate(cert: pkijs.Certificate): boolean {
  if (isCa(cert)) return true;
  const eku = extendedKeyUsages(cert);
  return eku.includes(OID.kpOcspSigning) || eku.includes(OID.kpTimeStamping);
}

export function certDer(cert: pkijs.Certificate): Buffer {
  let der = DER_OF.get(cert);
  if (!der) {
    der = Buffer.from(cert.toSchema().toBER(false));
    DER_OF.set(cert, der);
  }
  return der;
}

/** DER of a pkijs object's Name (issuer/subject), for byte comparison. */
export function nameDer(name: pkijs.RelativeDistinguishedNames): Buffer {
  let der = DER_OF.get(name);
  if (!der) {
    // A parsed name keeps the bytes it was decoded from (what the CA signed): pkijs's toSchema would decode them
    // again only for toBER to re-encode them.
    der = Buffer.from(name.valueBeforeDecode.byteLength > 0 ? name.valueBeforeDecode : name.toSchema().toBER(false));
    DER_OF.set(name, der);
  }
  return der;
}

/** A certificate's subject as shown in messages, reports and logs: see {@link shownSubject}. */
export function subjectString(cert: pkijs.Certificate | Buffer): string {
  const der = Buffer.isBuffer(cert) ? cert : certDer(cert);
  try {
    return shownSubject(new X509Certificate(der).subject);
  } catch {
    return '<unparseable subject>';
  }
}

/** NRIC/FIN-shaped values: a letter of the series, seven digits, a check letter. */
const ID_SHAPED = /\b([STFGM])(\d{7})([A-Z])\b/g;

/**
 * A subject (node's form: one `key=value` per line) on one line for a message, a report or a log line, without
 * personal data: the serialNumber attribute (2.5.4.5), where a Singpass certificate carries the holder's NRIC/FIN,
 * is left out, and any other NRIC/FIN-shaped value is masked. The name (CN) stays: it tells whose certificate it is.
 */
export function shownSubject(subject: string): string {
  return subject.split('\n').filter((part) => !/^serialNumber=/i.test(part)).map(maskIds).join(', ');
}

/** NRIC/FIN-shaped values masked to their last four characters (`*****567D`). */
export function maskIds(text: string): string {
  return text.replace(ID_SHAPED, (_m, _s: string, digits: string, check: string) => `*****${digits.slice(4)}${check}`);
}

/** The common name (CN) of a subject in node's form, NRIC/FIN-shaped values masked; undefined without one. */
export function commonNameOf(subject: string): string | undefined {
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(subject)?.[1];
  return cn === undefined ? undefined : maskIds(cn);
}

export function serialHex(cert: pkijs.Certificate): string {
  return Buffer.from(cert.serialNumber.valueBlock.valueHexView).toString('hex').toUpperCase();
}

export function spkiDer(cert: pkijs.Certificate): Buffer {
  let der = DER_OF.get(cert.subjectPublicKeyInfo);
  if (!der) {
    der = Buffer.from(cert.subjectPublicKeyInfo.toSchema().toBER(false));
    DER_OF.set(cert.subjectPublicKeyInfo, der);
  }
  return der;
}

/** The subjectPublicKey BIT STRING contents (what OCSP's issuerKeyHash hashes). */
export function publicKeyBits(cert: pkijs.Certificate): Buffer {
  return Buffer.from(cert.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView);
}

/** Imported keys by SPKI Buffer: {@link spkiDer} hands out one Buffer per (cached) certificate, so a CA's or an OCSP
 * responder's key is imported once, not on every signature it made. */
const KEY_OF_SPKI = new WeakMap<Buffer, KeyObject>();

/** The key of `spki` imported once per SPKI Buffer (the one a certificate's view holds); throws when it is not a key. */
export function publicKeyOf(spki: Buffer): KeyObject {
  let key = KEY_OF_SPKI.get(spki);
  if (!key) KEY_OF_SPKI.set(spki, (key = createPublicKey({ key: spki, format: 'der', type: 'spki' })));
  return key;
}

/**
 * Verifies a signature with node:crypto. `algorithmOid` is the signatureAlgorithm; `digestOid` supplies the hash
 * when the algorithm OID does not (CMS `rsaEncryption` / `id-ecPublicKey`). ECDSA signatures are DER here (X.509,
 * OCSP and CMS all encode them so).
 */
export function verifySignature(algorithmOid: string, data: Uint8Array, signature: Uint8Array, signerSpki: Buffer, digestOid?: string): boolean {
  const alg = SIG_ALGS[algorithmOid];
  if (!alg) return false;
  const hash = alg.hash ?? (digestOid ? hashNameOf(digestOid) : undefined);
  if (!hash) return false;
  const memoKey = verifiedKey(hash, data, signature, signerSpki);
  if (VERIFIED.has(memoKey)) return true;
  try {
    const key = publicKeyOf(signerSpki);
    if (alg.kind === 'ec' && key.asymmetricKeyType !== 'ec') return false;
    if (alg.kind === 'rsa' && key.asymmetricKeyType !== 'rsa') return false;
    const ok = cryptoVerify(hash, data, alg.kind === 'ec' ? { key, dsaEncoding: 'der' } : key, signature);
    if (ok) remember(memoKey);
    return ok;
  } catch {
    return false;
  }
}

/**
 * Signatures already verified in this process, by a SHA-256 over everything the verification depends on (algorithm
 * kind and hash, key, signature, signed bytes): the same OCSP answers, CA certificates and timestamp tokens are
 * checked again by each step of a session (validation data, document timestamp, verification) and each signature
 * relying on them, and a P-384 verification costs far more than this hash. Only successes are kept (a failure is
 * recomputed); statuses, dates and freshness are never cached here, only the arithmetic. Bounded, oldest out first.
 */
const VERIFIED = new Set<string>();
const VERIFIED_MAX = 4096;

function verifiedKey(hash: string, data: Uint8Array, signature: Uint8Array, spki: Buffer): string {
  const h = createHash('sha256').update(hash).update('\0');
  for (const part of [spki, signature, data]) h.update(Buffer.from(String(part.byteLength) + ':')).update(part);
  return h.digest('base64');
}

function remember(key: string): void {
  if (VERIFIED.size >= VERIFIED_MAX) VERIFIED.delete(VERIFIED.values().next().value!);
  VERIFIED.add(key);
}

export function isSupportedSignatureAlgorithm(oid: string): boolean {
  return oid in SIG_ALGS;
}

/** True when `issuer` issued `cert`: names match and the certificate signature verifies with the issuer key. */
const ISSUED_BY = new WeakMap<pkijs.Certificate, WeakMap<pkijs.Certificate, boolean>>();

export function isIssuedBy(cert: pkijs.Certificate, issuer: pkijs.Certificate): boolean {
  if (!nameDer(cert.issuer).equals(nameDer(issuer.subject))) return false;
  let byIssuer = ISSUED_BY.get(cert);
  if (!byIssuer) ISSUED_BY.set(cert, (byIssuer = new WeakMap()));
  const known = byIssuer.get(issuer);
  if (known !== undefined) return known;
  const ok = verifySignature(cert.signatureAlgorithm.algorithmId, new Uint8Array(cert.tbsView), cert.signatureValue.valueBlock.valueHexView, spkiDer(issuer));
  byIssuer.set(issuer, ok);
  return ok;
}

/** A certificate as DER, PEM, or already parsed (a caller holding the parse saves the OCSP/CRL lookup another one). */
export type CertificateInput = Buffer | string | pkijs.Certificate;

/**
 * Parses a certificate and the issuer a caller names for it (for an OCSP or CRL lookup) and checks that this issuer
 * did issue it: a wrong pairing is the caller's input error, named as such, not a revocation failure.
 */
export function parseIssuedPair(cert: CertificateInput, issuer: CertificateInput, code: ErrorCode): { certParsed: pkijs.Certificate; issuerParsed: pkijs.Certificate } {
  const certParsed = cert instanceof pkijs.Certificate ? cert : parseCertificate(toDer(cert), code);
  const issuerParsed = issuer instanceof pkijs.Certificate ? issuer : parseCertificate(toDer(issuer), code);
  if (!isIssuedBy(certParsed, issuerParsed)) {
    throw invalidInput('issuer', `"${subjectString(issuerParsed)}" did not issue "${subjectString(certParsed)}"`);
  }
  return { certParsed, issuerParsed };
}

export function isSelfSigned(cert: pkijs.Certificate): boolean {
  return isIssuedBy(cert, cert);
}

export function extensionOf(cert: pkijs.Certificate, oid: string): pkijs.Extension | undefined {
  return cert.extensions?.find((e) => e.extnID === oid);
}

export function extendedKeyUsages(cert: pkijs.Certificate): string[] {
  const ext = extensionOf(cert, OID.extKeyUsage);
  const parsed = ext?.parsedValue as pkijs.ExtKeyUsage | undefined;
  return parsed?.keyPurposes ?? [];
}

/**
 * The `invalidityDate` of a CRL entry or OCSP single response (RFC 5280 5.3.2): when the key is known or suspected to
 * have become invalid, which may be before the revocation date.
 */
export function invalidityDateOf(extensions: pkijs.Extension[] | undefined): Date | undefined {
  const ext = extensions?.find((e) => e.extnID === OID.invalidityDate);
  if (!ext) return undefined;
  const v = asn1js.fromBER(ext.extnValue.valueBlock.valueHexView).result;
  return v instanceof asn1js.GeneralizedTime ? v.toDate() : undefined;
}

/**
 * From when a revoked certificate counts as revoked: its revocation date, or its invalidity date when that is earlier
 * (a key compromised before the CA revoked it). Undefined when neither is known.
 */
export function revokedSince(r: { revokedAt?: Date; invalidSince?: Date }): Date | undefined {
  if (r.invalidSince && (!r.revokedAt || r.invalidSince < r.revokedAt)) return r.invalidSince;
  return r.revokedAt;
}

/** RFC 5280 keyUsage bits, numbered from the BIT STRING's first (most significant) bit. */
const KEY_USAGE_BITS = { digitalSignature: 0, nonRepudiation: 1, keyEncipherment: 2, dataEncipherment: 3, keyAgreement: 4, keyCertSign: 5, cRLSign: 6 } as const;

/** Whether `cert`'s key may be used for `usage`. A certificate without keyUsage is not restricted (RFC 5280 4.2.1.3). */
export function keyUsageAllows(cert: pkijs.Certificate, usage: keyof typeof KEY_USAGE_BITS): boolean {
  const ext = extensionOf(cert, OID.keyUsage);
  if (!ext) return true;
  const bits = ext.parsedValue instanceof asn1js.BitString ? ext.parsedValue.valueBlock.valueHexView : undefined;
  if (!bits) return false; // present but unreadable: not a permission
  const bit = KEY_USAGE_BITS[usage];
  return ((bits[bit >> 3] ?? 0) & (0x80 >> (bit & 7))) !== 0;
}

export function isCa(cert: pkijs.Certificate): boolean {
  const parsed = extensionOf(cert, OID.basicConstraints)?.parsedValue as pkijs.BasicConstraints | undefined;
  return !!parsed?.cA;
}

export function isValidAt(cert: pkijs.Certificate, at: Date): boolean {
  return cert.notBefore.value.getTime() <= at.getTime() && at.getTime() <= cert.notAfter.value.getTime();
}

/** A GeneralName's URI when it is one (type 6 = uniformResourceIdentifier) that can be fetched here: http(s), no LDAP. */
function httpUri(name: pkijs.GeneralName): string | undefined {
  return name.type === 6 && /^https?:\/\//i.test(String(name.value)) ? String(name.value) : undefined;
}

function aiaUrl(cert: pkijs.Certificate, method: string): string | undefined {
  const parsed = extensionOf(cert, OID.authorityInfoAccess)?.parsedValue as pkijs.InfoAccess | undefined;
  for (const d of parsed?.accessDescriptions ?? []) {
    const url = d.accessMethod === method ? httpUri(d.accessLocation) : undefined;
    if (url) return url;
  }
  return undefined;
}

/** The OCSP responder URL from the certificate's Authority Information Access, if any. */
export function ocspUrlOf(cert: Buffer | pkijs.Certificate): string | undefined {
  return aiaUrl(Buffer.isBuffer(cert) ? parseCertificate(cert) : cert, OID.adOcsp);
}

/**
 * The http(s) URLs of the certificate's CRL Distribution Points, in order. Distribution points naming a separate CRL
 * issuer (indirect CRLs) or only a name relative to the issuer are skipped, as are LDAP and other schemes.
 */
export function crlUrlsOf(cert: Buffer | pkijs.Certificate): string[] {
  const parsed = extensionOf(Buffer.isBuffer(cert) ? parseCertificate(cert) : cert, OID.crlDistributionPoints)?.parsedValue as pkijs.CRLDistributionPoints | undefined;
  const urls: string[] = [];
  for (const dp of parsed?.distributionPoints ?? []) {
    if (dp.cRLIssuer || !Array.isArray(dp.distributionPoint)) continue;
    for (const n of dp.distributionPoint) {
      const url = httpUri(n);
      if (url) urls.push(url);
    }
  }
  return urls;
}

/** The first http(s) CRL Distribution Point URL, if any (see {@link crlUrlsOf}). */
export function crlUrlOf(cert: Buffer | pkijs.Certificate): string | undefined {
  return crlUrlsOf(cert)[0];
}

/** The issuing CA certificate URL (AIA caIssuers), if any. */
export function caIssuersUrlOf(cert: Buffer | pkijs.Certificate): string | undefined {
  return aiaUrl(Buffer.isBuffer(cert) ? parseCertificate(cert) : cert, OID.adCaIssuers);
}

/** A random positive INTEGER body (minimal DER: first byte 0x01..0x7f), for OCSP/TSA nonces. */
export function positiveNonce(bytes: Buffer): Buffer {
  const n = Buffer.from(bytes);
  n[0] = (n[0] & 0x7f) | 0x01;
  return n;
}
