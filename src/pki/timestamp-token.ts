/**
 * A TimeStampToken checked natively: the token read once by a TLV walk ({@link readSignedData}), its TSTInfo too,
 * the signature verified by node:crypto over the signed attributes as signed. It only ever ACCEPTS: a token it
 * cannot read plainly, or that fails any check, gets `undefined`, and the schema-driven check decides (and says
 * why). So it can make a verdict no laxer than that check's; the tests hold it to the same one.
 */
import { children, decodeOid, readTlv, type Tlv } from '../pades/der';
import { certificateView, type CertificateView } from './certificate-view';
import { readSignedData } from './signed-data';
import type { TimestampTokenInfo } from './timestamp';
import { OID, digest, hashNameOf, verifySignature, type HashName } from './x509';

/** What a timestamp token says (the same facts as the schema path's `TimestampTokenInfo`). */
export type TimestampTokenFacts = TimestampTokenInfo;

const content = (buf: Buffer, t: Tlv): Buffer => buf.subarray(t.contentStart, t.end);

/** GeneralizedTime `YYYYMMDDHHMMSS[.f{1,3}]Z`; anything else is left to the schema reading. */
function generalizedTime(buf: Buffer, t: Tlv | undefined): Date | undefined {
  if (t?.tag !== 0x18) return undefined;
  const m = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(?:\.(\d{1,3}))?Z$/.exec(content(buf, t).toString('latin1'));
  if (!m) return undefined;
  return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], m[7] ? +m[7].padEnd(3, '0') : 0));
}

/** TSTInfo: version, policy, messageImprint, serialNumber, genTime, accuracy?, ordering?, nonce?, [0] tsa?, [1] exts? */
function readTstInfo(der: Buffer): Omit<TimestampTokenFacts, 'tsaCertificate' | 'certificates'> | undefined {
  const top = readTlv(der);
  if (top.tag !== 0x30 || top.end !== der.length) return undefined;
  const f = children(der, top);
  if (f[0]?.tag !== 0x02 || f[1]?.tag !== 0x06 || f[2]?.tag !== 0x30 || f[3]?.tag !== 0x02) return undefined;
  const [algT, hashedT, ...imprintMore] = children(der, f[2]);
  if (algT?.tag !== 0x30 || hashedT?.tag !== 0x04 || imprintMore.length) return undefined;
  const algOid = children(der, algT)[0];
  const hashAlgorithm = algOid?.tag === 0x06 ? hashNameOf(decodeOid(content(der, algOid))) : undefined;
  const genTime = generalizedTime(der, f[4]);
  if (!hashAlgorithm || !genTime) return undefined;
  let i = 5;
  if (f[i]?.tag === 0x30) i++; // accuracy
  if (f[i]?.tag === 0x01) i++; // ordering
  const nonce = f[i]?.tag === 0x02 ? content(der, f[i++]) : undefined;
  if (f[i]?.tag === 0xa0) i++;
  if (f[i]?.tag === 0xa1) i++;
  if (i !== f.length) return undefined;
  return {
    genTime,
    policy: decodeOid(content(der, f[1])),
    serialHex: content(der, f[3]).toString('hex').toUpperCase(),
    hashAlgorithm,
    hashedMessage: Buffer.from(content(der, hashedT)),
    nonce: nonce ? Buffer.from(nonce) : undefined,
  };
}

/**
 * What the token says when it is plainly a good token (the TSTInfo read, the imprint as `expected` when given,
 * messageDigest and content type attributes right, the signature valid with the TSA certificate it carries, which is
 * for timestamping); `undefined` for anything else.
 */
export function checkTimestampTokenNatively(token: Buffer, expected?: { digest: Buffer; hashAlgorithm: HashName }): TimestampTokenFacts | undefined {
  try {
    const sd = readSignedData(token);
    if (!sd || sd.contentType !== OID.tstInfo || !sd.content || sd.signerInfos.length !== 1) return undefined;
    const info = readTstInfo(sd.content);
    if (!info) return undefined;
    if (expected && (info.hashAlgorithm !== expected.hashAlgorithm || !info.hashedMessage.equals(expected.digest))) return undefined;
    const views: CertificateView[] = sd.certificates.map((c) => certificateView(c));
    const si = sd.signerInfos[0];
    const signer = views.find((v) => v.issuerName.equals(si.issuerName) && v.serial.equals(si.serial));
    const hash = hashNameOf(si.digestAlgorithm);
    if (!signer || !hash) return undefined;
    const md = si.signed.get(OID.messageDigest);
    const ct = si.signed.get(OID.contentType);
    if (!md || md[0] !== 0x04 || !content(md, readTlv(md)).equals(digest(hash, sd.content))) return undefined;
    if (!ct || ct[0] !== 0x06 || decodeOid(content(ct, readTlv(ct))) !== OID.tstInfo) return undefined;
    if (!verifySignature(si.signatureAlgorithm, si.signedAttributes, si.signature, signer.spki, si.digestAlgorithm)) return undefined;
    if (!(signer.x509.keyUsage ?? []).includes(OID.kpTimeStamping)) return undefined;
    return { ...info, tsaCertificate: Buffer.from(signer.der), certificates: views.map((v) => Buffer.from(v.der)) };
  } catch {
    return undefined;
  }
}
