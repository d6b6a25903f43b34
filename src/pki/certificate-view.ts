/**
 * A certificate read once, natively: the fields a certificate check and an OCSP exchange need (TBS bytes, serial,
 * issuer and subject names, key, AIA OCSP URL) located in the DER by a small TLV walk, the rest left to node:crypto's
 * X509Certificate on demand. The schema-driven pkijs decoding it replaces cost most of a check (every extension
 * decoded to read one URL); pkijs stays where objects are built (CMS, TSP).
 */
import { createHash, X509Certificate } from 'node:crypto';
import { children, decodeOid, readTlv, type Tlv } from '../pades/der';
import { wellFormed } from './der-shape';
import { OID } from './oid';
import type * as pkijs from 'pkijs';
import { caIssuersUrlOf, certDer, nameDer, ocspUrlOf, parseCertificate, publicKeyBits, spkiDer, verifySignature } from './x509';
import type { ErrorCode } from '../errors';

export interface CertificateView {
  /** The certificate's exact bytes. */
  readonly der: Buffer;
  /** The signed part (TBSCertificate TLV), its signature algorithm OID and signature bits. */
  readonly tbs: Buffer;
  readonly signatureAlgorithm: string;
  readonly signature: Buffer;
  /** INTEGER content bytes of the serial number (as DER carries them). */
  readonly serial: Buffer;
  /** DER of the issuer and subject Names, as signed. */
  readonly issuerName: Buffer;
  readonly subjectName: Buffer;
  /** SubjectPublicKeyInfo DER (one Buffer per view: keys imported from it are cached by it) and its key bits. */
  readonly spki: Buffer;
  readonly publicKeyBits: Buffer;
  /** The first http(s) AIA OCSP and caIssuers URLs, if any. */
  readonly ocspUrl: string | undefined;
  readonly caIssuersUrl: string | undefined;
  /** node:crypto's parse, made on first use. */
  readonly x509: X509Certificate;
}

const at = (buf: Buffer, t: Tlv): Buffer => buf.subarray(t.start, t.end);
const content = (buf: Buffer, t: Tlv): Buffer => buf.subarray(t.contentStart, t.end);

/**
 * Reads a DER certificate's structure; throws (a plain Error) when it is not one. Nothing is verified here.
 * `x509` may be passed when the caller already holds node's parse of the same bytes.
 */
export function viewCertificate(der: Buffer, x509?: X509Certificate): CertificateView {
  const outer = readTlv(der);
  if (outer.tag !== 0x30 || outer.end !== der.length) throw new Error('not one DER SEQUENCE');
  wellFormed(der, outer);
  const [tbsT, algT, sigT, ...more] = children(der, outer);
  if (!tbsT || tbsT.tag !== 0x30 || algT?.tag !== 0x30 || sigT?.tag !== 0x03 || more.length) throw new Error('not a Certificate');
  const f = children(der, tbsT);
  let i = f[0]?.tag === 0xa0 ? 1 : 0; // [0] version
  const serialT = f[i++];
  const sigAlgT = f[i++];
  const issuerT = f[i++];
  const validityT = f[i++];
  const subjectT = f[i++];
  const spkiT = f[i++];
  if (serialT?.tag !== 0x02 || sigAlgT?.tag !== 0x30 || issuerT?.tag !== 0x30 || validityT?.tag !== 0x30 || subjectT?.tag !== 0x30 || spkiT?.tag !== 0x30) throw new Error('not a TBSCertificate');
  const algOid = children(der, algT)[0];
  if (algOid?.tag !== 0x06) throw new Error('no signature algorithm');
  const spkiParts = children(der, spkiT);
  if (spkiParts[1]?.tag !== 0x03) throw new Error('no subjectPublicKey');
  let aia: Partial<Record<string, string>> = {};
  for (const ext of f.slice(i)) if (ext.tag === 0xa3) aia = aiaUrls(der, ext);
  let parsed = x509;
  return {
    der,
    tbs: at(der, tbsT),
    signatureAlgorithm: decodeOid(content(der, algOid)),
    signature: der.subarray(sigT.contentStart + 1, sigT.end),
    serial: Buffer.from(content(der, serialT)),
    issuerName: Buffer.from(at(der, issuerT)),
    subjectName: Buffer.from(at(der, subjectT)),
    spki: Buffer.from(at(der, spkiT)),
    publicKeyBits: der.subarray(spkiParts[1].contentStart + 1, spkiParts[1].end),
    ocspUrl: aia[OID.adOcsp],
    caIssuersUrl: aia[OID.adCaIssuers],
    get x509() {
      return (parsed ??= new X509Certificate(der));
    },
  };
}

