/**
 * PAdES B-LT: gathers the validation data a verifier needs years later (every certificate of every signer and TSA
 * chain, a fresh OCSP response for every non-anchor certificate, the OCSP responder certificates) and stores it in
 * the document security store (/DSS) with one incremental update. A certificate whose CA runs no OCSP responder but
 * publishes a CRL (CRL Distribution Points) gets the CRL instead, checked before it is stored.
 *
 * Documents are often signed by others first, with other tools and other CAs. Only the signatures the caller names
 * (by default: the newest one and the document timestamps after it, i.e. what we just added) must end complete;
 * earlier ones get what can be obtained, and the summary says what could not and why.
 */
import { createHash } from 'node:crypto';
import type * as pkijs from 'pkijs';
import type { Clock } from '../clock';
import { SingpassFlowsError, invalidInput } from '../errors';
import type { Fetch } from '../http';
import { buildChainPartial, checkTimestampToken, fetchCrlStatus, fetchOcspResponse, matchingCrls, matchingOcspResponses, type CrlResult, type OcspResult } from '../pki';
import { certificateView } from '../pki/certificate-view';
import { attributeValue, findSignerCertificate, parseSignedData } from '../pki/cms';
import { readSignedData } from '../pki/signed-data';
import { OID, certDer, crlUrlOf, parseCertificate, revokedSince, subjectString } from '../pki/x509';
import { appendDss, readDss } from './dss';
import { listSignatures, newestSignatureIndex, type PdfSignatureInfo } from './list';

/**
 * Which signatures must get complete validation data: `'newest'`, `'all'`, or the field names of exactly those.
 * See {@link AddValidationDataOptions.requireComplete}.
 */
export type RequireComplete = 'newest' | 'all' | readonly string[];

export interface AddValidationDataOptions {
  /** Trust anchors (DER or PEM); each chain must end at one of them. Default: any self-signed root reached via AIA. */
  trustedRoots?: (Buffer | string)[];
  /** Extra intermediates to use before downloading from AIA. */
  intermediates?: (Buffer | string)[];
  fetch?: Fetch;
  timeoutMs?: number;
  clock?: Clock;
  /** Also write per-signature /VRI entries (keyed by SHA-1 of the /Contents bytes). Default false. */
  vri?: boolean;
  /**
   * Which signatures MUST end with complete validation data. For those the call refuses, writing nothing, as it
   * always did: `CHAIN_INCOMPLETE` (no path to a trusted root), `OCSP_REVOKED`, `OCSP_UNKNOWN`, `OCSP_FAILED`
   * (responder unreachable or untrustworthy); for a certificate whose CA has no OCSP responder but a CRL,
   * `CRL_REVOKED` or `CRL_FAILED`. Every other signature gets what can be obtained; what could not is
   * listed in the summary's `perSignature[].missing` with a stable code, and never fails the call.
   *
   * - `'newest'` (default, what a signing flow needs): the newest signature, i.e. the one just added, with its
   *   signature timestamp, and every document timestamp after it. Earlier signatures (often made by other people
   *   with other tools and CAs) are best effort. A PDF holding only document timestamps requires all of them.
   * - `'all'`: every signature and document timestamp in the file (the behaviour before this option existed).
   * - an array of signature field names: exactly those (a name the PDF does not have is refused as INVALID_INPUT).
   *
   * @example
   * // A contract the other party already signed with their own tool (self-signed, say): ours must be complete,
   * // theirs gets what can be found, and the summary says what was missing.
   * const { pdf, summary } = await addValidationDataWithSummary(signedByUsToo, { trustedRoots: [rootPem] });
   * for (const s of summary.perSignature.filter((s) => !s.complete)) {
   *   console.warn(`${s.fieldName}: ${s.missing.map((m) => `${m.code} (${m.message})`).join('; ')}`);
   * }
   * // An archive that must be validatable as a whole: refuse unless every signature is complete.
   * const archived = await addValidationData(pdf, { trustedRoots: [rootPem], requireComplete: 'all' });
   */
  requireComplete?: RequireComplete;
}

