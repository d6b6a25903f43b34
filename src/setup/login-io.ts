import { SingpassFlowsError, invalidInput } from '../errors';
import { openTransaction, sealTransaction, type CallbackInput, type CorppassClient, type CorppassFapiClient, type CorppassFapiLoginResult, type LoginTransaction } from '../login';

/**
 * What every front end's Start Login and Complete Login share across Corppass and Singpass: the login transaction travels SEALED
 * (AES-GCM under the credential's transaction secret) — normally in an HttpOnly cookie on the user's browser, which
 * also binds the callback to the browser that started the login.
 */
export const LOGIN_COOKIE = 'singpass_flows_login';

/** What a client's startLogin returns; `urlExpiresAt` only under FAPI 2.0 (a pushed request_uri expires). */
export interface LoginStart { url: string; transaction: LoginTransaction; urlExpiresAt?: number }

/** What Start Login outputs (see startLoginOutput). */
export type LoginStartOutput = {
  loginUrl: string;
  loginUrlExpiresAt?: string;
  transaction: string;
  setCookie: string;
  expiresAt: string;
};

/** Plain JSON (what a flow message or an n8n item carries). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * Start Login's output: the URL and until when it works (`loginUrlExpiresAt`, FAPI 2.0: about a minute), the sealed
 * transaction, the cookie carrying it, and when the whole login must be completed (`expiresAt`).
 */
export function startLoginOutput({ url, transaction: tx, urlExpiresAt }: LoginStart, secret: string, now = Date.now()): LoginStartOutput {
  const sealed = sealTransaction(tx, secret);
  const maxAge = Math.max(0, Math.floor((tx.expiresAt - now) / 1000));
  const secure = tx.redirectUri.startsWith('https:') ? '; Secure' : '';
  return {
    loginUrl: url,
    ...(urlExpiresAt === undefined ? {} : { loginUrlExpiresAt: new Date(urlExpiresAt).toISOString() }),
    transaction: sealed,
    // For a Respond to Webhook node: redirect to loginUrl with this Set-Cookie header.
    setCookie: `${LOGIN_COOKIE}=${sealed}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure}`,
    expiresAt: new Date(tx.expiresAt).toISOString(),
  };
}

/**
 * The sealed transaction from a parameter holding either the sealed value itself or a whole Cookie header (then the
 * {@link LOGIN_COOKIE} cookie is taken), opened and checked (not altered, not expired).
 */
export function readTransaction(value: unknown, secret: string): LoginTransaction {
  if (typeof value !== 'string' || !value.trim()) {
    throw invalidInput('Transaction', `is empty: pass the "transaction" Start Login returned, or the callback's Cookie header (with the ${LOGIN_COOKIE} cookie)`);
  }
  const cookie = new RegExp(`(?:^|;\\s*)${LOGIN_COOKIE}=([^;\\s]+)`).exec(value);
  return openTransaction(cookie ? cookie[1] : value.trim(), secret);
}

/** The callback as the Webhook node gives it: the full URL (string) or its query / form parameters (object). */
export function readCallback(value: unknown): CallbackInput {
  if (typeof value === 'string' && value.trim().startsWith('{')) {
    try {
      return readCallback(JSON.parse(value));
    } catch {
      throw invalidInput('Callback Parameters', 'is not valid JSON');
    }
  }
  if (typeof value === 'string' && value.trim()) return value.trim();
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, string | string[] | undefined>;
  throw invalidInput('Callback Parameters', 'pass the callback\'s query parameters (e.g. {{ $json.query }} of a Webhook node) or the full callback URL');
}

/**
 * Corppass, both adapters: start with the chosen profile. The authentication context (what the user approves) exists
 * only in FAPI 2.0; a value set under legacy is refused rather than silently dropped. The core checks the values.
 */
export async function startCorppassLogin(
  client: CorppassClient | CorppassFapiClient,
  o: { scope: string; authenticationContextType?: string; authenticationContextMessage?: string },
): Promise<LoginStart> {
  const { scope, authenticationContextType, authenticationContextMessage } = o;
  if (client.profile === 'fapi') return client.startLogin({ scope, authenticationContextType, authenticationContextMessage });
  for (const [field, v] of [['Authentication Context Type', authenticationContextType], ['Authentication Context Message', authenticationContextMessage]] as const) {
    if (v) throw invalidInput(field, 'only Corppass FAPI 2.0 Login apps send an authentication context; choose Profile "FAPI 2.0" in the Corppass client, or leave it empty');
  }
  return client.startLogin({ scope });
}

/** Corppass FAPI 2.0 has no separate authorization-info call: the roles come with Complete Login (scope authinfo). */
export function fapiRolesRefusal(what: string): SingpassFlowsError {
  return new SingpassFlowsError('INVALID_INPUT', `${what}: under Corppass FAPI 2.0 the roles come with "complete" login (add "authinfo" / "tpauthinfo" to the scope and read roles / authorizationInfo); there is no separate roles call`, { field: 'profile', retryable: false });
}

/** The FAPI 2.0 login result as the core returns it (user, entity, roles, authorizationInfo, …), as plain JSON. */
export function corppassFapiOutput(login: CorppassFapiLoginResult): { [key: string]: JsonValue } {
  return JSON.parse(JSON.stringify(login)) as { [key: string]: JsonValue };
}
