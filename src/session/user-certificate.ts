import { X509Certificate } from 'node:crypto';
import { systemClock, type Clock } from '../clock';
import { SingpassFlowsError, isSingpassFlowsError, type ErrorCode } from '../errors';
import type { Fetch } from '../http';
import { buildChain, certsFromPemOrDer, fetchOcspResponse, type OcspResult } from '../pki';
import { readCertificate, viewCertificate, viewIssuedBy, type CertificateView } from '../pki/certificate-view';
import { commonNameOf, shownSubject } from '../pki/x509';

/**
 * A certificate's status as every front end's "Check Certificate Status" reports it: the same checks the certificate
 * step makes before any hash (valid now, chained to the trusted roots, OCSP good), as data. `code` is the stable code
 * the certificate step would fail the session with.
 */
export interface CertificateStatusReport {
  status: 'good' | 'revoked' | 'unknown' | 'expired' | 'notYetValid' | 'untrusted' | 'chainIncomplete';
  good: boolean;
  code?: ErrorCode;
  message?: string;
  /** The subject without the holder's NRIC/FIN (its serialNumber attribute is left out). */
  subject: string;
  /** The holder's name: the subject's common name. */
  name?: string;
  issuer: string;
  serialNumber: string;
  notBefore: string;
  notAfter: string;
  /** Subjects, leaf first, up to the trusted root (when a chain was found). */
  chain: string[];
  /** The OCSP answer, when one was fetched. */
  ocsp?: { producedAt: string; thisUpdate: string; nextUpdate?: string; revokedAt?: string };
}

const STATUS_OF: Partial<Record<ErrorCode, CertificateStatusReport['status']>> = {
  OCSP_REVOKED: 'revoked', OCSP_UNKNOWN: 'unknown', CERTIFICATE_EXPIRED: 'expired', CERTIFICATE_NOT_YET_VALID: 'notYetValid',
  CERTIFICATE_UNTRUSTED: 'untrusted', CHAIN_INCOMPLETE: 'chainIncomplete',
};

/**
 * The check a DSAP makes when the user's certificate arrives, BEFORE any hash is submitted (so the user is never
 * asked to approve a signature we would refuse): valid now, chained to one of OUR trusted roots, and OCSP "good"
 * from its issuer's responder. The OCSP answer is fetched per session (revocation is per user and time); the
 * intermediate CA certificates found via AIA are cached, so a busy DSAP downloads them once.
 */
export class UserCertificateChecker {
  private readonly roots: Buffer[];
  private readonly known: Buffer[];
  /** Issuing CAs whose path to a trusted root was already built and checked: [issuer, ..., root] (DER). */
  private readonly issuerPaths: IssuerPath[] = [];

  constructor(private readonly options: { trustedRoots: (Buffer | string)[]; intermediates?: (Buffer | string)[]; fetch?: Fetch; clock?: Clock }) {
    this.roots = options.trustedRoots.flatMap((r) => certsFromPemOrDer(r));
    this.known = (options.intermediates ?? []).flatMap((r) => certsFromPemOrDer(r));
  }

  /** Intermediates known so far (given or learned), to embed in the CMS and to seed LTV. */
  intermediates(): Buffer[] {
    return [...this.known];
  }

  /**
   * Throws CERTIFICATE_EXPIRED / CERTIFICATE_NOT_YET_VALID / CERTIFICATE_UNTRUSTED / CHAIN_INCOMPLETE /
   * OCSP_REVOKED / OCSP_UNKNOWN / OCSP_FAILED; returns the path leaf..trusted root (DER).
   */
  async check(certificate: Buffer): Promise<Buffer[]> {
    return (await this.checkForSigning(certificate)).chain;
  }

  /**
   * {@link check}, with the OCSP answer that found the certificate good (OCSPResponse DER): what the certificate
   * step signs into the PDF (adbe-revocationInfoArchival), so every level shows the certificate was good then.
   */
  async checkForSigning(certificate: Buffer): Promise<{ chain: Buffer[]; ocsp: Buffer }> {
    const seen: { chain?: Buffer[]; ocsp?: OcspResult } = {};
    const { chain } = await this.checkWithAnswer(certificate, seen);
    return { chain, ocsp: seen.ocsp!.der };
  }

