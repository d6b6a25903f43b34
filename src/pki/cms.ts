import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { SingpassFlowsError, type ErrorCode } from '../errors';
import { OID, certDer, digest, hashNameOf, nameDer, parseAsn1, parseCertificate, spkiDer, verifySignature, type HashName } from './x509';

/** A parsed CMS SignedData with its certificates, as both pkijs objects and DER. */
export interface ParsedSignedData {
  signedData: pkijs.SignedData;
  certificates: pkijs.Certificate[];
}

/**
 * Parses a ContentInfo(SignedData) DER (a PDF /Contents or a TimeStampToken). Trailing bytes (padding) are ignored.
 * The certificates go through the certificate cache by their own bytes, not through pkijs's SignedData: the CA and
 * TSA certificates every signature and timestamp carry are then parsed once per process (and never re-encoded),
 * a user's certificate afresh each time (see `parseCertificate`).
 */
export function parseSignedData(der: Uint8Array, code: ErrorCode, what: string): ParsedSignedData {
  let split: { rest: asn1js.Sequence; certificates: Uint8Array[] };
  let signedData: pkijs.SignedData;
  try {
    const contentInfo = new pkijs.ContentInfo({ schema: parseAsn1(der, code, what) });
    if (contentInfo.contentType !== OID.signedData) throw new SingpassFlowsError(code, `${what} is not a CMS SignedData`);
    split = splitCertificateSet(contentInfo.content);
    signedData = new pkijs.SignedData({ schema: split.rest });
  } catch (e) {
    if (e instanceof SingpassFlowsError) throw e;
    throw new SingpassFlowsError(code, `${what} could not be parsed as CMS`, {}, { cause: e });
  }
  try {
    return { signedData, certificates: split.certificates.map((c) => parseCertificate(c, code)) };
  } catch (e) {
    throw new SingpassFlowsError(code, `${what} carries a certificate that could not be parsed`, {}, { cause: e });
  }
}

/**
 * A SignedData's `certificates [0] IMPLICIT CertificateSet` (the X.509 ones, DER each) apart from the rest, which
 * is what pkijs gets. Other CertificateChoices (attribute certificates and the like) are left out, as they always
 * were: nothing here uses them.
 */
function splitCertificateSet(signedData: unknown): { rest: asn1js.Sequence; certificates: Uint8Array[] } {
  if (!(signedData instanceof asn1js.Sequence)) throw new Error('SignedData is not a SEQUENCE');
  const members = signedData.valueBlock.value;
  const at = members.findIndex((m, i) => i >= 3 && m.idBlock.tagClass === 3 && m.idBlock.tagNumber === 0);
  if (at < 0) return { rest: signedData, certificates: [] };
  const set = members[at];
  if (!(set instanceof asn1js.Constructed)) throw new Error('certificates is not constructed');
  const certificates = set.valueBlock.value.filter((c) => c instanceof asn1js.Sequence).map((c) => c.valueBeforeDecodeView);
  return { rest: new asn1js.Sequence({ value: members.filter((_, i) => i !== at) }), certificates };
}

export function attributeValue(signerInfo: pkijs.SignerInfo, oid: string, unsigned = false): asn1js.AsnType | undefined {
  const attrs = unsigned ? signerInfo.unsignedAttrs : signerInfo.signedAttrs;
  return attrs?.attributes.find((a) => a.type === oid)?.values[0] as asn1js.AsnType | undefined;
}

/** Finds the certificate a SignerInfo names (issuerAndSerialNumber or subjectKeyIdentifier). */
export function findSignerCertificate(signerInfo: pkijs.SignerInfo, candidates: pkijs.Certificate[]): pkijs.Certificate | undefined {
  const sid: unknown = signerInfo.sid;
  if (sid instanceof pkijs.IssuerAndSerialNumber) {
    const issuer = nameDer(sid.issuer);
    const serial = Buffer.from(sid.serialNumber.valueBlock.valueHexView);
    return candidates.find((c) => nameDer(c.issuer).equals(issuer) && Buffer.from(c.serialNumber.valueBlock.valueHexView).equals(serial));
  }
  if (sid instanceof asn1js.Primitive || sid instanceof asn1js.OctetString) {
    const ski = Buffer.from((sid as asn1js.OctetString).valueBlock.valueHexView);
    return candidates.find((c) => {
      const ext = c.extensions?.find((e) => e.extnID === '2.5.29.14');
      const v = ext?.parsedValue as asn1js.OctetString | undefined;
      return v ? Buffer.from(v.valueBlock.valueHexView).equals(ski) : false;
    });
  }
  return undefined;
}

