import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError, invalidInput } from '../../../../src/errors';
import { step } from '../../../../src/session';
import { signingEngine } from '../../../shared/engine';
import { sessionRecordStore, storeInputs } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';
import { deliveryWithCertificate, readDelivery, storedRecordSummary } from '../../../shared/session-data';

export const description: INodeProperties[] = forOperation('sessionRecord', 'prepareStoredSignature', [
  ...storeInputs,
  {
    displayName: 'Takes the Singpass Sign Trigger\'s certificate item (its "delivery"), directly or passed on by Check Certificate Status, and the session\'s record and PDF from the session store: no field to fill in.',
    name: 'prepareStoredNotice',
    type: 'notice',
    default: '',
  },
]);

/**
 * The certificate event's first half on the stored session (the core's entry point, `prepare`): load the record and PDF,
 * check the user's certificate (chain to your trusted roots, OCSP "good", valid today) BEFORE anything is signed,
 * prepare the PDF and save the save point with compare-and-set. Nothing is sent to the service: Submit Document Hash
 * (Session Record) sends the saved hash next. `prepared`: this run saved the save point; a redelivered event, or one
 * another run took first, changes nothing (`prepared: false`, the record as stored). A revoked or untrusted
 * certificate ends the session here (status "failed", saved, no hash).
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  if (item.json.delivery === undefined) {
    throw invalidInput('Input', 'the item has no "delivery": connect this node after the Singpass Sign Trigger\'s Certificate output (Check Certificate Status in between passes it on)');
  }
  const given = readDelivery(item.json.delivery);
  if (given.event.type !== 'certificate') {
    throw new SingpassFlowsError('STATE_INVALID', `Prepare PDF Signature takes the trigger's certificate event, got the "${given.event.type}" event (use Run Due Step for it)`, { retryable: false, field: 'Input' });
  }
  const store = await sessionRecordStore(this, i);
  const delivery = await deliveryWithCertificate(store, given);
  const { engine } = await signingEngine(this);
  const signRef = delivery.event.signRef;
  const r = await step(store, signRef, { on: 'prepare', delivery }, { engine });
  if (!r.record) return { json: { signRef, found: false, prepared: false, action: r.action } };
  if (r.documentMissing) {
    throw new SingpassFlowsError('STATE_INVALID', `The session record ${signRef} is in ${store.where} but its PDF is not: save it with the record after Create Session`, { retryable: false });
  }
  const json: IDataObject = { found: true, prepared: r.prepared === true, lost: r.lost === true, revision: r.record.revision, ...storedRecordSummary(r.record) };
  return { json };
}
