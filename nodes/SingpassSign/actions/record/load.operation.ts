import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError } from '../../../../src/errors';
import { pdfBinary } from '../../../shared/binary';
import { sessionRecordStore, storeInputs } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';
import { recordSummary } from '../../../shared/session-data';

export const description: INodeProperties[] = forOperation('sessionRecord', 'loadRecord', [
  ...storeInputs,
  {
    displayName: 'Sign Ref',
    name: 'signRef',
    type: 'string',
    default: '={{ $json.signRef }}',
    required: true,
    description: 'The session\'s signRef (e.g. the Singpass Sign Trigger\'s "signRef")',
  },
  {
    displayName: 'Also Load PDF Into Binary Field',
    name: 'pdfBinaryField',
    type: 'string',
    default: '',
    placeholder: 'data',
    description: 'Binary property to put the saved PDF (the file named after the signRef) in, for the steps that need it. Empty: the record only.',
  },
  {
    displayName: 'If Missing',
    name: 'ifMissing',
    type: 'options',
    options: [
      { name: 'Output "Found: False"', value: 'output', description: 'An item with found: false, for an IF node' },
      { name: 'Stop With an Error', value: 'error', description: 'The execution fails with STATE_INVALID, naming the signRef' },
    ],
    default: 'output',
  },
]);

/**
 * Load `<folder>/<signRef>.json` (and optionally the PDF): `found`, `revision` (give it to Save Session Record), the
 * record and where the session stands. A record that is not there is `found: false` (or an error, as chosen).
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const signRef = String(this.getNodeParameter('signRef', i) ?? '').trim();
  const store = await sessionRecordStore(this, i);
  const record = await store.get(signRef);
  if (!record) {
    if (this.getNodeParameter('ifMissing', i, 'output') === 'error') {
      throw new SingpassFlowsError('STATE_INVALID', `No session record for ${signRef} in ${store.where} (never saved, or deleted by Clean Up after its retention)`, { retryable: false, field: 'Sign Ref' });
    }
    return { json: { found: false, signRef }, binary: item.binary };
  }
  const pdfField = String(this.getNodeParameter('pdfBinaryField', i, '') ?? '').trim();
  let binary = item.binary;
  if (pdfField) {
    const pdf = await store.getDocument(signRef);
    if (!pdf) throw new SingpassFlowsError('STATE_INVALID', `The session record ${signRef} is there but its PDF (${signRef}.pdf) is not: save it with the record after Create Session`, { retryable: false });
    binary = { ...(item.binary ?? {}), [pdfField]: await pdfBinary(this, pdf, `${signRef}.pdf`) };
  }
  const json: IDataObject = { found: true, revision: record.revision, ...recordSummary(record) };
  return { json, binary };
}
