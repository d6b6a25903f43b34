import { commonNameOf, maskIds, subjectString } from '../pki/x509';

/** Whether a flow's output names the signer's NRIC/FIN: not at all (the default), or masked. Never in full. */
export type SignerIdInOutput = 'none' | 'masked';

/**
 * What a flow, a log or a narration may say of the signer: the name (the certificate's CN) and, only where asked, the
 * NRIC/FIN masked to its last four characters. Never the certificate or the full NRIC (personal data: items, messages
 * and logs outlive the session).
 */
export interface SignerSummary {
  name?: string;
  /** e.g. `*****567D`; only with `id: 'masked'`. */
  maskedId?: string;
}

/** The subject's serialNumber (2.5.4.5: a Singpass certificate's NRIC/FIN) masked; undefined without one. */
export function maskedIdOf(subject: string): string | undefined {
  const id = /(?:^|\n)serialNumber=([^\n]+)/i.exec(subject)?.[1]?.trim();
  if (!id) return undefined;
  const masked = maskIds(id);
  // not NRIC/FIN-shaped: still only its last four characters
  return masked !== id ? masked : `${'*'.repeat(Math.max(id.length - 4, 1))}${id.slice(-4)}`;
}

/** The signer of a certificate whose subject (node's form, one attribute per line) is given. */
export function signerOf(certificate: { subject: string }, id: SignerIdInOutput = 'none'): SignerSummary {
  const name = commonNameOf(certificate.subject);
  const maskedId = id === 'masked' ? maskedIdOf(certificate.subject) : undefined;
  return { ...(name !== undefined ? { name } : {}), ...(maskedId !== undefined ? { maskedId } : {}) };
}

/** The issuers of a checked chain (leaf first), named without personal data: the user's own subject is left out. */
export function issuerNames(chain: Buffer[]): string[] {
  return chain.slice(1).map((der) => subjectString(der));
}

/** A `SignerIdInOutput` from a node's setting; anything else is `none` (the full id is never an option). */
export function signerIdSetting(value: unknown): SignerIdInOutput {
  return value === 'masked' ? 'masked' : 'none';
}
