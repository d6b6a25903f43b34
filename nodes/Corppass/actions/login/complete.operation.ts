import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { activeRoles } from '../../../../src/login';
import { completeLoginFields, corppassFapiOutput, readCallback, readTransaction } from '../../../shared/login';
import { forOperation } from '../../../shared/router';
import { corppassClient } from '../client';

export const description: INodeProperties[] = forOperation('login', 'completeLogin', [
  ...completeLoginFields,
  {
    displayName: 'Fetch Authorization Info',
    name: 'fetchAuthorizationInfo',
    type: 'boolean',
    default: true,
    description: 'Whether to also fetch the user\'s roles (AuthInfo / TPAuthInfo) at once, so the access token never leaves this node (legacy profile; FAPI 2.0 ignores it: the roles come with the login when the scope has "authinfo")',
  },
  {
    displayName: 'Include Access Token',
    name: 'includeAccessToken',
    type: 'boolean',
    default: false,
    description: 'Whether to output the access token (a secret) for a later Get Authorization Info; n8n stores execution data, so leave off unless needed (legacy profile; FAPI 2.0 never outputs it)',
  },
]);

/**
 * Check the callback, redeem the code and verify the identity. Legacy: subject, userInfo, entityInfo, optionally the
 * roles. FAPI 2.0: the core's result as is — user (uuid, name…), entity (id = UEN…), roles (active today),
 * authorizationInfo, amr, idTokenClaims, scope (and myinfo for Myinfo Business apps).
 */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const { client, transactionSecret } = await corppassClient(this);
  const transaction = readTransaction(this.getNodeParameter('transaction', i), transactionSecret);
  const callback = readCallback(this.getNodeParameter('callback', i));
  if (client.profile === 'fapi') return { json: corppassFapiOutput(await client.completeLogin({ transaction, callback })) };
  const login = await client.completeLogin({ transaction, callback });
  const json: IDataObject = {
    subject: login.subject,
    userInfo: login.userInfo,
    entityInfo: login.entityInfo,
    idTokenClaims: login.idTokenClaims,
    scope: login.scope,
  };
  if (this.getNodeParameter('fetchAuthorizationInfo', i) as boolean) {
    const info = await client.getAuthorizationInfo({ accessToken: login.accessToken, expectedSub: login.subject.raw });
    json.authorizationInfo = info;
    json.activeRoles = activeRoles(info);
  }
  if (this.getNodeParameter('includeAccessToken', i) as boolean) {
    json.accessToken = login.accessToken;
    if (login.expiresAt) json.accessTokenExpiresAt = new Date(login.expiresAt).toISOString();
  }
  return { json };
}
