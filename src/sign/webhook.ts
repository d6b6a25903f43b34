import { hash, randomUUID } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { constantTimeEqual } from '../secrets';
import { SingpassFlowsError, invalidInput, isSingpassFlowsError, type ErrorCode } from '../errors';
import { checkNumberSetting } from '../settings';
import { systemClock, type Clock } from '../clock';
import type { Fetch } from '../http';
import { RemoteKeySet, verifyJwsWithKeySet } from '../keys';
import { MemoryDeliveryLog, type DeliveryLog } from './delivery-log';
import { isSha256Hex } from './validate';
import { readUserCertificate, type UserCertificate } from './user-certificate';

export type { UserCertificate };
import {
  REQUEST_TYPES, WEBHOOK_ALGS, WEBHOOK_BODY_TOKEN, WEBHOOK_CLAIMS, WEBHOOK_ERROR_BODY, WEBHOOK_ERROR_CODES, pickString,
} from './wire';

/** The user scanned the QR code: build the hash with this certificate and submit it with the nonce. */
export interface CertificateEvent {
  type: 'certificate';
  signRef: string;
  nonce: string;
  certificate: UserCertificate;
  issuedAt: number;
}

/** The user signed: `signature` is the DER ECDSA/RSA signature over `documentHash` (hex, not re-hashed). */
export interface SignatureEvent {
  type: 'signature';
  signRef: string;
  documentHash: string;
  /** Hex-encoded DER. */
  signature: string;
  issuedAt: number;
}

/** Something failed on the service or phone side (e.g. the user cancelled). */
export interface SigningErrorEvent {
  type: 'error';
  signRef: string;
  errorCode: string;
  message: string;
  correlationId: string;
  issuedAt: number;
}

export type SigningEvent = CertificateEvent | SignatureEvent | SigningErrorEvent;

/**
 * The HTTP answer to give the service: 200 to acknowledge, 400 for a bad request, 503 so the service retries (our
 * key set unreachable, a just-rotated key not yet fetchable, a failing store).
 */
export type WebhookResponse =
  | { status: 200 }
  | { status: 400 | 503; body: Record<string, string> };

export interface WebhookResult {
  response: WebhookResponse;
  /** The verified event (also set for a duplicate, so it can be logged; do not act on it twice). */
  event?: SigningEvent;
  /** True when this event was already delivered (the service retries and may deliver twice). */
  duplicate: boolean;
  /** Why the delivery was refused, log-safe; `field` names the claim or part at fault when there is one. */
  error?: { code: ErrorCode; message: string; field?: string };
}

export interface WebhookRequest {
  /** Request headers (Node's `IncomingHttpHeaders`, a plain object or a fetch `Headers`). */
  headers: Record<string, string | string[] | undefined> | Headers;
  /** Raw body (Buffer/string) or an already-parsed JSON object. */
  body: Buffer | string | Record<string, unknown> | undefined;
  /**
   * The `client_notification_token` of the session, or a lookup by `sign_ref` when one webhook URL serves many
   * sessions (return undefined for an unknown or finished session).
   */
  expectedToken: string | ((signRef: string) => string | undefined | Promise<string | undefined>);
  /** Duplicate detection; defaults to the verifier's in-memory log. */
  seen?: DeliveryLog;
}

export interface WebhookVerifierOptions {
  /** `{dss_static_url}/.well-known/keys.json`. */
  keySetUrl: string;
  fetch?: Fetch;
  clock?: Clock;
  /** Clock skew tolerated on iat/exp (default 30 s). */
  clockToleranceSeconds?: number;
  /** How long delivered events are remembered for duplicate detection (default 15 min). */
  duplicateWindowSeconds?: number;
  /** Passed to the key set: minimum seconds between on-demand refetches (default 30). */
  refetchCooldownSeconds?: number;
  timeoutMs?: number;
}

export interface WebhookVerifier {
  /** Check one delivery and say what to answer. Never throws for bad input: the service always gets an answer. */
  handle(request: WebhookRequest): Promise<WebhookResult>;
  /**
   * Fetch the service key set now (e.g. when the webhook is activated), so the first delivery is answered at once:
   * the service expects an immediate 200 and retries only after its own timeout.
   */
  warmUp(): Promise<void>;
  /** The cached service key set (shared by every session). */
  readonly keySet: RemoteKeySet;
}

