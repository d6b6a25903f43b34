import { isSingpassFlowsError } from '../errors';
import { checkSignerLink, type SignerLinkOptions } from './signer-links';
import { renderNoticePage, renderSignerPage, signerAnswer, signerLinkRefusalStatus, SIGNER_PAGE_HEADERS, type SignerAnswer } from './signer-page';
import type { SessionRecord } from './types';

/**
 * One request to a signer's address, answered the same way by every engine: the link is checked first (nothing is
 * read for a caller without one), then the page, the status JSON it polls, or the signed PDF, all from the session
 * store. The engine only routes its request here and sends what comes back; status codes, refusal codes, words,
 * headers and the file name are decided here once.
 */

/** What the caller asks for: the page, the status JSON the page polls, or the signed PDF. */
export type SignerView = 'page' | 'status' | 'download';

export interface SignerRequest {
  signRef: string;
  /** The link's token (the page link, or the download link the status gives). */
  token: unknown;
  view: SignerView;
}

export interface SignerAnswerOptions extends SignerLinkOptions {
  store: { get(signRef: string): Promise<SessionRecord | undefined> | SessionRecord | undefined; getSignedDocument?(signRef: string): Promise<Buffer | undefined> | Buffer | undefined };
  /** The engine's address of the status JSON and of the download, for a link token (relative to the page is fine). */
  statusUrl: (token: string) => string;
  downloadUrl: (token: string) => string;
  /** The page's heading (default "Sign with Singpass"). */
  title?: string;
}

export interface SignerHttpAnswer {
  /** The page, its status JSON, the signed PDF, or a refusal (a notice page; JSON when the page polls). */
  kind: 'page' | 'status' | 'download' | 'refusal';
  statusCode: 200 | 403 | 404 | 410;
  /** The core's private headers, Content-Type, and Content-Disposition (inline; attachment for the download). */
  headers: Record<string, string>;
  /** Text for everything but the download. */
  body: string | Buffer;
  /** A file name for the body (the download's is the document's own name). */
  fileName: string;
  /** A refusal's stable code: LINK_INVALID, LINK_EXPIRED, SIGN_REF_NOT_FOUND or STATE_INVALID (nothing signed to give). */
  code?: 'LINK_INVALID' | 'LINK_EXPIRED' | 'SIGN_REF_NOT_FOUND' | 'STATE_INVALID';
  /** The session, when it was found and the link let it be read. */
  record?: SessionRecord;
  /** What the page shows (page and status). */
  status?: SignerAnswer;
}

const HTML = 'text/html; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';
const inPlace = (contentType: string): Record<string, string> => ({ ...SIGNER_PAGE_HEADERS, 'content-type': contentType, 'content-disposition': 'inline' });

/** Answers one signer request. Throws only what is the DSAP's own fault (e.g. a secret too short to be one). */
export async function answerSignerRequest(request: SignerRequest, options: SignerAnswerOptions): Promise<SignerHttpAnswer> {
  const { signRef, view } = request;
  const refuse = (statusCode: 403 | 404 | 410, code: NonNullable<SignerHttpAnswer['code']>, title: string, message: string, record?: SessionRecord): SignerHttpAnswer => (view === 'status'
    ? { kind: 'refusal', statusCode, code, headers: inPlace(JSON_TYPE), body: JSON.stringify({ error: { code, message } }), fileName: 'status.json', ...(record ? { record } : {}) }
    : { kind: 'refusal', statusCode, code, headers: inPlace(HTML), body: renderNoticePage(title, message), fileName: 'notice.html', ...(record ? { record } : {}) });
  try {
    checkSignerLink({ ...options, signRef, token: request.token, purpose: view === 'download' ? 'download' : 'page' });
  } catch (e) {
    if (isSingpassFlowsError(e, 'LINK_EXPIRED')) return refuse(signerLinkRefusalStatus('LINK_EXPIRED'), 'LINK_EXPIRED', 'Link expired', e.message);
    if (isSingpassFlowsError(e, 'LINK_INVALID')) return refuse(signerLinkRefusalStatus('LINK_INVALID'), 'LINK_INVALID', 'Link not valid', e.message);
    throw e;
  }
  const record = await options.store.get(signRef);
  if (!record) return refuse(404, 'SIGN_REF_NOT_FOUND', 'Session not found', 'This signing session is no longer kept here. Start again, or quote the reference on your link when asking for help.');
  if (view === 'download') {
    const pdf = record.state.status === 'completed' && options.store.getSignedDocument ? await options.store.getSignedDocument(signRef) : undefined;
    if (!pdf) {
      const message = record.state.status === 'completed'
        ? 'The signed document is no longer kept here.'
        : 'The signed document is not ready yet. Go back to the signing page; it shows the download once it is.';
      return refuse(404, 'STATE_INVALID', 'Not ready', message, record);
    }
    const fileName = signedFileName(record);
    return { kind: 'download', statusCode: 200, headers: { ...SIGNER_PAGE_HEADERS, 'content-type': 'application/pdf', 'content-disposition': `attachment; filename="${fileName}"` }, body: pdf, fileName, record };
  }
  const status = signerAnswer(record, options);
  if (view === 'status') return { kind: 'status', statusCode: 200, headers: inPlace(JSON_TYPE), body: JSON.stringify(status), fileName: 'status.json', record, status };
  const html = await renderSignerPage({ status, statusUrl: options.statusUrl(String(request.token)), ...(status.downloadUrl ? { downloadUrl: status.downloadUrl } : {}), ...(options.title ? { title: options.title } : {}) });
  return { kind: 'page', statusCode: 200, headers: inPlace(HTML), body: html, fileName: 'signer-page.html', record, status };
}

/**
 * `<document>-signed.pdf` from the document's own name — without the " — for <company> as <role>" the app was shown
 * (documentNameFor) — in characters safe in a Content-Disposition header, at most 100 of them.
 */
export function signedFileName(record: SessionRecord): string {
  const own = record.request.onBehalfOf ? record.request.documentName.split(' — for ')[0] : record.request.documentName;
  const base = own.replace(/\.pdf$/i, '').replace(/[^A-Za-z0-9 ._-]+/g, '_').slice(0, 100);
  return `${base || 'document'}-signed.pdf`;
}
