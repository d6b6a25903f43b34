import * as crypto from 'node:crypto';
import { promisify } from 'node:util';
import { loadAsn1, type Pkijs } from './deps';

/** Object identifiers used by the test PKI (one place). */
export const OID = {
  commonName: '2.5.4.3',
  serialNumber: '2.5.4.5',
  country: '2.5.4.6',
  organization: '2.5.4.10',
  organizationalUnit: '2.5.4.11',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  certificatePolicies: '2.5.29.32',
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  adOcsp: '1.3.6.1.5.5.7.48.1',
  adCaIssuers: '1.3.6.1.5.5.7.48.2',
  ocspNoCheck: '1.3.6.1.5.5.7.48.1.5',
  ocspNonce: '1.3.6.1.5.5.7.48.1.2',
  ocspBasic: '1.3.6.1.5.5.7.48.1.1',
  kpOcspSigning: '1.3.6.1.5.5.7.3.9',
  kpTimeStamping: '1.3.6.1.5.5.7.3.8',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
  signedData: '1.2.840.113549.1.7.2',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
} as const;

/** node:crypto hash names by digest OID (the three the sandbox accepts, plus SHA-1 for OCSP CertIDs). */
export const HASH_BY_OID: Record<string, { node: string; webcrypto: string; length: number }> = {
  [OID.sha1]: { node: 'sha1', webcrypto: 'SHA-1', length: 20 },
  [OID.sha256]: { node: 'sha256', webcrypto: 'SHA-256', length: 32 },
  [OID.sha384]: { node: 'sha384', webcrypto: 'SHA-384', length: 48 },
  [OID.sha512]: { node: 'sha512', webcrypto: 'SHA-512', length: 64 },
};

export type KeyCurve = 'P-256' | 'P-384' | 'RSA-2048';

/** Subject attributes in the order they are encoded. */
export interface NameSpec {
  C?: string;
  O?: string;
  OU?: string;
  CN: string;
  serialNumber?: string;
}

export function toArrayBuffer(buf: Uint8Array): ArrayBuffer {
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
}

const generateKeyPair = promisify(crypto.generateKeyPair);

/** Async on purpose: RSA generation takes ~1 s on a busy machine and must not stall the servers in the same process. */
export async function generateKey(curve: KeyCurve): Promise<crypto.KeyObject> {
  if (curve === 'RSA-2048') return (await generateKeyPair('rsa', { modulusLength: 2048 })).privateKey;
  return (await generateKeyPair('ec', { namedCurve: curve === 'P-256' ? 'prime256v1' : 'secp384r1' })).privateKey;
}

export function curveOf(key: crypto.KeyObject): KeyCurve {
  if (key.asymmetricKeyType === 'rsa') return 'RSA-2048';
  const c = key.asymmetricKeyDetails?.namedCurve;
  if (c === 'prime256v1') return 'P-256';
  if (c === 'secp384r1') return 'P-384';
  throw new Error(`unsupported key (${key.asymmetricKeyType}/${c ?? '?'})`);
}

/** The digest each signer uses: SHA-384 for P-384 keys, SHA-256 otherwise. */
export function hashFor(key: crypto.KeyObject): 'SHA-256' | 'SHA-384' {
  return curveOf(key) === 'P-384' ? 'SHA-384' : 'SHA-256';
}

/** A WebCrypto signing key for pkijs (which only signs through WebCrypto). */
export async function toSigningCryptoKey(key: crypto.KeyObject): Promise<CryptoKey> {
  const der = key.export({ format: 'der', type: 'pkcs8' });
  const curve = curveOf(key);
  const alg =
    curve === 'RSA-2048'
      ? { name: 'RSASSA-PKCS1-v1_5', hash: hashFor(key) }
      : { name: 'ECDSA', namedCurve: curve };
  return crypto.webcrypto.subtle.importKey('pkcs8', der, alg, false, ['sign']);
}

/** Random positive serial (16 bytes, first byte 0x01..0x7f so the DER integer needs no padding). */
export function randomSerial(): Buffer {
  const b = crypto.randomBytes(16);
  b[0] = (b[0] & 0x7f) || 0x01;
  return b;
}

