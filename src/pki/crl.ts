/**
 * RFC 5280 CRLs, for certificates whose CA publishes no OCSP responder (common for corporate and foreign CAs): fetch
 * from the certificate's CRL Distribution Points, check before trusting, and read the certificate's status.
 *
 * Supported: complete, direct CRLs signed by the certificate's issuer with its own key. Refused with `CRL_FAILED`
 * (the message says which): delta CRLs (deltaCRLIndicator), partitioned or scoped CRLs (issuingDistributionPoint),
 * indirect CRLs (a certificateIssuer entry extension, or a distribution point naming a separate CRL issuer), and any
 * other critical extension. Every failure to get a trustworthy CRL is `CRL_FAILED`.
 */
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { Clock } from '../clock';
import { systemClock } from '../clock';
import { SingpassFlowsError } from '../errors';
import { httpRequest, safeUrl, type HttpOptions } from '../http';
import { OID, crlUrlsOf, invalidityDateOf, keyUsageAllows, nameDer, parseAsn1, parseIssuedPair, spkiDer, subjectString, toDer, verifySignature, type CertificateInput } from './x509';

export type CrlCertStatus = 'good' | 'revoked';

export interface CrlResult {
  /** The CRL (DER): what PAdES puts in `/DSS /CRLs`. */
  der: Buffer;
  status: CrlCertStatus;
  thisUpdate: Date;
  nextUpdate?: Date;
  revokedAt?: Date;
  /** The entry's invalidityDate, when it gives one: the key is suspected invalid since then (may precede `revokedAt`). */
  invalidSince?: Date;
  /** RFC 5280 reason name (`keyCompromise`, …) when the CRL entry gives one. */
  reason?: string;
  /** Where it was fetched from (undefined for a CRL checked from bytes, e.g. a PDF's /DSS). */
  url?: string;
  /** Taken from the in-memory cache rather than downloaded by this call. */
  cached?: boolean;
}

export interface CrlCheckOptions {
  clock?: Clock;
  /** Allowed clock difference with the CA (default 5 minutes). */
  clockSkewMs?: number;
  /** For CRLs without nextUpdate: how old thisUpdate may be (default 24 hours). */
  maxAgeMs?: number;
  /** false: do not refuse a CRL whose nextUpdate has passed (a verifier judging the past). Default true. */
  checkFreshness?: boolean;
}

/** `fetch` and `timeoutMs` as for every HTTP call; `maxBytes`: the largest CRL accepted (default 10 MiB). */
export interface FetchCrlOptions extends CrlCheckOptions, HttpOptions {
  /** CRL URL; by default the certificate's CRL Distribution Points (http/https), the first that works. */
  url?: string;
  /** Use and fill the in-memory CRL cache (default true). CRLs are per CA, not per user, so they may be shared. */
  cache?: boolean;
}

const SKEW_MS = 5 * 60_000;
const MAX_AGE_MS = 24 * 3600_000;
const MAX_BYTES = 10 * 1024 * 1024;
const REASONS = ['unspecified', 'keyCompromise', 'cACompromise', 'affiliationChanged', 'superseded', 'cessationOfOperation', 'certificateHold', '(7)', 'removeFromCRL', 'privilegeWithdrawn', 'aACompromise'];
/** CRL extensions understood here (and accepted even if marked critical). */
const KNOWN_CRL_EXTENSIONS = new Set<string>([OID.crlNumber, OID.authorityKeyIdentifier]);
const KNOWN_ENTRY_EXTENSIONS = new Set<string>([OID.crlReason, OID.invalidityDate]);

interface ParsedCrl {
  der: Buffer;
  crl: pkijs.CertificateRevocationList;
  /** Revoked entries by serial (hex, leading zero bytes stripped), built on first lookup. */
  bySerial?: Map<string, pkijs.RevokedCertificate>;
  /** Issuer SPKIs the signature was verified with (a CRL is checked for many certificates of one CA). */
  verifiedWith: WeakSet<Buffer>;
}

