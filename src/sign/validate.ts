import { invalidInput } from '../errors';

/**
 * Input rules of the signing API (spec §4, §8), checked before any call so a low-code user gets a message naming
 * the field instead of a vague 400 from the service. Each rule lives here only.
 */

/** `client_notification_token` and `tenant_id`: letters, digits, `_`, `-`, whitespace; 1..255. */
const NOTIFICATION_CHARSET = /^[A-Za-z0-9_\-\s]+$/;

function requireString(field: string, value: unknown): string {
  if (typeof value !== 'string') throw invalidInput(field, `must be text, got ${value === undefined ? 'nothing' : typeof value}`);
  return value;
}

function length(field: string, value: string, min: number, max: number): void {
  if (value.length < min) throw invalidInput(field, min === 1 ? 'must not be empty' : `must be at least ${min} characters`);
  if (value.length > max) throw invalidInput(field, `must be at most ${max} characters (got ${value.length})`);
}

/** Validates `client_notification_token` / `tenant_id`. */
export function checkSessionField(field: 'clientNotificationToken' | 'tenantId', value: unknown): string {
  const s = requireString(field, value);
  length(field, s, 1, 255);
  if (!NOTIFICATION_CHARSET.test(s)) throw invalidInput(field, 'may contain only letters, digits, "_", "-" and spaces');
  return s;
}

/**
 * Control characters and text-direction overrides (U+202E turns "Invoice\u202Efdp.exe" into "Invoiceexe.pdf" on
 * screen): text shown to the user in the app must read as it is.
 */
export const DECEPTIVE_CHARS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** Document name shown in the app: 1..255, no control or text-direction characters. */
export function checkDocumentName(value: unknown): string {
  const s = requireString('documentName', value);
  length('documentName', s, 1, 255);
  if (DECEPTIVE_CHARS.test(s)) throw invalidInput('documentName', 'must not contain control characters or text-direction marks (they can disguise the name shown in the app)');
  return s;
}

/** The document hash format (spec §2.2): SHA-256, hex, 64 characters — for the hash we send and the one echoed back. */
export function isSha256Hex(value: string): boolean {
  return /^[0-9a-fA-F]{64}$/.test(value);
}

/** SHA-256 as 64 hex characters; returned lower-case (the form the phone decodes). */
export function checkDocumentHash(value: unknown): string {
  const s = requireString('documentHash', value);
  if (!isSha256Hex(s)) throw invalidInput('documentHash', `must be a SHA-256 digest as exactly 64 hex characters (got ${s.length} characters)`);
  return s.toLowerCase();
}

/** Challenge code: exactly 4 characters (numerals recommended; see generateChallengeCode). */
export function checkChallengeCode(value: unknown): string {
  const s = requireString('challengeCode', value);
  if ([...s].length !== 4) throw invalidInput('challengeCode', 'must be exactly 4 characters (use generateChallengeCode())');
  if (/\s/.test(s) || DECEPTIVE_CHARS.test(s)) throw invalidInput('challengeCode', 'must not contain spaces or control characters');
  return s;
}

/** Nonce from the certificate notification: non-empty, echoed verbatim. */
export function checkNonce(value: unknown): string {
  const s = requireString('nonce', value);
  if (s.length === 0) throw invalidInput('nonce', 'is empty; pass the nonce from the certificate webhook event');
  if (s.length > 1024) throw invalidInput('nonce', 'is implausibly long; pass the nonce from the certificate webhook event');
  return s;
}

/** Host name of the page showing the QR code (displayed in the app): 1..255, a host name, not a URL. */
export function checkDomainName(value: unknown): string {
  const s = requireString('domainName', value);
  length('domainName', s, 1, 255);
  if (s.includes('://') || s.includes('/')) throw invalidInput('domainName', `must be a host name like "sign.example.com", not a URL`);
  const port = /:(\d{1,5})$/.exec(s);
  if (port && Number(port[1]) > 65535) throw invalidInput('domainName', `has port ${port[1]}; ports go up to 65535`);
  const host = port ? s.slice(0, port.index) : s;
  const label = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;
  if (!host.split('.').every((l) => label.test(l))) throw invalidInput('domainName', 'must be a host name made of letters, digits, "-" and dots');
  return s;
}

/** Optional app link: ≤ 255, an https URL (the app sends the user there). */
export function checkAppLink(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const s = requireString('appLink', value);
  length('appLink', s, 1, 255);
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    throw invalidInput('appLink', 'must be an absolute https:// URL');
  }
  if (url.protocol !== 'https:') throw invalidInput('appLink', 'must use https://');
  return s;
}

/** A sign_ref coming back from the caller (e.g. a workflow variable): non-empty, no path tricks. */
export function checkSignRef(value: unknown): string {
  const s = requireString('signRef', value);
  length('signRef', s, 1, 512);
  // Format is unspecified ("not a UUID, length varies"): only refuse what cannot be a path segment.
  if (!/^[\x21-\x7e]+$/.test(s) || s === '.' || s === '..') throw invalidInput('signRef', 'contains characters a sign_ref never has; pass the value from createSession');
  return s;
}