  /**
   * The same checks as a report that does not throw for the certificate's verdict (revoked, expired, untrusted…):
   * for a "Check Certificate Status" step. Throws for input that is not a certificate and for a responder that
   * cannot be reached (OCSP_FAILED: no verdict).
   */
  async report(certificate: Buffer): Promise<CertificateStatusReport> {
    let leaf: X509Certificate;
    try {
      leaf = new X509Certificate(certificate);
    } catch {
      throw new SingpassFlowsError('INVALID_INPUT', 'certificate: is not an X.509 certificate (PEM, DER or base64 DER)', { field: 'certificate', retryable: false });
    }
    const base = {
      subject: oneLine(leaf.subject), ...(commonNameOf(leaf.subject) !== undefined ? { name: commonNameOf(leaf.subject) } : {}), issuer: oneLine(leaf.issuer), serialNumber: leaf.serialNumber,
      notBefore: new Date(leaf.validFrom).toISOString(), notAfter: new Date(leaf.validTo).toISOString(),
    };
    const seen: { chain?: Buffer[]; ocsp?: OcspResult } = {};
    try {
      await this.checkWithAnswer(certificate, seen, leaf);
      return { status: 'good', good: true, ...base, chain: subjects(seen.chain, leaf), ...(seen.ocsp ? { ocsp: ocspOf(seen.ocsp) } : {}) };
    } catch (e) {
      const status = isSingpassFlowsError(e) ? STATUS_OF[e.code] : undefined;
      if (!status || !isSingpassFlowsError(e)) throw e;
      return { status, good: false, code: e.code, message: e.message, ...base, chain: subjects(seen.chain, leaf), ...(seen.ocsp ? { ocsp: ocspOf(seen.ocsp) } : {}) };
    }
  }

  /** `parsed`: the caller's parse of these very bytes (read once per check). */
  private async checkWithAnswer(certificate: Buffer, seen: { chain?: Buffer[]; ocsp?: OcspResult } = {}, parsed?: X509Certificate): Promise<{ chain: Buffer[] }> {
    const now = (this.options.clock ?? systemClock)();
    const leaf = parsed ?? new X509Certificate(certificate);
    checkValidity(leaf, now, 'Your signing certificate');
    // read once, natively, for the chain link and the OCSP exchange (which then finds the link already verified)
    let leafView: CertificateView | undefined;
    try {
      leafView = viewCertificate(Buffer.from(certificate), leaf);
    } catch {
      leafView = undefined; // not plain DER: the path is built and the OCSP request made from the bytes, as before
    }
    const cached = leafView && this.cachedChain(leaf, leafView, certificate, now);
    const chain = cached?.chain ?? (await this.buildAndCheck(leaf, certificate, now));
    seen.chain = chain;
    const ocsp = await fetchOcspResponse(leafView ?? certificate, cached?.issuer ?? chain[1], { fetch: this.options.fetch, clock: this.options.clock });
    seen.ocsp = ocsp;
    if (ocsp.status === 'revoked') {
      throw new SingpassFlowsError('OCSP_REVOKED', `The signing certificate of "${oneLine(leaf.subject)}" is revoked${ocsp.revokedAt ? ` (since ${ocsp.revokedAt.toISOString()})` : ''}; nothing was sent for signing`, { retryable: false });
    }
    if (ocsp.status !== 'good') {
      throw new SingpassFlowsError('OCSP_UNKNOWN', `The OCSP responder does not know the signing certificate of "${oneLine(leaf.subject)}"; nothing was sent for signing`, { retryable: false });
    }
    return { chain };
  }

  /**
   * The path of an issuer seen before (checked then), when the leaf's signature verifies with it: the common case
   * of a busy DSAP, with no ASN.1 parsing and no download. Its CA certificates are re-checked for validity now.
   */
  private cachedChain(leaf: X509Certificate, leafView: CertificateView, certificate: Buffer, now: number): { chain: Buffer[]; issuer: CertificateView } | undefined {
    const hit = this.issuerPaths.find((p) => leaf.checkIssued(p.ca) && viewIssuedBy(leafView, p.caView));
    if (!hit) return undefined;
    for (const ca of hit.parsed) checkValidity(ca, now, 'A CA certificate of your signing certificate');
    return { chain: [certificate, ...hit.path], issuer: hit.caView };
  }

