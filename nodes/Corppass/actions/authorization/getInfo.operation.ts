import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { activeRoles } from '../../../../src/login';
import { fapiRolesRefusal } from '../../../shared/login';
import { forOperation } from '../../../shared/router';
import { corppassClient } from '../client';

export const description: INodeProperties[] = forOperation('authorization', 'getAuthorizationInfo', [
  {
    displayName: 'Access Token',
    name: 'accessToken',
    type: 'string',
    typeOptions: { password: true },
    default: '={{ $json.accessToken }}',
    required: true,
    description: 'The access token Complete Login output (with "Include Access Token" on)',
  },
  {
    displayName: 'Subject',
    name: 'subject',
    type: 'string',
    default: '={{ $json.subject.raw }}',
    required: true,
    description: 'The "sub" of the user who logged in (subject.raw from Complete Login); the roles must be about this user',
  },
  {
    displayName: 'Active On',
    name: 'activeOn',
    type: 'string',
    default: '',
    placeholder: '2026-01-31',
    description: 'Date (YYYY-MM-DD) for the flat "activeRoles" list; empty = today in Singapore',
  },
]);

/** Legacy profile only (under FAPI 2.0 the roles come with Complete Login). The user's roles, signature and claims verified: typed AuthInfo / TPAuthInfo and the flat list active on a date. */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const { client } = await corppassClient(this);
  if (client.profile === 'fapi') throw fapiRolesRefusal('Get Authorization Info');
  const info = await client.getAuthorizationInfo({
    accessToken: this.getNodeParameter('accessToken', i) as string,
    expectedSub: this.getNodeParameter('subject', i) as string,
  });
  const on = (this.getNodeParameter('activeOn', i) as string).trim();
  return { json: { ...(info as unknown as IDataObject), activeRoles: on ? activeRoles(info, on) : activeRoles(info) } };
}
