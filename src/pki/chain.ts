import * as pkijs from 'pkijs';
import * as asn1js from 'asn1js';
import { invalidInput, SingpassFlowsError } from '../errors';
import { httpRequest, safeUrl, type Fetch } from '../http';
import { parseSignedData } from './cms';
import { certificateView, readCertificate, viewIssuedBy, type CertificateScope, type CertificateView } from './certificate-view';
import { BER_OPTIONS, caIssuersUrlOf, certDer, certsFromPemOrDer, isIssuedBy, isSelfSigned, parseCertificate, subjectString, toArrayBuffer, toDer } from './x509';

export interface BuildChainOptions {
  /** Candidate intermediate certificates (DER, PEM or base64). */
  intermediates?: (Buffer | string)[];
  /** Trust anchors; when given, the chain must end at one of them. */
  trustedRoots?: (Buffer | string)[];
  /** Used to download missing issuers from the AIA caIssuers URL. */
  fetch?: Fetch;
  timeoutMs?: number;
  /** Set false to never download issuers (offline). Default true. */
  fetchIssuers?: boolean;
}

const MAX_DEPTH = 8;

/**
 * Builds the certification path of `cert` up to a self-signed root (or a trusted root when `trustedRoots` is given):
 * `[cert, issuer, ..., root]` as DER. Issuers come from `intermediates`/`trustedRoots` first, then from the
 * AIA caIssuers URL. Each link is checked by name AND signature. `CHAIN_INCOMPLETE` when a link is missing.
 *
 * @example
 * const chain = await buildChain(userCertDer, { trustedRoots: [rootDer] });
 */
export async function buildChain(cert: Buffer | string, options: BuildChainOptions = {}): Promise<Buffer[]> {
  const r = await buildChainPartial(cert, options);
  if (r.problem) throw r.problem.error;
  return r.chain;
}

/** Why a path stopped short: a missing/undownloadable issuer (or a loop), or a self-signed root that is not trusted. */
export interface ChainProblem {
  code: 'CHAIN_INCOMPLETE' | 'CHAIN_UNTRUSTED';
  /** The error {@link buildChain} throws for it (code `CHAIN_INCOMPLETE` in both cases, as it always was). */
  error: SingpassFlowsError;
}

/**
 * {@link buildChain} that never throws for a path it cannot finish: it returns the path as far as it got (leaf
 * first) and the reason it stopped, so callers that collect "what can be obtained" (validation data for signatures
 * made by others, verification reports) keep the certificates they did find.
 *
 * @example
 * const { chain, problem } = await buildChainPartial(foreignSignerDer, { trustedRoots: [rootDer] });
 * if (problem?.code === 'CHAIN_UNTRUSTED') console.log('ends at an untrusted root', chain.length);
 */
export async function buildChainPartial(cert: Buffer | string, options: BuildChainOptions = {}): Promise<{ chain: Buffer[]; problem?: ChainProblem }> {
  return buildChainPartialIn(cert, options);
}

/** {@link buildChainPartial} with the certificates' views shared through `scope` (the caller's piece of work). */
export async function buildChainPartialIn(cert: Buffer | string, options: BuildChainOptions, scope?: CertificateScope): Promise<{ chain: Buffer[]; problem?: ChainProblem }> {
  const views = viewsOf(cert, options, scope);
  return views ? buildWithViews(views, options) : buildChainPartialWithSchema(cert, options);
}

/**
 * The leaf, candidates and anchors read natively, or undefined when one is not plain DER (pkijs then reads them all
 * and says what is wrong, as it did). Views of CA certificates are kept: a chain is mostly names compared and one
 * remembered signature check per link.
 */
