import { createHmac } from 'node:crypto';
import { SingpassFlowsError, invalidInput } from '../errors';
import { constantTimeEqual } from '../secrets';
import { checkSecret } from '../sign/notification-token';
import { checkSignRef } from '../sign/validate';

/**
 * Links that let the person who started a session follow it and fetch its signed PDF without an account: each link
 * is `<expiry>.<mac>`, the mac an HMAC over (purpose, sign_ref, expiry) with the DSAP's secret, so any process holding
 * the secret checks it statelessly and a link for one session or one purpose opens nothing else. A sign_ref alone
 * (shown in the QR code) opens nothing.
 */
export type SignerLinkPurpose = 'page' | 'download';

/** How long a link lives unless told: the page for the session's life and its finishing; a download a few minutes. */
export const SIGNER_LINK_TTL_SECONDS: Record<SignerLinkPurpose, number> = { page: 24 * 3600, download: 300 };

export interface SignerLinkOptions {
  /** The DSAP's secret (≥ 32 characters), e.g. the notification token secret; never logged. */
  secret: string | Buffer;
  /** Secrets rotated out whose links still open (checking only). */
  previousSecrets?: (string | Buffer)[];
  /** UNIX ms; default now. */
  now?: number;
}

const FORMAT = /^(\d{10})\.([A-Za-z0-9_-]{43})$/;
const LABEL = 'singpass-flows signer link v1\n';

function mac(secret: Buffer, purpose: SignerLinkPurpose, signRef: string, expiry: string): string {
  return createHmac('sha256', secret).update(`${LABEL}${purpose}\n${signRef}\n${expiry}`).digest('base64url');
}

function checkPurpose(purpose: unknown): SignerLinkPurpose {
  if (purpose !== 'page' && purpose !== 'download') throw invalidInput('purpose', 'must be "page" or "download"');
  return purpose;
}

/** A link token for one session and one purpose, valid `ttlSeconds` (default {@link SIGNER_LINK_TTL_SECONDS}). */
export function issueSignerLink(options: SignerLinkOptions & { signRef: string; purpose: SignerLinkPurpose; ttlSeconds?: number }): { token: string; expiresAt: string } {
  const secret = checkSecret(options?.secret, 'secret');
  const signRef = checkSignRef(options.signRef);
  const purpose = checkPurpose(options.purpose);
  const ttl = options.ttlSeconds ?? SIGNER_LINK_TTL_SECONDS[purpose];
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > 30 * 24 * 3600) throw invalidInput('ttlSeconds', 'must be a whole number of seconds from 1 to 30 days');
  const expiry = String(Math.floor((options.now ?? Date.now()) / 1000) + ttl);
  return { token: `${expiry}.${mac(secret, purpose, signRef, expiry)}`, expiresAt: new Date(Number(expiry) * 1000).toISOString() };
}

/**
 * Throws `LINK_INVALID` (not issued for this session and purpose, altered, garbage) or `LINK_EXPIRED`; the mac is
 * checked first, so an expiry is only reported for a link that was genuinely issued.
 */
export function checkSignerLink(options: SignerLinkOptions & { signRef: string; purpose: SignerLinkPurpose; token: unknown }): void {
  const secrets = [options?.secret, ...(options.previousSecrets ?? [])].map((s, i) => checkSecret(s, i === 0 ? 'secret' : `previousSecrets[${i - 1}]`));
  const purpose = checkPurpose(options.purpose);
  const m = typeof options.token === 'string' ? FORMAT.exec(options.token) : null;
  let ok = false;
  if (m && typeof options.signRef === 'string') {
    for (const s of secrets) ok = constantTimeEqual(m[2], mac(s, purpose, options.signRef, m[1])) || ok;
  }
  if (!ok) throw new SingpassFlowsError('LINK_INVALID', 'This link is not valid for this signing session. Use the link you were given when the session started.', { retryable: false });
  if (Number(m![1]) * 1000 <= (options.now ?? Date.now())) {
    throw new SingpassFlowsError('LINK_EXPIRED', purpose === 'download' ? 'This download link has expired. Reload the signing page for a new one.' : 'This signing page link has expired.', { retryable: false });
  }
}
