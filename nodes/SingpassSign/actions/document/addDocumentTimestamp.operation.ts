import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { invalidInput } from '../../../../src/errors';
import { addDocumentTimestamp, addValidationData } from '../../../../src/pades';
import { derivedFileName, readPdf, withPdf } from '../../../shared/binary';
import { signSetupOf } from '../../../shared/engine';
import { forOperation } from '../../../shared/router';
import { pdfInput, pdfOutput } from '../fields';

export const description: INodeProperties[] = forOperation('document', 'addDocumentTimestamp', [
  pdfInput,
  pdfOutput,
  {
    displayName: 'Add Validation Data for the Timestamp',
    name: 'timestampValidationData',
    type: 'boolean',
    default: true,
    description: 'Whether to also append the timestamp authority\'s chain and OCSP answers, so the archive timestamp can be renewed later',
  },
]);

/** PAdES B-LTA: a document timestamp from the credential's timestamp authority over the whole PDF. */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const { pdf, meta } = await readPdf(this, i, this.getNodeParameter('binaryPropertyName', i));
  const setup = await signSetupOf(this);
  const tsaUrl = setup.endpoints.tsaUrl;
  if (!tsaUrl) throw invalidInput('Timestamp Authority URL', 'is empty in the "Singpass Sign API" credential; a document timestamp needs one');
  let out = await addDocumentTimestamp(pdf, { tsaUrl });
  const withLtv = this.getNodeParameter('timestampValidationData', i) as boolean;
  if (withLtv) out = await addValidationData(out, { trustedRoots: await setup.trustedRoots() });
  return withPdf(this, item, this.getNodeParameter('outputBinaryPropertyName', i) as string, out, derivedFileName(meta.fileName, 'lta'), { documentTimestamp: { tsaUrl, validationData: withLtv } });
}
