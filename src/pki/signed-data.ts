/**
 * A CMS SignedData (RFC 5652) read natively by a TLV walk, for checks that read one once: the parts a signature
 * check needs, as the bytes that were signed. Only plain DER is taken; `undefined` otherwise, and the schema-driven
 * reading (pkijs, `parseSignedData`) decides. Trailing bytes after the ContentInfo (a PDF's /Contents padding) are
 * ignored, as there.
 */
import { children, decodeOid, readTlv, type Tlv } from '../pades/der';
import { certificateView, type CertificateScope } from './certificate-view';
import { wellFormed } from './der-shape';
import { OID } from './oid';
import { hashNameOf, verifySignature, type HashName } from './x509';

export interface SignerInfoFacts {
  /** issuerAndSerialNumber: the issuer Name's DER and the serial's INTEGER content. */
  issuerName: Buffer;
  serial: Buffer;
  digestAlgorithm: string;
  /** The signed attributes as signed: the `[0] IMPLICIT` field with its tag set to SET (0x31). */
  signedAttributes: Buffer;
  /** attrType → the first value's TLV, for signed and unsigned attributes. */
  signed: Map<string, Buffer>;
  unsigned: Map<string, Buffer>;
  signatureAlgorithm: string;
  signature: Buffer;
}

export interface SignedDataFacts {
  contentType: string;
  /** The encapsulated content's octets (a primitive OCTET STRING), when present. */
  content?: Buffer;
  /** The X.509 certificates the `certificates` field carries, each one's DER. */
  certificates: Buffer[];
  signerInfos: SignerInfoFacts[];
}

class NotPlain extends Error {}
const content = (buf: Buffer, t: Tlv): Buffer => buf.subarray(t.contentStart, t.end);
function want(t: Tlv | undefined, tag: number): Tlv {
  if (!t || t.tag !== tag) throw new NotPlain();
  return t;
}
const oidOf = (buf: Buffer, t: Tlv | undefined): string => decodeOid(content(buf, want(t, 0x06)));
/** AlgorithmIdentifier: SEQUENCE { OID, parameters OPTIONAL }, as the schema reading demands. */
function algorithmOf(buf: Buffer, t: Tlv | undefined): string {
  const parts = children(buf, want(t, 0x30));
  if (parts.length < 1 || parts.length > 2) throw new NotPlain();
  return oidOf(buf, parts[0]);
}

function attributes(buf: Buffer, field: Tlv): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const a of children(buf, field)) {
    const [typeT, valuesT, ...more] = children(buf, want(a, 0x30));
    if (more.length) throw new NotPlain();
    const first = children(buf, want(valuesT, 0x31))[0];
    const type = oidOf(buf, typeT);
    if (first && !out.has(type)) out.set(type, buf.subarray(first.start, first.end));
  }
  return out;
}

function signerInfo(buf: Buffer, t: Tlv): SignerInfoFacts {
  const f = children(buf, want(t, 0x30));
  want(f[0], 0x02);
  const sid = children(buf, want(f[1], 0x30)); // issuerAndSerialNumber only; a subjectKeyIdentifier is left to pkijs
  if (sid.length !== 2) throw new NotPlain();
  let i = 3;
  const signedT = f[i]?.tag === 0xa0 ? f[i++] : undefined;
  if (!signedT) throw new NotPlain();
  const signatureAlgorithm = algorithmOf(buf, f[i++]);
  const signature = content(buf, want(f[i++], 0x04));
  const unsignedT = f[i]?.tag === 0xa1 ? f[i++] : undefined;
  if (i !== f.length) throw new NotPlain();
  return {
    issuerName: buf.subarray(want(sid[0], 0x30).start, sid[0].end),
    serial: content(buf, want(sid[1], 0x02)),
    digestAlgorithm: algorithmOf(buf, f[2]),
    signedAttributes: Buffer.concat([Buffer.from([0x31]), buf.subarray(signedT.start + 1, signedT.end)]),
    signed: attributes(buf, signedT),
    unsigned: unsignedT ? attributes(buf, unsignedT) : new Map<string, Buffer>(),
    signatureAlgorithm,
    signature,
  };
}

