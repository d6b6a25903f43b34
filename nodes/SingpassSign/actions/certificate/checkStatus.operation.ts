import { X509Certificate } from 'node:crypto';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { invalidInput } from '../../../../src/errors';
import { buildChain, fetchOcspResponse } from '../../../../src/pki';
import { CREDENTIAL, signSetup } from '../../../shared/credentials';
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
 * The certificate's chain to your trusted roots and its OCSP status now (good / revoked / unknown). Informational:
 * Apply Webhook Event runs the same checks itself before it submits any hash.
 */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const value = (this.getNodeParameter('certificate', i) as string)?.trim();
  if (!value) throw invalidInput('Certificate', 'is empty; pass the certificate event\'s certificate.base64');
  try {
    new X509Certificate(value.includes('-----BEGIN') ? value : Buffer.from(value, 'base64'));
  } catch {
    throw invalidInput('Certificate', 'is not an X.509 certificate; pass a PEM certificate or the certificate event\'s certificate.base64');
  }
  const setup = await signSetup(await this.getCredentials(CREDENTIAL.sign));
  const chain = await buildChain(value, { trustedRoots: await setup.trustedRoots() });
  if (chain.length < 2) throw invalidInput('Certificate', 'has no issuer in the chain (is it self-signed?)');
  const ocsp = await fetchOcspResponse(chain[0], chain[1]);
  const leaf = new X509Certificate(chain[0]);
  return {
    json: {
      status: ocsp.status,
      good: ocsp.status === 'good',
      subject: leaf.subject,
      issuer: leaf.issuer,
      serialNumber: leaf.serialNumber,
      notAfter: new Date(leaf.validTo).toISOString(),
      chain: chain.map((c) => new X509Certificate(c).subject),
      producedAt: ocsp.producedAt.toISOString(),
      ...(ocsp.revokedAt ? { revokedAt: ocsp.revokedAt.toISOString() } : {}),
    },
  };
}