// Fetched CRLs by URL until their nextUpdate; bounded in entries and bytes (oldest first out). In-flight downloads are
// shared, so certificates of one CA checked together cost one download.
const CACHE = new Map<string, { parsed: ParsedCrl; until: number }>();
const CACHE_MAX_ENTRIES = 32;
const CACHE_MAX_BYTES = 64 * 1024 * 1024;
const IN_FLIGHT = new Map<string, Promise<ParsedCrl>>();

/** Empties the in-memory CRL cache (tests; or to force fresh downloads). */
export function clearCrlCache(): void {
  CACHE.clear();
}

/**
 * Gets the CRL for `cert` (issued by `issuer`) from its CRL Distribution Points (or `options.url`), checks it (signed
 * by the issuer, whose key usage allows CRL signing, same issuer name, thisUpdate not in the future, nextUpdate not passed, a kind supported here) and
 * returns the certificate's status. Revoked is returned, not thrown: the caller decides.
 *
 * @example
 * const { status, der } = await fetchCrlStatus(userCertDer, intermediateDer);
 */
export async function fetchCrlStatus(cert: CertificateInput, issuer: CertificateInput, options: FetchCrlOptions = {}): Promise<CrlResult> {
  const { certParsed, issuerParsed } = parseIssuedPair(cert, issuer, 'CRL_FAILED');
  const urls = options.url ? [options.url] : crlUrlsOf(certParsed);
  if (urls.length === 0) {
    throw new SingpassFlowsError('CRL_FAILED', `The certificate "${subjectString(certParsed)}" names no http(s) CRL distribution point; pass a CRL URL explicitly`, { retryable: false });
  }
  const errors: SingpassFlowsError[] = [];
  for (const url of urls) {
    try {
      const { parsed, cached } = await getCrl(url, options);
      const fail = (why: string): SingpassFlowsError => new SingpassFlowsError('CRL_FAILED', `The CRL from ${safeUrl(url)} cannot be trusted: ${why}`, { url: safeUrl(url), retryable: false });
      return { ...checkParsedCrl(parsed, certParsed, issuerParsed, options, fail), url, cached };
    } catch (e) {
      if (!(e instanceof SingpassFlowsError)) throw e;
      errors.push(e);
    }
  }
  if (errors.length === 1) throw errors[0];
  throw new SingpassFlowsError('CRL_FAILED', `No CRL distribution point of "${subjectString(certParsed)}" gave a usable CRL: ${errors.map((e) => e.message).join('; ')}`,
    { retryable: errors.some((e) => e.details.retryable) }, { cause: errors[0] });
}

async function getCrl(url: string, options: FetchCrlOptions): Promise<{ parsed: ParsedCrl; cached: boolean }> {
  const useCache = options.cache !== false;
  const now = (options.clock ?? systemClock)();
  if (useCache) {
    const hit = CACHE.get(url);
    if (hit && hit.until > now) return { parsed: hit.parsed, cached: true };
    if (hit) CACHE.delete(url);
    const pending = IN_FLIGHT.get(url);
    if (pending) return { parsed: await pending, cached: true };
  }
  const download = downloadCrl(url, options);
  if (useCache) IN_FLIGHT.set(url, download);
  try {
    const parsed = await download;
    if (useCache) remember(url, parsed, options);
    return { parsed, cached: false };
  } finally {
    if (useCache) IN_FLIGHT.delete(url);
  }
}

function remember(url: string, parsed: ParsedCrl, options: CrlCheckOptions): void {
  const { thisUpdate, nextUpdate } = parsed.crl;
  const until = nextUpdate ? nextUpdate.value.getTime() : thisUpdate.value.getTime() + (options.maxAgeMs ?? MAX_AGE_MS);
  if (parsed.der.length > CACHE_MAX_BYTES / 4) return; // one huge CRL must not push everything else out
  CACHE.delete(url);
  CACHE.set(url, { parsed, until });
  let bytes = 0;
  for (const e of CACHE.values()) bytes += e.parsed.der.length;
  for (const [key, e] of CACHE) {
    if (CACHE.size <= CACHE_MAX_ENTRIES && bytes <= CACHE_MAX_BYTES) break;
    CACHE.delete(key);
    bytes -= e.parsed.der.length;
  }
}

