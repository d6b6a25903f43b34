import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { isSingpassFlowsError } from '../../../../src/errors';
import { checkSignerLink, renderNoticePage, renderSignerPage, signerAnswer, signerLinkRefusalStatus, signerStatus, SIGNER_PAGE_HEADERS } from '../../../../src/session';
import { pdfBinary } from '../../../shared/binary';
import { toNodeError } from '../../../shared/errors';
import { sessionRecordStore, storeInputs } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';
import { signerLinkKeys, signerQuery } from '../../../shared/signer-links';
import { pdfOutput } from '../fields';

export const description: INodeProperties[] = forOperation('sessionRecord', 'signerPage', [
  ...storeInputs,
  {
    displayName: 'Sign Ref',
    name: 'signRef',
    type: 'string',
    default: '={{ $json.query.ref }}',
    required: true,
    description: 'The session, from the page link\'s query ("ref") as the Webhook node outputs it',
  },
  {
    displayName: 'Link Key',
    name: 'linkKey',
    type: 'string',
    default: '={{ $json.query.key }}',
    required: true,
    description: 'The link\'s key, from its query ("key"): Create Session\'s "signerLink", or the page\'s own download link. Checked against the Singpass Notification Token Secret; a sign_ref alone opens nothing.',
  },
  {
    displayName: 'View',
    name: 'view',
    type: 'string',
    default: '={{ $json.query.view }}',
    description: 'What the caller asks for, from the query ("view"): empty for the page, "status" for the JSON the page polls, "download" for the signed PDF',
  },
  {
    displayName: 'Page Title',
    name: 'title',
    type: 'string',
    default: 'Sign with Singpass',
    description: 'The heading of the page',
  },
  {
    ...pdfOutput,
    description: 'Binary property to put every answer in — the page, the status JSON, a refusal page or the signed PDF — with its content type, for one Respond to Webhook node (Respond With: Binary File)',
  },
]);

/** Headers of an answer shown in place (page, status, notice): the core's, and never a download. */
const IN_PLACE_HEADERS: Readonly<Record<string, string>> = Object.freeze({ ...SIGNER_PAGE_HEADERS, 'content-disposition': 'inline' });

const HTML = 'text/html; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

type View = 'page' | 'status' | 'download';

/** A text answer (page, status JSON or notice) as the item one Respond to Webhook node sends: the same as a download. */
async function textAnswer(ctx: IExecuteFunctions, i: number, json: IDataObject & { contentType: string; body: string }, fileName: string): Promise<INodeExecutionData> {
  const output = String(ctx.getNodeParameter('outputBinaryPropertyName', i, 'data'));
  return {
    // `body` too: a workflow built before answers with it in a text Respond to Webhook node
    json: { ...json, headers: IN_PLACE_HEADERS },
    binary: { [output]: await ctx.helpers.prepareBinaryData(Buffer.from(json.body, 'utf8'), fileName, json.contentType) },
  };
}

/** An answer that is not the page: a notice page (or, for the page's poll, JSON) with the HTTP status. */
function refusal(ctx: IExecuteFunctions, i: number, view: View, statusCode: number, code: string, title: string, message: string, extra: IDataObject = {}): Promise<INodeExecutionData> {
  if (view === 'status') {
    return textAnswer(ctx, i, { ...extra, answer: 'status', statusCode, contentType: JSON_TYPE, body: JSON.stringify({ error: { code, message } }), code }, 'status.json');
  }
  return textAnswer(ctx, i, { ...extra, answer: 'notice', statusCode, contentType: HTML, body: renderNoticePage(title, message), code }, 'notice.html');
}

/**
 * The signer's page behind a Webhook node (GET, query `ref`, `key`, `view`) and ONE Respond to Webhook node: the
 * link is checked first (nothing is read for a caller without one), then the page (QR code and challenge code,
 * progress), the status JSON it polls every 2 s, or the signed PDF — all read from the session store, so any n8n
 * process (queue mode: any worker) answers. Every answer is the same shape: the binary (with its content type) and
 * `statusCode` and `headers` (the core's private headers, and Content-Disposition: inline, or attachment for the
 * download), plus `answer` (page / status / notice / download) to route on and, for text, `contentType` and `body`.
 */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const signRef = String(this.getNodeParameter('signRef', i, '') ?? '').trim();
  const key = String(this.getNodeParameter('linkKey', i, '') ?? '').trim();
  const asked = String(this.getNodeParameter('view', i, '') ?? '').trim();
  const view: View = asked === 'status' || asked === 'download' ? asked : 'page';
  const keys = await signerLinkKeys(this, i);
  try {
    checkSignerLink({ ...keys, signRef, token: key, purpose: view === 'download' ? 'download' : 'page' });
  } catch (e) {
    if (isSingpassFlowsError(e, 'LINK_EXPIRED')) return refusal(this, i, view, signerLinkRefusalStatus('LINK_EXPIRED'), e.code, 'Link expired', e.message, { signRef });
    if (isSingpassFlowsError(e, 'LINK_INVALID')) return refusal(this, i, view, signerLinkRefusalStatus('LINK_INVALID'), 'LINK_INVALID', 'Link not valid', 'This link is not valid for a signing session. Use the link you were given when the session started.');
    // anything else (a secret too short to be one): the credential's fault, shown as the node's error
    throw toNodeError(this.getNode(), e, i);
  }
  const store = await sessionRecordStore(this, i);
  const record = await store.get(signRef);
  if (!record) return refusal(this, i, view, 404, 'SESSION_NOT_FOUND', 'Session not found', 'This signing session is no longer kept here. Start again, or quote the reference on your link when asking for help.', { signRef });
  if (view === 'download') {
    const pdf = record.state.status === 'completed' && store.getSignedDocument ? await store.getSignedDocument(signRef) : undefined;
    if (!pdf) return refusal(this, i, view, 404, 'NOT_SIGNED_YET', 'Not ready', 'The signed document is not ready yet. Go back to the signing page; it shows the download once it is.', { signRef });
    // the document's own name: without the " — for <company> as <role>" the app was shown (documentNameFor)
    const own = record.request.onBehalfOf ? record.request.documentName.split(' — for ')[0] : record.request.documentName;
    const fileName = `${own.replace(/\.pdf$/i, '').replace(/[^\w.\- ]+/g, '_') || 'document'}-signed.pdf`;
    const output = String(this.getNodeParameter('outputBinaryPropertyName', i, 'data'));
    return {
      json: { signRef, answer: 'download', statusCode: 200, contentType: 'application/pdf', fileName, headers: { ...SIGNER_PAGE_HEADERS, 'content-disposition': `attachment; filename="${fileName}"` } },
      binary: { [output]: await pdfBinary(this, pdf, fileName) },
    };
  }
  const downloadUrl = (token: string) => `?${signerQuery(signRef, token, 'download')}`;
  const answer = signerAnswer(record, { ...keys, downloadUrl });
  const common = { signRef, stage: answer.stage, done: answer.done, statusCode: 200 };
  if (view === 'status') return textAnswer(this, i, { ...common, answer: 'status', contentType: JSON_TYPE, body: JSON.stringify(answer) }, 'status.json');
  const html = await renderSignerPage({
    status: signerStatus(record), statusUrl: `?${signerQuery(signRef, key, 'status')}`, downloadUrl: answer.downloadUrl,
    title: String(this.getNodeParameter('title', i, 'Sign with Singpass') || 'Sign with Singpass'),
  });
  return textAnswer(this, i, { ...common, answer: 'page', contentType: HTML, body: html }, 'signer-page.html');
}