/** Stable reasons why validation data for a (not required) signature could not be obtained. */
export type MissingValidationDataCode =
  /** The CMS signature (or the document timestamp token) cannot be parsed. */
  | 'SIGNATURE_UNREADABLE'
  /** The signature does not carry its signer certificate. */
  | 'SIGNER_CERT_MISSING'
  /** The signature timestamp token cannot be parsed or does not verify. */
  | 'TIMESTAMP_INVALID'
  /** An issuer is not in the file, not given, and not downloadable from the AIA caIssuers URL. */
  | 'CHAIN_INCOMPLETE'
  /** The path ends at a root that is not one of `trustedRoots` (e.g. a self-signed signer from another tool). */
  | 'CHAIN_UNTRUSTED'
  /**
   * The certificate names no OCSP responder (no AIA OCSP URL) and no http(s) CRL distribution point. (A certificate
   * with a CRL distribution point but no OCSP responder gets its CRL instead: see `CRL_FAILED`, `CRL_REVOKED`.)
   */
  | 'OCSP_NO_RESPONDER'
  /**
   * The certificate names no OCSP responder and its CRL could not be used: not downloadable (HTTP error, timeout, too
   * large), not signed by the issuer, stale, or of a kind not supported (delta, indirect or partitioned CRLs).
   */
  | 'CRL_FAILED'
  /** The certificate is listed as revoked in its CA's CRL (the CRL is still stored: it is the evidence). */
  | 'CRL_REVOKED'
  /**
   * The OCSP responder is unreachable, refused, or answered something that cannot be trusted, and the certificate
   * names no CRL distribution point that could stand in (or its CRL could not be used either: the message says why).
   */
  | 'OCSP_FAILED'
  /** The certificate is revoked (the signed OCSP answer is still stored: it is the evidence). */
  | 'OCSP_REVOKED'
  /** The responder does not know the certificate. */
  | 'OCSP_UNKNOWN';

export interface MissingValidationData {
  code: MissingValidationDataCode;
  /** Subject of the certificate concerned, when there is one. */
  certificate?: string;
  /** What happened, for people (not stable: switch on `code`). */
  message: string;
}

/** What one signature or document timestamp got, in file order. */
export interface SignatureValidationData {
  fieldName: string;
  type: 'signature' | 'docTimestamp';
  /** It had to be complete (see `requireComplete`); a required signature is always complete in a returned summary. */
  required: boolean;
  /** Its whole chain (and its signature timestamp's TSA chain) reaches a trusted root with a good OCSP answer (or, for a CA without OCSP responder, a good CRL status) for each non-anchor certificate. */
  complete: boolean;
  missing: MissingValidationData[];
}

/** A summary of what was added, for logs and the CLI. */
export interface ValidationDataSummary {
  signatures: number;
  /** Certificates and OCSP responses this update refers to (some may already have been in the /DSS). */
  certificates: number;
  ocspResponses: number;
  /** OCSP responses obtained from responders in this call. */
  ocspFetched: number;
  /** OCSP responses already in the /DSS that were still suitable, so not fetched again. */
  ocspReused: number;
  /** CRLs this update refers to (for certificates whose CA runs no OCSP responder). */
  crls: number;
  /** Certificates whose status came from a CRL obtained in this call (downloaded, or from the in-memory CRL cache). */
  crlFetched: number;
  /** Certificates whose status came from a CRL already in the /DSS. */
  crlReused: number;
  /** Every signature and document timestamp, in file order. */
  perSignature: SignatureValidationData[];
  /** Every signature got complete validation data. */
  complete: boolean;
}

/** One signature's chains and when they must be vouched for. */
interface Material {
  info: SignatureValidationData;
  vriKey: string;
  /** Each chain is [leaf, ..., top]; top is the anchor when the chain is complete. */
  chains: Buffer[][];
  /** The time its timestamp proves (signature timestamp or the document timestamp itself): revocation data must not predate it. */
  proofTime?: Date;
}

/** One certificate whose status we need, shared by every signature that relies on it. */
interface Need {
  cert: Buffer;
  issuer: Buffer;
  /** The latest `proofTime` among the signatures relying on it. */
  notBefore?: Date;
  /** A signature without a proof time relies on it (for that one, a revocation at any time counts). */
  untimed?: boolean;
  /** A signature that must be complete relies on it. */
  required: boolean;
  outcome?: { result: OcspResult; reused: boolean } | { crl: CrlResult; reused: boolean } | { code: 'OCSP_NO_RESPONDER' | 'OCSP_FAILED' | 'CRL_FAILED'; error: SingpassFlowsError };
}

