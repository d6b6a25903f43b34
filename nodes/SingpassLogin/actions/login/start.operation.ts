import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { startLoginOutput } from '../../../shared/login';
import { forOperation } from '../../../shared/router';
import { singpassClient } from '../client';

export const description: INodeProperties[] = forOperation('login', 'startLogin', [
  {
    displayName: 'Scope',
    name: 'scope',
    type: 'string',
    default: 'openid user.identity name',
    description: 'Space-separated scopes you are approved for; "openid" is always included (empty: openid only, the user\'s UUID)',
  },
  {
    displayName: 'Options',
    name: 'options',
    type: 'collection',
    placeholder: 'Add Option',
    default: {},
    options: [
      { displayName: 'ACR Values', name: 'acrValues', type: 'string', default: '', placeholder: 'urn:singpass:authentication:loa:2', description: 'Acceptable levels of assurance, space-separated' },
      { displayName: 'Authentication Context Type', name: 'authenticationContextType', type: 'string', default: '', placeholder: 'APP_AUTHENTICATION_DEFAULT' },
      { displayName: 'Authentication Context Message', name: 'authenticationContextMessage', type: 'string', default: '', description: 'Shown to the user in the Singpass app (up to 100 characters)' },
    ],
  },
]);

/** Push the authorization request (PAR with DPoP) and return the Singpass URL and the sealed transaction. */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const { client, transactionSecret } = await singpassClient(this);
  const o = this.getNodeParameter('options', i, {}) as { acrValues?: string; authenticationContextType?: string; authenticationContextMessage?: string };
  const start = await client.startLogin({
    scope: this.getNodeParameter('scope', i) as string,
    acrValues: o.acrValues || undefined,
    authenticationContextType: o.authenticationContextType || undefined,
    authenticationContextMessage: o.authenticationContextMessage || undefined,
  });
  return { json: startLoginOutput(start, transactionSecret) };
}