/** The SignedData's facts, or `undefined` when `der` is not a ContentInfo(SignedData) in plain DER. */
export function readSignedData(der: Buffer): SignedDataFacts | undefined {
  try {
    const top = want(readTlv(der), 0x30);
    wellFormed(der, top);
    const [typeT, wrapT, ...more] = children(der, top);
    if (more.length || oidOf(der, typeT) !== OID.signedData) return undefined;
    const wrapped = children(der, want(wrapT, 0xa0));
    if (wrapped.length !== 1) return undefined;
    const f = children(der, want(wrapped[0], 0x30));
    want(f[0], 0x02);
    for (const alg of children(der, want(f[1], 0x31))) algorithmOf(der, alg);
    const encap = children(der, want(f[2], 0x30));
    const contentType = oidOf(der, encap[0]);
    let body: Buffer | undefined;
    if (encap.length === 2) {
      const inner = children(der, want(encap[1], 0xa0));
      if (inner.length !== 1) return undefined;
      body = content(der, want(inner[0], 0x04)); // a constructed (BER) OCTET STRING is left to pkijs
    } else if (encap.length !== 1) return undefined;
    let i = 3;
    const certificates: Buffer[] = [];
    if (f[i]?.tag === 0xa0) for (const c of children(der, f[i++])) if (c.tag === 0x30) certificates.push(der.subarray(c.start, c.end));
    if (f[i]?.tag === 0xa1) i++;
    const signerInfos = children(der, want(f[i++], 0x31)).map((s) => signerInfo(der, s));
    if (i !== f.length) return undefined;
    return { contentType, content: body, certificates, signerInfos };
  } catch {
    return undefined;
  }
}

/** What a plainly good CMS signature says: see {@link checkSignatureNatively}. */
export interface GoodSignatureFacts {
  /** The certificates it carries (DER each), the signer's among them. */
  certificates: Buffer[];
  signerCertificate: Buffer;
  /** The SignerInfo's signature value (what a signature timestamp covers). */
  signature: Buffer;
  /** The signingCertificateV2 attribute's first ESSCertIDv2: its hash algorithm and certificate hash. */
  signingCertificate: { hash: HashName; certHash: Buffer };
  /** The signature-timestamp unsigned attribute's first value (a TimeStampToken's DER), when present. */
  timestampToken?: Buffer;
  /** The adbe-revocationInfoArchival signed attribute's value (a RevocationInfoArchival's DER), when present. */
  revocationArchive?: Buffer;
}

/**
 * A detached CMS signature (a PDF /Contents) read and checked natively when it is plainly good: one SignerInfo
 * naming a certificate it carries, a supported digest, messageDigest equal to `contentDigestFor(hash)`, the
 * signature valid over the signed attributes, a readable signingCertificateV2. `undefined` for anything else: the
 * schema-driven check (`checkSignerInfo`) then says what is wrong, so this can only accept what that check accepts.
 * `scope`: where the certificates' views are shared with the rest of the caller's work.
 */
export function checkSignatureNatively(der: Buffer, contentDigestFor: (hash: HashName) => Buffer, scope?: CertificateScope): GoodSignatureFacts | undefined {
  try {
    const sd = readSignedData(der);
    if (!sd || sd.signerInfos.length !== 1) return undefined;
    const si = sd.signerInfos[0];
    const views = sd.certificates.map((c) => certificateView(c, scope));
    const signer = views.find((v) => v.issuerName.equals(si.issuerName) && v.serial.equals(si.serial));
    const hash = hashNameOf(si.digestAlgorithm);
    if (!signer || !hash) return undefined;
    const md = si.signed.get(OID.messageDigest);
    if (!md || md[0] !== 0x04 || !content(md, readTlv(md)).equals(contentDigestFor(hash))) return undefined;
    if (!verifySignature(si.signatureAlgorithm, si.signedAttributes, si.signature, signer.spki, si.digestAlgorithm)) return undefined;
    const signingCertificate = essCertIdV2(si.signed.get(OID.signingCertificateV2));
    if (!signingCertificate) return undefined;
    return {
      certificates: views.map((v) => Buffer.from(v.der)), signerCertificate: Buffer.from(signer.der), signature: Buffer.from(si.signature), signingCertificate,
      timestampToken: si.unsigned.has(OID.signatureTimeStampToken) ? Buffer.from(si.unsigned.get(OID.signatureTimeStampToken)!) : undefined,
      revocationArchive: si.signed.has(OID.adbeRevocationInfoArchival) ? Buffer.from(si.signed.get(OID.adbeRevocationInfoArchival)!) : undefined,
    };
  } catch {
    return undefined;
  }
}

/** SigningCertificateV2 → its first ESSCertIDv2's hash algorithm (default SHA-256) and certHash. */
function essCertIdV2(value: Buffer | undefined): { hash: HashName; certHash: Buffer } | undefined {
  if (!value || value[0] !== 0x30) return undefined;
  const certs = children(value, readTlv(value))[0];
  const first = certs?.tag === 0x30 ? children(value, certs)[0] : undefined;
  if (first?.tag !== 0x30) return undefined;
  const parts = children(value, first);
  let hash: HashName | undefined = 'sha256';
  let i = 0;
  if (parts[0]?.tag === 0x30) {
    const oid = children(value, parts[0])[0];
    hash = oid?.tag === 0x06 ? hashNameOf(decodeOid(content(value, oid))) : undefined;
    i = 1;
  }
  const h = parts[i];
  if (!hash || h?.tag !== 0x04) return undefined;
  return { hash, certHash: Buffer.from(content(value, h)) };
}