/**
 * Adds long-term validation data to the PDF and returns it with one more incremental update. Signatures that must
 * be complete (by default the newest signature and the document timestamps after it, see
 * {@link AddValidationDataOptions.requireComplete}) make it refuse (`OCSP_REVOKED`, `OCSP_UNKNOWN`, `OCSP_FAILED`,
 * `CHAIN_INCOMPLETE`) when they cannot be, and nothing is written then. OCSP answers are fetched now, so call this
 * AFTER the signature timestamp exists. Answers already in the /DSS are reused while still suitable.
 *
 * @example
 * const lt = await addValidationData(signedPdf, { trustedRoots: [rootPem] });
 */
export async function addValidationData(pdf: Buffer, options: AddValidationDataOptions = {}): Promise<Buffer> {
  return (await addValidationDataWithSummary(pdf, options)).pdf;
}

/**
 * {@link addValidationData} that also says what was added, and per signature what could not be obtained and why.
 *
 * @example
 * const { pdf, summary } = await addValidationDataWithSummary(signed, { trustedRoots: [rootPem] });
 * if (!summary.complete) console.warn(summary.perSignature.filter((s) => !s.complete));
 */
export async function addValidationDataWithSummary(pdf: Buffer, options: AddValidationDataOptions = {}): Promise<{ pdf: Buffer; summary: ValidationDataSummary }> {
  if (!Buffer.isBuffer(pdf)) throw invalidInput('pdf', 'expected the PDF bytes');
  const signatures = listSignatures(pdf);
  if (signatures.length === 0) throw invalidInput('pdf', 'the PDF has no signature to add validation data for');
  const required = requiredSignatures(signatures, options.requireComplete);
  // What an earlier B-LT/B-LTA step already stored: its certificates complete paths without downloads, and its OCSP
  // answers are reused while still suitable.
  const existing = readDss(pdf);

  const materials: Material[] = [];
  for (const [i, sig] of signatures.entries()) materials.push(await materialOf(sig, required[i], existing.certs, options));

  // One status per certificate, however many signatures share it. Those a required signature relies on come first,
  // one by one, so a refusal (revoked, unknown, unreachable) is known before anything else is asked; the others are
  // asked together, so slow or dead responders of earlier signers cost one timeout, not one per certificate.
  const needs = new Map<string, Need>();
  for (const m of materials) {
    for (const chain of m.chains) {
      for (let i = 0; i + 1 < chain.length; i++) {
        const key = linkKey(chain[i], chain[i + 1]);
        const need = needs.get(key) ?? { cert: chain[i], issuer: chain[i + 1], required: false };
        need.required ||= m.info.required;
        if (m.proofTime && (!need.notBefore || need.notBefore < m.proofTime)) need.notBefore = m.proofTime;
        if (!m.proofTime) need.untimed = true;
        needs.set(key, need);
      }
    }
  }
  for (const need of needs.values()) {
    if (!need.required) continue;
    need.outcome = await resolveStatus(need, existing, options);
    const refused = refusalOf(need, need.untimed ? undefined : need.notBefore);
    if (refused) throw refused.error;
  }
  await Promise.all([...needs.values()].filter((n) => !n.required).map(async (n) => { n.outcome = await resolveStatus(n, existing, options); }));

  const certs: Buffer[] = [];
  const ocsps: Buffer[] = [];
  const crls: Buffer[] = [];
  const vri: Record<string, { certs: Buffer[]; ocsps: Buffer[]; crls: Buffer[] }> = {};
  for (const m of materials) {
    const mine = { certs: [] as Buffer[], ocsps: [] as Buffer[], crls: [] as Buffer[] };
    const miss = missingFor(m);
    for (const chain of m.chains) {
      for (let i = 0; i < chain.length; i++) {
        const cert = chain[i];
        pushUnique(mine.certs, cert);
        if (i === chain.length - 1) break; // the top: the anchor, or where the path stopped (already reported)
        const need = needs.get(linkKey(cert, chain[i + 1]))!;
        const refused = refusalOf(need, m.proofTime);
        if (refused) miss(refused.code, refused.error, cert);
        // Good, or revoked for a signature that need not be complete: the signed answer (or CRL) is the evidence either way.
        if (need.outcome && 'crl' in need.outcome) pushUnique(mine.crls, need.outcome.crl.der);
        if (!need.outcome || !('result' in need.outcome) || need.outcome.result.status === 'unknown') continue; // nothing that proves anything
        const r = need.outcome.result;
        pushUnique(mine.ocsps, r.der);
        for (const c of [r.responderCertificate, ...r.certificates]) pushUnique(mine.certs, c);
      }
    }
    for (const c of mine.certs) pushUnique(certs, c);
    for (const o of mine.ocsps) pushUnique(ocsps, o);
    for (const c of mine.crls) pushUnique(crls, c);
    vri[m.vriKey] = mine;
  }

  const out = await appendDss(pdf, { certs, ocsps, ...(crls.length ? { crls } : {}), ...(options.vri ? { vri } : {}) });
  const outcomes = [...needs.values()].map((n) => n.outcome!);
  const perSignature = materials.map((m) => m.info);
  return {
    pdf: out,
    summary: {
      signatures: signatures.length,
      certificates: certs.length,
      ocspResponses: ocsps.length,
      ocspFetched: outcomes.filter((o) => 'result' in o && !o.reused).length,
      ocspReused: outcomes.filter((o) => 'result' in o && o.reused).length,
      crls: crls.length,
      crlFetched: outcomes.filter((o) => 'crl' in o && !o.reused).length,
      crlReused: outcomes.filter((o) => 'crl' in o && o.reused).length,
      perSignature,
      complete: perSignature.every((s) => s.complete),
    },
  };
}

