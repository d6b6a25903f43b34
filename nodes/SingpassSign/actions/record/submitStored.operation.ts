import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { invalidInput } from '../../../../src/errors';
import { step } from '../../../../src/session';
import { signingEngine } from '../../../shared/engine';
import { sessionRecordStore, storeInputs } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';
import { storedRecordSummary, submissionSummary } from '../../../shared/session-data';

export const description: INodeProperties[] = forOperation('sessionRecord', 'submitStoredHash', [
  ...storeInputs,
  {
    displayName: 'Takes the item Prepare PDF Signature (Session Record) output (its "signRef") and sends the hash saved in the session store: no field to fill in.',
    name: 'submitStoredNotice',
    type: 'notice',
    default: '',
  },
]);

/**
 * The certificate event's second half on the stored session (the core's entry point, `sendHash`): send the hash saved at
 * the save point — never a new one — counting the call in the store with compare-and-set before it leaves, so of two
 * runs only one sends. A refused first call ends the session with the service's reason; when the service cannot take
 * the hash just now the save point stays (`retryLater`) and the resume schedule (List Due Sessions → Run Due Step)
 * sends it again. An item whose run did not prepare (`prepared: false`) sends nothing (`submitted: false`).
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const signRef = typeof item.json.signRef === 'string' ? item.json.signRef.trim() : '';
  if (!signRef) throw invalidInput('Input', 'the item has no "signRef": connect this node after Prepare PDF Signature (Session Record)');
  // another run prepared it (a redelivery): that run sends the hash, or the resume schedule does if it died
  if (item.json.prepared === false) return { json: { ...item.json, submitted: false } };
  const store = await sessionRecordStore(this, i);
  const { engine } = await signingEngine(this);
  const r = await step(store, signRef, { on: 'sendHash' }, { engine });
  if (!r.record) return { json: { signRef, found: false, submitted: false } };
  const json: IDataObject = {
    found: true, submitted: r.action === 'submitHash' && !r.lost, lost: r.lost === true, revision: r.record.revision,
    ...storedRecordSummary(r.record), ...submissionSummary(r.record),
  };
  return { json };
}
