import { createHash, randomBytes } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { Clock } from '../clock';
import { systemClock } from '../clock';
import { SingpassFlowsError } from '../errors';
import { httpRequest, safeUrl, type Fetch } from '../http';
import {
  OID, certDer, digest, extendedKeyUsages, hashNameOf, isIssuedBy, isValidAt, nameDer, invalidityDateOf, parseAsn1, parseCertificate, type CertificateInput,
  positiveNonce, publicKeyBits, spkiDer, subjectString, toDer, verifySignature, type HashName,
} from './x509';
import { invalidInput, type ErrorCode } from '../errors';
import { certificateView, readCertificate, viewIssuedBy, viewValidAt, type CertificateView } from './certificate-view';
import { readOcspAnswer } from './ocsp-answer';
import { oid as derOid, nullValue, octetString, seq, tlv } from '../pades/der';

export type OcspCertStatus = 'good' | 'revoked' | 'unknown';

export interface OcspResult {
  /** The whole OCSPResponse DER (what PAdES puts in `/DSS /OCSPs`). */
  der: Buffer;
  status: OcspCertStatus;
  thisUpdate: Date;
  nextUpdate?: Date;
  producedAt: Date;
  revokedAt?: Date;
  /** The answer's invalidityDate, when it gives one: the key is suspected invalid since then (may precede `revokedAt`). */
  invalidSince?: Date;
  /** The certificate that signed the response (DER): the issuer itself or its delegated responder. */
  responderCertificate: Buffer;
  /** Certificates embedded in the response (DER), e.g. the delegated responder's. */
  certificates: Buffer[];
}

export interface FetchOcspOptions {
  /** Responder URL; by default the certificate's AIA OCSP URL. */
  url?: string;
  fetch?: Fetch;
  timeoutMs?: number;
  clock?: Clock;
  /** Allowed clock difference with the responder (default 5 minutes). */
  clockSkewMs?: number;
  /** For responses without nextUpdate: how old thisUpdate may be (default 24 hours). */
  maxAgeMs?: number;
}

const SKEW_MS = 5 * 60_000;
const MAX_AGE_MS = 24 * 3600_000;
const RESPONSE_STATUS = ['successful', 'malformedRequest', 'internalError', 'tryLater', '(unused)', 'sigRequired', 'unauthorized'];

/**
 * Asks the OCSP responder about `cert` (issued by `issuer`), then checks the answer before trusting it: signed by
 * the issuer or by a delegated responder the issuer certified for OCSP signing (id-kp-OCSPSigning), about exactly
 * this certificate, echoing our nonce, and fresh. A revoked or unknown status is returned, not thrown: the caller
 * decides (LTV refuses both). Every failure to get a trustworthy answer is `OCSP_FAILED`.
 *
 * @example
 * const { status, der } = await fetchOcspResponse(userCertDer, intermediateDer);
 */
export async function fetchOcspResponse(cert: CertificateInput | CertificateView, issuer: CertificateInput | CertificateView, options: FetchOcspOptions = {}): Promise<OcspResult> {
  const certView = viewOf(cert, 'OCSP_FAILED');
  const issuerView = viewOf(issuer, 'OCSP_FAILED');
  if (!viewIssuedBy(certView, issuerView)) {
    throw invalidInput('issuer', `"${subjectString(issuerView.der)}" did not issue "${subjectString(certView.der)}"`);
  }
  const url = options.url ?? certView.ocspUrl;
  if (!url) {
    throw new SingpassFlowsError('OCSP_FAILED', `The certificate "${subjectString(certView.der)}" names no OCSP responder (no AIA OCSP URL); pass one explicitly`, {});
  }
  const target = safeUrl(url);
  const nonce = positiveNonce(randomBytes(16));
  const certId = certIdOf('sha1', certView, issuerView);
  const body = buildRequest(certId, nonce);

  let res;
  try {
    res = await httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/ocsp-request', accept: 'application/ocsp-response' }, body: new Uint8Array(body) }, { fetch: options.fetch, timeoutMs: options.timeoutMs });
  } catch (e) {
    const err = e as SingpassFlowsError;
    throw new SingpassFlowsError('OCSP_FAILED', `The OCSP responder at ${target} could not be reached (${err.code ?? 'error'}): ${err.message}`, { url: target, retryable: true, cause: err.code }, { cause: e });
  }
  if (res.status !== 200) {
    throw new SingpassFlowsError('OCSP_FAILED', `The OCSP responder at ${target} answered HTTP ${res.status}`, { url: target, status: res.status, retryable: res.status >= 500 });
  }
  const fail = (why: string): SingpassFlowsError => new SingpassFlowsError('OCSP_FAILED', `The OCSP answer from ${target} cannot be trusted: ${why}`, { url: target });
  const result = checkOcspAnswer(res.body, certView, issuerView, { clock: options.clock, clockSkewMs: options.clockSkewMs, maxAgeMs: options.maxAgeMs }, fail);
  if (result.nonce === undefined) {
    // A responder may send pre-produced answers without a nonce; the freshness window then bounds replay.
  } else if (!result.nonce.equals(nonceExtensionValue(nonce))) {
    throw fail('it does not echo our nonce');
  }
  return result.result;
}

