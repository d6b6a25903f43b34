import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError } from '../../../../src/errors';
import { problemSummary, verifyPdfSignatures } from '../../../../src/pades';
import { readPdf } from '../../../shared/binary';
import { signSetupOf } from '../../../shared/engine';
import { forOperation } from '../../../shared/router';
import { pdfInput } from '../fields';

export const description: INodeProperties[] = forOperation('document', 'verifySignedPdf', [
  pdfInput,
  {
    displayName: 'Fail If Not Valid',
    name: 'failIfInvalid',
    type: 'boolean',
    default: false,
    description: 'Whether to stop with an error when a signature does not verify (otherwise the report says so in "valid")',
  },
]);

/**
 * Every signature and timestamp checked (integrity, chain to your trusted roots, timestamps, revocation data): the
 * report as JSON. Per signature, `problems` (codes) and `problemDetails` (plain words) list only what is wrong;
 * `notes` say what is worth knowing but fine (validation data and document timestamps added after it: B-LT, B-LTA).
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const { pdf } = await readPdf(this, i, this.getNodeParameter('binaryPropertyName', i));
  const setup = await signSetupOf(this);
  const report = await verifyPdfSignatures(pdf, { trustedRoots: await setup.trustedRoots() });
  if (!report.valid && (this.getNodeParameter('failIfInvalid', i) as boolean)) {
    throw new SingpassFlowsError('SIGNATURE_INVALID', `The PDF's signatures do not verify${problemSummary(report)}`);
  }
  return { json: { ...item.json, verification: JSON.parse(JSON.stringify(report)) as IDataObject }, binary: item.binary };
}
