import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { isSingpassFlowsError } from '../../../../src/errors';
import type { PadesLevel } from '../../../../src/pades';
import { checkSignerLink, issueSignerLink, renderNoticePage, signerStatus, startNextSigner } from '../../../../src/session';
import { signingEngine } from '../../../shared/engine';
import { toNodeError } from '../../../shared/errors';
import { sessionRecordStore, storeInputs } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';
import { nextSignerLink, signerLinkKeys, signerQuery } from '../../../shared/signer-links';
import { LEVEL_OPTIONS } from '../session/create.operation';

export const description: INodeProperties[] = forOperation('sessionRecord', 'startNextSigner', [
  ...storeInputs,
  {
    displayName: 'Previous Sign Ref',
    name: 'previousSignRef',
    type: 'string',
    default: '={{ $json.query.ref }}',
    required: true,
    description: 'The previous signer\'s session, from the next-signer link\'s query ("ref")',
  },
  {
    displayName: 'Link Key',
    name: 'linkKey',
    type: 'string',
    default: '={{ $json.query.key }}',
    required: true,
    description: 'The next-signer link\'s key (Create Session\'s "nextSignerLink"), checked against the Singpass Notification Token Secret',
  },
  {
    displayName: 'Signer Label',
    name: 'label',
    type: 'string',
    default: 'Second signer',
    description: 'Who signs now, as the signer\'s page names them',
  },
  {
    displayName: 'Signature Level',
    name: 'level',
    type: 'options',
    options: [{ name: 'Last Signer B-LTA, Others B-T', value: 'auto' }, ...LEVEL_OPTIONS],
    default: 'auto',
    description: 'The level this signer\'s session reaches. The archive timestamp (B-LTA) belongs after the last signature.',
  },
]);

/** Headers of every answer: the key is in the address. */
const PRIVATE_HEADERS = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY' };
const notice = (statusCode: number, code: string, title: string, message: string, refreshSeconds?: number): IDataObject => ({
  answer: 'notice', statusCode, code, contentType: 'text/html; charset=utf-8', headers: PRIVATE_HEADERS,
  // waiting for the previous signer: the page asks again by itself
  body: refreshSeconds ? renderNoticePage(title, message).replace('<head>', `<head><meta http-equiv="refresh" content="${refreshSeconds}">`) : renderNoticePage(title, message),
});

/**
 * Several signers in order, behind a Webhook node (GET ?ref&key): the next signer opens the link they were sent; once
 * the previous signer's session completed, their own session starts on its signed PDF (the core's startNextSigner:
 * once, whoever asks first; a reload gets the same session) and the answer is `started` with this session's page link
 * (`signerLink`) to redirect to. Before that: a notice that reloads itself; after an unsigned end (declined, timed
 * out): a notice saying there is nothing to sign — the previous signer's signed PDF stays stored.
 */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const previousSignRef = String(this.getNodeParameter('previousSignRef', i, '') ?? '').trim();
  const key = String(this.getNodeParameter('linkKey', i, '') ?? '').trim();
  const keys = await signerLinkKeys(this, i);
  try {
    // the next signer is entitled to the previous signer's signed PDF: the link is that session's download key
    checkSignerLink({ ...keys, signRef: previousSignRef, token: key, purpose: 'download' });
  } catch (e) {
    if (isSingpassFlowsError(e, 'LINK_EXPIRED')) return { json: notice(410, e.code, 'Link expired', 'This signing link has expired. Ask the sender for a new one.') };
    if (isSingpassFlowsError(e, 'LINK_INVALID')) return { json: notice(403, 'LINK_INVALID', 'Link not valid', 'This link is not valid for a signing session. Use the link you were sent.') };
    throw toNodeError(this.getNode(), e, i);
  }
  const store = await sessionRecordStore(this, i);
  if (!(await store.get(previousSignRef))) return { json: notice(404, 'SIGN_REF_NOT_FOUND', 'Session not found', 'This signing is no longer kept here. Ask the sender to start again.') };
  const { engine } = await signingEngine(this);
  const level = String(this.getNodeParameter('level', i, 'auto'));
  const label = String(this.getNodeParameter('label', i, '') ?? '').trim();
  const r = await startNextSigner(engine, store, { previousSignRef, ...(label ? { label } : {}), ...(level !== 'auto' ? { level: level as PadesLevel } : {}) });
  const who = (p: { request: { signer?: { label?: string } } }) => p.request.signer?.label ?? 'The previous signer';
  switch (r.outcome) {
    case 'waiting':
      return { json: { previousSignRef, ...notice(200, 'WAITING_FOR_PREVIOUS_SIGNER', 'Not your turn yet', `${who(r.previous)} has not signed yet. This page checks again every 10 seconds.`, 10) } };
    case 'previousNotSigned':
      return { json: { previousSignRef, ...notice(410, 'PREVIOUS_NOT_SIGNED', 'Nothing to sign', `${who(r.previous)} did not sign: ${signerStatus(r.previous).detail ?? ''} There is nothing for you to sign.`) } };
    case 'noNextSigner':
      return { json: { previousSignRef, ...notice(404, 'NO_NEXT_SIGNER', 'No one signs next', 'Everyone has signed this document.') } };
    case 'started': {
      const signRef = r.record.state.signRef;
      const link = issueSignerLink({ ...keys, signRef, purpose: 'page' });
      const place = r.record.request.signer!;
      const json: IDataObject = {
        answer: 'started', statusCode: 303, headers: PRIVATE_HEADERS, previousSignRef, signRef, startedNow: r.started !== undefined, status: r.record.state.status,
        signer: { ...place }, signerLink: { key: link.token, expiresAt: link.expiresAt, query: signerQuery(signRef, link.token) },
      };
      // a chain of more than two: the link for the one after
      if (place.position < place.of) json.nextSignerLink = nextSignerLink(keys, signRef);
      return { json };
    }
  }
}