function viewsOf(cert: unknown, options: BuildChainOptions, scope?: CertificateScope): { leaf: CertificateView; pool: CertificateView[]; roots: CertificateView[] } | undefined {
  if (typeof cert !== 'string' && !(cert instanceof Uint8Array)) return undefined;
  try {
    const leaf = certificateView(toDer(cert), scope);
    void leaf.x509.subject; // node reads it too (else the schema path decides)
    const roots = (options.trustedRoots ?? []).flatMap((r) => certsFromPemOrDer(r)).map((d) => certificateView(d, scope));
    const pool = [...(options.intermediates ?? []).flatMap((r) => certsFromPemOrDer(r)).map((d) => certificateView(d, scope)), ...roots];
    return { leaf, pool, roots };
  } catch {
    return undefined;
  }
}

/** {@link buildChainPartialWithSchema}'s walk over views: the same links, the same stops, the same messages. */
async function buildWithViews(v: { leaf: CertificateView; pool: CertificateView[]; roots: CertificateView[] }, options: BuildChainOptions): Promise<{ chain: Buffer[]; problem?: ChainProblem }> {
  const chain: CertificateView[] = [v.leaf];
  const ders = () => chain.map((c) => c.der);
  const stop = (code: ChainProblem['code'], message: string) =>
    ({ chain: ders(), problem: { code, error: new SingpassFlowsError('CHAIN_INCOMPLETE', message, {}) } });
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const current = chain[chain.length - 1];
    if (v.roots.some((r) => r.der.equals(current.der))) return { chain: ders() };
    if (viewIssuedBy(current, current)) {
      if (v.roots.length > 0) return stop('CHAIN_UNTRUSTED', `The certificate chain ends at "${subjectString(current.der)}", which is not one of the trusted roots`);
      return { chain: ders() };
    }
    let issuer = v.pool.find((c) => viewIssuedBy(current, c));
    if (!issuer && options.fetchIssuers !== false) {
      const url = current.caIssuersUrl;
      if (url) {
        let downloaded: CertificateView[];
        try {
          downloaded = (await downloadCertificates(url, options)).map((c) => readCertificate(certDer(c)));
        } catch (e) {
          if (!(e instanceof SingpassFlowsError)) throw e;
          return { chain: ders(), problem: { code: 'CHAIN_INCOMPLETE', error: e } };
        }
        issuer = downloaded.find((c) => viewIssuedBy(current, c));
      }
    }
    if (!issuer) {
      return stop('CHAIN_INCOMPLETE', `The issuer of "${subjectString(current.der)}" was not found (not among the given certificates${options.fetchIssuers === false ? '' : ', and not downloadable from the certificate\'s AIA'})`);
    }
    const found = issuer;
    if (chain.some((c) => c.der.equals(found.der))) {
      return stop('CHAIN_INCOMPLETE', `The certificate chain of "${subjectString(chain[0].der)}" loops`);
    }
    chain.push(issuer);
  }
  return stop('CHAIN_INCOMPLETE', `The certificate chain of "${subjectString(chain[0].der)}" is longer than ${MAX_DEPTH}`);
}

