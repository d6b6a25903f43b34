import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { invalidInput, isSingpassFlowsError } from '../../../../src/errors';
import { signingEngine } from '../../../shared/engine';
import { forOperation } from '../../../shared/router';

export const description: INodeProperties[] = forOperation('certificate', 'checkCertificateStatus', [
  {
    displayName: 'Certificate',
    name: 'certificate',
    type: 'string',
    default: '={{ $json.delivery.event.certificate.base64 }}',
    required: true,
    description: 'The user\'s certificate (base64 DER or PEM), e.g. from the trigger\'s certificate event',
  },
]);

/**
 * The certificate's status now, by the same checks (and codes) the certificate step makes before any hash: valid
 * today, chained to your trusted roots, OCSP good (`status` good / revoked / unknown / expired / notYetValid /
 * untrusted / chainIncomplete, `good`, `code`). Informational: the certificate step runs these checks itself.
 */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const value = (this.getNodeParameter('certificate', i) as string)?.trim();
  if (!value) throw invalidInput('Certificate', 'is empty; pass the certificate event\'s certificate.base64');
  const { engine } = await signingEngine(this);
  const report = await engine.certificateStatus(value).catch((e: unknown) => {
    // named as this node's field
    throw isSingpassFlowsError(e, 'INVALID_INPUT') && e.details.field === 'certificate' ? invalidInput('Certificate', e.message.replace(/^certificate: /, '')) : e;
  });
  return { json: { ...report } };
}
