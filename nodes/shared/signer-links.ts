import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { issueSignerLink, type SignerLinkOptions } from '../../src/session';
import { CREDENTIAL, nodeCredential } from './credentials';

/**
 * The key of the signer's links: the Singpass Notification Token Secret credential (the core's links are an HMAC
 * with their own label, so one DSAP secret serves both without one opening the other). Its Previous Secret keeps the
 * links issued before a rotation working, like the notification tokens.
 */
export async function signerLinkKeys(ctx: IExecuteFunctions, i: number): Promise<Pick<SignerLinkOptions, 'secret' | 'previousSecrets'>> {
  const c = await nodeCredential(ctx, CREDENTIAL.notificationToken, i);
  const previous = typeof c.previousSecret === 'string' && c.previousSecret ? [c.previousSecret] : [];
  return { secret: String(c.secret ?? ''), previousSecrets: previous };
}

/**
 * The query of a signer's page link: `ref=<signRef>&key=<link token>` (`&view=status|download` added by the page).
 * Query only, so the page builds its status and download addresses relative to wherever n8n serves it.
 */
export function signerQuery(signRef: string, key: string, view?: 'status' | 'download'): string {
  return `ref=${encodeURIComponent(signRef)}&key=${encodeURIComponent(key)}${view ? `&view=${view}` : ''}`;
}

/**
 * The link for the signer after `signRef` (Start Next Signer checks it): that session's download key — the next signer
 * signs its signed PDF —, valid 7 days, since the next signer may take days.
 */
export function nextSignerLink(keys: Pick<SignerLinkOptions, 'secret' | 'previousSecrets'>, signRef: string): IDataObject {
  const link = issueSignerLink({ ...keys, signRef, purpose: 'download', ttlSeconds: 7 * 24 * 3600 });
  return { key: link.token, expiresAt: link.expiresAt, query: signerQuery(signRef, link.token) };
}