/** Longest token lifetime we accept (the service uses 120 s); bounds replay of a captured token. */
const MAX_TOKEN_LIFETIME_S = 600;

/**
 * The DSAP side of the signing webhook (spec §5.3, §6): Bearer token checked in constant time, the JWT verified
 * against the service key set (cached ≥ 1 h, one refetch on rotation), decoded into a typed event, duplicates
 * recognised. Create ONE verifier per environment and reuse it: it holds the key-set cache.
 *
 * @example
 * const verifier = createWebhookVerifier({ keySetUrl: 'https://static.staging.sign.singpass.gov.sg/.well-known/keys.json' });
 * const { response, event, duplicate } = await verifier.handle({ headers: req.headers, body: rawBody, expectedToken: state.clientNotificationToken });
 * res.status(response.status).json('body' in response ? response.body : undefined);
 */
export function createWebhookVerifier(options: WebhookVerifierOptions): WebhookVerifier {
  if (!options || typeof options !== 'object') throw invalidInput('options', 'the webhook verifier needs at least { keySetUrl }');
  const clock = options.clock ?? systemClock;
  const keySet = new RemoteKeySet(options.keySetUrl, {
    fetch: options.fetch, clock, timeoutMs: options.timeoutMs, refetchCooldownSeconds: options.refetchCooldownSeconds,
  });
  const defaultLog = new MemoryDeliveryLog({ clock });
  const windowMs = (checkNumberSetting('duplicateWindowSeconds', options.duplicateWindowSeconds, { min: 1, max: 7 * 24 * 3600, unit: 'seconds' }) ?? 900) * 1000;
  const clockToleranceSeconds = checkNumberSetting('clockToleranceSeconds', options.clockToleranceSeconds, { min: 0, max: 300, unit: 'seconds' }) ?? 30;

  async function handle(request: WebhookRequest): Promise<WebhookResult> {
    try {
      const token = readToken(request.body);
      const presented = readBearer(request.headers);
      const lookedUp = typeof request.expectedToken === 'function' ? unverifiedSignRef(token) : undefined;
      let expected = lookedUp !== undefined && typeof request.expectedToken === 'function'
        ? request.expectedToken(lookedUp)
        : request.expectedToken as string;
      // awaited only when the lookup is asynchronous: a microtask hop per delivery is measurable on this hot path
      if (isPromise(expected)) expected = await expected;
      if (typeof request.expectedToken === 'function' && expected === undefined) {
        throw new SingpassFlowsError('SIGN_REF_NOT_FOUND', 'The webhook names a signing session that is unknown or finished', { retryable: false });
      }
      if (!presented || !expected || !constantTimeEqual(presented, expected.trimEnd())) {
        throw new SingpassFlowsError('WEBHOOK_UNAUTHORIZED', presented
          ? 'The webhook Bearer token does not match the session\'s client notification token'
          : 'The webhook call has no "Authorization: Bearer" token', { retryable: false });
      }
      const { payload } = await verifyJwsWithKeySet(token, keySet, {
        algorithms: WEBHOOK_ALGS,
        errorCode: 'WEBHOOK_TOKEN_INVALID',
        expiredCode: 'WEBHOOK_TOKEN_EXPIRED',
        what: 'webhook token',
        requireKid: true, // sign-api §4.3: "Pick the key by the kid in the JWS header; never assume position"
        clock,
        clockToleranceSeconds,
      });
      if ((payload.exp as number) - (payload.iat as number) > MAX_TOKEN_LIFETIME_S) {
        throw new SingpassFlowsError('WEBHOOK_TOKEN_INVALID', `The webhook token is valid for more than ${MAX_TOKEN_LIFETIME_S} s ("exp" - "iat"); refusing it`, { field: 'exp' });
      }
      const event = toEvent(payload);
      // the Bearer was chosen by the unverified sign_ref: it must be the one the service signed
      if (lookedUp !== undefined && event.signRef !== lookedUp) {
        throw new SingpassFlowsError('WEBHOOK_UNAUTHORIZED', 'The webhook token\'s signed sign_ref is not the one its Bearer token was looked up by', { retryable: false });
      }
      const log = request.seen ?? defaultLog;
      let first = log.remember(deliveryKey(event), clock() + windowMs);
      if (isPromise(first)) first = await first;
      return { response: { status: 200 }, event, duplicate: !first };
    } catch (e) {
      // Anything not ours (a failing DeliveryLog store or session lookup) is our own fault: 503, the service retries.
      const err = isSingpassFlowsError(e) ? e : new SingpassFlowsError('WEBHOOK_HANDLER_FAILED', `The webhook handler failed: ${(e as Error)?.message ?? e}`, { retryable: true });
      const field = typeof err.details.field === 'string' ? { field: err.details.field } : {};
      return { response: errorResponse(err), duplicate: false, error: { code: err.code, message: err.message, ...field } };
    }
  }

  return { handle, keySet, warmUp: () => keySet.prefetch() };
}

