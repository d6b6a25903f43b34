/**
 * The ONE table of signing-API wire names and values that the spec leaves open, each tagged with where it comes
 * from. Confidence: [C] official, [C-2021] seen in a public 2021 client of the real
 * API, [I] inferred, [NF] not found. Each entry lists the name we SEND first, then aliases we ACCEPT when parsing,
 * so a correction is a one-line change here and nowhere else.
 */

/** Path prefix below `{dss_base_url}`; our `baseUrl` config already ends with it. [C] */
export const API_PREFIX = '/api/v1';
/** Create-session path (relative to `baseUrl`). [C] */
export const SESSIONS_PATH = '/doc-signing-sessions';
/** Hash-call path (relative to `baseUrl`). [C] */
export const hashPath = (signRef: string): string => `${SESSIONS_PATH}/${encodeURIComponent(signRef)}/hash`;

/** Header carrying our client assertion. [C] */
export const ASSERTION_HEADER = 'X-Dss-Assertion';
/** JWT `typ` of the assertion. [I] */
export const ASSERTION_TYP = 'JWT';
/** Maximum assertion lifetime we ever produce (`exp - iat`), seconds. [I] (sibling APIs cap at 120 s) */
export const ASSERTION_MAX_LIFETIME_S = 120;
/**
 * Default assertion audience: "the domain of the signing API". We send the origin of `baseUrl`
 * (`https://staging.sign.singpass.gov.sg`). [I] — override with `audience` if onboarding says otherwise.
 */
export const defaultAudience = (baseUrl: string): string => new URL(baseUrl).origin;

/** Create-session request body. [C] */
export const CREATE_SESSION_FIELDS = { notificationToken: 'client_notification_token', tenantId: 'tenant_id' } as const;

/** Create-session response fields: first name is canonical, the rest tolerated aliases. */
export const SESSION_RESPONSE_FIELDS = {
  signRef: ['sign_ref'], // [C]
  expiresAt: ['expires_at'], // [C]
  /** Object holding the QR data, `{payload, logo}`. [C-2021] */
  qrCode: ['qr_code'],
  /** QR payload inside `qr_code`, or at top level under these names. [C-2021] / aliases [I] */
  qrPayload: ['payload', 'qr_payload', 'qr_code_payload'],
  qrLogo: ['logo', 'qr_logo'],
} as const;

/** Hash-call request body: the name we send, then aliases the sandbox/service may use. */
export const HASH_FIELDS = {
  documentName: 'doc_name', // [C-2021]
  documentHash: 'doc_hash', // [C-2021]
  challengeCode: 'challenge_code', // [C-2021]
  nonce: 'nonce', // [C-2021]
  domainName: 'domain_name', // [I] (service may accept `domain`)
  appLink: 'app_launch_url', // [I] Singpass's name in the login API
} as const;

/** Webhook `request_type` values that tell the three events apart. [C-2021] */
export const REQUEST_TYPES = { certificate: ['user_cert'], signature: ['signed_doc_hash'], error: ['error'] } as const;

/** Webhook body field holding the JWT. [C-2021] / spec */
export const WEBHOOK_BODY_TOKEN = 'token';

/** Webhook JWT claims, canonical first then aliases. [C-2021] except the aliases [I]. */
export const WEBHOOK_CLAIMS = {
  signRef: ['sign_ref'],
  requestType: ['request_type'],
  userCert: ['user_cert', 'certificate', 'user_certificate'],
  nonce: ['nonce'],
  docHash: ['doc_hash', 'document_hash'],
  signature: ['doc_hash_signature', 'signature', 'signed_doc_hash'],
  errorCode: ['error', 'error_code'],
  errorMessage: ['error_description', 'message'],
  correlationId: ['ndi_request_id', 'correlation_id'],
} as const;

/** Accepted webhook JWT algorithms (the service signs with EC keys). [I] */
export const WEBHOOK_ALGS = ['ES256', 'ES384', 'ES512'];

/**
 * Our webhook error response body (DSAP → service): all three fields mandatory by spec §7; names [NF], chosen to
 * mirror the error notification claims.
 */
export const WEBHOOK_ERROR_BODY = { correlationId: 'ndi_request_id', errorCode: 'error', message: 'error_description' } as const;

/** Error codes we put in webhook error responses. [NF] except SIGN_REF_NOT_FOUND [C]. */
export const WEBHOOK_ERROR_CODES = {
  signRefNotFound: 'SIGN_REF_NOT_FOUND',
  invalidRequest: 'INVALID_REQUEST',
  unauthorized: 'INVALID_CLIENT_NOTIFICATION_TOKEN',
  tokenInvalid: 'INVALID_TOKEN',
  tokenExpired: 'TOKEN_EXPIRED',
  eventUnknown: 'UNKNOWN_REQUEST_TYPE',
  internal: 'SERVER_SIDE_ERROR',
} as const;

/** Service error body fields (`{id, error, error_description, trace_id}`), canonical first. [I] except id/trace_id [C]. */
export const API_ERROR_FIELDS = {
  id: ['id'],
  traceId: ['trace_id'],
  code: ['error', 'error_code', 'code'],
  message: ['error_description', 'message'],
} as const;

/** The one service error code the spec names. [C] */
export const SIGN_REF_NOT_FOUND = 'SIGN_REF_NOT_FOUND';

/** First present string among `names` in `obj` (tolerant parsing of aliases). */
export function pickString(obj: Record<string, unknown> | undefined, names: readonly string[]): string | undefined {
  if (!obj) return undefined;
  for (const n of names) {
    const v = obj[n];
    if (typeof v === 'string') return v;
  }
  return undefined;
}

/** First present value among `names` in `obj`. */
export function pickValue(obj: Record<string, unknown> | undefined, names: readonly string[]): unknown {
  if (!obj) return undefined;
  for (const n of names) if (obj[n] !== undefined) return obj[n];
  return undefined;
}
