import { SingpassFlowsError, invalidInput } from '../errors';
import type { LoginTransaction } from './transaction';
import { constantTimeEqual } from '../secrets';
import { checkResponseIss } from './response-iss';

/**
 * What arrived at the redirect URI: the full URL (query or fragment), or the parameters themselves (a parsed query,
 * or a form_post body). Arrays mean the parameter appeared several times.
 */
export type CallbackInput = string | URLSearchParams | Record<string, string | string[] | undefined>;

/** Parameters of an authorization response, each seen at most once. */
type Params = Map<string, string[]>;

function toParams(input: CallbackInput, fromFragment: boolean): Params {
  const out: Params = new Map();
  const add = (k: string, v: string) => out.set(k, [...(out.get(k) ?? []), v]);
  if (typeof input === 'string') {
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      throw invalidInput('callback', 'pass the full callback URL (https://…?code=…&state=…) or its parameters');
    }
    // A fragment response (response_mode=fragment) is read from the fragment only: the redirect URI may have a
    // query of its own. Otherwise the query.
    const source = fromFragment ? new URLSearchParams(url.hash.replace(/^#/, '')) : url.searchParams;
    for (const [k, v] of source) add(k, v);
  } else if (input instanceof URLSearchParams) {
    for (const [k, v] of input) add(k, v);
  } else if (input && typeof input === 'object') {
    for (const [k, v] of Object.entries(input)) {
      if (v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) {
        if (typeof one !== 'string') throw invalidInput('callback', `parameter "${k}" is not a string`);
        add(k, one);
      }
    }
  } else {
    throw invalidInput('callback', 'pass the callback URL or its parameters');
  }
  return out;
}

/** What the common OAuth error codes of a login redirect mean for the user (RFC 6749 §4.1.2.1, OIDC Core §3.1.2.6). */
const PROVIDER_ERROR_MEANING: Readonly<Record<string, string>> = {
  access_denied: 'the user cancelled or refused the login',
  login_required: 'the user did not complete the login; start it again',
  temporarily_unavailable: 'the provider is temporarily unavailable; try again later',
  server_error: 'the provider failed; try again later, and check that our key set URL is reachable by the provider',
  invalid_request: 'the provider refused the login request; check the client settings',
  invalid_scope: 'a requested scope is not enabled for this client',
  unauthorized_client: 'this client is not allowed to log users in this way; check its onboarding settings',
};

/** Front-channel artifacts that never belong in a code-flow response (implicit/hybrid/JARM injection). */
const FORBIDDEN = ['id_token', 'access_token', 'token', 'response', 'refresh_token'];

/**
 * Check an authorization response against its transaction, in the order RFC 9207 requires: `iss` first (an error
 * from the wrong issuer is not trusted, not even its description; required or not per provider, see response-iss.ts), then `state`, then the error, then the code.
 * Returns the code.
 */
export function validateCallback(input: CallbackInput, tx: LoginTransaction): string {
  const params = toParams(input, tx.responseMode === 'fragment');
  for (const [name, values] of params) {
    if (values.length > 1) throw new SingpassFlowsError('LOGIN_RESPONSE_INVALID', `The login response repeats the "${name}" parameter; refusing it`, { field: name });
  }
  const get = (k: string) => params.get(k)?.[0];
  // `iss` first (RFC 9207 §2.4), as the provider's profile and discovery require it (response-iss.ts).
  checkResponseIss(get('iss'), tx);
  const state = get('state');
  if (state === undefined || !constantTimeEqual(state, tx.state)) {
    throw new SingpassFlowsError('LOGIN_STATE_MISMATCH', state === undefined
      ? 'The login response carries no "state"; it does not belong to this login'
      : 'The login response "state" does not match this login (a stale, replayed or forged callback)');
  }
  const error = get('error');
  if (error !== undefined) {
    const description = get('error_description');
    const meaning = PROVIDER_ERROR_MEANING[error];
    throw new SingpassFlowsError('LOGIN_PROVIDER_ERROR', `The provider ended the login with "${error}"${meaning ? ` (${meaning})` : ''}${description ? `: ${description.slice(0, 200)}` : ''}`,
      { serviceCode: error, retryable: error === 'temporarily_unavailable' || error === 'login_required' });
  }
  for (const name of FORBIDDEN) {
    if (params.has(name)) throw new SingpassFlowsError('LOGIN_RESPONSE_INVALID', `The login response carries "${name}", which a code-flow response never contains; refusing it`, { field: name });
  }
  const code = get('code');
  if (!code) throw new SingpassFlowsError('LOGIN_RESPONSE_INVALID', 'The login response carries no authorization code', { field: 'code' });
  return code;
}
