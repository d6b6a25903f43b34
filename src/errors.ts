/**
 * Every failure the package reports is a {@link SingpassFlowsError} with a stable `code` that adapters (n8n,
 * Node-RED) and users can switch on, a `message` a low-code user can act on, and optional `details` that are safe to
 * log (service `id`/`trace_id`, HTTP status, field names — never tokens, keys or certificates).
 */
export type ErrorCode =
  // input validation (before any call to a service)
  | 'INVALID_INPUT'
  // keys and credentials
  | 'KEY_INVALID'
  | 'KEY_UNSUPPORTED'
  | 'KEY_SET_FETCH_FAILED'
  | 'KEY_SET_INVALID'
  | 'KEY_NOT_FOUND'
  // transport
  | 'HTTP_TIMEOUT'
  | 'HTTP_NETWORK'
  | 'HTTP_REDIRECT_REFUSED'
  | 'HTTP_UNEXPECTED_RESPONSE'
  // signing API (service answers)
  | 'SIGN_REF_NOT_FOUND'
  | 'SIGN_AUTH_REJECTED'
  | 'SIGN_REQUEST_REJECTED'
  | 'SIGN_RATE_LIMITED'
  | 'SIGN_SERVICE_ERROR'
  // webhook
  | 'WEBHOOK_UNAUTHORIZED'
  | 'WEBHOOK_TOKEN_INVALID'
  | 'WEBHOOK_TOKEN_EXPIRED'
  | 'WEBHOOK_EVENT_UNKNOWN'
  | 'WEBHOOK_HANDLER_FAILED'
  // PAdES / PDF
  | 'PDF_INVALID'
  | 'PDF_ENCRYPTED'
  | 'PDF_CERTIFIED_NO_CHANGES'
  | 'PDF_FIELD_EXISTS'
  | 'PDF_PLACEHOLDER_TOO_SMALL'
  | 'SIGNATURE_INVALID'
  | 'CERTIFICATE_MISMATCH'
  | 'STATE_INVALID'
  // PKI
  | 'OCSP_FAILED'
  | 'OCSP_REVOKED'
  | 'OCSP_UNKNOWN'
  // a CRL that cannot be fetched or trusted (or is of a kind not supported: delta, indirect, partitioned); a certificate a CRL lists as revoked
  | 'CRL_FAILED'
  | 'CRL_REVOKED'
  | 'TSA_FAILED'
  | 'CHAIN_INCOMPLETE'
  // login
  | 'DISCOVERY_FAILED'
  | 'DISCOVERY_INVALID'
  | 'LOGIN_STATE_INVALID'
  | 'LOGIN_STATE_MISMATCH'
  | 'LOGIN_ISSUER_MISMATCH'
  | 'LOGIN_PROVIDER_ERROR'
  | 'LOGIN_RESPONSE_INVALID'
  | 'TOKEN_REQUEST_FAILED'
  | 'ID_TOKEN_INVALID'
  | 'USERINFO_INVALID'
  | 'AUTHORIZATION_INFO_INVALID'
  | 'DPOP_FAILED'
  | 'PAR_FAILED'
  | 'ASSURANCE_INSUFFICIENT'
  // a Corppass user without a role the flow requires (e.g. to sign for the company)
  | 'ROLE_REQUIRED'
  // a login granted without the scope a step needs (the Corppass roles need `authinfo`)
  | 'SCOPE_REQUIRED'
  // a signer's page or signed-document link: past its expiry, or not one this flow issued for that session
  | 'LINK_EXPIRED'
  | 'LINK_INVALID'
  // Session engine: the user's certificate checked before the hash; a session that ran out of time
  | 'CERTIFICATE_EXPIRED'
  | 'CERTIFICATE_NOT_YET_VALID'
  | 'CERTIFICATE_UNTRUSTED'
  | 'SESSION_EXPIRED'
  // a session store (the file store's per-record lock held by another save for too long; the PostgreSQL store's server
  // unreachable, shutting down or starting, timed out, out of connections: retry)
  | 'STORE_BUSY'
  // a session store refusing what a retry cannot fix (the PostgreSQL store: login or rights refused, tables at a newer
  // schema version than this package knows, the store closed)
  | 'STORE_FAILED'
  // the flow's storage step refused a signed PDF handed over to it (it is handed over again)
  | 'HANDOVER_FAILED'
  // a signed PDF handed over to the flow and never acknowledged within the hand-over window (kept in the store)
  | 'HANDOVER_UNACKNOWLEDGED';

export interface ErrorDetails {
  /** HTTP status of a service answer, when there was one. */
  status?: number;
  /** The service's error `id` (log it when contacting support). */
  serviceErrorId?: string;
  /** The service's `trace_id` (log it when contacting support). */
  traceId?: string;
  /** The service's own error code string, e.g. `ARGUMENTS_NOT_VALID`. */
  serviceCode?: string;
  /** Name of the offending input field, for validation errors. */
  field?: string;
  /** Whether repeating the same call later can succeed. */
  retryable?: boolean;
  [key: string]: unknown;
}

export class SingpassFlowsError extends Error {
  override readonly name = 'SingpassFlowsError';
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.details = details;
  }

  /** Plain, log-safe data (what adapters put in an error output). */
  toJSON(): { code: ErrorCode; message: string; details: ErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

export function isSingpassFlowsError(e: unknown, code?: ErrorCode): e is SingpassFlowsError {
  return e instanceof SingpassFlowsError && (code === undefined || e.code === code);
}

/** Shorthand for validation failures: names the field so a low-code user knows what to fix. */
export function invalidInput(field: string, message: string): SingpassFlowsError {
  return new SingpassFlowsError('INVALID_INPUT', `${field}: ${message}`, { field, retryable: false });
}