const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => typeof (v as Promise<T> | undefined)?.then === 'function';

/** Far above any real notification (a JWT carrying one certificate is a few KB); refused before parsing. */
const MAX_BODY_BYTES = 256 * 1024;

function readToken(body: WebhookRequest['body']): string {
  let json: unknown = body;
  if (Buffer.isBuffer(body) || typeof body === 'string') {
    if (body.length > MAX_BODY_BYTES) throw new SingpassFlowsError('WEBHOOK_TOKEN_INVALID', `The webhook body is larger than ${MAX_BODY_BYTES / 1024} KB; refusing it`);
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      throw new SingpassFlowsError('WEBHOOK_TOKEN_INVALID', 'The webhook body is not JSON (expected {"token": "<JWT>"})');
    }
  }
  const token = json && typeof json === 'object' ? (json as Record<string, unknown>)[WEBHOOK_BODY_TOKEN] : undefined;
  if (typeof token !== 'string' || token === '') throw new SingpassFlowsError('WEBHOOK_TOKEN_INVALID', `The webhook body has no "${WEBHOOK_BODY_TOKEN}" string`, { field: WEBHOOK_BODY_TOKEN });
  if (token.length > MAX_BODY_BYTES) throw new SingpassFlowsError('WEBHOOK_TOKEN_INVALID', `The webhook token is larger than ${MAX_BODY_BYTES / 1024} KB; refusing it`, { field: WEBHOOK_BODY_TOKEN });
  return token;
}

/** The `Authorization: Bearer` value of a webhook request (undefined when absent or ambiguous). */
export function readBearer(headers: WebhookRequest['headers']): string | undefined {
  let value: string | string[] | null | undefined;
  if (typeof (headers as Headers)?.get === 'function') value = (headers as Headers).get('authorization');
  else {
    // Authorization under two spellings is as ambiguous as two Authorization headers (one pass, no arrays built:
    // this runs on every delivery)
    let found = 0;
    for (const k in headers ?? {}) {
      if (k.length !== 13 || !Object.hasOwn(headers, k) || k.toLowerCase() !== 'authorization') continue;
      found++;
      value = found === 1 ? (headers as Record<string, string | string[] | undefined>)[k] : [];
    }
  }
  if (Array.isArray(value)) {
    if (value.length !== 1) return undefined; // two Authorization headers: ambiguous, refuse
    value = value[0];
  }
  // client_notification_token may itself contain spaces (spec §4.1), so take everything after "Bearer ";
  // trailing whitespace is dropped because HTTP strips it in transit.
  const match = /^Bearer (.+)$/is.exec(value ?? '');
  const token = match?.[1].trimEnd();
  return token ? token : undefined;
}

/**
 * sign_ref read WITHOUT verification, only to find the session's expected Bearer token. Buffer's base64url decoding
 * (several times cheaper than jose's decodeJwt) is lenient, but jose decodes the same part strictly when it verifies,
 * and handle() then requires the verified sign_ref to be this one.
 */
function unverifiedSignRef(token: string): string {
  let payload: unknown;
  try {
    const parts = token.split('.');
    if (parts.length !== 3) throw new Error('not three parts');
    payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    throw new SingpassFlowsError('WEBHOOK_TOKEN_INVALID', 'The webhook token is not a readable JWT');
  }
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) throw new SingpassFlowsError('WEBHOOK_TOKEN_INVALID', 'The webhook token is not a readable JWT');
  const ref = pickString(payload as Record<string, unknown>, WEBHOOK_CLAIMS.signRef);
  if (!ref) throw new SingpassFlowsError('WEBHOOK_TOKEN_INVALID', 'The webhook token has no sign_ref');
  return ref;
}

