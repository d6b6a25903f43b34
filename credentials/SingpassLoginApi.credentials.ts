import type { ICredentialType, INodeProperties } from 'n8n-workflow';
import { loginClientFields } from './shared/fields';

/** A Singpass FAPI 2.0 relying party: issuer, client ID, signing and encryption keys, redirect URI. Tested by the Singpass Login node. */
export class SingpassLoginApi implements ICredentialType {
  name = 'singpassLoginApi';

  displayName = 'Singpass Login API';

  icon = 'file:singpass.svg' as const;

  documentationUrl = 'https://github.com/singpass-flows/n8n-nodes-singpass#n8n';

  properties: INodeProperties[] = loginClientFields('Singpass', 'https://stg-id.singpass.gov.sg/fapi', 'https://id.singpass.gov.sg/fapi');
}