type CheckOptions = { clock?: Clock; clockSkewMs?: number; maxAgeMs?: number; checkFreshness?: boolean };
const defaultFail = (why: string): SingpassFlowsError => new SingpassFlowsError('OCSP_FAILED', `The OCSP response cannot be trusted: ${why}`);

/**
 * Checks an OCSPResponse (DER) about `cert`: response signature by the issuer or its delegated responder, certID,
 * freshness. Used by {@link fetchOcspResponse} and by the PDF verifier for embedded responses.
 */
export function checkOcspResponse(
  der: Buffer,
  cert: pkijs.Certificate | CertificateView,
  issuer: pkijs.Certificate | CertificateView,
  opts: CheckOptions = {},
  fail: (why: string) => SingpassFlowsError = defaultFail,
): { result: OcspResult; nonce?: Buffer } {
  return checkOcspAnswer(der, viewOf(cert, 'OCSP_FAILED'), viewOf(issuer, 'OCSP_FAILED'), opts, fail);
}

/**
 * The check natively: the answer read by a TLV walk ({@link readOcspAnswer}), signatures verified by node:crypto over
 * the bytes as signed. An answer that is not plain DER goes to the schema-driven reading, which says what is wrong.
 * The same checks, in the same order, with the same messages as {@link checkOcspResponseWithSchema}.
 */
function checkOcspAnswer(der: Buffer, cert: CertificateView, issuer: CertificateView, opts: CheckOptions, fail: (why: string) => SingpassFlowsError): { result: OcspResult; nonce?: Buffer } {
  const answer = readOcspAnswer(der);
  let embedded: CertificateView[] | undefined;
  try {
    embedded = answer?.certificates.map((c) => certificateView(c));
  } catch {
    embedded = undefined; // a carried certificate node cannot read: the schema reading names it
  }
  if (!answer || !embedded) return checkOcspResponseWithSchema(der, parseCertificate(cert.der, 'OCSP_FAILED'), parseCertificate(issuer.der, 'OCSP_FAILED'), opts, fail);
  const now = new Date((opts.clock ?? systemClock)());

  const single = answer.responses.find((r) => {
    const h = hashNameOf(r.hashAlgorithm);
    if (!h) return false;
    const expected = certIdOf(h, cert, issuer);
    return r.serial.equals(cert.serial) && r.issuerNameHash.equals(expected.nameHash) && r.issuerKeyHash.equals(expected.keyHash);
  });
  if (!single) throw fail('it is about a different certificate');

  const { tbs, signature: sig, signatureAlgorithm: algo } = answer;
  let responder: CertificateView | undefined;
  // The key the ResponderID names is tried first: a delegated responder's answer would otherwise cost a verification
  // with the CA's key that fails, every time (failures are not remembered). Any other key is still tried after it.
  const named = (c: CertificateView): boolean => 'byName' in answer.responderId
    ? c.subjectName.equals(answer.responderId.byName)
    : createHash('sha1').update(c.publicKeyBits).digest().equals(answer.responderId.byKey);
  const delegated = named(issuer) ? undefined : embedded.find((c) => named(c) && verifySignature(algo, tbs, sig, c.spki));
  if (delegated?.spki.equals(issuer.spki) || (!delegated && verifySignature(algo, tbs, sig, issuer.spki))) {
    responder = issuer;
  } else {
    for (const c of delegated ? [delegated] : embedded) {
      if (!verifySignature(algo, tbs, sig, c.spki)) continue;
      if (!viewIssuedBy(c, issuer)) throw fail(`the responder certificate "${subjectString(c.der)}" was not issued by the certificate's CA`);
      if (!(c.x509.keyUsage ?? []).includes(OID.kpOcspSigning)) throw fail(`the responder certificate "${subjectString(c.der)}" is not authorised for OCSP signing`);
      if (!viewValidAt(c, now)) throw fail(`the responder certificate "${subjectString(c.der)}" is expired or not yet valid`);
      responder = c;
      break;
    }
  }
  if (!responder) throw fail('its signature does not verify with the CA or a responder it authorised');

  checkFresh(single, now, opts, fail);
  return {
    result: {
      der: Buffer.from(der),
      status: single.status,
      thisUpdate: single.thisUpdate,
      nextUpdate: single.nextUpdate,
      producedAt: answer.producedAt,
      revokedAt: single.revokedAt,
      ...(single.invalidSince ? { invalidSince: single.invalidSince } : {}),
      responderCertificate: Buffer.from(responder.der),
      certificates: embedded.map((c) => Buffer.from(c.der)),
    },
    nonce: answer.nonce ? Buffer.from(answer.nonce) : undefined,
  };
}

