import type { ICredentialType, INodeProperties } from 'n8n-workflow';
import { clientIdField, environmentField, privateKeyField, sandboxUrlField } from './shared/fields';

/**
 * The DSAP's access to the Singpass document signing API: environment, client ID and the EC key that signs every
 * `X-Dss-Assertion`. Tested by the Singpass Sign node: the key is loaded (type, curve, private part) and the
 * service key set fetched, so a wrong paste or URL is named before the first session.
 */
export class SingpassSignApi implements ICredentialType {
  name = 'singpassSignApi';

  displayName = 'Singpass Sign API';

  icon = 'file:singpass.svg' as const;

  documentationUrl = 'https://github.com/singpass-flows/n8n-nodes-singpass#n8n';

  properties: INodeProperties[] = [
    environmentField('https://staging.sign.singpass.gov.sg', 'https://app.sign.singpass.gov.sg'),
    sandboxUrlField,
    {
      displayName: 'API Base URL',
      name: 'baseUrl',
      type: 'string',
      default: '',
      placeholder: 'https://staging.sign.singpass.gov.sg/api/v1',
      description: 'The signing API base: {dss_base_url}/api/v1',
      displayOptions: { show: { environment: ['custom'] } },
    },
    {
      displayName: 'Service Key Set URL',
      name: 'keySetUrl',
      type: 'string',
      default: '',
      placeholder: 'https://static.staging.sign.singpass.gov.sg/.well-known/keys.json',
      description: 'Where the service publishes the keys its webhook tokens are signed with',
      displayOptions: { show: { environment: ['custom'] } },
    },
    clientIdField,
    privateKeyField('signingKey', 'DSAP Signing Key', 'The private key whose public part is in the key set you registered (it signs the X-Dss-Assertion).'),
    {
      displayName: 'Tenant ID',
      name: 'tenantId',
      type: 'string',
      default: '',
      required: true,
      description: 'Your corporate customer\'s identifier, or your own registered name (sent when a session is created)',
    },
    {
      displayName: 'Domain Name',
      name: 'domainName',
      type: 'string',
      default: '',
      required: true,
      placeholder: 'sign.example.sg',
      description: 'Host name of the page that shows the QR code; the Singpass app shows it to the user',
    },
    {
      displayName: 'Assertion Audience',
      name: 'audience',
      type: 'string',
      default: '',
      placeholder: 'https://staging.sign.singpass.gov.sg',
      description: 'The "aud" of the X-Dss-Assertion sent with every call. Leave empty for the default (the API\'s origin); set it only when the signing service gave you another value (it then refuses every call with 401 until it matches).',
    },
    {
      displayName: 'Timestamp Authority URL',
      name: 'tsaUrl',
      type: 'string',
      default: '',
      placeholder: 'https://tsa.example.sg/tsr',
      description: 'RFC 3161 timestamp authority for PAdES B-T and above. Leave empty in the sandbox (it has one).',
    },
    {
      displayName: 'Trusted Root Certificates',
      name: 'trustedRoots',
      type: 'string',
      typeOptions: { rows: 4 },
      default: '',
      placeholder: '-----BEGIN CERTIFICATE-----',
      description: 'PEM root certificate(s) the signers\' chains must end in (used to check status, add validation data and verify). The sandbox root is fetched automatically.',
    },
  ];
}
