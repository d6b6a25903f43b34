import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { startCorppassLogin, startLoginOutput } from '../../../shared/login';
import { forOperation } from '../../../shared/router';
import { corppassClient } from '../client';

export const description: INodeProperties[] = forOperation('login', 'startLogin', [
  {
    displayName: 'Scope',
    name: 'scope',
    type: 'string',
    default: 'openid authinfo',
    description: 'Space-separated scopes; "openid" is always included. The user\'s roles need "authinfo" (and "tpauthinfo" for third-party roles); FAPI 2.0: "user.name entity.basic_profile.name" etc. for details',
  },
  {
    displayName: 'Authentication Context Type',
    name: 'authenticationContextType',
    type: 'string',
    default: '',
    placeholder: 'APP_AUTHENTICATION_DEFAULT',
    description: 'FAPI 2.0 Login apps only (empty = APP_AUTHENTICATION_DEFAULT); leave empty for legacy and Myinfo Business apps',
  },
  {
    displayName: 'Authentication Context Message',
    name: 'authenticationContextMessage',
    type: 'string',
    default: '',
    placeholder: 'Submit GST return',
    description: 'FAPI 2.0 Login apps only: what the user is approving (letters, digits and spaces, at most 100 characters)',
  },
]);

/** The Corppass authorization URL to redirect the user to, and the sealed transaction to keep until the callback. */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const { client, transactionSecret } = await corppassClient(this);
  const optional = (name: string) => (this.getNodeParameter(name, i, '') as string).trim() || undefined;
  const start = await startCorppassLogin(client, {
    scope: this.getNodeParameter('scope', i) as string,
    authenticationContextType: optional('authenticationContextType'),
    authenticationContextMessage: optional('authenticationContextMessage'),
  });
  return { json: startLoginOutput(start, transactionSecret) };
}