/** `requireComplete` as one flag per signature (listSignatures order). */
function requiredSignatures(signatures: PdfSignatureInfo[], rule: RequireComplete | undefined = 'newest'): boolean[] {
  if (rule === 'all') return signatures.map(() => true);
  if (rule === 'newest') {
    const newest = newestSignatureIndex(signatures);
    return signatures.map((_, i) => i >= newest);
  }
  if (Array.isArray(rule) && rule.every((n) => typeof n === 'string')) {
    const names = signatures.map((s) => s.fieldName);
    const unknown = rule.filter((n) => !names.includes(n));
    if (unknown.length) throw invalidInput('requireComplete', `the PDF has no signature field named ${unknown.map((n) => `"${n}"`).join(', ')} (it has ${names.map((n) => `"${n}"`).join(', ')})`);
    return names.map((n) => rule.includes(n));
  }
  throw invalidInput('requireComplete', "expected 'newest', 'all' or an array of signature field names");
}

/**
 * Records why validation data is missing for this signature; for a signature that must be complete, refuses
 * instead by throwing the underlying error (so callers see the same codes as before).
 */
function missingFor(m: Material): (code: MissingValidationDataCode, error: SingpassFlowsError, cert?: Buffer) => void {
  return (code, error, cert) => {
    if (m.info.required) throw error;
    m.info.complete = false;
    const certificate = cert ? subjectString(cert) : undefined;
    if (m.info.missing.some((x) => x.code === code && x.certificate === certificate)) return; // e.g. the same intermediate in two chains
    m.info.missing.push({ code, ...(certificate ? { certificate } : {}), message: error.message });
  };
}