function claim(payload: Record<string, unknown>, names: readonly string[], what: string): string {
  const v = pickString(payload, names);
  if (!v) throw new SingpassFlowsError('WEBHOOK_TOKEN_INVALID', `The webhook token has no ${what} ("${names[0]}")`, { field: names[0] });
  return v;
}

function toEvent(payload: JWTPayload): SigningEvent {
  const p = payload as Record<string, unknown>;
  const signRef = claim(p, WEBHOOK_CLAIMS.signRef, 'sign_ref');
  const requestType = claim(p, WEBHOOK_CLAIMS.requestType, 'request type');
  const issuedAt = payload.iat as number;
  if ((REQUEST_TYPES.certificate as readonly string[]).includes(requestType)) {
    return {
      type: 'certificate', signRef, issuedAt,
      nonce: claim(p, WEBHOOK_CLAIMS.nonce, 'nonce'),
      certificate: parseCertificate(claim(p, WEBHOOK_CLAIMS.userCert, 'user certificate')),
    };
  }
  if ((REQUEST_TYPES.signature as readonly string[]).includes(requestType)) {
    const documentHash = claim(p, WEBHOOK_CLAIMS.docHash, 'document hash');
    const signature = claim(p, WEBHOOK_CLAIMS.signature, 'signature');
    if (!isSha256Hex(documentHash)) throw new SingpassFlowsError('WEBHOOK_TOKEN_INVALID', `The signature notification carries a document hash ("${WEBHOOK_CLAIMS.docHash[0]}") that is not 64 hex characters`, { field: WEBHOOK_CLAIMS.docHash[0] });
    // Hex of 8..1024 bytes: ECDSA as DER (the spec) or raw r||s (some devices), RSA PKCS#1 up to 8192 bits. Which one
    // it is, and whether it verifies, is decided against the user's certificate when the signature is embedded.
    if (!/^(?:[0-9a-fA-F]{2}){8,1024}$/.test(signature)) throw new SingpassFlowsError('WEBHOOK_TOKEN_INVALID', `The signature notification carries a signature ("${WEBHOOK_CLAIMS.signature[0]}") that is not 8 to 1024 hex-encoded bytes`, { field: WEBHOOK_CLAIMS.signature[0] });
    return { type: 'signature', signRef, issuedAt, documentHash: documentHash.toLowerCase(), signature: signature.toLowerCase() };
  }
  if ((REQUEST_TYPES.error as readonly string[]).includes(requestType)) {
    return {
      type: 'error', signRef, issuedAt,
      errorCode: pickString(p, WEBHOOK_CLAIMS.errorCode) ?? 'unknown_error',
      message: pickString(p, WEBHOOK_CLAIMS.errorMessage) ?? '',
      correlationId: pickString(p, WEBHOOK_CLAIMS.correlationId) ?? '',
    };
  }
  // JSON.stringify escapes control characters: a hostile value cannot write terminal escapes into our logs
  throw new SingpassFlowsError('WEBHOOK_EVENT_UNKNOWN', `The webhook request type ("${WEBHOOK_CLAIMS.requestType[0]}") ${JSON.stringify(requestType.slice(0, 40))} is not one this package knows`, { field: WEBHOOK_CLAIMS.requestType[0] });
}

function parseCertificate(base64: string): UserCertificate {
  const der = Buffer.from(base64, 'base64');
  const canonical = der.toString('base64');
  // base64 decoding is lenient; a round trip proves the claim really was base64 of these bytes
  if (der.length === 0 || (canonical !== base64 && canonical.replace(/=+$/, '') !== base64.replace(/\s+/g, '').replace(/=+$/, ''))) {
    throw new SingpassFlowsError('WEBHOOK_TOKEN_INVALID', `The certificate notification carries a certificate ("${WEBHOOK_CLAIMS.userCert[0]}") that is not base64 DER`, { field: WEBHOOK_CLAIMS.userCert[0] });
  }
  return readUserCertificate(der, canonical);
}

