/**
 * Adobe's revocation-information signed attribute (adbe-revocationInfoArchival, 1.2.840.113583.1.1.8): revocation
 * answers obtained before signing, carried inside the signature so even a signature without a DSS (B-B, B-T) shows
 * its certificate was good when it signed. PAdES allows it beside the DSS; Acrobat and pdfsig read it.
 *
 * ```
 * RevocationInfoArchival ::= SEQUENCE {
 *   crl          [0] EXPLICIT SEQUENCE OF CRLs OPTIONAL,
 *   ocsp         [1] EXPLICIT SEQUENCE OF OCSPResponse OPTIONAL,
 *   otherRevInfo [2] EXPLICIT SEQUENCE OF OtherRevInfo OPTIONAL }
 * ```
 */
import * as asn1js from 'asn1js';
import { SingpassFlowsError } from '../errors';

/** The answers one attribute carries (DER each, as received). */
export interface RevocationArchive {
  ocsps: Buffer[];
  crls: Buffer[];
}

function parsed(der: Buffer, what: string): asn1js.AsnType {
  const { offset, result } = asn1js.fromBER(new Uint8Array(der.buffer, der.byteOffset, der.length));
  if (offset === -1 || offset !== der.length || result.lenBlock.isIndefiniteForm) throw new SingpassFlowsError('INVALID_INPUT', `${what} is not DER`, { retryable: false });
  return result;
}

function explicit(tagNumber: number, items: asn1js.AsnType[]): asn1js.Constructed {
  return new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber }, value: [new asn1js.Sequence({ value: items })] });
}

/**
 * The attribute value (DER of a RevocationInfoArchival) carrying `ocsps` (OCSPResponse DER each) and optionally
 * `crls` (CertificateList DER each). The answers are copied bit for bit: a re-encoding that changed one is refused.
 */
export function encodeRevocationArchive(archive: { ocsps?: Buffer[]; crls?: Buffer[] }): Buffer {
  const ocsps = archive.ocsps ?? [];
  const crls = archive.crls ?? [];
  const value: asn1js.AsnType[] = [];
  if (crls.length) value.push(explicit(0, crls.map((c, i) => parsed(c, `crls[${i}]`))));
  if (ocsps.length) value.push(explicit(1, ocsps.map((o, i) => parsed(o, `ocsps[${i}]`))));
  const der = Buffer.from(new asn1js.Sequence({ value }).toBER(false));
  const back = readRevocationArchive(der);
  if (!back || back.ocsps.length !== ocsps.length || back.crls.length !== crls.length
    || !back.ocsps.every((o, i) => o.equals(ocsps[i])) || !back.crls.every((c, i) => c.equals(crls[i]))) {
    throw new SingpassFlowsError('INVALID_INPUT', 'A revocation answer is not in DER form and cannot be embedded unchanged', { retryable: false });
  }
  return der;
}

/** The answers of a RevocationInfoArchival (DER); undefined when the value is not one. */
export function readRevocationArchive(der: Buffer): RevocationArchive | undefined {
  let root: asn1js.AsnType;
  try {
    root = parsed(der, 'RevocationInfoArchival');
  } catch {
    return undefined;
  }
  if (!(root instanceof asn1js.Sequence)) return undefined;
  const out: RevocationArchive = { ocsps: [], crls: [] };
  for (const field of root.valueBlock.value) {
    if (field.idBlock.tagClass !== 3 || !(field instanceof asn1js.Constructed)) return undefined;
    const list = field.valueBlock.value[0];
    if (!(list instanceof asn1js.Sequence)) return undefined;
    const items = list.valueBlock.value.map((v) => Buffer.from(v.valueBeforeDecodeView));
    if (field.idBlock.tagNumber === 0) out.crls.push(...items);
    else if (field.idBlock.tagNumber === 1) out.ocsps.push(...items);
  }
  return out;
}
