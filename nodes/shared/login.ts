import type { INodeProperties } from 'n8n-workflow';
import { LOGIN_COOKIE } from '../../src/setup';

// The login I/O itself (cookie, sealed transaction, callback parsing, Corppass start) is the core's: src/setup/login-io.ts.
export { LOGIN_COOKIE, corppassFapiOutput, fapiRolesRefusal, readCallback, readTransaction, startCorppassLogin, startLoginOutput, type LoginStart } from '../../src/setup';


/** Parameters of Complete Login common to both providers (shown for `resource`/`operation`). */
export const completeLoginFields: INodeProperties[] = [
  {
    displayName: 'Transaction',
    name: 'transaction',
    type: 'string',
    typeOptions: { password: true },
    default: '={{ $json.headers.cookie }}',
    required: true,
    description: `The sealed transaction from Start Login, or the callback request's Cookie header holding the ${LOGIN_COOKIE} cookie`,
  },
  {
    displayName: 'Callback Parameters',
    name: 'callback',
    type: 'json',
    default: '={{ $json.query }}',
    required: true,
    description: 'The query parameters the provider sent to your redirect URI (code, state, iss), or the full callback URL',
  },
];

