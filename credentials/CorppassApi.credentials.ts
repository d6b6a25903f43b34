import type { ICredentialType, INodeProperties } from 'n8n-workflow';
import { loginClientFields } from './shared/fields';

/** A Corppass relying party: issuer, client ID, signing and encryption keys, redirect URI. Tested by the Corppass node. */
export class CorppassApi implements ICredentialType {
  name = 'corppassApi';

  displayName = 'Corppass API';

  icon = 'file:corppass.svg' as const;

  documentationUrl = 'https://github.com/singpass-flows/n8n-nodes-singpass#n8n';

  properties: INodeProperties[] = loginClientFields('Corppass', 'https://stg-id.corppass.gov.sg', 'https://id.corppass.gov.sg');
}
