/**
 * Verification of the signatures and document timestamps in a PDF, with the PAdES baseline level each signature
 * reaches. Offline by design: it uses only what the file carries (CMS certificates, timestamp tokens, /DSS) and the
 * trust anchors given, so a report says what a long-term verifier could prove from the file alone.
 */
import { X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { systemClock, type Clock } from '../clock';
import { invalidInput } from '../errors';
import { checkTimestampToken, matchingCrls, matchingOcspResponses, type TimestampTokenInfo } from '../pki';
import { attributeValue, checkSignerInfo, parseSignedData } from '../pki/cms';
import { checkSignatureNatively } from '../pki/signed-data';
import { readRevocationArchive, type RevocationArchive } from '../pki/revocation-archival';
import { buildChainPartialIn } from '../pki/chain';
import { CertificateScope, certificateView, viewValidAt, type CertificateView } from '../pki/certificate-view';
import { OID, certDer, certsFromPemOrDer, commonNameOf, digest, hashNameOf, isValidAt, parseCertificate, revokedSince, serialHex, shownSubject, subjectString, type HashName } from '../pki/x509';
import { readDss } from './dss';
import { byteRangeDigest, listSignatures, newestSignatureIndex, type PdfSignatureInfo } from './list';
import { CERT_REVOKED_AFTER_SIGNING_NOTE, REVOCATION_DATA_MISSING_NOTE, laterUpdateNotes, problemText } from './report-words';
import { RevisionHistory, type ChangeKind } from './revisions';

export type PadesLevel = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';

/**
 * Stable problem codes a report can list (adapters and users can switch on them). A problem is real: a signature
 * with one is not valid. What is worth knowing but does not change that is a {@link VerificationNote}.
 */
export type VerificationProblem =
  | 'BYTE_RANGE_INVALID'
  | 'CMS_INVALID'
  | 'DIGEST_MISMATCH'
  | 'SIGNATURE_INVALID'
  | 'SIGNER_CERT_MISSING'
  | 'SIGNING_CERT_ATTR_MISSING'
  | 'SIGNING_CERT_ATTR_MISMATCH'
  | 'CHAIN_INCOMPLETE'
  | 'CHAIN_UNTRUSTED'
  | 'CERT_NOT_VALID_AT_SIGNING_TIME'
  | 'TIMESTAMP_INVALID'
  | 'TIMESTAMP_IMPRINT_MISMATCH'
  | 'TSA_CHAIN_UNTRUSTED'
  /** @deprecated No longer listed in `problems`: it is the note of the same code (see {@link VerificationNoteCode}). */
  | 'REVOCATION_DATA_MISSING'
  | 'CERT_REVOKED'
  /** @deprecated No longer listed in `problems`: it is the note of the same code (see {@link VerificationNoteCode}). */
  | 'CERT_REVOKED_AFTER_SIGNING'
  /**
   * The document was changed after the signature: an update appended after it does more than add validation data,
   * document timestamps or later signatures (new page content, an annotation, a filled form field…). Those three
   * are what B-LT, B-LTA and countersigning append and are notes, not this problem.
   */
  | 'NOT_COVERING_WHOLE_FILE';

/**
 * Stable codes of the notes a report can carry: facts about a signature that do not make it invalid.
 * - `VALIDATION_DATA_ADDED`: certificates and revocation answers were appended after it (B-LT);
 * - `DOCUMENT_TIMESTAMP_ADDED`: a document timestamp was appended after it (B-LTA);
 * - `LATER_SIGNATURE_ADDED`: someone signed after it;
 * - `DOCUMENT_INFO_UPDATED`: the document properties (/Info, XMP metadata) were updated after it;
 * - `REVOCATION_DATA_MISSING`: revocation answers are not embedded for every certificate (what B-T means);
 * - `CERT_REVOKED_AFTER_SIGNING`: a certificate of its chains was revoked, but after the time its timestamp proves
 *   the signature existed: it was made while the certificate was good (the revocation answer is the evidence).
 */
export type VerificationNoteCode =
  | 'VALIDATION_DATA_ADDED'
  | 'DOCUMENT_TIMESTAMP_ADDED'
  | 'LATER_SIGNATURE_ADDED'
  | 'DOCUMENT_INFO_UPDATED'
  | 'REVOCATION_DATA_MISSING'
  | 'CERT_REVOKED_AFTER_SIGNING';

/** A note: its stable code and what it means in plain words. */
export interface VerificationNote {
  code: VerificationNoteCode;
  text: string;
}

/** A problem code with what it means in plain words (in the order of `problems`). */
export interface ProblemDetail {
  code: VerificationProblem;
  text: string;
}

export interface SignatureVerification {
  fieldName: string;
  /** Where the signature shows: the widget's page (1-based), its /Rect, and whether a viewer draws it. */
  page?: number;
  rect?: [number, number, number, number];
  visible: boolean;
  type: 'signature' | 'docTimestamp';
  subFilter?: string;
  /**
   * Signer (or TSA, for a document timestamp) certificate: its subject without the holder's NRIC/FIN (the
   * serialNumber attribute is left out), its common name, and the certificate's serial number (hex).
   */
  signer?: { subject: string; name?: string; serialNumber: string };
  /** Trusted time from the timestamp token (signature timestamp, or the document timestamp itself). */
  timestampTime?: string;
  /** /M as written in the signature dictionary (claimed by the signer, not proven). */
  claimedSigningTime?: string;
  integrity: {
    /** Digest of the ByteRange bytes equals the signed messageDigest (or the TST imprint). */
    digestMatches: boolean;
    /** The CMS signature verifies with the signer certificate. */
    signatureValid: boolean;
    coversWholeFile: boolean;
    /** Bytes appended after this signature's revision (later updates: LTV data, more signatures). */
    bytesAfter: number;
    /**
     * Those bytes change the document (`NOT_COVERING_WHOLE_FILE` is then a problem): they do more than add
     * validation data, document timestamps and later signatures. False when nothing follows.
     */
    changedAfterSigning: boolean;
  };
  /** Certification path leaf..anchor (subjects); `trusted` only when trust anchors were given and it ends at one. */
  chain: { subjects: string[]; trusted: boolean };
  timestamp?: { valid: boolean; time?: string; tsa?: string };
  /**
   * Every non-anchor certificate of the signer and TSA chains has a verifying OCSP response or CRL in the DSS that
   * says it was good when the signature was made: good, or revoked only after the time the timestamp proves.
   */
  revocationDataComplete: boolean;
  /**
   * Revocation answers signed into the signature itself (Adobe's adbe-revocationInfoArchival attribute: the check
   * made before signing), at any level. `signer`: what those answers say of the signer's certificate (a verifying
   * answer from its issuer or its delegated responder), with the time the newest of them was produced.
   */
  signedRevocationInfo?: { ocsps: number; crls: number; signer?: { status: 'good' | 'revoked' | 'unknown'; producedAt: string } };
  /** The PAdES baseline level this signature reaches on its own (null for document timestamps and broken signatures). */
  level: PadesLevel | null;
  /**
   * This signature (or document timestamp) judged on its own, whatever the others are: intact, verifying, (when
   * anchors were given) trusted, no certificate revoked at the time its timestamp proves (or now, without one), the
   * document not changed after it. A valid one lists no `problems`.
   */
  valid: boolean;
  /** What is wrong (empty for a valid one). */
  problems: VerificationProblem[];
  /** `problems` in plain words, same order. */
  problemDetails: ProblemDetail[];
  /** What is worth knowing but wrong with nothing: what was appended after it, revocation facts. */
  notes: VerificationNote[];
}

/** The newest signature with the document timestamps after it: what a signing flow just added. */
export interface NewestSignatureVerdict {
  /** Index of the newest signature (document timestamps not counted) in `signatures`. */
  index: number;
  fieldName: string;
  /** The newest signature is valid on its own AND every document timestamp after it is valid. */
  valid: boolean;
  /** The newest signature's level (B-LTA only through a valid document timestamp after it). */
  level: PadesLevel | null;
  /** Indexes in `signatures` of the document timestamps after the newest signature. */
  documentTimestamps: number[];
  /** Problems of the newest signature and of those document timestamps (deduplicated). */
  problems: VerificationProblem[];
  /** Their plain words (deduplicated). */
  problemDetails: ProblemDetail[];
  /** Notes of the newest signature and of those document timestamps (deduplicated). */
  notes: VerificationNote[];
}

export interface PdfVerificationReport {
  /** Every signature intact, verifying, and (when anchors were given) trusted; no revoked certificate. */
  valid: boolean;
  /** The lowest level over the (non-timestamp) signatures; null when there is none or one is broken. */
  level: PadesLevel | null;
  /**
   * The newest signature judged on its own (undefined when the PDF has no signature, only document timestamps).
   * Use it after signing a PDF that others signed before: their signatures (other CAs, self-signed, revoked) make
   * `valid`/`level` false/null, but do not change this verdict.
   */
  newest?: NewestSignatureVerdict;
  signatures: SignatureVerification[];
  /** `ignoredCerts`: DSS certificates that could not be read (garbage anyone can append); left out of every check. */
  dss: { certs: number; ocsps: number; crls: number; ignoredCerts?: number };
}

export interface VerifyPdfOptions {
  /** Trust anchors (DER or PEM, bundles allowed). Without them chains are reported but not trusted. */
  trustedRoots?: (Buffer | string)[];
  clock?: Clock;
}

/**
 * Verifies every signature and document timestamp of a PDF and reports integrity, chain, timestamp, revocation
 * data and the PAdES baseline level reached. Never throws for a bad signature: problems are listed as codes (with
 * plain words in `problemDetails`); what is worth knowing but not wrong (validation data and document timestamps
 * appended after a signature, as B-LT and B-LTA do; a later signature) is in `notes`.
 *
 * `report.valid`/`report.level` judge the whole file; `report.newest` judges only the newest signature and the
 * document timestamps after it, and each entry of `report.signatures` has its own `valid` and `level`.
 *
 * @example
 * const report = await verifyPdfSignatures(pdf, { trustedRoots: [rootPem] });
 * if (!report.valid) console.log(report.signatures.map((s) => s.problems));
 * // After adding our signature to a PDF others signed: judge ours only.
 * if (!report.newest?.valid || report.newest.level !== 'B-LTA') throw new Error(`ours is ${report.newest?.level}`);
 */
export async function verifyPdfSignatures(pdf: Buffer, options: VerifyPdfOptions = {}): Promise<PdfVerificationReport> {
  return verifyPdfSignaturesIn(pdf, options, {});
}

/**
 * A digest the caller computed itself over `pdf`'s `byteRange` (SHA-256), for a file it built in a Buffer nobody else
 * holds: the signing engine's own signed file, whose bytes it hashed while building it. Used only for that very
 * Buffer and exactly that range; any other signature, range or Buffer is hashed as always.
 */
export interface KnownByteRangeDigest {
  pdf: Buffer;
  byteRange: readonly number[];
  sha256: Buffer;
}

/**
 * {@link verifyPdfSignatures} within the caller's piece of work: `scope` shares the certificates' views (a user's
 * certificate read, parsed and its key imported once for the whole work), `known` a digest the caller computed.
 */
export async function verifyPdfSignaturesIn(pdf: Buffer, options: VerifyPdfOptions, work: { scope?: CertificateScope; known?: KnownByteRangeDigest }): Promise<PdfVerificationReport> {
  if (!Buffer.isBuffer(pdf)) throw invalidInput('pdf', 'expected the PDF bytes');
  const roots = (options.trustedRoots ?? []).flatMap((r) => certsFromPemOrDer(r));
  const now = new Date((options.clock ?? systemClock)());
  const sigs = listSignatures(pdf);
  const dss = readDss(pdf);
  const scope = work.scope ?? new CertificateScope();
  const dssCerts = readableCertificates(dss.certs, scope);
  const ctx: Ctx = { pdf, roots, now, dssCerts, scope, known: work.known };

  const results: SignatureVerification[] = [];
  const chainsBySig: Buffer[][][] = [];
  for (const sig of sigs) {
    const { report, chains } = await verifyOne(sig, ctx);
    results.push(report);
    chainsBySig.push(chains);
  }

  // Revocation data: from the DSS of the whole file (B-LT), and from the DSS as covered by a later valid
  // document timestamp (B-LTA).
  const docTimestamps = sigs.map((s, i) => ({ s, r: results[i] })).filter(({ s, r }) => s.type === 'docTimestamp' && r.integrity.digestMatches && r.integrity.signatureValid
    && !r.problems.some((p) => p === 'CHAIN_UNTRUSTED' || p === 'CHAIN_INCOMPLETE' || p === 'CERT_NOT_VALID_AT_SIGNING_TIME'));
  for (let i = 0; i < sigs.length; i++) {
    const r = results[i];
    const sig = sigs[i];
    const chains = chainsBySig[i];
    const at = provenTime(r, ctx);
    const rev = revocationStatus(chains, dss, at, ctx);
    r.revocationDataComplete = chains.length > 0 && rev.complete;
    if (rev.revoked) r.problems.push('CERT_REVOKED');
    else if (rev.revokedLater) r.notes.push(CERT_REVOKED_AFTER_SIGNING_NOTE);
    if (sig.type !== 'signature') continue;
    if (!rev.complete && r.level === 'B-T') r.notes.push(REVOCATION_DATA_MISSING_NOTE);
    if (r.level !== 'B-T' || !rev.complete || rev.revoked) continue;
    r.level = 'B-LT';
    const sigEnd = sig.byteRange[2] + sig.byteRange[3];
    const lta = docTimestamps.some(({ s }) => {
      const end = s.byteRange[2] + s.byteRange[3];
      if (end <= sigEnd) return false;
      // The DSS as it was when the document timestamp was taken (its own revision ends at `end`).
      const covered = readDss(pdf.subarray(0, end));
      return revocationStatus(chains, covered, at, ctx).complete;
    });
    if (lta) r.level = 'B-LTA';
  }

  const signatureLevels = results.filter((r) => r.type === 'signature').map((r) => r.level);
  const order: PadesLevel[] = ['B-B', 'B-T', 'B-LT', 'B-LTA'];
  const level = signatureLevels.length === 0 || signatureLevels.includes(null)
    ? null
    : order[Math.min(...signatureLevels.map((l) => order.indexOf(l!)))];
  describeLaterUpdates(pdf, sigs, results);
  for (const r of results) {
    r.valid = r.integrity.digestMatches && r.integrity.signatureValid && (roots.length === 0 || r.chain.trusted) && r.problems.length === 0;
  }
  const valid = results.length > 0 && results.every((r) => r.valid);
  const ignoredCerts = dss.certs.length - dssCerts.length;
  return {
    valid, level, newest: newestVerdict(results), signatures: results,
    dss: { certs: dssCerts.length, ocsps: dss.ocsps.length, crls: dss.crls.length, ...(ignoredCerts ? { ignoredCerts } : {}) },
  };
}

/** The certificates that parse: one unreadable item in a file's DSS must not stop the report on every signature. */
function readableCertificates(ders: Buffer[], scope: CertificateScope): Buffer[] {
  return ders.filter((der) => {
    try {
      certificateView(der, scope);
      return true;
    } catch {
      return false;
    }
  });
}

function newestVerdict(results: SignatureVerification[]): NewestSignatureVerdict | undefined {
  const index = newestSignatureIndex(results);
  if (index < 0) return undefined;
  const sig = results[index];
  const documentTimestamps = results.map((_, i) => i).filter((i) => i > index); // all docTimestamps: index is the last signature
  const group = [sig, ...documentTimestamps.map((i) => results[i])];
  return {
    index,
    fieldName: sig.fieldName,
    valid: group.every((r) => r.valid),
    level: sig.level,
    documentTimestamps,
    problems: [...new Set(group.flatMap((r) => r.problems))],
    problemDetails: uniqueBy(group.flatMap((r) => r.problemDetails)),
    notes: uniqueBy(group.flatMap((r) => r.notes)),
  };
}

function uniqueBy<T extends { code: string; text: string }>(items: T[]): T[] {
  const seen = new Set<string>();
  return items.filter((i) => !seen.has(`${i.code}\n${i.text}`) && seen.add(`${i.code}\n${i.text}`));
}

/**
 * For each signature and document timestamp: what the updates appended after it do. Validation data, document
 * timestamps and later signatures become notes (that is what B-LT, B-LTA and countersigning append); anything else
 * is the problem NOT_COVERING_WHOLE_FILE, worded with what changed. Then every problem gets its plain words.
 */
function describeLaterUpdates(pdf: Buffer, sigs: PdfSignatureInfo[], results: SignatureVerification[]): void {
  const ends = sigs.map((s) => (s.byteRange[2] ?? 0) + (s.byteRange[3] ?? 0));
  const history = new RevisionHistory(pdf, Math.min(...ends));
  for (const [i, r] of results.entries()) {
    let changes: ChangeKind[] = [];
    if (!r.problems.includes('BYTE_RANGE_INVALID') && !r.integrity.coversWholeFile) {
      const later = history.after(ends[i]);
      changes = [...new Set(later.flatMap((u) => (u.kind === 'changed' ? [u.what] : [])))];
      r.notes.unshift(...laterUpdateNotes(later, r.type));
      if (changes.length) {
        r.integrity.changedAfterSigning = true;
        r.problems.push('NOT_COVERING_WHOLE_FILE');
      }
    }
    r.problemDetails = r.problems.map((code) => ({ code, text: problemText(code, r.type, changes) }));
  }
}

interface Ctx {
  pdf: Buffer;
  roots: Buffer[];
  now: Date;
  dssCerts: Buffer[];
  /** Views of the certificates read in this verification (a signer's is read once for all its checks). */
  scope: CertificateScope;
  known?: KnownByteRangeDigest;
}

/** The digest of what a signature's /ByteRange covers: the caller's own when it is for exactly this Buffer and range. */
function signedDigest(ctx: Ctx, byteRange: number[], hash: HashName): Buffer {
  const k = ctx.known;
  if (k && hash === 'sha256' && k.pdf === ctx.pdf && k.byteRange.length === byteRange.length && k.byteRange.every((n, i) => n === byteRange[i])) return k.sha256;
  return byteRangeDigest(ctx.pdf, byteRange, hash);
}

async function verifyOne(sig: PdfSignatureInfo, ctx: Ctx): Promise<{ report: SignatureVerification; chains: Buffer[][] }> {
  const { pdf } = ctx;
  const problems: VerificationProblem[] = [];
  const end = (sig.byteRange[2] ?? 0) + (sig.byteRange[3] ?? 0);
  const report: SignatureVerification = {
    fieldName: sig.fieldName,
    ...(sig.page !== undefined ? { page: sig.page } : {}),
    ...(sig.rect ? { rect: sig.rect } : {}),
    visible: sig.visible,
    type: sig.type,
    subFilter: sig.subFilter,
    claimedSigningTime: sig.signingTime,
    integrity: { digestMatches: false, signatureValid: false, coversWholeFile: end === pdf.length, bytesAfter: Math.max(0, pdf.length - end), changedAfterSigning: false },
    chain: { subjects: [], trusted: false },
    revocationDataComplete: false,
    level: null,
    valid: false,
    problems,
    problemDetails: [],
    notes: [],
  };
  const chains: Buffer[][] = [];
  if (!byteRangeWellFormed(pdf, sig.byteRange)) {
    problems.push('BYTE_RANGE_INVALID');
    return { report, chains };
  }

  let signerDer: Buffer | undefined;
  let signedArchive: RevocationArchive | undefined;
  let tstInfo: TimestampTokenInfo | undefined;
  let intermediates: Buffer[] = [...ctx.dssCerts];
  if (sig.type === 'docTimestamp') {
    try {
      tstInfo = checkTimestampToken(sig.contents);
      report.integrity.signatureValid = true;
      report.integrity.digestMatches = byteRangeDigest(pdf, sig.byteRange, tstInfo.hashAlgorithm).equals(tstInfo.hashedMessage);
      if (!report.integrity.digestMatches) problems.push('DIGEST_MISMATCH');
      signerDer = tstInfo.tsaCertificate;
      intermediates = [...tstInfo.certificates, ...intermediates];
      report.timestampTime = tstInfo.genTime.toISOString();
      report.timestamp = { valid: report.integrity.digestMatches, time: report.timestampTime, tsa: signerDer ? subjectOf(signerDer) : undefined };
    } catch {
      problems.push('TIMESTAMP_INVALID');
      return { report, chains };
    }
  } else {
    // A plainly good signature is read and checked natively; anything else by the schema reading, which names the problem.
    const good = checkSignatureNatively(sig.contents, (h) => signedDigest(ctx, sig.byteRange, h), ctx.scope);
    let read: { timestampToken?: Buffer; signatureValue?: () => Buffer; signingCertificate?: { hash: HashName; certHash: Buffer }; revocationArchive?: Buffer };
    if (good) {
      intermediates = [...good.certificates, ...intermediates];
      report.integrity.digestMatches = true;
      report.integrity.signatureValid = true;
      signerDer = good.signerCertificate;
      read = { timestampToken: good.timestampToken, signatureValue: () => good.signature, signingCertificate: good.signingCertificate, revocationArchive: good.revocationArchive };
    } else {
      let parsed;
      try {
        parsed = parseSignedData(sig.contents, 'PDF_INVALID', 'signature');
      } catch {
        problems.push('CMS_INVALID');
        return { report, chains };
      }
      intermediates = [...parsed.certificates.map(certDer), ...intermediates];
      const check = checkSignerInfo(parsed, (h) => signedDigest(ctx, sig.byteRange, h));
      report.integrity.digestMatches = check.messageDigestMatches;
      report.integrity.signatureValid = check.signatureValid;
      for (const p of check.problems) {
        if (p === 'DIGEST_MISMATCH' || p === 'SIGNATURE_INVALID' || p === 'SIGNER_CERT_MISSING') problems.push(p);
        else if (!problems.includes('CMS_INVALID')) problems.push('CMS_INVALID');
      }
      const signerInfo = parsed.signedData.signerInfos[0];
      if (check.signerCertificate) signerDer = certDer(check.signerCertificate);
      const tstAttr = attributeValue(signerInfo, OID.signatureTimeStampToken, true);
      const archiveAttr = attributeValue(signerInfo, OID.adbeRevocationInfoArchival);
      read = {
        revocationArchive: archiveAttr ? Buffer.from(archiveAttr.valueBeforeDecodeView) : undefined,
        signingCertificate: check.signerCertificate ? signingCertificateV2Hash(signerInfo) : undefined,
        timestampToken: tstAttr ? Buffer.from(tstAttr.valueBeforeDecodeView) : undefined,
        signatureValue: () => Buffer.from(signerInfo.signature.valueBlock.valueHexView),
      };
    }
    if (signerDer) {
      const scv2 = read.signingCertificate;
      if (!scv2) problems.push('SIGNING_CERT_ATTR_MISSING');
      else if (!digest(scv2.hash, signerDer).equals(scv2.certHash)) problems.push('SIGNING_CERT_ATTR_MISMATCH');
    }
    if (read.revocationArchive) signedArchive = readRevocationArchive(read.revocationArchive) ?? { ocsps: [], crls: [] };
    if (read.timestampToken) {
      try {
        tstInfo = checkTimestampToken(read.timestampToken);
        const imprintOk = digest(tstInfo.hashAlgorithm, read.signatureValue!()).equals(tstInfo.hashedMessage);
        if (!imprintOk) problems.push('TIMESTAMP_IMPRINT_MISMATCH');
        report.timestampTime = tstInfo.genTime.toISOString();
        report.timestamp = { valid: imprintOk, time: report.timestampTime, tsa: tstInfo.tsaCertificate ? subjectOf(tstInfo.tsaCertificate) : undefined };
      } catch {
        problems.push('TIMESTAMP_INVALID');
        report.timestamp = { valid: false };
      }
    }
  }

  if (signerDer) {
    const view = readableView(signerDer, ctx.scope);
    const name = nameOf(signerDer, view);
    report.signer = { subject: view ? oneLine(view.x509.subject) : subjectString(signerDer), ...(name !== undefined ? { name } : {}), serialNumber: view ? view.serial.toString('hex').toUpperCase() : serialHex(parseCertificate(signerDer)) };
    const at = tstInfo ? tstInfo.genTime : ctx.now;
    if (!(view ? viewValidAt(view, at) : isValidAt(parseCertificate(signerDer), at))) problems.push('CERT_NOT_VALID_AT_SIGNING_TIME');
    const chain = await offlineChain(signerDer, intermediates, ctx);
    if (chain.problem) problems.push(chain.problem);
    report.chain = { subjects: chain.chain.map((c, i) => (i === 0 && view ? oneLine(view.x509.subject) : subjectOf(c))), trusted: chain.trusted };
    if (chain.chain.length) chains.push(chain.chain);
    if (signedArchive) report.signedRevocationInfo = signedRevocationInfo(signedArchive, chain.chain, ctx);
  }
  if (sig.type === 'signature' && tstInfo?.tsaCertificate && report.timestamp?.valid) {
    const tsaChain = await offlineChain(tstInfo.tsaCertificate, [...tstInfo.certificates, ...intermediates], ctx);
    if (tsaChain.chain.length) chains.push(tsaChain.chain);
    if (ctx.roots.length && !tsaChain.trusted) { problems.push('TSA_CHAIN_UNTRUSTED'); report.timestamp.valid = false; }
  }

  const intact = report.integrity.digestMatches && report.integrity.signatureValid;
  if (sig.type === 'signature' && intact && !problems.includes('SIGNING_CERT_ATTR_MISSING') && !problems.includes('SIGNING_CERT_ATTR_MISMATCH')
    && !problems.includes('CHAIN_UNTRUSTED') && !problems.includes('CHAIN_INCOMPLETE')) {
    report.level = report.timestamp?.valid ? 'B-T' : 'B-B';
  }
  return { report, chains };
}

/** The certificate read natively, or undefined when node cannot read it (pkijs then does, as before). */
function readableView(der: Buffer, scope?: CertificateScope): CertificateView | undefined {
  try {
    const view = certificateView(der, scope);
    void view.x509.validFrom;
    return view;
  } catch {
    return undefined;
  }
}

/** The certificate's common name (NRIC/FIN-shaped values masked), when it has one that can be read. */
function nameOf(der: Buffer, view: CertificateView | undefined): string | undefined {
  try {
    return commonNameOf((view?.x509 ?? new X509Certificate(der)).subject);
  } catch {
    return undefined;
  }
}

/** Names a certificate in the report without the holder's NRIC/FIN (see `shownSubject`). */
const oneLine = shownSubject;

/** {@link subjectString} from the kept view of a CA's or TSA's certificate (node's parse is then made once). */
function subjectOf(der: Buffer): string {
  const view = readableView(der);
  return view ? oneLine(view.x509.subject) : subjectString(der);
}

/** Path building from the file's own certificates only (no network): what a verifier in ten years can do. */
async function offlineChain(leaf: Buffer, pool: Buffer[], ctx: Ctx): Promise<{ chain: Buffer[]; trusted: boolean; problem?: VerificationProblem }> {
  const { chain, problem } = await buildChainPartialIn(leaf, { intermediates: pool, trustedRoots: ctx.roots, fetchIssuers: false }, ctx.scope);
  if (!problem) return { chain, trusted: ctx.roots.length > 0 };
  if (problem.code === 'CHAIN_UNTRUSTED') return { chain, trusted: false, problem: 'CHAIN_UNTRUSTED' };
  // Without anchors the root is normally simply not embedded: report the path as far as the file goes.
  if (ctx.roots.length === 0) return { chain, trusted: false };
  return { chain: [leaf], trusted: false, problem: 'CHAIN_INCOMPLETE' };
}

/**
 * The time up to which the signature's certificates must not have been revoked: the time its (valid) timestamp
 * proves, or now for a signature without one (nothing proves it existed earlier).
 */
function provenTime(r: SignatureVerification, ctx: Ctx): Date {
  return r.timestamp?.valid && r.timestampTime ? new Date(r.timestampTime) : ctx.now;
}

/**
 * For each non-anchor certificate: a verifying OCSP response or CRL (signed by its issuer) in the DSS saying it was
 * good at `at`? `revoked`: one was revoked at or before `at` (or at an unknown time); `revokedLater`: only after.
 */
function revocationStatus(chains: Buffer[][], dss: { ocsps: Buffer[]; crls: Buffer[] }, at: Date, ctx: Ctx): { complete: boolean; revoked: boolean; revokedLater: boolean } {
  let complete = true;
  let revoked = false;
  let revokedLater = false;
  // No revocation data at all (B-B, B-T): nothing can match, so every non-anchor certificate lacks it; the
  // certificates need not be parsed to say so.
  if (dss.ocsps.length === 0 && dss.crls.length === 0) return { complete: !chains.some((c) => c.length > 1), revoked, revokedLater };
  for (const chain of chains) {
    for (let i = 0; i + 1 < chain.length; i++) {
      const cert = certificateView(chain[i], ctx.scope);
      const issuer = certificateView(chain[i + 1], ctx.scope);
      const opts = { clock: () => ctx.now.getTime(), checkFreshness: false };
      // CRLs are read with the schema parse of both certificates, made only when the PDF carries CRLs
      const crls = dss.crls.length > 0 ? matchingCrls(dss.crls, parseCertificate(cert.der), parseCertificate(issuer.der), opts) : [];
      const results: { status: string; revokedAt?: Date; invalidSince?: Date }[] = [...matchingOcspResponses(dss.ocsps, cert, issuer, opts), ...crls];
      // Revoked only after `at` (revocation and invalidity dates both later): the CA says it was good until then.
      const later = (r: (typeof results)[number]) => r.status === 'revoked' && (revokedSince(r)?.getTime() ?? -Infinity) > at.getTime();
      const before = results.some((r) => r.status === 'revoked' && !later(r));
      if (before) revoked = true;
      else if (results.some(later)) revokedLater = true;
      if (before || !results.some((r) => r.status === 'good' || later(r))) complete = false;
    }
  }
  return { complete, revoked, revokedLater };
}

/** What the answers signed into a signature say of its signer's certificate (the first link of `chain`). */
function signedRevocationInfo(archive: RevocationArchive, chain: Buffer[], ctx: Ctx): NonNullable<SignatureVerification['signedRevocationInfo']> {
  const out: NonNullable<SignatureVerification['signedRevocationInfo']> = { ocsps: archive.ocsps.length, crls: archive.crls.length };
  if (chain.length < 2 || archive.ocsps.length === 0) return out;
  const answers = matchingOcspResponses(archive.ocsps, certificateView(chain[0], ctx.scope), certificateView(chain[1], ctx.scope), { clock: () => ctx.now.getTime(), checkFreshness: false });
  const newest = answers.sort((a, b) => b.producedAt.getTime() - a.producedAt.getTime())[0];
  if (newest) out.signer = { status: newest.status, producedAt: newest.producedAt.toISOString() };
  return out;
}

function byteRangeWellFormed(pdf: Buffer, br: number[]): boolean {
  if (br.length !== 4 || !br.every((n) => Number.isSafeInteger(n) && n >= 0)) return false;
  const [o1, l1, o2, l2] = br as [number, number, number, number];
  if (o1 !== 0 || o2 <= l1 || o2 + l2 > pdf.length) return false;
  // The gap must be exactly the /Contents hex string: nothing else may be left unsigned.
  return pdf[l1] === 0x3c && pdf[o2 - 1] === 0x3e && /^[0-9A-Fa-f]*$/.test(pdf.toString('latin1', l1 + 1, o2 - 1));
}

/** The ESSCertIDv2 hash of the signingCertificateV2 signed attribute (hash algorithm defaults to SHA-256). */
function signingCertificateV2Hash(signerInfo: pkijs.SignerInfo): { hash: 'sha1' | 'sha256' | 'sha384' | 'sha512'; certHash: Buffer } | undefined {
  const v = attributeValue(signerInfo, OID.signingCertificateV2);
  if (!(v instanceof asn1js.Sequence)) return undefined;
  const certs = v.valueBlock.value[0];
  const first = certs instanceof asn1js.Sequence ? certs.valueBlock.value[0] : undefined;
  if (!(first instanceof asn1js.Sequence)) return undefined;
  const parts = first.valueBlock.value;
  let hash: 'sha1' | 'sha256' | 'sha384' | 'sha512' | undefined = 'sha256';
  let idx = 0;
  if (parts[0] instanceof asn1js.Sequence) {
    const oid = parts[0].valueBlock.value[0];
    hash = oid instanceof asn1js.ObjectIdentifier ? hashNameOf(oid.valueBlock.toString()) : undefined;
    idx = 1;
  }
  const h = parts[idx];
  if (!hash || !(h instanceof asn1js.OctetString)) return undefined;
  return { hash, certHash: Buffer.from(h.valueBlock.valueHexView) };
}
