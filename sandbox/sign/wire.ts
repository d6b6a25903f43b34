/**
 * The sandbox signing service's own table of wire names and values (the spec leaves them open).
 * Confidence tags: [C] official, [C-2021] seen in a public 2021 client of the real API, [I] inferred, [NF] not found
 * (chosen here). The sandbox is a peer of our client: it keeps its own copy of these names on purpose, so a mistake
 * on one side does not hide in the other.
 */

/** API paths below the service prefix `/sign` (the sandbox's `dss_base_url` is `<origin>/sign`). [C] */
export const API_BASE_PATH = '/api/v1';
export const SESSIONS_PATH = `${API_BASE_PATH}/doc-signing-sessions`;
/** Service key set (`dss_static_url` + this). [C] */
export const KEYS_PATH = '/static/.well-known/keys.json';

/** Request header carrying the DSAP's client assertion. [C] */
export const ASSERTION_HEADER = 'x-dss-assertion';
/** Accepted assertion `typ` and algorithms. [I] */
export const ASSERTION_TYP = 'JWT';
export const ASSERTION_ALGS = ['ES256', 'ES384', 'ES512'] as const;
/** Maximum assertion lifetime `exp - iat`, seconds. [I] */
export const ASSERTION_MAX_LIFETIME_S = 120;

/** Create-session body. [C] */
export const CREATE_FIELDS = { notificationToken: 'client_notification_token', tenantId: 'tenant_id' } as const;
/** Hash-call body: canonical name first, then tolerated aliases. [C-2021] except domain/app link [I]. */
export const HASH_FIELDS = {
  docName: ['doc_name'],
  docHash: ['doc_hash'],
  challengeCode: ['challenge_code'],
  nonce: ['nonce'],
  domainName: ['domain_name', 'domain'],
  appLaunchUrl: ['app_launch_url'],
} as const;

/** Create-session response: `{sign_ref, expires_at, qr_code: {payload}}`. [C] / `qr_code.payload` [C-2021] */
export const SESSION_RESPONSE = { signRef: 'sign_ref', expiresAt: 'expires_at', qrCode: 'qr_code', qrPayload: 'payload' } as const;

/** QR payload deep link. [C-2021]; the Mar 2025 deep-link format is [NF]. One place to change it (both directions). */
export const QR_PAYLOAD_FORMAT = (signRef: string): string => `https://singpassmobile.sg/docsign?sign_ref=${encodeURIComponent(signRef)}`;
/** The `sign_ref` in a QR payload made by {@link QR_PAYLOAD_FORMAT} (what the phone reads when it scans). */
export function signRefFromQrPayload(payload: string): string | undefined {
  try {
    return new URL(payload).searchParams.get('sign_ref') ?? undefined;
  } catch {
    return undefined;
  }
}

/** Webhook `request_type` values. [C-2021] */
export const REQUEST_TYPES = { userCert: 'user_cert', signedDocHash: 'signed_doc_hash', error: 'error' } as const;
export type RequestType = (typeof REQUEST_TYPES)[keyof typeof REQUEST_TYPES];
/** Webhook JWT claims (besides `iat`/`exp`). [C-2021] */
export const CLAIMS = {
  signRef: 'sign_ref',
  requestType: 'request_type',
  userCert: 'user_cert',
  nonce: 'nonce',
  docHash: 'doc_hash',
  docHashSignature: 'doc_hash_signature',
  error: 'error',
  errorDescription: 'error_description',
  correlationId: 'ndi_request_id',
} as const;
/** Webhook JWT lifetime, seconds. [C-2021] */
export const WEBHOOK_TOKEN_LIFETIME_S = 120;

/**
 * Error codes in webhook error notifications. `client_notification_failed` is [C-2021]; the others are [NF] names
 * chosen by the sandbox for the phone's reject/timeout/invalid-signature cases.
 */
export const NOTIFICATION_ERRORS = {
  clientNotificationFailed: 'client_notification_failed',
  userCancelled: 'user_cancelled',
  signatureInvalid: 'signature_invalid',
} as const;

/** API error body fields. [I] from Singpass's other APIs except `id`/`trace_id` (named by the spec) [C]. */
export const ERROR_BODY = { id: 'id', code: 'error', message: 'error_description', traceId: 'trace_id' } as const;

/**
 * API error codes (body {@link ERROR_BODY}). [I] from Singpass's other APIs except
 * `SIGN_REF_NOT_FOUND` [C]. HTTP status in the comment.
 */
export const API_ERRORS = {
  /** 400: malformed request (body not JSON, wrong content type). */
  clientSideError: 'CLIENT_SIDE_ERROR',
  /** 400: a body field fails its rule (length, characters, hex, nonce mismatch, call out of order). */
  argumentsNotValid: 'ARGUMENTS_NOT_VALID',
  /** 400: unknown, expired or foreign `sign_ref`. */
  signRefNotFound: 'SIGN_REF_NOT_FOUND',
  /** 401: neither `X-Dss-Assertion` nor `Authorization` present. */
  unauthorized: 'UNAUTHORIZED',
  /** 401: assertion present but invalid (typ, alg, kid, signature, iss/sub/aud, iat/exp, jti replay) or Basic wrong. */
  invalidAssertion: 'INVALID_ASSERTION',
  /** 400: more than one `X-Dss-Assertion` header. */
  multipleAssertions: 'MULTIPLE_ASSERTION_HEADERS',
  /** 401: client has no key-set URL registered / unknown client. */
  jwksNotFound: 'CLIENT_JWKS_NOT_FOUND',
  /** 401: the client's key set cannot be fetched or holds no usable EC key. */
  jwksInvalid: 'CLIENT_JWKS_INVALID',
  /** 404: no such route. */
  notFound: 'NOT_FOUND',
  /** 429: rate limit (fault switch). */
  tooManyRequests: 'TOO_MANY_REQUESTS',
  /** 5xx: internal error (fault switch). */
  serverSideError: 'SERVER_SIDE_ERROR',
} as const;
export type ApiErrorCode = (typeof API_ERRORS)[keyof typeof API_ERRORS];

/** `client_notification_token` and `tenant_id`: letters, digits, `_`, `-`, whitespace; 1..255. [C] */
export const TOKEN_CHARSET = /^[A-Za-z0-9_\-\s]{1,255}$/;