/** The chains one signature (or document timestamp) depends on: signer's and, if timestamped, the TSA's. */
async function materialOf(sig: PdfSignatureInfo, required: boolean, dssCerts: Buffer[], options: AddValidationDataOptions): Promise<Material> {
  const m: Material = { info: { fieldName: sig.fieldName, type: sig.type, required, complete: true, missing: [] }, vriKey: sig.vriKey, chains: [] };
  const miss = missingFor(m);
  const errorOf = (e: unknown): SingpassFlowsError => {
    if (e instanceof SingpassFlowsError) return e;
    throw e;
  };
  const addChain = async (leaf: Buffer, embedded: Buffer[]): Promise<void> => {
    const intermediates = [...embedded, ...(options.intermediates ?? []), ...dssCerts];
    const { chain, problem } = await buildChainPartial(leaf, { intermediates, trustedRoots: options.trustedRoots, fetch: options.fetch, timeoutMs: options.timeoutMs });
    m.chains.push(chain);
    if (problem) miss(problem.code, problem.error, chain[chain.length - 1]);
  };
  const addTimestampChain = async (token: Buffer, embedded: Buffer[]): Promise<void> => {
    let info;
    try {
      info = checkTimestampToken(token);
    } catch (e) {
      miss('TIMESTAMP_INVALID', errorOf(e));
      return;
    }
    m.proofTime = info.genTime;
    if (info.tsaCertificate) await addChain(info.tsaCertificate, [...info.certificates, ...embedded]);
  };

  if (sig.type === 'docTimestamp') {
    let info;
    try {
      info = checkTimestampToken(sig.contents);
    } catch (e) {
      miss('SIGNATURE_UNREADABLE', errorOf(e));
      return m;
    }
    m.proofTime = info.genTime;
    if (!info.tsaCertificate) {
      miss('SIGNER_CERT_MISSING', new SingpassFlowsError('CHAIN_INCOMPLETE', `The document timestamp "${sig.fieldName}" does not include the TSA certificate`, {}));
      return m;
    }
    await addChain(info.tsaCertificate, info.certificates);
    return m;
  }

  // The native read covers plain DER naming a certificate it carries; anything else goes the schema-driven way.
  const plain = plainSignerOf(sig.contents);
  if (plain) {
    await addChain(plain.signer, plain.certificates);
    if (plain.timestampToken) await addTimestampChain(plain.timestampToken, plain.certificates);
    return m;
  }
  let parsed;
  try {
    parsed = parseSignedData(sig.contents, 'PDF_INVALID', `The signature "${sig.fieldName}"`);
  } catch (e) {
    miss('SIGNATURE_UNREADABLE', errorOf(e));
    return m;
  }
  const embedded = parsed.certificates.map(certDer);
  const signerInfo = parsed.signedData.signerInfos[0];
  const signer = signerInfo ? findSignerCertificate(signerInfo, parsed.certificates) : undefined;
  if (!signer) {
    miss('SIGNER_CERT_MISSING', new SingpassFlowsError('CHAIN_INCOMPLETE', `The signature "${sig.fieldName}" does not include its signer certificate`, {}));
    return m;
  }
  await addChain(certDer(signer), embedded);
  const tstAttr = signerInfo ? attributeValue(signerInfo, OID.signatureTimeStampToken, true) : undefined;
  if (tstAttr) await addTimestampChain(Buffer.from(tstAttr.valueBeforeDecodeView), embedded);
  return m;
}

/**
 * A signature's signer certificate, the certificates it carries and its signature timestamp token, read natively
 * (no schema parse of the whole SignedData): only for plain DER with one SignerInfo naming, by issuer and serial, a
 * certificate it carries; `undefined` otherwise.
 */
function plainSignerOf(contents: Buffer): { signer: Buffer; certificates: Buffer[]; timestampToken?: Buffer } | undefined {
  const sd = readSignedData(contents);
  if (!sd || sd.signerInfos.length !== 1) return undefined;
  const si = sd.signerInfos[0];
  let signer: Buffer | undefined;
  try {
    signer = sd.certificates.find((c) => {
      const v = certificateView(c);
      return v.issuerName.equals(si.issuerName) && v.serial.equals(si.serial);
    });
  } catch {
    return undefined; // a certificate the view cannot read: the schema-driven path says what is wrong
  }
  if (!signer) return undefined;
  const token = si.unsigned.get(OID.signatureTimeStampToken);
  return { signer: Buffer.from(signer), certificates: sd.certificates.map((c) => Buffer.from(c)), ...(token ? { timestampToken: Buffer.from(token) } : {}) };
}

/**
 * The status of one certificate: an answer already in the /DSS when it still does the job (about this certificate,
 * verifying, good, not stale now, and not older than the newest time it vouches for), else a fresh one. A certificate
 * naming no OCSP responder but a CRL distribution point gets its status from the CRL (one in the /DSS under the same
 * rules, else the CA's current one) — ours as well as others' (Singpass certificates name an OCSP responder). A
 * certificate naming both falls back to the CRL when the OCSP responder fails; a revoked or unknown answer stands.
 */
