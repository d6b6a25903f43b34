/**
 * An OCSPResponse (RFC 6960 4.2.1) read natively by a TLV walk: one pass over bytes read once, against pkijs's
 * schema-driven decoding that cost most of an OCSP check. Only the plain DER shape a responder sends is taken; for
 * anything else (BER, an error status, fractional times, unexpected members) it answers `undefined` and the
 * schema-driven reading decides, with its messages. Nothing is verified here.
 */
import { children, decodeOid, readTlv, type Tlv } from '../pades/der';
import { OID } from './oid';
import { wellFormed } from './der-shape';

export interface OcspSingleAnswer {
  hashAlgorithm: string;
  issuerNameHash: Buffer;
  issuerKeyHash: Buffer;
  /** INTEGER content bytes of the serial number. */
  serial: Buffer;
  status: 'good' | 'revoked' | 'unknown';
  revokedAt?: Date;
  invalidSince?: Date;
  thisUpdate: Date;
  nextUpdate?: Date;
}

export interface OcspAnswer {
  /** The tbsResponseData TLV (what the responder signed), its signature algorithm OID and signature bits. */
  tbs: Buffer;
  signatureAlgorithm: string;
  signature: Buffer;
  /** The BasicOCSPResponse's `certs`, each certificate's DER. */
  certificates: Buffer[];
  /** Who says they signed it (RFC 6960 ResponderID): the Name's DER, or the SHA-1 hash of the key's bits. */
  responderId: { byName: Buffer } | { byKey: Buffer };
  producedAt: Date;
  responses: OcspSingleAnswer[];
  /** The nonce extension's value (the OCTET STRING's content), when present. */
  nonce?: Buffer;
}

class NotPlain extends Error {}

const content = (buf: Buffer, t: Tlv): Buffer => buf.subarray(t.contentStart, t.end);

function expect(t: Tlv | undefined, tag: number): Tlv {
  if (!t || t.tag !== tag) throw new NotPlain();
  return t;
}

/** GeneralizedTime `YYYYMMDDHHMMSSZ` (RFC 5280's form); anything else is left to the schema reading. */
function time(buf: Buffer, t: Tlv | undefined): Date {
  const m = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z$/.exec(content(buf, expect(t, 0x18)).toString('latin1'));
  if (!m) throw new NotPlain();
  return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]));
}

/** `[n] EXPLICIT Extensions` → extnID → extnValue (the OCTET STRING's content). */
function extensions(buf: Buffer, field: Tlv): Map<string, Buffer> {
  const list = children(buf, field);
  if (list.length !== 1) throw new NotPlain();
  const out = new Map<string, Buffer>();
  for (const ext of children(buf, expect(list[0], 0x30))) {
    const parts = children(buf, expect(ext, 0x30));
    const id = expect(parts[0], 0x06);
    if (parts.length === 3) expect(parts[1], 0x01);
    else if (parts.length !== 2) throw new NotPlain();
    const oid = decodeOid(content(buf, id));
    if (!out.has(oid)) out.set(oid, content(buf, expect(parts[parts.length - 1], 0x04)));
  }
  return out;
}

function single(buf: Buffer, t: Tlv): OcspSingleAnswer {
  const [idT, statusT, thisT, ...rest] = children(buf, expect(t, 0x30));
  const [algT, nameT, keyT, serialT, ...idMore] = children(buf, expect(idT, 0x30));
  if (idMore.length) throw new NotPlain();
  const algOid = children(buf, expect(algT, 0x30))[0];
  let status: OcspSingleAnswer['status'];
  let revokedAt: Date | undefined;
  if (statusT?.tag === 0x80 && statusT.end === statusT.contentStart) status = 'good';
  else if (statusT?.tag === 0x82 && statusT.end === statusT.contentStart) status = 'unknown';
  else if (statusT?.tag === 0xa1) {
    status = 'revoked';
    const info = children(buf, statusT);
    revokedAt = time(buf, info[0]);
    if (info.length > 2 || (info.length === 2 && info[1].tag !== 0xa0)) throw new NotPlain();
  } else throw new NotPlain();
  const thisUpdate = time(buf, thisT);
  let nextUpdate: Date | undefined;
  let exts: Map<string, Buffer> | undefined;
  let k = 0;
  if (rest[k]?.tag === 0xa0) {
    const inner = children(buf, rest[k++]);
    if (inner.length !== 1) throw new NotPlain();
    nextUpdate = time(buf, inner[0]);
  }
  if (rest[k]?.tag === 0xa1) exts = extensions(buf, rest[k++]);
  if (k !== rest.length) throw new NotPlain();
  let invalidSince: Date | undefined;
  const inv = status === 'revoked' ? exts?.get(OID.invalidityDate) : undefined;
  if (inv) {
    const v = readTlv(inv);
    if (v.end !== inv.length) throw new NotPlain();
    if (v.tag === 0x18) invalidSince = time(inv, v);
  }
  return {
    hashAlgorithm: decodeOid(content(buf, expect(algOid, 0x06))),
    issuerNameHash: content(buf, expect(nameT, 0x04)),
    issuerKeyHash: content(buf, expect(keyT, 0x04)),
    serial: content(buf, expect(serialT, 0x02)),
    status, revokedAt, invalidSince, thisUpdate, nextUpdate,
  };
}