async function downloadCrl(url: string, options: FetchCrlOptions): Promise<ParsedCrl> {
  const target = safeUrl(url);
  if (!/^https?:\/\//i.test(url)) throw new SingpassFlowsError('CRL_FAILED', `The CRL URL ${target} is not http(s); only http and https CRL distribution points are fetched`, { url: target, retryable: false });
  let res;
  try {
    res = await httpRequest(url, { method: 'GET', headers: { accept: 'application/pkix-crl' } }, { fetch: options.fetch, timeoutMs: options.timeoutMs, maxBytes: options.maxBytes ?? MAX_BYTES });
  } catch (e) {
    const err = e as SingpassFlowsError;
    throw new SingpassFlowsError('CRL_FAILED', `The CRL at ${target} could not be downloaded (${err.code ?? 'error'}): ${err.message}`, { url: target, retryable: err.details?.retryable ?? true, cause: err.code }, { cause: e });
  }
  if (res.status !== 200) {
    throw new SingpassFlowsError('CRL_FAILED', `The CRL server at ${target} answered HTTP ${res.status}`, { url: target, status: res.status, retryable: res.status >= 500 });
  }
  return parseCrl(res.body, (why) => new SingpassFlowsError('CRL_FAILED', `The CRL from ${target} cannot be trusted: ${why}`, { url: target, retryable: false }));
}

/** Parses a CRL given as DER or PEM (`-----BEGIN X509 CRL-----`). */
function parseCrl(input: Buffer, fail: (why: string) => SingpassFlowsError): ParsedCrl {
  const text = input.subarray(0, 64).toString('latin1');
  const der = text.includes('-----BEGIN') ? toDer(input.toString('latin1')) : Buffer.from(input);
  let crl: pkijs.CertificateRevocationList;
  try {
    crl = new pkijs.CertificateRevocationList({ schema: parseAsn1(der, 'CRL_FAILED', 'The CRL') });
  } catch {
    throw fail('it is not a CRL (neither DER nor PEM)');
  }
  return { der, crl, verifiedWith: new WeakSet() };
}

/**
 * Checks a CRL (DER or PEM) about `cert`, issued by `issuer`, and returns the certificate's status. Used by
 * {@link fetchCrlStatus} and by the PDF verifier for CRLs embedded in the /DSS.
 */
export function checkCrl(
  der: Buffer,
  cert: pkijs.Certificate,
  issuer: pkijs.Certificate,
  opts: CrlCheckOptions = {},
  fail: (why: string) => SingpassFlowsError = (why) => new SingpassFlowsError('CRL_FAILED', `The CRL cannot be trusted: ${why}`, { retryable: false }),
): CrlResult {
  return checkParsedCrl(parseCrl(der, fail), cert, issuer, opts, fail);
}

function checkParsedCrl(parsed: ParsedCrl, cert: pkijs.Certificate, issuer: pkijs.Certificate, opts: CrlCheckOptions, fail: (why: string) => SingpassFlowsError): CrlResult {
  const { crl } = parsed;
  if (!nameDer(crl.issuer).equals(nameDer(cert.issuer))) throw fail(`it was issued by another CA, not by "${subjectString(issuer)}"`);
  if (!keyUsageAllows(issuer, 'cRLSign')) throw fail(`"${subjectString(issuer)}" is not allowed to sign CRLs (its key usage lacks cRLSign)`);
  const spki = spkiDer(issuer);
  if (!parsed.verifiedWith.has(spki)) {
    if (crl.signature.algorithmId !== crl.signatureAlgorithm.algorithmId
      || !verifySignature(crl.signatureAlgorithm.algorithmId, crl.tbsView, crl.signatureValue.valueBlock.valueHexView, spki)) {
      throw fail(`its signature does not verify with the key of "${subjectString(issuer)}"`);
    }
    parsed.verifiedWith.add(spki);
  }
  for (const ext of crl.crlExtensions?.extensions ?? []) {
    if (ext.extnID === OID.deltaCrlIndicator) throw fail('it is a delta CRL, which is not supported (only complete CRLs)');
    if (ext.extnID === OID.issuingDistributionPoint) throw fail('it is a partitioned or indirect CRL (issuingDistributionPoint), which is not supported');
    if (ext.critical && !KNOWN_CRL_EXTENSIONS.has(ext.extnID)) throw fail(`it has a critical extension not understood here (${ext.extnID})`);
  }

  const now = (opts.clock ?? systemClock)();
  const skew = opts.clockSkewMs ?? SKEW_MS;
  const thisUpdate = crl.thisUpdate.value;
  const nextUpdate = crl.nextUpdate?.value;
  if (thisUpdate.getTime() > now + skew) throw fail('its thisUpdate is in the future (check the clock)');
  if (opts.checkFreshness !== false) {
    if (nextUpdate && nextUpdate.getTime() < now - skew) throw fail(`it is stale (nextUpdate ${nextUpdate.toISOString()} has passed)`);
    if (!nextUpdate && thisUpdate.getTime() < now - (opts.maxAgeMs ?? MAX_AGE_MS)) throw fail('it is too old (no nextUpdate)');
  }

  const entry = revokedEntries(parsed).get(serialKey(cert.serialNumber));
  const base = { der: parsed.der, thisUpdate, ...(nextUpdate ? { nextUpdate } : {}) };
  if (!entry) return { ...base, status: 'good' };
  let reason: string | undefined;
  for (const ext of entry.crlEntryExtensions?.extensions ?? []) {
    if (ext.extnID === OID.certificateIssuer) throw fail('it is an indirect CRL (certificateIssuer entries), which is not supported');
    if (ext.critical && !KNOWN_ENTRY_EXTENSIONS.has(ext.extnID)) throw fail(`an entry has a critical extension not understood here (${ext.extnID})`);
    if (ext.extnID === OID.crlReason) {
      const v = asn1js.fromBER(ext.extnValue.valueBlock.valueHexView).result;
      if (v instanceof asn1js.Enumerated) reason = REASONS[v.valueBlock.valueDec] ?? String(v.valueBlock.valueDec);
    }
  }
  // removeFromCRL only appears in delta CRLs (refused above): every entry of a complete CRL is a revocation.
  const invalidSince = invalidityDateOf(entry.crlEntryExtensions?.extensions);
  return { ...base, status: 'revoked', revokedAt: entry.revocationDate.value, ...(invalidSince ? { invalidSince } : {}), ...(reason ? { reason } : {}) };
}

function serialKey(serial: asn1js.Integer): string {
  const bytes = Buffer.from(serial.valueBlock.valueHexView);
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  return bytes.subarray(i).toString('hex');
}

function revokedEntries(parsed: ParsedCrl): Map<string, pkijs.RevokedCertificate> {
  if (!parsed.bySerial) {
    parsed.bySerial = new Map();
    for (const r of parsed.crl.revokedCertificates ?? []) parsed.bySerial.set(serialKey(r.userCertificate), r);
  }
  return parsed.bySerial;
}

/**
 * The CRLs among `crls` (DER, e.g. a PDF's /DSS /CRLs) that are about `cert` (issued and signed by `issuer`) and can be
 * trusted, each with the certificate's status. Others are skipped. Freshness is checked unless `checkFreshness` is false.
 *
 * @example
 * const good = matchingCrls(dss.crls, cert, issuer, { checkFreshness: false }).some((r) => r.status === 'good');
 */
export function matchingCrls(crls: Buffer[], cert: pkijs.Certificate, issuer: pkijs.Certificate, opts: CrlCheckOptions = {}): CrlResult[] {
  const issuerName = nameDer(cert.issuer);
  const out: CrlResult[] = [];
  for (const der of crls) {
    if (!der.includes(issuerName)) continue; // cheap pre-filter: a CRL of this CA contains its name
    try {
      out.push(checkCrl(der, cert, issuer, opts));
    } catch {
      // another CA's CRL, or an untrustworthy one: does not count
    }
  }
  return out;
}
