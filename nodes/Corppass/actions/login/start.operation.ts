import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { startLoginOutput } from '../../../shared/login';
import { forOperation } from '../../../shared/router';
import { corppassClient } from '../client';

export const description: INodeProperties[] = forOperation('login', 'startLogin', [
  {
    displayName: 'Scope',
    name: 'scope',
    type: 'string',
    default: 'openid',
    description: 'Space-separated scopes; "openid" is always included',
  },
]);

/** The Corppass authorization URL to redirect the user to, and the sealed transaction to keep until the callback. */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const { client, transactionSecret } = await corppassClient(this);
  const { url, transaction } = await client.startLogin({ scope: this.getNodeParameter('scope', i) as string });
  return { json: startLoginOutput(url, transaction, transactionSecret) };
}
