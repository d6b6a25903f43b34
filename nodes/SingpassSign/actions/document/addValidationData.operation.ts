import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { addValidationDataWithSummary } from '../../../../src/pades';
import { derivedFileName, readPdf, withPdf } from '../../../shared/binary';
import { signSetupOf } from '../../../shared/engine';
import { forOperation } from '../../../shared/router';
import { pdfInput, pdfOutput } from '../fields';

export const description: INodeProperties[] = forOperation('document', 'addValidationData', [pdfInput, pdfOutput]);

/**
 * PAdES B-LT: fetch the certificate chains and fresh OCSP answers of every signature and timestamp in the PDF and
 * append them (one incremental update). Refuses — writing nothing — when a certificate is revoked or unknown.
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const { pdf, meta } = await readPdf(this, i, this.getNodeParameter('binaryPropertyName', i));
  const setup = await signSetupOf(this);
  const r = await addValidationDataWithSummary(pdf, { trustedRoots: await setup.trustedRoots() });
  return withPdf(this, item, this.getNodeParameter('outputBinaryPropertyName', i) as string, r.pdf, derivedFileName(meta.fileName, 'lt'), { validationData: { ...r.summary } });
}
