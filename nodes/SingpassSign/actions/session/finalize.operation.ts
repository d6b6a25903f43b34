import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError } from '../../../../src/errors';
import { derivedFileName, readPdf, withPdf } from '../../../shared/binary';
import { signingEngine } from '../../../shared/engine';
import { forOperation } from '../../../shared/router';
import { readRecord, recordSummary } from '../../../shared/session-data';
import { pdfInput, pdfOutput, recordInput } from '../fields';

export const description: INodeProperties[] = forOperation('session', 'finalizeSignature', [
  recordInput,
  pdfInput,
  pdfOutput,
]);

/**
 * After the signature event: embed the user's signature in the PDF (checked against the certificate), add the
 * signature timestamp for B-T and the rest of the level chosen at Create Session, verify, and end the session
 * (the user's certificate and the prepared state leave the record).
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const record = readRecord(this.getNodeParameter('record', i));
  const { pdf, meta } = await readPdf(this, i, this.getNodeParameter('binaryPropertyName', i));
  const { engine } = await signingEngine(this);
  const f = await engine.finish(record, pdf);
  if (!f.pdf) {
    const err = f.record.error ?? { code: 'STATE_INVALID', message: 'Nothing could be embedded' };
    throw new SingpassFlowsError(err.code as SingpassFlowsError['code'], `The signature could not be embedded: ${err.message}`, { retryable: false });
  }
  const json: IDataObject = { ...recordSummary(f.record), ...(f.report ? { report: JSON.parse(JSON.stringify(f.report)) as IDataObject } : {}) };
  return withPdf(this, item, this.getNodeParameter('outputBinaryPropertyName', i) as string, f.pdf, derivedFileName(meta.fileName, 'signed'), json);
}