  private async buildAndCheck(leaf: X509Certificate, certificate: Buffer, now: number): Promise<Buffer[]> {
    // Built to wherever it leads (not only to our roots), so "issued by a CA we do not trust" is told apart from
    // "an issuer could not be found".
    const path = await buildChain(certificate, { intermediates: [...this.known, ...this.roots], fetch: this.options.fetch });
    const anchorAt = path.findIndex((c) => this.roots.some((r) => r.equals(c)));
    if (anchorAt < 0) {
      throw new SingpassFlowsError('CERTIFICATE_UNTRUSTED', `The signing certificate of "${oneLine(leaf.subject)}" is issued by "${oneLine(new X509Certificate(path[path.length - 1]).subject)}", which is not one of the trusted root CAs configured for this DSAP; nothing was sent for signing`, { retryable: false });
    }
    const chain = path.slice(0, anchorAt + 1);
    for (const ca of chain.slice(1)) checkValidity(new X509Certificate(ca), now, 'A CA certificate of your signing certificate');
    if (chain.length < 2) {
      throw new SingpassFlowsError('CERTIFICATE_UNTRUSTED', 'The signing certificate is itself a trusted root: refusing it as a user certificate', { retryable: false });
    }
    this.learn(chain.slice(1, -1));
    if (this.issuerPaths.length < 64) {
      const parsed = chain.slice(1).map((c) => validityOf(new X509Certificate(c)));
      this.issuerPaths.push({ ca: parsed[0].cert, caView: readCertificate(chain[1]), path: chain.slice(1), parsed });
    }
    return chain;
  }

  private learn(intermediates: Buffer[]): void {
    for (const c of intermediates) {
      if (!this.known.some((k) => k.equals(c)) && this.known.length < 64) this.known.push(c);
    }
  }
}

/** An issuing CA seen before: its path to a trusted root (checked then), its certificates' validity read once. */
interface IssuerPath { ca: X509Certificate; caView: CertificateView; path: Buffer[]; parsed: Validity[] }
interface Validity { cert: X509Certificate; validTo: string; validFrom: string; notAfter: number; notBefore: number }

function validityOf(cert: X509Certificate): Validity {
  return { cert, validTo: cert.validTo, validFrom: cert.validFrom, notAfter: Date.parse(cert.validTo), notBefore: Date.parse(cert.validFrom) };
}

function checkValidity(c: X509Certificate | Validity, now: number, what: string): void {
  const v = c instanceof X509Certificate ? validityOf(c) : c;
  const cert = v.cert;
  if (v.notAfter < now) {
    throw new SingpassFlowsError('CERTIFICATE_EXPIRED', `${what} ("${oneLine(cert.subject)}") expired on ${new Date(cert.validTo).toISOString()}; nothing was sent for signing`, { retryable: false });
  }
  if (v.notBefore > now) {
    throw new SingpassFlowsError('CERTIFICATE_NOT_YET_VALID', `${what} ("${oneLine(cert.subject)}") is not valid before ${new Date(cert.validFrom).toISOString()}; check the clocks, nothing was sent for signing`, { retryable: false });
  }
}

/** Names a certificate in a report or message without the holder's NRIC/FIN (see `shownSubject`). */
const oneLine = shownSubject;

/** The chain's subjects: the leaf from its parse, the CAs from the views kept for them (not parsed per report). */
function subjects(chain: Buffer[] | undefined, leaf: X509Certificate): string[] {
  return (chain ?? []).map((c, i) => oneLine((i === 0 && leaf.raw.equals(c) ? leaf : readCertificate(c).x509).subject));
}

function ocspOf(r: OcspResult): NonNullable<CertificateStatusReport['ocsp']> {
  return {
    producedAt: r.producedAt.toISOString(), thisUpdate: r.thisUpdate.toISOString(),
    ...(r.nextUpdate ? { nextUpdate: r.nextUpdate.toISOString() } : {}), ...(r.revokedAt ? { revokedAt: r.revokedAt.toISOString() } : {}),
  };
}
