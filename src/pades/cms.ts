/**
 * CMS (RFC 5652) pieces of a PAdES signature made from an externally signed hash: the SignedAttributes the user's
 * device signs, the check of that signature, and the detached SignedData that goes into the PDF's /Contents.
 */
import { createHash, createPublicKey, KeyObject, verify as cryptoVerify, X509Certificate } from 'node:crypto';
import { JOSE_CURVE_OF_OPENSSL } from '../keys/load';
import { SingpassFlowsError, invalidInput } from '../errors';
import { OID } from '../pki/oid';
import {
  bytesOf,
  children,
  contentOf,
  decodeOid,
  nullValue,
  octetString,
  oid,
  readTlv,
  seq,
  set,
  setOf,
  smallInteger,
  tlv,
  unsignedInteger,
} from './der';

/** What CMS needs from a certificate, taken from its DER (raw bytes, never re-encoded). */
export interface CertificateInfo {
  der: Buffer;
  /** DER of the issuer Name. */
  issuer: Buffer;
  /** DER of the serialNumber INTEGER (tag included). */
  serial: Buffer;
  /** The subject public key (created on first use: KeyObject creation is slow and prepare does not need it). */
  publicKey(): KeyObject;
  /** Subject as `CN=…` lines (parsed on demand: X509Certificate costs milliseconds). */
  subject(): string;
}

/** Accepts DER bytes, base64 DER or PEM; throws INVALID_INPUT naming `field` when it is not a certificate. */
export function toCertificateDer(input: Buffer | string, field: string): Buffer {
  let der: Buffer;
  if (Buffer.isBuffer(input)) der = input;
  else if (typeof input === 'string') {
    const pem = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(input);
    const b64 = (pem ? pem[1] : input).replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(b64)) throw invalidInput(field, 'expected a certificate as base64 DER or PEM');
    der = Buffer.from(b64, b64.includes('-') || b64.includes('_') ? 'base64url' : 'base64');
  } else throw invalidInput(field, 'expected a certificate as base64 DER, PEM or bytes');
  if (der.length > 0 && der[0] === 0x2d) return toCertificateDer(der.toString('latin1'), field); // PEM given as bytes
  return der;
}

export function readCertificateFields(input: Buffer | string, field = 'certificate'): CertificateInfo {
  const der = toCertificateDer(input, field);
  try {
    const cert = readTlv(der);
    if (cert.tag !== 0x30 || cert.end !== der.length) throw new Error('not a DER SEQUENCE');
    const [tbs, sigAlg, sigValue] = children(der, cert);
    if (!tbs || !sigAlg || sigValue?.tag !== 0x03) throw new Error('not a certificate');
    const fields = children(der, tbs);
    const i = fields[0].tag === 0xa0 ? 1 : 0; // optional [0] version
    const [serial, , issuer, validity, subject, spki] = fields.slice(i);
    if (serial?.tag !== 0x02 || issuer?.tag !== 0x30 || validity?.tag !== 0x30 || subject?.tag !== 0x30 || spki?.tag !== 0x30) {
      throw new Error('not a certificate');
    }
    const spkiDer = bytesOf(der, spki);
    let key: KeyObject | undefined;
    return {
      der: bytesOf(der, cert),
      serial: bytesOf(der, serial),
      issuer: bytesOf(der, issuer),
      publicKey: () => (key ??= createPublicKey({ key: spkiDer, format: 'der', type: 'spki' })),
      subject: () => new X509Certificate(der).subject,
    };
  } catch (e) {
    if (e instanceof SingpassFlowsError) throw e;
    throw invalidInput(field, 'not a valid X.509 certificate (expected base64 DER or PEM)');
  }
}

function attribute(type: string, ...values: Buffer[]): Buffer {
  return seq(oid(type), setOf(values));
}

/**
 * DER of the SignedAttributes (outer tag 0x31, as hashed): contentType id-data, messageDigest, and
 * signingCertificateV2 binding the signer certificate. No signingTime: PAdES takes the time from /M or a timestamp.
 * `revocationArchive`: the DER of a RevocationInfoArchival (`encodeRevocationArchive`) with the answers of the check
 * made before signing, signed with the rest as Adobe's adbe-revocationInfoArchival attribute.
 */
export function buildSignedAttributes(messageDigest: Buffer, cert: CertificateInfo, revocationArchive?: Buffer): Buffer {
  // ESSCertIDv2: hashAlgorithm omitted because sha256 is its DEFAULT (DER forbids encoding defaults).
  const issuerSerial = seq(seq(tlv(0xa4, cert.issuer)), cert.serial);
  const essCertIdV2 = seq(octetString(createHash('sha256').update(cert.der).digest()), issuerSerial);
  return setOf([
    attribute(OID.contentType, oid(OID.data)),
    attribute(OID.messageDigest, octetString(messageDigest)),
    attribute(OID.signingCertificateV2, seq(seq(essCertIdV2))),
    ...(revocationArchive ? [attribute(OID.adbeRevocationInfoArchival, revocationArchive)] : []),
  ]);
}

/** The first value (DER) of the attribute `type` in SignedAttributes DER. */
function signedAttributeValue(signedAttrs: Buffer, type: string): Buffer | undefined {
  const root = readTlv(signedAttrs);
  for (const attr of children(signedAttrs, root)) {
    const [t, values] = children(signedAttrs, attr);
    if (t && values && decodeOid(contentOf(signedAttrs, t)) === type) {
      const v = children(signedAttrs, values)[0];
      return v ? bytesOf(signedAttrs, v) : undefined;
    }
  }
  return undefined;
}

