import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { derivedFileName, readPdf, withPdf } from '../../../shared/binary';
import { signingEngine } from '../../../shared/engine';
import { forOperation } from '../../../shared/router';
import { readRecord, recordSummary } from '../../../shared/session-data';
import { pdfInput, pdfOutput, recordInput } from '../fields';

export const description: INodeProperties[] = forOperation('session', 'finalizeSignature', [
  { ...recordInput, hint: 'The signed record (Apply Webhook Event\'s output), as your workflow stored it' },
  { ...pdfInput, hint: 'The PDF being signed (the one Create Session was given)' },
  pdfOutput,
]);

/**
 * After the signature event, on the record stored with the signature: embed the user's signature in the PDF
 * (checked against the certificate) and reach the level chosen at Create Session (signature timestamp for B-T,
 * validation data for B-LT, document timestamp for B-LTA), verify our signature, and end the session (the user's
 * certificate and the prepared state leave the record). Always from the PDF as it was and the stored record: run
 * again on the same record (after a fault or a crash) it embeds the same signature, never a second one.
 *
 * Three outcomes, none thrown (store the record whichever it is):
 * - `completed`: the signed PDF in the output binary field. When finishing failed for good after the user signed (a
 *   TSA refusing the request, validation data refused, the retry window over), it is the highest level reached (at
 *   least B-B) and `result.missing` says what is missing and why: the user does not sign again.
 * - still `signed`, `retryLater: true`: a finishing step failed for the moment (TSA, OCSP/CRL responder, network,
 *   5xx, 429, timeout, a TSA's systemFailure / timeNotAvailable / addInfoNotAvailable — the engine's rule); the
 *   record carries `lastFinishFailure` with when to try again (`retryAt`, backoff 1 s … 5 min) and until when
 *   (`finishBy`, a day after the signature). No PDF is output.
 * - `failed` with `error`: a verdict on the signature (certificate revoked meanwhile, a signature that does not
 *   verify). No PDF is output.
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const record = readRecord(this.getNodeParameter('record', i));
  const { pdf, meta } = await readPdf(this, i, this.getNodeParameter('binaryPropertyName', i));
  const output = this.getNodeParameter('outputBinaryPropertyName', i) as string;
  const { engine } = await signingEngine(this);
  const f = await engine.finish(record, pdf);
  const failure = f.record.lastFinishFailure;
  const json: IDataObject = {
    ...recordSummary(f.record),
    retryLater: f.deferred === true,
    ...(f.deferred && failure
      ? {
        error: { code: failure.code, message: failure.message },
        finishFailure: { stage: failure.stage, attempts: failure.attempts, retryAt: new Date(failure.retryAt).toISOString(), finishBy: new Date(failure.finishBy).toISOString() },
      }
      : {}),
    ...(f.report ? { report: JSON.parse(JSON.stringify(f.report)) as IDataObject } : {}),
  };
  if (f.pdf) return withPdf(this, item, output, f.pdf, derivedFileName(meta.fileName, 'signed'), json);
  // No signed PDF: the output field must not hand on the unsigned input as if it were the result.
  const binary = Object.fromEntries(Object.entries(item.binary ?? {}).filter(([name]) => name !== output));
  return { json, ...(Object.keys(binary).length ? { binary } : {}) };
}