async function resolveStatus(need: Need, dss: { ocsps: Buffer[]; crls: Buffer[] }, options: AddValidationDataOptions): Promise<NonNullable<Need['outcome']>> {
  // Read natively for the OCSP path; the schema parse is made only when a CRL is looked at.
  const cert = certificateView(need.cert);
  const issuer = certificateView(need.issuer);
  let pair: { cert: pkijs.Certificate; issuer: pkijs.Certificate } | undefined;
  const parsed = (): { cert: pkijs.Certificate; issuer: pkijs.Certificate } => (pair ??= { cert: parseCertificate(need.cert), issuer: parseCertificate(need.issuer) });
  // Times are compared in whole seconds: OCSP, CRL and TSA times usually carry no fraction.
  const notBefore = need.notBefore ? Math.floor(need.notBefore.getTime() / 1000) * 1000 : -Infinity;
  const reusable = matchingOcspResponses(dss.ocsps, cert, issuer, { clock: options.clock })
    .find((r) => r.status === 'good' && r.thisUpdate.getTime() >= notBefore);
  if (reusable) return { result: reusable, reused: true };
  const http = { fetch: options.fetch, timeoutMs: options.timeoutMs, clock: options.clock };
  const fromCrl = async (): Promise<{ crl: CrlResult; reused: boolean }> => {
    const p = parsed();
    const stored = matchingCrls(dss.crls, p.cert, p.issuer, { clock: options.clock })
      .find((r) => r.status === 'good' && r.thisUpdate.getTime() >= notBefore);
    return stored ? { crl: stored, reused: true } : { crl: await fetchCrlStatus(p.cert, p.issuer, http), reused: false };
  };
  const hasOcsp = cert.ocspUrl !== undefined;
  const hasCrl = (): boolean => crlUrlOf(parsed().cert) !== undefined;
  if (!hasOcsp && hasCrl()) {
    try {
      return await fromCrl();
    } catch (e) {
      if (!(e instanceof SingpassFlowsError)) throw e;
      return { code: 'CRL_FAILED', error: e };
    }
  }
  try {
    return { result: await fetchOcspResponse(cert, issuer, http), reused: false };
  } catch (e) {
    if (!(e instanceof SingpassFlowsError)) throw e;
    if (!hasOcsp) return { code: 'OCSP_NO_RESPONDER', error: e };
    if (!hasCrl()) return { code: 'OCSP_FAILED', error: e };
    // The responder is down or its answer cannot be trusted; the CA's CRL, when it names one, vouches as well (RFC 5280).
    try {
      return await fromCrl();
    } catch (c) {
      if (!(c instanceof SingpassFlowsError)) throw c;
      return { code: 'OCSP_FAILED', error: new SingpassFlowsError('OCSP_FAILED', `${e.message}; its CRL could not be used either: ${c.message}`, e.details, { cause: e }) };
    }
  }
}

/**
 * Why a certificate's status does not make it long-term valid (unreachable, no responder, unusable CRL, revoked,
 * unknown), if it does not. A revocation dated after `proofTime` (what the signature's timestamp proves) is no
 * refusal: the certificate was good when the signature was made, and the answer saying so is the evidence.
 */
function refusalOf(need: Need, proofTime: Date | undefined): { code: MissingValidationDataCode; error: SingpassFlowsError } | undefined {
  const o = need.outcome;
  if (!o) return undefined;
  const revokedLater = (r: { revokedAt?: Date; invalidSince?: Date }) => {
    const since = revokedSince(r);
    return !!(proofTime && since && since > proofTime);
  };
  // Named only in a refusal: a good status (the usual case) parses nothing more.
  const subject = () => subjectString(need.cert);
  if ('crl' in o) {
    const { status, revokedAt, reason } = o.crl;
    if (status !== 'revoked' || revokedLater(o.crl)) return undefined;
    return { code: 'CRL_REVOKED', error: new SingpassFlowsError('CRL_REVOKED', `The certificate "${subject()}" is revoked according to its CA's CRL${revokedAt ? ` since ${revokedAt.toISOString()}` : ''}${reason ? ` (${reason})` : ''}; the signature cannot be made long-term valid`, { retryable: false }) };
  }
  if (!('result' in o)) return o;
  const { status, revokedAt } = o.result;
  if (status === 'revoked' && !revokedLater(o.result)) {
    return { code: 'OCSP_REVOKED', error: new SingpassFlowsError('OCSP_REVOKED', `The certificate "${subject()}" is revoked${revokedAt ? ` since ${revokedAt.toISOString()}` : ''}; the signature cannot be made long-term valid`, { retryable: false }) };
  }
  if (status === 'unknown') {
    return { code: 'OCSP_UNKNOWN', error: new SingpassFlowsError('OCSP_UNKNOWN', `The OCSP responder does not know the certificate "${subject()}" (status unknown); it may not have been issued by this CA`, { retryable: false }) };
  }
  return undefined;
}

function linkKey(cert: Buffer, issuer: Buffer): string {
  return createHash('sha256').update(cert).update(issuer).digest('base64');
}

function pushUnique(list: Buffer[], item: Buffer): void {
  if (!list.some((x) => x.equals(item))) list.push(item);
}
