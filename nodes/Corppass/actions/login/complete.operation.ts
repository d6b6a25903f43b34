import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { activeRoles, officerDecision, requireRolesScope, type OfficerDecision } from '../../../../src/login';
import { renderNoticePage } from '../../../../src/session';
import { invalidInput } from '../../../../src/errors';
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
  {
    displayName: 'Require Role',
    name: 'requireRole',
    type: 'boolean',
    default: false,
    description: 'Whether to decide if the user may act for the entity (UEN) they logged in for — e.g. sign for the company: only with one of the roles below, granted by that entity (AuthInfo, active today; a third party\'s TPAuthInfo roles do not count). Outputs "officer" (allowed or not, and why), "onBehalfOf" for Create Session, and a refusal page. Legacy profile: the roles are fetched whatever "Fetch Authorization Info" says.',
  },
  {
    displayName: 'Roles',
    name: 'roles',
    type: 'string',
    default: '',
    required: true,
    placeholder: 'Director, Authorised Signatory',
    displayOptions: { show: { requireRole: [true] } },
    description: 'Corppass roles (CPRole) that allow it, separated by commas, compared exactly',
  },
  {
    displayName: 'E-Service ID',
    name: 'eserviceId',
    type: 'string',
    default: '',
    displayOptions: { show: { requireRole: [true] } },
    description: 'Only roles granted for this e-service (CPESrvcID); empty: any of your e-services',
  },
]);

/** Require Role's output: the decision, and for a refusal the page to answer with (the same look as the signer's page). */
function officerOutput(decision: OfficerDecision): IDataObject {
  if (decision.allowed) return { officer: { allowed: true }, onBehalfOf: { ...decision.onBehalfOf } };
  return { officer: { allowed: false, code: decision.code, message: decision.message }, refusalPage: renderNoticePage('Not allowed to sign for this company', decision.message) };
}

/**
 * Check the callback, redeem the code and verify the identity. Legacy: subject, userInfo, entityInfo, optionally the
 * roles. FAPI 2.0: the core's result as is — user (uuid, name…), entity (id = UEN…), roles (active today),
 * authorizationInfo, amr, idTokenClaims, scope (and myinfo for Myinfo Business apps).
 */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const { client, transactionSecret } = await corppassClient(this);
  const transaction = readTransaction(this.getNodeParameter('transaction', i), transactionSecret);
  const callback = readCallback(this.getNodeParameter('callback', i));
  const requireRole = this.getNodeParameter('requireRole', i, false) as boolean;
  // the rule is checked before the login is redeemed: a workflow set up without roles fails at once, not per user
  const rule = requireRole ? { roles: String(this.getNodeParameter('roles', i, '')).split(',').map((r) => r.trim()).filter(Boolean), eserviceId: String(this.getNodeParameter('eserviceId', i, '')).trim() || undefined } : undefined;
  if (rule && rule.roles.length === 0) throw invalidInput('Roles', 'name at least one Corppass role that allows it (Require Role is on)');
  if (client.profile === 'fapi') {
    const login = await client.completeLogin({ transaction, callback });
    return { json: { ...corppassFapiOutput(login), ...(rule ? officerOutput(officerDecision(login, rule)) : {}) } };
  }
  const login = await client.completeLogin({ transaction, callback });
  const json: IDataObject = {
    subject: login.subject,
    userInfo: login.userInfo,
    entityInfo: login.entityInfo,
    idTokenClaims: login.idTokenClaims,
    scope: login.scope,
  };
  if (rule || (this.getNodeParameter('fetchAuthorizationInfo', i) as boolean)) {
    // roles asked for under a scope that does not release them would be an empty list: say which scope is missing
    if (!rule) requireRolesScope(login.scope, { what: 'Fetch Authorization Info', thirdPartyToo: true, orElse: 'turn Fetch Authorization Info off' });
    const info = await client.getAuthorizationInfo({ accessToken: login.accessToken, expectedSub: login.subject.raw });
    json.authorizationInfo = info;
    const roles = activeRoles(info);
    json.activeRoles = roles;
    if (rule) Object.assign(json, officerOutput(officerDecision({ entityInfo: login.entityInfo, roles, scope: login.scope }, rule)));
  }
  if (this.getNodeParameter('includeAccessToken', i) as boolean) {
    json.accessToken = login.accessToken;
    if (login.expiresAt) json.accessTokenExpiresAt = new Date(login.expiresAt).toISOString();
  }
  return { json };
}
