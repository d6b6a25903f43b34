import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { readPdf } from '../../../shared/binary';
import { signingEngine } from '../../../shared/engine';
import { forOperation } from '../../../shared/router';
import { readFullDelivery, readRecord, recordSummary, submissionSummary } from '../../../shared/session-data';
import { isSubmitDeferred } from '../../../../src/session';
import { deliveryInput, pdfInput, recordInput } from '../fields';

export const description: INodeProperties[] = forOperation('session', 'applyEvent', [
  recordInput,
  deliveryInput,
  { ...pdfInput, hint: 'The PDF being signed (read for certificate events only)' },
]);

/**
 * Apply a trigger delivery to its session. For a certificate event this is the one-step variant of Prepare PDF
 * Signature + Submit Document Hash (kept for existing workflows): if n8n dies between the hash call and the workflow
 * storing the record, the session is lost; the two-step pair survives that. A certificate event checks the user's certificate (chain to your trusted
 * roots, OCSP "good", valid today) BEFORE anything is signed, prepares the PDF signature and submits the document
 * hash; a revoked or untrusted certificate ends the session with no hash sent. A signature event records the
 * signature (checked against the submitted hash). An event already applied changes nothing (duplicate: true): a
 * retried webhook can never submit a second hash. A hash call the service cannot take just now (unreachable, timeout,
 * 5xx, 429) leaves the record at the save point (`retryLater: true`): store it and run Submit Document Hash on it later.
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const record = readRecord(this.getNodeParameter('record', i));
  const delivery = readFullDelivery(this.getNodeParameter('delivery', i));
  // Only the certificate step reads the PDF (it prepares the signature); the others need no bytes.
  const pdf = delivery.event.type === 'certificate'
    ? (await readPdf(this, i, this.getNodeParameter('binaryPropertyName', i))).pdf
    : Buffer.alloc(0);
  const { engine } = await signingEngine(this);
  const r = await engine.applyDelivery(record, delivery, pdf);
  // A certificate event whose hash call failed temporarily: the save point, for Submit Document Hash to resubmit.
  const deferred = isSubmitDeferred(r.record) ? submissionSummary(r.record) : {};
  return { json: { ...recordSummary(r.record), ...deferred, event: delivery.event.type, duplicate: r.duplicate === true }, binary: item.binary };
}
