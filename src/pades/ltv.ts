/**
 * PAdES B-LT: gathers the validation data a verifier needs years later (every certificate of every signer and TSA
 * chain, a fresh OCSP response for every non-anchor certificate, the OCSP responder certificates) and stores it in
 * the document security store (/DSS) with one incremental update.
 */
import type { Clock } from '../clock';
import { SingpassFlowsError, invalidInput } from '../errors';
import type { Fetch } from '../http';
import { buildChain, checkTimestampToken, fetchOcspResponse } from '../pki';
import { attributeValue, findSignerCertificate, parseSignedData } from '../pki/cms';
import { OID, certDer, subjectString } from '../pki/x509';
import { appendDss, listSignatures, type PdfSignatureInfo } from './index';

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
}

/** A summary of what was added, for logs and the CLI. */
export interface ValidationDataSummary {
  signatures: number;
  certificates: number;
  ocspResponses: number;
}

interface SignatureMaterial {
  vriKey: string;
  /** Each chain is [leaf, ..., anchor]. */
  chains: Buffer[][];
}

/**
 * Adds long-term validation data for every signature and document timestamp in the PDF and returns the PDF with one
 * more incremental update. Refuses (`OCSP_REVOKED`, `OCSP_UNKNOWN`) when any certificate is not known good, and
 * writes nothing then. OCSP answers are fetched now, so call this AFTER the signature timestamp exists.
 *
 * @example
 * const lt = await addValidationData(signedPdf, { trustedRoots: [rootPem] });
 */
export async function addValidationData(pdf: Buffer, options: AddValidationDataOptions = {}): Promise<Buffer> {
  return (await addValidationDataWithSummary(pdf, options)).pdf;
}

/** {@link addValidationData} that also says how much was added. */
export async function addValidationDataWithSummary(pdf: Buffer, options: AddValidationDataOptions = {}): Promise<{ pdf: Buffer; summary: ValidationDataSummary }> {
  if (!Buffer.isBuffer(pdf)) throw invalidInput('pdf', 'expected the PDF bytes');
  const signatures = listSignatures(pdf);
  if (signatures.length === 0) throw invalidInput('pdf', 'the PDF has no signature to add validation data for');

  const materials: SignatureMaterial[] = [];
  for (const sig of signatures) {
    materials.push(await materialOf(sig, options));
  }

  // One OCSP request per certificate, however many signatures share it.
  const ocspByCert = new Map<string, Buffer>();
  const responderCerts: Buffer[] = [];
  const vri: Record<string, { certs: Buffer[]; ocsps: Buffer[] }> = {};
  for (const m of materials) {
    const mine = { certs: [] as Buffer[], ocsps: [] as Buffer[] };
    for (const chain of m.chains) {
      for (let i = 0; i < chain.length; i++) {
        const cert = chain[i]!;
        pushUnique(mine.certs, cert);
        if (i === chain.length - 1) break; // the anchor: trusted by definition, no revocation data
        const key = cert.toString('base64');
        let der = ocspByCert.get(key);
        if (!der) {
          const r = await fetchOcspResponse(cert, chain[i + 1]!, { fetch: options.fetch, timeoutMs: options.timeoutMs, clock: options.clock });
          if (r.status === 'revoked') {
            throw new SingpassFlowsError('OCSP_REVOKED', `The certificate "${subjectString(cert)}" is revoked${r.revokedAt ? ` since ${r.revokedAt.toISOString()}` : ''}; the signature cannot be made long-term valid`, { retryable: false });
          }
          if (r.status === 'unknown') {
            throw new SingpassFlowsError('OCSP_UNKNOWN', `The OCSP responder does not know the certificate "${subjectString(cert)}" (status unknown); it may not have been issued by this CA`, { retryable: false });
          }
          der = r.der;
          ocspByCert.set(key, der);
          for (const c of [r.responderCertificate, ...r.certificates]) pushUnique(responderCerts, c);
          pushUnique(mine.certs, r.responderCertificate);
        }
        pushUnique(mine.ocsps, der);
      }
    }
    vri[m.vriKey] = mine;
  }

  const certs: Buffer[] = [];
  for (const m of materials) for (const chain of m.chains) for (const c of chain) pushUnique(certs, c);
  for (const c of responderCerts) pushUnique(certs, c);
  const ocsps = [...ocspByCert.values()];
  const out = await appendDss(pdf, { certs, ocsps, ...(options.vri ? { vri } : {}) });
  return { pdf: out, summary: { signatures: signatures.length, certificates: certs.length, ocspResponses: ocsps.length } };
}

/** The chains one signature (or document timestamp) depends on: signer's and, if timestamped, the TSA's. */
async function materialOf(sig: PdfSignatureInfo, options: AddValidationDataOptions): Promise<SignatureMaterial> {
  const parsed = parseSignedData(sig.contents, 'PDF_INVALID', `The signature "${sig.fieldName}"`);
  const embedded = parsed.certificates.map(certDer);
  const intermediates = [...embedded, ...(options.intermediates ?? [])];
  const chainOf = (leaf: Buffer): Promise<Buffer[]> => buildChain(leaf, { intermediates, trustedRoots: options.trustedRoots, fetch: options.fetch, timeoutMs: options.timeoutMs });
  const chains: Buffer[][] = [];
  const signerInfo = parsed.signedData.signerInfos[0];
  const signer = signerInfo ? findSignerCertificate(signerInfo, parsed.certificates) : undefined;
  if (!signer) throw new SingpassFlowsError('CHAIN_INCOMPLETE', `The signature "${sig.fieldName}" does not include its signer certificate`, {});
  chains.push(await chainOf(certDer(signer)));
  if (signerInfo && sig.type === 'signature') {
    const tstAttr = attributeValue(signerInfo, OID.signatureTimeStampToken, true);
    if (tstAttr) {
      const token = Buffer.from(tstAttr.valueBeforeDecodeView);
      const info = checkTimestampToken(token);
      if (info.tsaCertificate) chains.push(await buildChain(info.tsaCertificate, { intermediates: [...info.certificates, ...intermediates], trustedRoots: options.trustedRoots, fetch: options.fetch, timeoutMs: options.timeoutMs }));
    }
  }
  return { vriKey: sig.vriKey, chains };
}

function pushUnique(list: Buffer[], item: Buffer): void {
  if (!list.some((x) => x.equals(item))) list.push(item);
}