/** A certificate as a view: DER/PEM read natively, a pkijs certificate by its bytes; unreadable input fails as before. */
/** The answer is current: not from the future, not past its nextUpdate (or, without one, not older than maxAgeMs). */
function checkFresh(single: { thisUpdate: Date; nextUpdate?: Date }, now: Date, opts: CheckOptions, fail: (why: string) => SingpassFlowsError): void {
  if (opts.checkFreshness === false) return;
  const skew = opts.clockSkewMs ?? SKEW_MS;
  if (single.thisUpdate.getTime() > now.getTime() + skew) throw fail('its thisUpdate is in the future (check the clock)');
  if (single.nextUpdate && single.nextUpdate.getTime() < now.getTime() - skew) throw fail('it is stale (nextUpdate has passed)');
  if (!single.nextUpdate && single.thisUpdate.getTime() < now.getTime() - (opts.maxAgeMs ?? MAX_AGE_MS)) throw fail('it is too old');
}

function viewOf(c: CertificateInput | CertificateView, code: ErrorCode): CertificateView {
  if (c instanceof pkijs.Certificate) return readCertificate(certDer(c), code);
  if (typeof c !== 'string' && !Buffer.isBuffer(c) && !(c instanceof Uint8Array)) return c;
  return readCertificate(toDer(c), code);
}

/**
 * The schema-driven check (pkijs): the reading for answers that are not plain DER, and the reference the native
 * check is tested against.
 */