export interface SignerInfoCheck {
  signerCertificate?: pkijs.Certificate;
  digestAlgorithm?: HashName;
  /** The messageDigest signed attribute equals the digest of the content. */
  messageDigestMatches: boolean;
  /** The signature over the signed attributes verifies with the signer certificate's key. */
  signatureValid: boolean;
  /** Value of the contentType signed attribute. */
  contentType?: string;
  problems: string[];
}

/**
 * Checks the first SignerInfo of a SignedData against the content digest: messageDigest attribute, signature over
 * the DER of the signed attributes (as received: re-encoding could change bytes), signer certificate located.
 * `contentDigestFor(hash)` supplies the digest of the (possibly detached) content for the signer's digest algorithm.
 */
export function checkSignerInfo(parsed: ParsedSignedData, contentDigestFor: (hash: HashName) => Buffer, extraCerts: pkijs.Certificate[] = []): SignerInfoCheck {
  const problems: string[] = [];
  const signerInfo = parsed.signedData.signerInfos[0];
  if (!signerInfo || parsed.signedData.signerInfos.length !== 1) {
    return { messageDigestMatches: false, signatureValid: false, problems: ['SIGNER_INFO_COUNT'] };
  }
  const signerCertificate = findSignerCertificate(signerInfo, [...parsed.certificates, ...extraCerts]);
  if (!signerCertificate) problems.push('SIGNER_CERT_MISSING');
  const digestAlgorithm = hashNameOf(signerInfo.digestAlgorithm.algorithmId);
  if (!digestAlgorithm) {
    problems.push('DIGEST_ALGORITHM_UNSUPPORTED');
    return { signerCertificate, messageDigestMatches: false, signatureValid: false, problems };
  }
  if (!signerInfo.signedAttrs) {
    problems.push('SIGNED_ATTRS_MISSING');
    return { signerCertificate, digestAlgorithm, messageDigestMatches: false, signatureValid: false, problems };
  }
  const md = attributeValue(signerInfo, OID.messageDigest) as asn1js.OctetString | undefined;
  const messageDigestMatches = !!md && Buffer.from(md.valueBlock.valueHexView).equals(contentDigestFor(digestAlgorithm));
  if (!messageDigestMatches) problems.push('DIGEST_MISMATCH');
  const ct = attributeValue(signerInfo, OID.contentType) as asn1js.ObjectIdentifier | undefined;
  const contentType = ct?.valueBlock.toString();
  let signatureValid = false;
  if (signerCertificate) {
    signatureValid = verifySignature(
      signerInfo.signatureAlgorithm.algorithmId,
      new Uint8Array(signerInfo.signedAttrs.encodedValue),
      signerInfo.signature.valueBlock.valueHexView,
      spkiDer(signerCertificate),
      signerInfo.digestAlgorithm.algorithmId,
    );
    if (!signatureValid) problems.push('SIGNATURE_INVALID');
  }
  return { signerCertificate, digestAlgorithm, messageDigestMatches, signatureValid, contentType, problems };
}

/** The TSTInfo inside a TimeStampToken's encapsulated content. */
export function tstInfoOf(parsed: ParsedSignedData, code: ErrorCode): { tstInfo: pkijs.TSTInfo; der: Buffer } {
  const encap = parsed.signedData.encapContentInfo;
  if (encap.eContentType !== OID.tstInfo || !encap.eContent) {
    throw new SingpassFlowsError(code, 'The timestamp token does not contain a TSTInfo');
  }
  // eContent may be a constructed OCTET STRING (BER); collect its bytes either way.
  const der = Buffer.from(octetStringBytes(encap.eContent));
  try {
    return { tstInfo: new pkijs.TSTInfo({ schema: parseAsn1(der, code, 'TSTInfo') }), der };
  } catch (e) {
    if (e instanceof SingpassFlowsError) throw e;
    throw new SingpassFlowsError(code, 'The timestamp token TSTInfo could not be parsed', {}, { cause: e });
  }
}

function octetStringBytes(os: asn1js.OctetString): Uint8Array {
  if (os.idBlock.isConstructed) {
    const parts = (os.valueBlock.value as asn1js.OctetString[]).map((p) => octetStringBytes(p));
    return Buffer.concat(parts);
  }
  return os.valueBlock.valueHexView;
}

export { certDer, digest };