/** Canonical serial text: lowercase hex, no leading zero bytes. */
export function normalizeSerialHex(hex: string): string {
  const h = hex.trim().toLowerCase().replace(/^0x/, '').replace(/[:\s]/g, '');
  if (!/^[0-9a-f]+$/.test(h)) throw new Error(`not a hexadecimal serial number: ${hex}`);
  const stripped = h.replace(/^0+/, '');
  return stripped.length === 0 ? '0' : stripped.length % 2 ? '0' + stripped : stripped;
}

export function serialHexOf(valueHex: ArrayBuffer | Uint8Array): string {
  return normalizeSerialHex(Buffer.from(valueHex as ArrayBuffer).toString('hex'));
}

/**
 * One attribute per RDN (`C=SG, O=..., CN=...`), as real CAs do. pkijs would put every attribute of a freshly built
 * name into ONE multi-valued RDN, so the DER is built here and parsed back (pkijs then re-emits the parsed bytes).
 */
export async function buildName(spec: NameSpec): Promise<Pkijs.RelativeDistinguishedNames> {
  const { pkijs, asn1js } = await loadAsn1();
  const rdns: InstanceType<typeof asn1js.Set>[] = [];
  const add = (type: string, value: InstanceType<typeof asn1js.PrintableString> | InstanceType<typeof asn1js.Utf8String>) =>
    rdns.push(new asn1js.Set({ value: [new pkijs.AttributeTypeAndValue({ type, value }).toSchema()] }));
  if (spec.C) add(OID.country, new asn1js.PrintableString({ value: spec.C }));
  if (spec.O) add(OID.organization, new asn1js.Utf8String({ value: spec.O }));
  if (spec.OU) add(OID.organizationalUnit, new asn1js.Utf8String({ value: spec.OU }));
  add(OID.commonName, new asn1js.Utf8String({ value: spec.CN }));
  if (spec.serialNumber) add(OID.serialNumber, new asn1js.PrintableString({ value: spec.serialNumber }));
  const der = new asn1js.Sequence({ value: rdns }).toBER(false);
  return new pkijs.RelativeDistinguishedNames({ schema: asn1js.fromBER(der).result });
}

/** RFC 5280 method 1 key identifier: SHA-1 of the subjectPublicKey BIT STRING contents. */
export function keyIdentifier(cert: Pkijs.Certificate): Buffer {
  return crypto.createHash('sha1').update(Buffer.from(cert.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView)).digest();
}

export interface CertTemplate {
  subject: NameSpec;
  serial: Buffer;
  publicKey: crypto.KeyObject;
  notBefore: Date;
  notAfter: Date;
  /** Issuer certificate; omitted for a self-signed root. */
  issuer?: Pkijs.Certificate;
  issuerKey: crypto.KeyObject;
  ca?: { pathLen?: number };
  /** Key usage bit names, e.g. ['digitalSignature', 'nonRepudiation']. */
  keyUsage: KeyUsage[];
  extKeyUsage?: { oids: string[]; critical: boolean };
  ocspNoCheck?: boolean;
  aia?: { caIssuers?: string; ocsp?: string };
  policies?: string[];
}

export type KeyUsage = 'digitalSignature' | 'nonRepudiation' | 'keyEncipherment' | 'dataEncipherment' | 'keyAgreement' | 'keyCertSign' | 'cRLSign';
const KEY_USAGE_BITS: Record<KeyUsage, number> = {
  digitalSignature: 0, nonRepudiation: 1, keyEncipherment: 2, dataEncipherment: 3, keyAgreement: 4, keyCertSign: 5, cRLSign: 6,
};

/** A DER named-bit-list BIT STRING with trailing zero bits trimmed (as DER requires). */
export async function namedBits(bits: number[]) {
  const { asn1js } = await loadAsn1();
  const max = Math.max(...bits);
  const bytes = new Uint8Array(Math.floor(max / 8) + 1);
  for (const b of bits) bytes[Math.floor(b / 8)] |= 0x80 >> (b % 8);
  return new asn1js.BitString({ valueHex: bytes, unusedBits: 7 - (max % 8) });
}

