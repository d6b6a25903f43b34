import type { ICredentialType, INodeProperties } from 'n8n-workflow';
import { loginClientFields } from './shared/fields';

/** A Corppass relying party: issuer, client ID, signing and encryption keys, redirect URI. Tested by the Corppass node. */
export class CorppassApi implements ICredentialType {
  name = 'corppassApi';

  displayName = 'Corppass API';

  icon = 'file:corppass.svg' as const;

  documentationUrl = 'https://github.com/singpass-flows/n8n-nodes-singpass#n8n';

  properties: INodeProperties[] = [
    {
      displayName: 'Profile',
      name: 'profile',
      type: 'options',
      // Legacy by default so credentials saved before this field existed keep working (n8n fills missing fields with
      // the default); choose FAPI 2.0 for any new service.
      default: 'legacy',
      options: [
        { name: 'FAPI 2.0 (New Services)', value: 'fapi', description: 'Required for services onboarded from 2026: PAR, DPoP, roles with the login (scope authinfo)' },
        { name: 'Legacy (Until 31 March 2027)', value: 'legacy', description: 'Services onboarded before Corppass FAPI 2.0; migrate before 31 March 2027' },
      ],
      description: 'Which Corppass protocol your client ID uses. See src/login/README.md "Migrating to FAPI 2.0".',
    },
    {
      displayName: 'App Type',
      name: 'appType',
      type: 'options',
      default: 'login',
      options: [
        { name: 'Corppass Login App', value: 'login', description: 'Client ID from the Corppass Developer Portal' },
        { name: 'Myinfo Business App', value: 'myinfo-business', description: 'Client ID from the Singpass Developer Portal; no authentication context' },
      ],
      displayOptions: { show: { profile: ['fapi'] } },
    },
    ...loginClientFields('Corppass', 'https://stg-id.corppass.gov.sg', 'https://id.corppass.gov.sg'),
  ];
}
