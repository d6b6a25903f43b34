import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { answerSignerRequest, type SignerView } from '../../../../src/session';
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

/**
 * The signer's page behind a Webhook node (GET, query `ref`, `key`, `view`) and ONE Respond to Webhook node: the
 * core's answer (`answerSignerRequest`, the same in Node-RED) — the link checked first, then the page (QR code and
 * challenge code, progress), the status JSON it polls every 2 s, or the signed PDF, all read from the session store,
 * so any n8n process (queue mode: any worker) answers. Every answer is the same shape: the binary (with its content
 * type) and `statusCode` and `headers`, plus `answer` (page / status / notice / download) to route on and, for text,
 * `contentType` and `body`.
 */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const signRef = String(this.getNodeParameter('signRef', i, '') ?? '').trim();
  const key = String(this.getNodeParameter('linkKey', i, '') ?? '').trim();
  const asked = String(this.getNodeParameter('view', i, '') ?? '').trim();
  const view: SignerView = asked === 'status' || asked === 'download' ? asked : 'page';
  const keys = await signerLinkKeys(this, i);
  let a;
  try {
    a = await answerSignerRequest({ signRef, token: key, view }, {
      ...keys,
      store: await sessionRecordStore(this, i),
      statusUrl: (token) => `?${signerQuery(signRef, token, 'status')}`,
      downloadUrl: (token) => `?${signerQuery(signRef, token, 'download')}`,
      title: String(this.getNodeParameter('title', i, 'Sign with Singpass') || 'Sign with Singpass'),
    });
  } catch (e) {
    // not the caller's: the credential's secret, or the store
    throw toNodeError(this.getNode(), e, i);
  }
  const output = String(this.getNodeParameter('outputBinaryPropertyName', i, 'data'));
  const contentType = a.headers['content-type'];
  const headers = Object.fromEntries(Object.entries(a.headers).filter(([name]) => name !== 'content-type'));
  const json: IDataObject = {
    // a link that is not ours vouches for no sign_ref: none is echoed
    ...(a.code === 'LINK_INVALID' ? {} : { signRef }),
    answer: a.kind === 'refusal' ? (view === 'status' ? 'status' : 'notice') : a.kind,
    statusCode: a.statusCode, contentType, headers,
    ...(a.code ? { code: a.code } : {}),
    ...(a.status ? { stage: a.status.stage, done: a.status.done } : {}),
    // `body` too: a workflow built before answers with it in a text Respond to Webhook node
    ...(Buffer.isBuffer(a.body) ? { fileName: a.fileName } : { body: a.body }),
  };
  const bytes = Buffer.isBuffer(a.body) ? a.body : Buffer.from(a.body, 'utf8');
  const binary = a.kind === 'download' ? await pdfBinary(this, bytes, a.fileName) : await this.helpers.prepareBinaryData(bytes, a.fileName, contentType);
  return { json, binary: { [output]: binary } };
}
