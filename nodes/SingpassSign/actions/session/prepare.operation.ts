import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError } from '../../../../src/errors';
import { isAtSavePoint } from '../../../../src/session';
import { readPdf } from '../../../shared/binary';
import { signingEngine } from '../../../shared/engine';
import { forOperation } from '../../../shared/router';
import { readFullDelivery, readRecord, recordSummary } from '../../../shared/session-data';
import { deliveryInput, pdfInput, recordInput } from '../fields';

export const description: INodeProperties[] = forOperation('session', 'preparePdfSignature', [
  recordInput,
  { ...deliveryInput, hint: 'The certificate event of the Singpass Sign Trigger' },
  { ...pdfInput, hint: 'The PDF being signed' },
]);

/**
 * The certificate event's first half: check the user's certificate (chain to your trusted roots, OCSP "good", valid
 * today) BEFORE anything is signed, and prepare the PDF signature. Nothing is sent to the service: the output record
 * holds the prepared state and the exact hash (the save point). Store it, then run Submit Document Hash on it, so an
 * n8n that dies in between resubmits the same hash instead of losing the session. A revoked or untrusted certificate
 * ends the session here (status "failed", no hash). A certificate event already applied changes nothing
 * (`duplicate: true`, `readyToSubmit: false`): store nothing and submit nothing for it.
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const record = readRecord(this.getNodeParameter('record', i));
  const delivery = readFullDelivery(this.getNodeParameter('delivery', i));
  if (delivery.event.type !== 'certificate') {
    throw new SingpassFlowsError('STATE_INVALID', `Prepare PDF Signature takes the trigger's certificate event, got the "${delivery.event.type}" event (use Apply Webhook Event for it)`, { retryable: false, field: 'Webhook Delivery' });
  }
  const { pdf } = await readPdf(this, i, this.getNodeParameter('binaryPropertyName', i));
  const { engine } = await signingEngine(this);
  const r = await engine.prepareCertificate(record, delivery, pdf);
  // A certificate another execution applied first (the service redelivered it, e.g. after a slow answer): the loaded
  // record already holds its outcome, at the save point or past it. Not ready to submit: that execution submits, or
  // the resume schedule does (After an Interruption) if it died. Submitting here would be a second "first call",
  // whose "already submitted" would fail the session.
  const duplicate = r.duplicate === true || isAtSavePoint(record);
  return { json: { ...recordSummary(r.record), readyToSubmit: isAtSavePoint(r.record) && !duplicate, duplicate }, binary: item.binary };
}
