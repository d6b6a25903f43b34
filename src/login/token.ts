import { SingpassFlowsError, type ErrorCode } from '../errors';
import { safeUrl, type HttpResponse } from '../http';

/** A validated token endpoint answer (RFC 6749 §5.1). */
export interface TokenResponse {
  accessToken: string;
  tokenType: 'Bearer' | 'DPoP';
  idToken: string;
  /** Seconds; absent when the provider did not say (tolerated, RFC 6749 §5.1). */
  expiresIn?: number;
  /** Granted scope; the requested scope when the provider did not say. */
  scope: string;
}

/** Map an OAuth error answer (RFC 6749 §5.2) to a typed error; `error_description` is log-safe text from the service. */
export function oauthError(res: HttpResponse, code: ErrorCode, what: string): SingpassFlowsError {
  let error: string | undefined;
  let description: string | undefined;
  try {
    const body = JSON.parse(res.body.toString('utf8')) as { error?: unknown; error_description?: unknown };
    if (typeof body?.error === 'string') error = body.error;
    if (typeof body?.error_description === 'string') description = body.error_description.slice(0, 200);
  } catch {
    /* not JSON: status only */
  }
  const hint = error === 'invalid_client' ? ' (check the client ID and that the signing key is in the registered key set)' :
    error === 'invalid_grant' ? ' (the login code was already used, expired, or the PKCE verifier does not match; start the login again)' : '';
  return new SingpassFlowsError(code, `The ${what} refused the request: HTTP ${res.status}${error ? ` ${error}` : ''}${description ? ` – ${description}` : ''}${hint}`,
    { status: res.status, serviceCode: error, retryable: res.status >= 500 });
}

/**
 * Validate a token response. `expectedType` is what we asked for: a `Bearer` answer to a DPoP request is a
 * downgrade (the token would be usable by anyone who steals it) and is discarded (RFC 9449 §5).
 */
export function parseTokenResponse(res: HttpResponse, url: string, expectedType: 'Bearer' | 'DPoP', requestedScope: string): TokenResponse {
  if (res.status !== 200) throw oauthError(res, 'TOKEN_REQUEST_FAILED', `token endpoint (${safeUrl(url)})`);
  const bad = (msg: string) => new SingpassFlowsError('TOKEN_REQUEST_FAILED', `The token response ${msg}`, { status: res.status });
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    throw bad('is not JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw bad('is not a JSON object');
  if (typeof body.access_token !== 'string' || !body.access_token) throw bad('has no access_token');
  if (typeof body.token_type !== 'string') throw bad('has no token_type');
  const type = body.token_type.toLowerCase();
  if (type !== 'bearer' && type !== 'dpop') throw bad(`has an unsupported token_type "${body.token_type}"`);
  if (type !== expectedType.toLowerCase()) {
    throw bad(expectedType === 'DPoP'
      ? 'returned a Bearer token although the request was DPoP-bound (downgrade); the tokens are discarded'
      : `returned token_type "${body.token_type}", expected Bearer`);
  }
  if (body.expires_in !== undefined && (typeof body.expires_in !== 'number' || !Number.isFinite(body.expires_in) || body.expires_in < 0)) throw bad('has an invalid expires_in (not a non-negative number of seconds)');
  if (body.scope !== undefined && typeof body.scope !== 'string') throw bad('has a non-string scope');
  if (body.refresh_token !== undefined && typeof body.refresh_token !== 'string') throw bad('has a non-string refresh_token');
  if (typeof body.id_token !== 'string' || !body.id_token) throw bad('has no id_token although "openid" was requested');
  return {
    accessToken: body.access_token,
    tokenType: expectedType,
    idToken: body.id_token,
    expiresIn: body.expires_in,
    scope: body.scope ?? requestedScope,
  };
}

/** Form body for a back-channel POST. */
export function formBody(params: Record<string, string | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) p.set(k, v);
  return p.toString();
}

export const FORM_HEADERS = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8', accept: 'application/json' };
