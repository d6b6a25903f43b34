import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { invalidInput, isSingpassFlowsError } from '../../../../src/errors';
import { signingEngine } from '../../../shared/engine';
import { errorItem, toNodeError } from '../../../shared/errors';
import { forOperation } from '../../../shared/router';
import { deliveryWithCertificate, isCertificateWithheld, readDelivery } from '../../../shared/session-data';
import { sessionRecordStore, usesStoreCredential } from '../../../shared/record-store';

export const description: INodeProperties[] = forOperation('certificate', 'checkCertificateStatus', [
  {
    displayName: 'Certificate From',
    name: 'certificateFrom',
    type: 'options',
    options: [
      { name: 'A Field', value: 'field', description: 'The certificate given below (base64 DER or PEM)' },
      { name: 'The Trigger\'s Certificate Event', value: 'delivery', description: 'The incoming item is the Singpass Sign Trigger\'s certificate event: its certificate, no expression to write' },
    ],
    default: 'field',
  },
  {
    displayName: 'Certificate',
    name: 'certificate',
    type: 'string',
    default: '={{ $json.delivery.event.certificate.base64 }}',
    required: true,
    displayOptions: { show: { certificateFrom: ['field'] } },
    description: 'The user\'s certificate (base64 DER or PEM), e.g. from the trigger\'s certificate event',
  },
]);

/**
 * The certificate's status now, by the same checks (and codes) the certificate step makes before any hash: valid
 * today, chained to your trusted roots, OCSP good (`status` good / revoked / unknown / expired / notYetValid /
 * untrusted / chainIncomplete, `good`, `code`). Informational: the certificate step runs these checks itself. The
 * incoming item's `signRef` and `delivery` (the trigger's) are passed on, so the next step reads them as it would
 * from the trigger.
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const passed: IDataObject = {};
  if (typeof item.json.signRef === 'string') passed.signRef = item.json.signRef;
  if (item.json.delivery !== undefined) passed.delivery = item.json.delivery;
  try {
    return { json: { ...(await checkStatus(this, i, item)), ...passed } };
  } catch (e) {
    // On Error: continue: the error item carries the trigger's event on too, for the steps after it
    if (!this.continueOnFail()) throw toNodeError(this.getNode(), e, i);
    const failed = errorItem(this.getNode(), e, i);
    return { ...failed, json: { ...failed.json, ...passed } };
  }
}

async function checkStatus(ctx: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<IDataObject> {
  let value: string | undefined;
  if (ctx.getNodeParameter('certificateFrom', i, 'field') === 'delivery') {
    if (item.json.delivery === undefined) throw invalidInput('Certificate From', 'the item has no "delivery": connect this node to the Singpass Sign Trigger\'s Certificate output, or choose A Field');
    let delivery = readDelivery(item.json.delivery);
    if (delivery.event.type !== 'certificate') throw invalidInput('Certificate From', `the item is the trigger's "${delivery.event.type}" event, not its certificate event`);
    if (isCertificateWithheld(delivery)) {
      // the trigger kept it in the session store and passed no certificate on: loaded from there by sign_ref
      if (!usesStoreCredential(ctx)) throw invalidInput('Certificate From', 'the trigger passes no certificate on (it is kept in the session store): use this node at version 2 with the Singpass Session Store credential');
      delivery = await deliveryWithCertificate(await sessionRecordStore(ctx, i), delivery);
    }
    value = delivery.event.type === 'certificate' ? delivery.event.certificate.der.toString('base64') : '';
  } else {
    value = (ctx.getNodeParameter('certificate', i) as string)?.trim();
  }
  if (!value) throw invalidInput('Certificate', 'is empty; pass the certificate event\'s certificate.base64');
  const { engine } = await signingEngine(ctx);
  const report = await engine.certificateStatus(value).catch((e: unknown) => {
    // named as this node's field
    throw isSingpassFlowsError(e, 'INVALID_INPUT') && e.details.field === 'certificate' ? invalidInput('Certificate', e.message.replace(/^certificate: /, '')) : e;
  });
  return { ...report };
}
