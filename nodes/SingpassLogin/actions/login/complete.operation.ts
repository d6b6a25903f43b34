import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { completeLoginFields, readCallback, readTransaction } from '../../../shared/login';
import { forOperation } from '../../../shared/router';
import { singpassClient } from '../client';

export const description: INodeProperties[] = forOperation('login', 'completeLogin', [
  ...completeLoginFields,
  {
    displayName: 'Options',
    name: 'options',
    type: 'collection',
    placeholder: 'Add Option',
    default: {},
    options: [
      { displayName: 'Fetch Userinfo', name: 'fetchUserinfo', type: 'boolean', default: true, description: 'Whether to fetch the person data (name, NRIC, …) you asked for in the scope' },
      { displayName: 'Required ACR', name: 'requiredAcr', type: 'string', default: '', placeholder: 'urn:singpass:authentication:loa:2', description: 'Refuse logins below this level of assurance' },
    ],
  },
]);

/** Check the callback, redeem the code (DPoP), verify the ID token and fetch the person data: the verified identity. */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const o = this.getNodeParameter('options', i, {}) as { fetchUserinfo?: boolean; requiredAcr?: string };
  const { client, transactionSecret } = await singpassClient(this, o.requiredAcr || undefined);
  const transaction = readTransaction(this.getNodeParameter('transaction', i), transactionSecret);
  const login = await client.completeLogin({ transaction, callback: readCallback(this.getNodeParameter('callback', i)), fetchUserinfo: o.fetchUserinfo !== false });
  return { json: JSON.parse(JSON.stringify(login)) as IDataObject };
}