/** The answer's facts, or `undefined` when `der` is not a successful basic OCSP response in plain DER. */
export function readOcspAnswer(der: Buffer): OcspAnswer | undefined {
  try {
    const top = readTlv(der);
    if (top.tag !== 0x30 || top.end !== der.length) return undefined;
    wellFormed(der, top);
    const [statusT, bytesField, ...more] = children(der, top);
    if (more.length || content(der, expect(statusT, 0x0a)).toString('hex') !== '00') return undefined;
    const bytesParts = children(der, expect(bytesField, 0xa0));
    if (bytesParts.length !== 1) return undefined;
    const [typeT, responseT, ...bytesMore] = children(der, expect(bytesParts[0], 0x30));
    if (bytesMore.length || decodeOid(content(der, expect(typeT, 0x06))) !== OID.ocspBasic) return undefined;
    const basicDer = content(der, expect(responseT, 0x04));
    const basicT = readTlv(basicDer);
    if (basicT.tag !== 0x30 || basicT.end !== basicDer.length) return undefined;
    wellFormed(basicDer, basicT);
    const [tbsT, algT, sigT, certsField, ...basicMore] = children(basicDer, basicT);
    if (basicMore.length) return undefined;
    const algOid = children(basicDer, expect(algT, 0x30))[0];
    expect(sigT, 0x03);
    if (basicDer[sigT.contentStart] !== 0) return undefined; // unused bits: a signature has none
    const certificates: Buffer[] = [];
    if (certsField) {
      const list = children(basicDer, expect(certsField, 0xa0));
      if (list.length !== 1) return undefined;
      for (const c of children(basicDer, expect(list[0], 0x30))) certificates.push(basicDer.subarray(c.start, c.end));
    }
    // ResponseData: [0] version?, responderID ([1] byName | [2] byKey), producedAt, responses, [1] extensions?
    const f = children(basicDer, expect(tbsT, 0x30));
    let i = f[0]?.tag === 0xa0 ? 1 : 0;
    const responder = f[i++];
    if (responder?.tag !== 0xa1 && responder?.tag !== 0xa2) return undefined;
    const [named, ...namedMore] = children(basicDer, responder);
    if (namedMore.length) return undefined;
    const responderId = responder.tag === 0xa1 ? { byName: basicDer.subarray(expect(named, 0x30).start, named.end) } : { byKey: content(basicDer, expect(named, 0x04)) };
    const producedAt = time(basicDer, f[i++]);
    const responses = children(basicDer, expect(f[i++], 0x30)).map((s) => single(basicDer, s));
    let nonce: Buffer | undefined;
    if (f[i]?.tag === 0xa1) nonce = extensions(basicDer, f[i++]).get(OID.ocspNonce);
    if (i !== f.length) return undefined;
    return {
      tbs: basicDer.subarray(tbsT.start, tbsT.end),
      signatureAlgorithm: decodeOid(content(basicDer, expect(algOid, 0x06))),
      signature: basicDer.subarray(sigT.contentStart + 1, sigT.end),
      certificates, responderId, producedAt, responses, nonce,
    };
  } catch {
    return undefined; // truncated, not DER, or not the plain shape: the schema reading says why
  }
}