/** Issue (sign) one X.509 v3 certificate from a template; returns the DER. */
export async function issueCertificate(t: CertTemplate): Promise<Buffer> {
  const { pkijs, asn1js } = await loadAsn1();
  const cert = new pkijs.Certificate();
  cert.version = 2;
  cert.serialNumber = new asn1js.Integer({ valueHex: t.serial });
  const subject = await buildName(t.subject);
  cert.subject = subject;
  cert.issuer = t.issuer ? t.issuer.subject : subject;
  cert.notBefore.value = t.notBefore;
  cert.notAfter.value = t.notAfter;
  const spki = t.publicKey.type === 'private' ? crypto.createPublicKey(t.publicKey) : t.publicKey;
  cert.subjectPublicKeyInfo = new pkijs.PublicKeyInfo({
    schema: asn1js.fromBER(spki.export({ format: 'der', type: 'spki' })).result,
  });

  const ext: Pkijs.Extension[] = [];
  const push = (extnID: string, critical: boolean, value: { toBER(sizeOnly?: boolean): ArrayBuffer }) =>
    ext.push(new pkijs.Extension({ extnID, critical, extnValue: value.toBER(false) }));

  if (t.ca) {
    push(OID.basicConstraints, true, new pkijs.BasicConstraints(t.ca.pathLen === undefined ? { cA: true } : { cA: true, pathLenConstraint: t.ca.pathLen }).toSchema());
  } else {
    push(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: false }).toSchema());
  }
  push(OID.keyUsage, true, await namedBits(t.keyUsage.map((k) => KEY_USAGE_BITS[k])));
  if (t.extKeyUsage) {
    push(OID.extKeyUsage, t.extKeyUsage.critical, new pkijs.ExtKeyUsage({ keyPurposes: t.extKeyUsage.oids }).toSchema());
  }
  push(OID.subjectKeyIdentifier, false, new asn1js.OctetString({ valueHex: keyIdentifier(cert) }));
  const akiSource = t.issuer ?? cert;
  push(OID.authorityKeyIdentifier, false, new pkijs.AuthorityKeyIdentifier({
    keyIdentifier: new asn1js.OctetString({ valueHex: keyIdentifier(akiSource) }),
  }).toSchema());
  if (t.aia && (t.aia.caIssuers || t.aia.ocsp)) {
    const descriptions: Pkijs.AccessDescription[] = [];
    if (t.aia.ocsp) {
      descriptions.push(new pkijs.AccessDescription({ accessMethod: OID.adOcsp, accessLocation: new pkijs.GeneralName({ type: 6, value: t.aia.ocsp }) }));
    }
    if (t.aia.caIssuers) {
      descriptions.push(new pkijs.AccessDescription({ accessMethod: OID.adCaIssuers, accessLocation: new pkijs.GeneralName({ type: 6, value: t.aia.caIssuers }) }));
    }
    push(OID.authorityInfoAccess, false, new pkijs.InfoAccess({ accessDescriptions: descriptions }).toSchema());
  }
  if (t.policies?.length) {
    push(OID.certificatePolicies, false, new pkijs.CertificatePolicies({
      certificatePolicies: t.policies.map((p) => new pkijs.PolicyInformation({ policyIdentifier: p })),
    }).toSchema());
  }
  if (t.ocspNoCheck) push(OID.ocspNoCheck, false, new asn1js.Null());
  cert.extensions = ext;

  await cert.sign(await toSigningCryptoKey(t.issuerKey), hashFor(t.issuerKey));
  return Buffer.from(cert.toSchema(true).toBER(false));
}

export async function parseCertificate(der: Buffer): Promise<Pkijs.Certificate> {
  const { pkijs } = await loadAsn1();
  return pkijs.Certificate.fromBER(toArrayBuffer(der));
}

export function derToPem(der: Buffer, label = 'CERTIFICATE'): string {
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

export function pemToDer(pem: string): Buffer {
  const m = /-----BEGIN [^-]+-----([\s\S]+?)-----END [^-]+-----/.exec(pem);
  if (!m) throw new Error('not a PEM block');
  return Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
}

/** Round down to whole seconds: DER GeneralizedTime/UTCTime in certificates and OCSP must not carry fractions. */
export function wholeSeconds(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}