export function checkOcspResponseWithSchema(
  der: Buffer,
  cert: pkijs.Certificate,
  issuer: pkijs.Certificate,
  opts: CheckOptions = {},
  fail: (why: string) => SingpassFlowsError = defaultFail,
): { result: OcspResult; nonce?: Buffer } {
  let ocspResponse: pkijs.OCSPResponse;
  let basic: pkijs.BasicOCSPResponse;
  try {
    ocspResponse = new pkijs.OCSPResponse({ schema: parseAsn1(der, 'OCSP_FAILED', 'The OCSP response') });
  } catch (e) {
    throw e instanceof SingpassFlowsError ? fail('it is not valid DER') : fail('it is not an OCSP response');
  }
  const respStatus = ocspResponse.responseStatus.valueBlock.valueDec;
  if (respStatus !== 0) {
    throw new SingpassFlowsError('OCSP_FAILED', `The OCSP responder refused the request (${RESPONSE_STATUS[respStatus] ?? respStatus})`, { ocspStatus: RESPONSE_STATUS[respStatus] ?? respStatus, retryable: respStatus === 3 || respStatus === 2 });
  }
  if (!ocspResponse.responseBytes || ocspResponse.responseBytes.responseType !== OID.ocspBasic) throw fail('it is not a basic OCSP response');
  let certificateDers: Uint8Array[];
  try {
    const split = splitCertificates(parseAsn1(Buffer.from(ocspResponse.responseBytes.response.valueBlock.valueHexView), 'OCSP_FAILED', 'BasicOCSPResponse'));
    certificateDers = split.certificates;
    basic = new pkijs.BasicOCSPResponse({ schema: split.rest });
  } catch {
    throw fail('the BasicOCSPResponse could not be parsed');
  }
  let embedded: pkijs.Certificate[];
  try {
    embedded = certificateDers.map((c) => parseCertificate(c, 'OCSP_FAILED'));
  } catch {
    throw fail('a certificate it carries could not be parsed');
  }
  const now = new Date((opts.clock ?? systemClock)());

  // Our certificate's entry, matched with whatever hash algorithm the responder used in its CertID.
  const serial = Buffer.from(cert.serialNumber.valueBlock.valueHexView);
  const single = basic.tbsResponseData.responses.find((r) => {
    const h = hashNameOf(r.certID.hashAlgorithm.algorithmId);
    if (!h) return false;
    const expected = buildCertId(h, cert, issuer);
    return Buffer.from(r.certID.serialNumber.valueBlock.valueHexView).equals(serial)
      && Buffer.from(r.certID.issuerNameHash.valueBlock.valueHexView).equals(expected.nameHash)
      && Buffer.from(r.certID.issuerKeyHash.valueBlock.valueHexView).equals(expected.keyHash);
  });
  if (!single) throw fail('it is about a different certificate');

  // Who signed: the issuer itself, or a delegated responder directly certified by the issuer for OCSP signing.
  const tbs = basic.tbsResponseData.tbsView;
  const sig = basic.signature.valueBlock.valueHexView;
  const algo = basic.signatureAlgorithm.algorithmId;
  let responder: pkijs.Certificate | undefined;
  if (verifySignature(algo, tbs, sig, spkiDer(issuer))) {
    responder = issuer;
  } else {
    for (const c of embedded) {
      if (!verifySignature(algo, tbs, sig, spkiDer(c))) continue;
      if (!isIssuedBy(c, issuer)) throw fail(`the responder certificate "${subjectString(c)}" was not issued by the certificate's CA`);
      if (!extendedKeyUsages(c).includes(OID.kpOcspSigning)) throw fail(`the responder certificate "${subjectString(c)}" is not authorised for OCSP signing`);
      if (!isValidAt(c, now)) throw fail(`the responder certificate "${subjectString(c)}" is expired or not yet valid`);
      responder = c;
      break;
    }
  }
  if (!responder) throw fail('its signature does not verify with the CA or a responder it authorised');

  checkFresh(single, now, opts, fail);

  const cs = single.certStatus as asn1js.BaseBlock;
  let status: OcspCertStatus;
  let revokedAt: Date | undefined;
  switch (cs.idBlock.tagNumber) {
    case 0: status = 'good'; break;
    case 1: {
      status = 'revoked';
      const inner = (cs as asn1js.Constructed).valueBlock.value?.[0];
      if (inner instanceof asn1js.GeneralizedTime) revokedAt = inner.toDate();
      break;
    }
    default: status = 'unknown';
  }

  const invalidSince = status === 'revoked' ? invalidityDateOf(single.singleExtensions) : undefined;
  const nonceExt = basic.tbsResponseData.responseExtensions?.find((e) => e.extnID === OID.ocspNonce);
  return {
    result: {
      der: Buffer.from(der),
      status,
      thisUpdate: single.thisUpdate,
      nextUpdate: single.nextUpdate,
      producedAt: basic.tbsResponseData.producedAt,
      revokedAt,
      ...(invalidSince ? { invalidSince } : {}),
      responderCertificate: certDer(responder),
      certificates: embedded.map(certDer),
    },
    nonce: nonceExt ? Buffer.from(nonceExt.extnValue.valueBlock.valueHexView) : undefined,
  };
}

/**
 * A BasicOCSPResponse's `certs [0]` (DER, each) apart from the rest, which is what pkijs gets: pkijs would decode the
 * responder's certificate in every answer afresh, while a responder signs every answer with the same delegated
 * certificate — taken through the certificate cache by its own bytes, its parse, re-encoding and the check that the
 * CA issued it happen once (most of a check's cost otherwise). The shape pkijs's schema would demand is enforced here
 * for the part it no longer sees: at most one more member, `[0]` holding a SEQUENCE OF certificates.
 */