/** `[3] Extensions` → the AIA extension's first http(s) uniformResourceIdentifier ([6]) per access method. */
function aiaUrls(der: Buffer, extsField: Tlv): Partial<Record<string, string>> {
  const out: Partial<Record<string, string>> = {};
  const list = children(der, extsField)[0];
  if (list?.tag !== 0x30) return out;
  for (const ext of children(der, list)) {
    const [idT, ...rest] = children(der, ext);
    if (idT?.tag !== 0x06 || decodeOid(content(der, idT)) !== OID.authorityInfoAccess) continue;
    const value = rest[rest.length - 1];
    if (value?.tag !== 0x04) return out;
    const aia = readTlv(der, value.contentStart, value.end);
    for (const desc of children(der, aia)) {
      const [method, location] = children(der, desc);
      if (method?.tag !== 0x06 || location?.tag !== 0x86) continue;
      const oid = decodeOid(content(der, method));
      const url = content(der, location).toString('latin1');
      if (!out[oid] && /^https?:\/\//i.test(url)) out[oid] = url;
    }
    return out;
  }
  return out;
}

// Views of the services' certificates (CAs, OCSP responders, TSAs) are kept, so their keys are imported once and a
// responder is checked against its CA once; a user's certificate is personal data and is read afresh each time.
const VIEWS = new Map<string, CertificateView>();
const VIEWS_MAX = 512;

/**
 * Views of the certificates the services' cache does not keep (a user's), shared by the steps of one piece of work
 * (one finish: the signature check and the verification of the signed PDF), so the same bytes are read, parsed by
 * node and their key imported once. Keyed by the exact bytes; it goes with the work that made it.
 */
export class CertificateScope {
  readonly #views = new Map<string, CertificateView>();

  /** The view kept for exactly these bytes. */
  find(der: Buffer): CertificateView | undefined {
    return this.#views.get(der.toString('latin1'));
  }

  keep(view: CertificateView): void {
    if (this.#views.size < 64) this.#views.set(view.der.toString('latin1'), view);
  }
}

/**
 * {@link viewCertificate} through the services' cache (by SHA-256 of the bytes), and for any other certificate
 * through `scope` when given (else it is read afresh).
 */
export function certificateView(der: Buffer, scope?: CertificateScope): CertificateView {
  const mine = scope?.find(der);
  if (mine) return mine;
  const key = createHash('sha256').update(der).digest('base64');
  const hit = VIEWS.get(key);
  if (hit) return hit;
  const view = viewCertificate(Buffer.from(der));
  const x = view.x509;
  if (x.ca || (x.keyUsage ?? []).some((u) => u === OID.kpOcspSigning || u === OID.kpTimeStamping)) {
    if (VIEWS.size >= VIEWS_MAX) VIEWS.delete(VIEWS.keys().next().value!);
    VIEWS.set(key, view);
  } else scope?.keep(view);
  return view;
}

const ISSUED_BY = new WeakMap<CertificateView, WeakMap<CertificateView, boolean>>();

/**
 * True when `issuer` issued `cert`: the issuer name is the issuer's subject, byte for byte, and the certificate's
 * signature verifies with the issuer's key (the same rule as the pkijs-based `isIssuedBy`). Remembered per pair.
 */
export function viewIssuedBy(cert: CertificateView, issuer: CertificateView): boolean {
  if (!cert.issuerName.equals(issuer.subjectName)) return false;
  let byIssuer = ISSUED_BY.get(cert);
  if (!byIssuer) ISSUED_BY.set(cert, (byIssuer = new WeakMap()));
  const known = byIssuer.get(issuer);
  if (known !== undefined) return known;
  const ok = verifySignature(cert.signatureAlgorithm, cert.tbs, cert.signature, issuer.spki);
  byIssuer.set(issuer, ok);
  return ok;
}

/** Whether `at` falls within the certificate's validity period. */
export function viewValidAt(cert: CertificateView, at: Date): boolean {
  return Date.parse(cert.x509.validFrom) <= at.getTime() && at.getTime() <= Date.parse(cert.x509.validTo);
}

/**
 * The view of a certificate the TLV walk does not take (BER, times it does not read) but pkijs does: the same fields
 * from pkijs's parse, so such a certificate is checked as before rather than refused.
 */
export function viewFromSchema(cert: pkijs.Certificate): CertificateView {
  const der = certDer(cert);
  let parsed: X509Certificate | undefined;
  return {
    der,
    tbs: Buffer.from(cert.tbsView),
    signatureAlgorithm: cert.signatureAlgorithm.algorithmId,
    signature: Buffer.from(cert.signatureValue.valueBlock.valueHexView),
    serial: Buffer.from(cert.serialNumber.valueBlock.valueHexView),
    issuerName: nameDer(cert.issuer),
    subjectName: nameDer(cert.subject),
    spki: spkiDer(cert),
    publicKeyBits: publicKeyBits(cert),
    ocspUrl: ocspUrlOf(cert),
    caIssuersUrl: caIssuersUrlOf(cert),
    get x509() {
      return (parsed ??= new X509Certificate(der));
    },
  };
}

/** {@link certificateView}, else {@link viewFromSchema}; throws pkijs's error (with `code`) when neither reads it. */
export function readCertificate(der: Buffer, code: ErrorCode = 'CHAIN_INCOMPLETE'): CertificateView {
  try {
    return certificateView(der);
  } catch {
    return viewFromSchema(parseCertificate(der, code));
  }
}
