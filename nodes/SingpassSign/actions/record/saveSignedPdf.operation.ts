import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError } from '../../../../src/errors';
import { readPdf } from '../../../shared/binary';
import { sessionRecordStore, storeInputs } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';
import { pdfInput } from '../fields';

export const description: INodeProperties[] = forOperation('sessionRecord', 'saveSignedPdf', [
  ...storeInputs,
  {
    displayName: 'Sign Ref',
    name: 'signRef',
    type: 'string',
    default: '={{ $json.signRef }}',
    required: true,
    description: 'The completed session the PDF was signed in',
  },
  { ...pdfInput, description: 'Binary property holding the signed PDF (e.g. after Add Document Timestamp)' },
]);

/**
 * Store a signed PDF where the session's own signed PDF is (the folder's `<signRef>-signed.pdf`, the PostgreSQL
 * store's signed-documents table), over the copy Run Due Step stored: so the signer's page hands out the PDF at the
 * level the workflow took it to, from any n8n process. Only for a completed session of this store.
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const signRef = String(this.getNodeParameter('signRef', i) ?? '').trim();
  const { pdf } = await readPdf(this, i, String(this.getNodeParameter('binaryPropertyName', i)));
  const store = await sessionRecordStore(this, i);
  const record = await store.get(signRef);
  if (record?.state.status !== 'completed') {
    throw new SingpassFlowsError('STATE_INVALID', `Save Signed PDF: ${signRef} is ${record ? `a session in state ${record.state.status}` : `not a session in ${store.where}`}; only a completed session's signed PDF is stored`, { retryable: false, field: 'Sign Ref' });
  }
  await store.putSignedDocument(signRef, pdf);
  return { json: { ...item.json, signRef, signedPdfSaved: true, bytes: pdf.length }, binary: item.binary };
}