/**
 * Identity of an EVENT, not of a token: the service may re-sign (new iat) when it retries, so hashing the token
 * would miss those duplicates.
 */
function deliveryKey(event: SigningEvent): string {
  const distinct = event.type === 'certificate' ? event.nonce : event.type === 'signature' ? `${event.documentHash}:${event.signature}` : `${event.errorCode}:${event.correlationId}`;
  // SHA-256 (one-shot): a shared store gets short keys of one length, and no two events share one
  return hash('sha256', `${event.type}\n${event.signRef}\n${distinct}`, 'base64url');
}

const WEBHOOK_CODE_FOR: Partial<Record<ErrorCode, string>> = {
  SIGN_REF_NOT_FOUND: WEBHOOK_ERROR_CODES.signRefNotFound,
  WEBHOOK_UNAUTHORIZED: WEBHOOK_ERROR_CODES.unauthorized,
  WEBHOOK_TOKEN_INVALID: WEBHOOK_ERROR_CODES.tokenInvalid,
  WEBHOOK_TOKEN_EXPIRED: WEBHOOK_ERROR_CODES.tokenExpired,
  WEBHOOK_EVENT_UNKNOWN: WEBHOOK_ERROR_CODES.eventUnknown,
};

/** DSAP-side transient failures (key set unreachable): answer 503 so the service retries (spec §6 rule 5). */
// A failing session store (STORE_*) is our own fault like any other: the service retries.
const TRANSIENT: ErrorCode[] = ['WEBHOOK_HANDLER_FAILED', 'STORE_BUSY', 'STORE_FAILED', 'KEY_SET_FETCH_FAILED', 'KEY_SET_INVALID', 'HTTP_TIMEOUT', 'HTTP_NETWORK', 'HTTP_UNEXPECTED_RESPONSE', 'HTTP_REDIRECT_REFUSED'];

/**
 * The spec's webhook error body (wire names from the wire table) with a fresh correlation id. The front ends answer
 * with it when they fail before or after the verifier (body unreadable, engine not configured, store down).
 */
export function webhookErrorBody(message: string, code: string = WEBHOOK_ERROR_CODES.internal): Record<string, string> {
  return { [WEBHOOK_ERROR_BODY.correlationId]: randomUUID(), [WEBHOOK_ERROR_BODY.errorCode]: code, [WEBHOOK_ERROR_BODY.message]: message };
}

/** 503 "please retry": our own failure (a store, the engine), never the service's; the service delivers again. */
export function temporaryWebhookFailure(): { status: 503; body: Record<string, string> } {
  return { status: 503, body: webhookErrorBody('Temporary failure at the DSAP; please retry') };
}

function errorResponse(err: SingpassFlowsError): WebhookResponse {
  // An unknown kid right after a key rotation: our refetch may have been rate-limited just now. The Bearer already
  // matched, so this is the service, not an attacker: let it retry (it waits ~2 s) instead of failing the session.
  const unknownKid = isSingpassFlowsError(err.cause, 'KEY_NOT_FOUND');
  const transient = TRANSIENT.includes(err.code) || unknownKid;
  const code = transient ? WEBHOOK_ERROR_CODES.internal : WEBHOOK_CODE_FOR[err.code] ?? WEBHOOK_ERROR_CODES.invalidRequest;
  // Little detail to the caller (it may not be the service); the full message stays in `error` for our logs.
  const message = unknownKid ? 'Signing key not (yet) known to the DSAP; please retry' : transient ? 'Temporary failure at the DSAP; please retry' : publicMessage(err.code);
  return { status: transient ? 503 : 400, body: webhookErrorBody(message, code) };
}

function publicMessage(code: ErrorCode): string {
  switch (code) {
    case 'SIGN_REF_NOT_FOUND': return 'Unknown or expired sign_ref';
    case 'WEBHOOK_UNAUTHORIZED': return 'Invalid client notification token';
    case 'WEBHOOK_TOKEN_EXPIRED': return 'Token expired';
    case 'WEBHOOK_EVENT_UNKNOWN': return 'Unknown request type';
    default: return 'Invalid token';
  }
}
