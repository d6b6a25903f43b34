import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError } from '../../../../src/errors';
import { sessionRecordStore, storeInputs } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';
import { createSessionFields, createSessionItem } from '../session/create.operation';

export const description: INodeProperties[] = forOperation('sessionRecord', 'createStoredSession', [...storeInputs, ...createSessionFields]);

/**
 * Create Session, then its record and PDF saved in the session store as a new record, before the node hands on: the
 * output is Create Session's (QR payload, challenge code, the signer's page link…) with `saved` and `revision`. The
 * steps after it (Prepare PDF Signature, Run Due Step, Signer Page) find the session there, so no node in between
 * carries the record.
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const store = await sessionRecordStore(this, i);
  const created = await createSessionItem(this, i, item);
  const r = await store.save(created.record, undefined, { document: created.pdf });
  if (!r.saved) {
    // a sign_ref the service gave twice, or a store a second writer shares by mistake: never over another session
    throw new SingpassFlowsError('STATE_INVALID', `The new session ${r.signRef} could not be saved in ${store.where}: ${r.reason === 'exists' ? 'a record with this signRef exists already' : r.reason}`, { retryable: false });
  }
  return { ...created.output, json: { ...created.output.json, saved: true, revision: r.revision } };
}
