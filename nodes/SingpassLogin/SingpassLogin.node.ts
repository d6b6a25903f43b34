import { NodeConnectionTypes, type IExecuteFunctions, type INodeExecutionData, type INodeType, type INodeTypeDescription } from 'n8n-workflow';
import { testSingpassLogin } from '../shared/credential-tests';
import { route } from '../shared/router';
import { operations } from './actions/router';
import * as completeLogin from './actions/login/complete.operation';
import * as startLogin from './actions/login/start.operation';

/** Singpass login under FAPI 2.0 (PAR, PKCE, DPoP, private_key_jwt, encrypted ID token and userinfo). */
export class SingpassLogin implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Singpass Login',
    name: 'singpassLogin',
    icon: { light: 'file:singpass.svg', dark: 'file:singpass.dark.svg' },
    group: ['transform'],
    version: 1,
    subtitle: '={{ $parameter["operation"] === "startLogin" ? "Start Login" : "Complete Login" }}',
    description: 'Log users in with Singpass (FAPI 2.0)',
    defaults: { name: 'Singpass Login' },
    inputs: [NodeConnectionTypes.Main],
    outputs: [NodeConnectionTypes.Main],
    usableAsTool: true,
    credentials: [{ name: 'singpassLoginApi', required: true, testedBy: 'singpassLoginApiTest' }],
    properties: [
      {
        displayName: 'Resource',
        name: 'resource',
        type: 'options',
        noDataExpression: true,
        options: [{ name: 'Login', value: 'login' }],
        default: 'login',
      },
      {
        displayName: 'Operation',
        name: 'operation',
        type: 'options',
        noDataExpression: true,
        displayOptions: { show: { resource: ['login'] } },
        options: [
          { name: 'Start Login', value: 'startLogin', action: 'Start a singpass login', description: 'Get the Singpass URL to send the user to, and the sealed transaction to keep until the callback' },
          { name: 'Complete Login', value: 'completeLogin', action: 'Complete a singpass login', description: 'Check the callback and return the verified identity and person data' },
        ],
        default: 'startLogin',
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
    ],
  };

  methods = { credentialTest: { singpassLoginApiTest: testSingpassLogin } };

  async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
    return route(this, operations);
  }
}