function splitCertificates(basicAsn: asn1js.AsnType): { rest: asn1js.Sequence; certificates: Uint8Array[] } {
  if (!(basicAsn instanceof asn1js.Sequence)) throw new Error('not a SEQUENCE');
  const members = basicAsn.valueBlock.value;
  if (members.length === 3) return { rest: basicAsn, certificates: [] };
  const field = members[3];
  const list = field instanceof asn1js.Constructed && field.idBlock.tagClass === 3 && field.idBlock.tagNumber === 0 && field.valueBlock.value.length === 1
    ? field.valueBlock.value[0] : undefined;
  if (members.length !== 4 || !(list instanceof asn1js.Sequence)) throw new Error('unexpected members after the signature');
  return { rest: new asn1js.Sequence({ value: members.slice(0, 3) }), certificates: list.valueBlock.value.map((c) => c.valueBeforeDecodeView) };
}

/**
 * The responses among `ocsps` (DER OCSPResponses, e.g. a PDF's /DSS /OCSPs) that are about `cert` and verify for it
 * (signed by its issuer or a responder the issuer authorised). Responses about other certificates, or that cannot be
 * trusted, are skipped. Freshness is checked against `opts.clock` unless `checkFreshness` is false.
 *
 * @example
 * const good = matchingOcspResponses(dss.ocsps, cert, issuer, { checkFreshness: false }).some((r) => r.status === 'good');
 */
export function matchingOcspResponses(
  ocsps: Buffer[],
  cert: pkijs.Certificate | CertificateView,
  issuer: pkijs.Certificate | CertificateView,
  opts: { clock?: Clock; checkFreshness?: boolean } = {},
): OcspResult[] {
  const serial = cert instanceof pkijs.Certificate ? Buffer.from(cert.serialNumber.valueBlock.valueHexView) : cert.serial;
  const out: OcspResult[] = [];
  let views: [CertificateView, CertificateView] | undefined;
  for (const der of ocsps) {
    if (!der.includes(serial)) continue; // cheap pre-filter: a response about this cert contains its serial
    try {
      views ??= [viewOf(cert, 'OCSP_FAILED'), viewOf(issuer, 'OCSP_FAILED')];
      out.push(checkOcspAnswer(der, views[0], views[1], opts, defaultFail).result);
    } catch {
      // another certificate's response, or an untrustworthy one: does not count
    }
  }
  return out;
}

function certIdOf(hash: HashName, cert: CertificateView, issuer: CertificateView): { hash: HashName; nameHash: Buffer; keyHash: Buffer; serial: Buffer } {
  return { hash, nameHash: digest(hash, cert.issuerName), keyHash: digest(hash, issuer.publicKeyBits), serial: cert.serial };
}

function buildCertId(hash: HashName, cert: pkijs.Certificate, issuer: pkijs.Certificate): { hash: HashName; nameHash: Buffer; keyHash: Buffer; serial: Buffer } {
  // issuerNameHash hashes the issuer name as it appears in the certificate; it equals the CA's subject DER.
  return { hash, nameHash: digest(hash, nameDer(cert.issuer)), keyHash: digest(hash, publicKeyBits(issuer)), serial: Buffer.from(cert.serialNumber.valueBlock.valueHexView) };
}

/** The nonce extension value: an OCTET STRING wrapping the nonce (RFC 8954; what OpenSSL sends and checks). */
function nonceExtensionValue(nonce: Buffer): Buffer {
  return octetString(nonce);
}

/** The OCSPRequest for one CertID with our nonce, in DER (byte for byte what pkijs built; see the tests). */
function buildRequest(id: { hash: HashName; nameHash: Buffer; keyHash: Buffer; serial: Buffer }, nonce: Buffer): Buffer {
  const certId = seq(seq(derOid(OID[id.hash]), nullValue()), octetString(id.nameHash), octetString(id.keyHash), tlv(0x02, id.serial));
  const nonceExtension = seq(derOid(OID.ocspNonce), octetString(nonceExtensionValue(nonce)));
  return seq(seq(seq(seq(certId)), tlv(0xa2, seq(nonceExtension))));
}