/** The path built through pkijs: for input the native reading does not take, and the reference in the tests. */
export async function buildChainPartialWithSchema(cert: Buffer | string, options: BuildChainOptions = {}): Promise<{ chain: Buffer[]; problem?: ChainProblem }> {
  const roots = (options.trustedRoots ?? []).flatMap((r) => certsFromPemOrDer(r)).map((d) => parseCertificate(d));
  const pool = [...(options.intermediates ?? []).flatMap((r) => certsFromPemOrDer(r)).map((d) => parseCertificate(d)), ...roots];
  const rootDers = roots.map(certDer);
  const chain: pkijs.Certificate[] = [readLeaf(cert)];
  const stop = (code: ChainProblem['code'], message: string) =>
    ({ chain: chain.map(certDer), problem: { code, error: new SingpassFlowsError('CHAIN_INCOMPLETE', message, {}) } });
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const current = chain[chain.length - 1];
    const currentDer = certDer(current);
    if (rootDers.some((r) => r.equals(currentDer))) return { chain: chain.map(certDer) };
    if (isSelfSigned(current)) {
      if (roots.length > 0) return stop('CHAIN_UNTRUSTED', `The certificate chain ends at "${subjectString(current)}", which is not one of the trusted roots`);
      return { chain: chain.map(certDer) };
    }
    let issuer = pool.find((c) => isIssuedBy(current, c));
    if (!issuer && options.fetchIssuers !== false) {
      const url = caIssuersUrlOf(current);
      if (url) {
        let downloaded: pkijs.Certificate[];
        try {
          downloaded = await downloadCertificates(url, options);
        } catch (e) {
          if (!(e instanceof SingpassFlowsError)) throw e;
          return { chain: chain.map(certDer), problem: { code: 'CHAIN_INCOMPLETE', error: e } };
        }
        issuer = downloaded.find((c) => isIssuedBy(current, c));
      }
    }
    if (!issuer) {
      return stop('CHAIN_INCOMPLETE', `The issuer of "${subjectString(current)}" was not found (not among the given certificates${options.fetchIssuers === false ? '' : ', and not downloadable from the certificate\'s AIA'})`);
    }
    if (chain.some((c) => certDer(c).equals(certDer(issuer)))) {
      return stop('CHAIN_INCOMPLETE', `The certificate chain of "${subjectString(chain[0])}" loops`);
    }
    chain.push(issuer);
  }
  return stop('CHAIN_INCOMPLETE', `The certificate chain of "${subjectString(chain[0])}" is longer than ${MAX_DEPTH}`);
}

/**
 * The certificate whose path is built is the caller's input (a webhook's user certificate, a config file): a broken
 * one is INVALID_INPUT naming it, not a "missing issuer" (CHAIN_INCOMPLETE) that sends the user looking for a CA.
 */
function readLeaf(cert: unknown): pkijs.Certificate {
  if (typeof cert !== 'string' && !(cert instanceof Uint8Array)) throw invalidInput('certificate', 'expected a certificate as DER bytes, base64 DER or PEM');
  const der = toDer(cert);
  // One DER element and nothing after it: asn1js stops at the first element's end and would ignore trailing bytes.
  if (der.length === 0 || asn1js.fromBER(toArrayBuffer(der), BER_OPTIONS).offset !== der.length) {
    throw invalidInput('certificate', 'not a valid X.509 certificate (expected DER bytes, base64 DER or PEM)');
  }
  try {
    return parseCertificate(der);
  } catch {
    throw invalidInput('certificate', 'not a valid X.509 certificate (expected DER bytes, base64 DER or PEM)');
  }
}

/** Downloads a caIssuers resource: a DER or PEM certificate, or a certs-only PKCS#7 (.p7c). */
async function downloadCertificates(url: string, options: BuildChainOptions): Promise<pkijs.Certificate[]> {
  const target = safeUrl(url);
  let res;
  try {
    res = await httpRequest(url, { method: 'GET', headers: { accept: 'application/pkix-cert, application/pkcs7-mime, */*' } }, { fetch: options.fetch, timeoutMs: options.timeoutMs });
  } catch (e) {
    const err = e as SingpassFlowsError;
    throw new SingpassFlowsError('CHAIN_INCOMPLETE', `The issuing CA certificate could not be downloaded from ${target} (${err.code ?? 'error'}): ${err.message}`, { url: target, retryable: true }, { cause: e });
  }
  if (res.status !== 200) {
    throw new SingpassFlowsError('CHAIN_INCOMPLETE', `The issuing CA certificate could not be downloaded from ${target} (HTTP ${res.status})`, { url: target, status: res.status });
  }
  try {
    if (res.body.includes('-----BEGIN CERTIFICATE-----')) return certsFromPemOrDer(res.body).map((d) => parseCertificate(d));
    try {
      return [parseCertificate(res.body)];
    } catch {
      return parseSignedData(res.body, 'CHAIN_INCOMPLETE', 'The caIssuers bundle').certificates;
    }
  } catch (e) {
    throw new SingpassFlowsError('CHAIN_INCOMPLETE', `${target} did not return a certificate`, { url: target }, { cause: e });
  }
}