/** Reads the messageDigest value back out of SignedAttributes DER (used to cross-check a stored state). */
export function messageDigestOf(signedAttrs: Buffer): Buffer | undefined {
  const v = signedAttributeValue(signedAttrs, OID.messageDigest);
  return v ? Buffer.from(contentOf(v, readTlv(v))) : undefined;
}

/** The RevocationInfoArchival (DER) SignedAttributes DER carries, if any. */
export function revocationArchiveOf(signedAttrs: Buffer): Buffer | undefined {
  const v = signedAttributeValue(signedAttrs, OID.adbeRevocationInfoArchival);
  return v ? Buffer.from(v) : undefined;
}

const RAW_ECDSA_LENGTHS: Record<string, number> = { 'P-256': 64, 'P-384': 96, 'P-521': 132 };

/** Hex string or bytes → bytes; INVALID_INPUT when the string is not hex. */
export function signatureBytes(signature: string | Buffer): Buffer {
  if (Buffer.isBuffer(signature)) return signature;
  if (typeof signature !== 'string') throw invalidInput('signature', 'expected a hex string or bytes');
  const hex = signature.trim().replace(/^0x/i, '').replace(/\s+/g, '');
  if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(hex)) {
    throw invalidInput('signature', 'expected the signature as hex (ASN.1/DER), as the signing service sends it');
  }
  return Buffer.from(hex, 'hex');
}

/**
 * Checks the user's signature over the SignedAttributes with the certificate's key and returns it in the form CMS
 * wants (ECDSA: DER Ecdsa-Sig-Value, converted from raw r||s when needed) plus the matching signatureAlgorithm.
 * Throws SIGNATURE_INVALID otherwise, so a wrong or corrupted signature is never embedded.
 */
export function checkSignature(
  signedAttrs: Buffer,
  signature: Buffer,
  cert: CertificateInfo,
): { value: Buffer; algorithm: Buffer } {
  let key: KeyObject;
  try {
    key = cert.publicKey();
  } catch {
    throw invalidInput('certificate', 'the certificate public key cannot be read');
  }
  const invalid = () =>
    new SingpassFlowsError(
      'SIGNATURE_INVALID',
      'The returned signature does not verify with the signer certificate over the prepared document hash. ' +
        'It was not embedded; start the signing again.',
      { retryable: false },
    );
  if (key.asymmetricKeyType === 'ec') {
    const curve = JOSE_CURVE_OF_OPENSSL[String(key.asymmetricKeyDetails?.namedCurve)] ?? '';
    // DER first; a 64/96/132-byte value may also be raw r||s (some devices return that form).
    const candidates: Buffer[] = [];
    if (signature[0] === 0x30) candidates.push(signature);
    if (signature.length === RAW_ECDSA_LENGTHS[curve]) {
      const half = signature.length / 2;
      candidates.push(seq(unsignedInteger(signature.subarray(0, half)), unsignedInteger(signature.subarray(half))));
    }
    const der = candidates.find((c) => {
      try {
        return cryptoVerify('sha256', signedAttrs, { key, dsaEncoding: 'der' }, c);
      } catch {
        return false;
      }
    });
    if (!der) throw invalid();
    // The digest is SHA-256 whatever the curve (the service signs a SHA-256 hash), hence ecdsa-with-SHA256.
    return { value: der, algorithm: seq(oid(OID.ecdsaWithSha256)) };
  }
  if (key.asymmetricKeyType === 'rsa') {
    let ok = false;
    try {
      ok = cryptoVerify('sha256', signedAttrs, key, signature);
    } catch {
      ok = false;
    }
    if (!ok) throw invalid();
    return { value: signature, algorithm: seq(oid(OID.sha256WithRsa), nullValue()) };
  }
  throw new SingpassFlowsError('SIGNATURE_INVALID', `Unsupported signer key type "${key.asymmetricKeyType}" (EC or RSA expected).`, {
    retryable: false,
  });
}

/**
 * Detached CMS SignedData (ContentInfo DER) with one SignerInfo carrying `signedAttrs` exactly as hashed,
 * certificates = signer + chain, and the optional signatureTimeStampToken unsigned attribute (PAdES B-T).
 */
export function buildSignedData(input: {
  signedAttrs: Buffer;
  signer: CertificateInfo;
  chain: Buffer[];
  signature: { value: Buffer; algorithm: Buffer };
  timeStampToken?: Buffer;
}): Buffer {
  const sha256 = seq(oid(OID.sha256));
  const signedAttrsImplicit = Buffer.concat([Buffer.from([0xa0]), input.signedAttrs.subarray(1)]);
  const parts = [
    smallInteger(1),
    seq(input.signer.issuer, input.signer.serial),
    sha256,
    signedAttrsImplicit,
    input.signature.algorithm,
    octetString(input.signature.value),
  ];
  if (input.timeStampToken) {
    parts.push(tlv(0xa1, attribute(OID.signatureTimeStampToken, input.timeStampToken)));
  }
  const seen = new Set<string>();
  const certs = [input.signer.der, ...input.chain].filter((c) => {
    const k = c.toString('base64');
    return seen.has(k) ? false : (seen.add(k), true);
  });
  const signedData = seq(
    smallInteger(1),
    set(sha256),
    seq(oid(OID.data)),
    tlv(0xa0, ...certs),
    set(seq(...parts)),
  );
  return seq(oid(OID.signedData), tlv(0xa0, signedData));
}

