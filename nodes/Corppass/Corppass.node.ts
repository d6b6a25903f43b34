import { NodeConnectionTypes, type IExecuteFunctions, type INodeExecutionData, type INodeType, type INodeTypeDescription } from 'n8n-workflow';
import { testCorppass } from '../shared/credential-tests';
import { route } from '../shared/router';
import { operations } from './actions/router';
import * as getAuthorizationInfo from './actions/authorization/getInfo.operation';
import * as completeLogin from './actions/login/complete.operation';
import * as startLogin from './actions/login/start.operation';

/**
 * Corppass login (authorization code + PKCE + private_key_jwt, encrypted ID token) and authorization info (roles), with
 * the credential's Profile: FAPI 2.0 (PAR + DPoP, roles with the login) or legacy (until 31 March 2027).
 */
export class Corppass implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Corppass',
    name: 'corppass',
    icon: { light: 'file:corppass.svg', dark: 'file:corppass.dark.svg' },
    group: ['transform'],
    version: 1,
    subtitle: '={{ $parameter["operation"] === "startLogin" ? "Start Login" : $parameter["operation"] === "completeLogin" ? "Complete Login" : "Get Authorization Info" }}',
    description: 'Log business users in with Corppass and read their roles',
    defaults: { name: 'Corppass' },
    inputs: [NodeConnectionTypes.Main],
    outputs: [NodeConnectionTypes.Main],
    usableAsTool: true,
    credentials: [{ name: 'corppassApi', required: true, testedBy: 'corppassApiTest' }],
    properties: [
      {
        displayName: 'Resource',
        name: 'resource',
        type: 'options',
        noDataExpression: true,
        options: [
          { name: 'Login', value: 'login' },
          { name: 'Authorization', value: 'authorization' },
        ],
        default: 'login',
      },
      {
        displayName: 'Operation',
        name: 'operation',
        type: 'options',
        noDataExpression: true,
        displayOptions: { show: { resource: ['login'] } },
        options: [
          { name: 'Start Login', value: 'startLogin', action: 'Start a corppass login', description: 'Get the Corppass URL to send the user to, and the sealed transaction to keep until the callback' },
          { name: 'Complete Login', value: 'completeLogin', action: 'Complete a corppass login', description: 'Check the callback and return the verified identity and roles (FAPI 2.0: user, entity, roles, authorizationInfo as the core returns them)' },
        ],
        default: 'startLogin',
      },
      {
        displayName: 'Operation',
        name: 'operation',
        type: 'options',
        noDataExpression: true,
        displayOptions: { show: { resource: ['authorization'] } },
        options: [
          { name: 'Get Authorization Info', value: 'getAuthorizationInfo', action: 'Get a user s roles', description: 'Legacy profile only (under FAPI 2.0 the roles come with Complete Login): the user\'s roles (AuthInfo, TPAuthInfo) and a flat list of roles active on a date' },
        ],
        default: 'getAuthorizationInfo',
      },
      {
        displayName: 'Start Login from a user action (a POST or a button), not a bare link, and keep the returned transaction in an HttpOnly cookie (setCookie) so the callback is bound to the same browser.',
        name: 'startHint',
        type: 'notice',
        default: '',
        displayOptions: { show: { resource: ['login'], operation: ['startLogin'] } },
      },
      ...startLogin.description,
      ...completeLogin.description,
      ...getAuthorizationInfo.description,
    ],
  };

  methods = { credentialTest: { corppassApiTest: testCorppass } };

  async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
    return route(this, operations);
  }
}
