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
  { ...pdfOutput, description: 'Binary property to put the signed PDF in, for a download' },
]);

const PRIVATE_HEADERS = { ...SIGNER_PAGE_HEADERS };

type View = 'page' | 'status' | 'download';

/** An answer that is not the page: a notice page (or, for the page's poll, JSON) with the HTTP status. */
function refusal(view: View, statusCode: number, code: string, title: string, message: string): IDataObject {
  if (view === 'status') {
    return { answer: 'status', statusCode, contentType: 'application/json; charset=utf-8', body: JSON.stringify({ error: { code, message } }), code, headers: PRIVATE_HEADERS };
  }
  return { answer: 'notice', statusCode, contentType: 'text/html; charset=utf-8', body: renderNoticePage(title, message), code, headers: PRIVATE_HEADERS };
}

/**
 * The signer's page behind a Webhook node (GET, query `ref`, `key`, `view`) and Respond to Webhook: the link is
 * checked first (nothing is read for a caller without one), then the page (QR code and challenge code, progress),
 * the status JSON it polls every 2 s, or the signed PDF — all read from the session store, so any n8n process
 * (queue mode: any worker) answers. Outputs `answer` (page / status / notice / download), `statusCode`,
 * `contentType`, `headers` and `body`, or the signed PDF as binary: one Respond to Webhook node for text, one for
 * binary.
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
    if (isSingpassFlowsError(e, 'LINK_EXPIRED')) return { json: { signRef, ...refusal(view, signerLinkRefusalStatus('LINK_EXPIRED'), e.code, 'Link expired', e.message) } };
    if (isSingpassFlowsError(e, 'LINK_INVALID')) return { json: refusal(view, signerLinkRefusalStatus('LINK_INVALID'), 'LINK_INVALID', 'Link not valid', 'This link is not valid for a signing session. Use the link you were given when the session started.') };
    // anything else (a secret too short to be one): the credential's fault, shown as the node's error
    throw toNodeError(this.getNode(), e, i);
  }
  const store = await sessionRecordStore(this, i);
  const record = await store.get(signRef);
  if (!record) return { json: { signRef, ...refusal(view, 404, 'SESSION_NOT_FOUND', 'Session not found', 'This signing session is no longer kept here. Start again, or quote the reference on your link when asking for help.') } };
  if (view === 'download') {
    const pdf = record.state.status === 'completed' && store.getSignedDocument ? await store.getSignedDocument(signRef) : undefined;
    if (!pdf) return { json: { signRef, ...refusal(view, 404, 'NOT_SIGNED_YET', 'Not ready', 'The signed document is not ready yet. Go back to the signing page; it shows the download once it is.') } };
    // the document's own name: without the " — for <company> as <role>" the app was shown (documentNameFor)
    const own = record.request.onBehalfOf ? record.request.documentName.split(' — for ')[0] : record.request.documentName;
    const fileName = `${own.replace(/\.pdf$/i, '').replace(/[^\w.\- ]+/g, '_') || 'document'}-signed.pdf`;
    const output = String(this.getNodeParameter('outputBinaryPropertyName', i, 'data'));
    return {
      json: { signRef, answer: 'download', statusCode: 200, contentType: 'application/pdf', fileName, headers: { ...PRIVATE_HEADERS, 'content-disposition': `attachment; filename="${fileName}"` } },
      binary: { [output]: await pdfBinary(this, pdf, fileName) },
    };
  }
  const downloadUrl = (token: string) => `?${signerQuery(signRef, token, 'download')}`;
  const answer = signerAnswer(record, { ...keys, downloadUrl });
  const common = { signRef, stage: answer.stage, done: answer.done, statusCode: 200, headers: PRIVATE_HEADERS };
  if (view === 'status') return { json: { ...common, answer: 'status', contentType: 'application/json; charset=utf-8', body: JSON.stringify(answer) } };
  const html = await renderSignerPage({
    status: signerStatus(record), statusUrl: `?${signerQuery(signRef, key, 'status')}`, downloadUrl: answer.downloadUrl,
    title: String(this.getNodeParameter('title', i, 'Sign with Singpass') || 'Sign with Singpass'),
  });
  return { json: { ...common, answer: 'page', contentType: 'text/html; charset=utf-8', body: html } };
}
