import { SingpassFlowsError, invalidInput, type ErrorCode, type ErrorDetails } from '../errors';
import { httpRequest, parseJsonBody, requireHttpsUrl, type Fetch, type HttpResponse } from '../http';
import { systemClock, type Clock } from '../clock';
import { checkNumberSetting, checkTimeoutMs } from '../settings';
import type { LoadedKey } from '../keys';
import { createDssAssertion } from './assertion';
import {
  checkAppLink, checkChallengeCode, checkDocumentHash, checkDocumentName, checkDomainName, checkNonce,
  checkSessionField, checkSignRef,
} from './validate';
import {
  API_ERROR_FIELDS, ASSERTION_HEADER, ASSERTION_MAX_LIFETIME_S, CREATE_SESSION_FIELDS, HASH_FIELDS, SESSIONS_PATH, SESSION_RESPONSE_FIELDS,
  SIGN_REF_NOT_FOUND, defaultAudience, hashPath, pickString, pickValue,
} from './wire';

/** Deprecated HTTP Basic credentials (spec §5.2). Only used when explicitly configured. */
export interface BasicAuth {
  basic: { clientId: string; clientSecret: string };
}

export interface RetryOptions {
  /** Total attempts for retryable failures (5xx, network, timeout); default 2 (one retry). 1 disables retries. */
  attempts?: number;
  /** Pause between attempts, ms (default 500). */
  delayMs?: number;
  /**
   * Also retry create-session. Off by default: it is not idempotent — a retry after a lost answer leaves an
   * orphan session and the QR code shown belongs to the second one.
   */
  createSession?: boolean;
}

export interface SigningApiConfig {
  /** `{dss_base_url}/api/v1`, e.g. `https://staging.sign.singpass.gov.sg/api/v1`. */
  baseUrl: string;
  /** Client ID given at onboarding. */
  clientId: string;
  /** The DSAP's EC signing key for `X-Dss-Assertion` (recommended). */
  signingKey?: LoadedKey;
  /** Deprecated Basic authentication, used only when no `signingKey` is given. */
  auth?: BasicAuth;
  /** Assertion audience; default: the origin of `baseUrl`. */
  audience?: string;
  /** Assertion lifetime in seconds (1..120, default 60). */
  assertionLifetimeSeconds?: number;
  fetch?: Fetch;
  clock?: Clock;
  timeoutMs?: number;
  retry?: RetryOptions;
  /** Injectable pause (tests); default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
}

/** What create-session returns. */
export interface SigningSession {
  signRef: string;
  /** Text to encode as the QR code (see `renderQr`). */
  qrPayload: string;
  /** Logo the service suggests for the QR centre, when it sends one. */
  qrLogo?: string;
  /** UNIX seconds. The DSAP is not told when the session expires. */
  expiresAt: number;
}

export interface CreateSessionInput {
  /** Secret the service will send back as Bearer to the webhook; generate one per session (see `generateNotificationToken`). */
  clientNotificationToken: string;
  /** Your corporate customer's identifier (or your own registered name). */
  tenantId: string;
}

export interface DocumentHashInput {
  /** Name shown to the user in the app (1–255). */
  documentName: string;
  /** SHA-256 of what the user signs (for PAdES: the CMS SignedAttributes), 64 hex characters. */
  documentHash: string;
  /** The 4-character code your page shows next to the QR code (see `generateChallengeCode`). */
  challengeCode: string;
  /** The nonce from the certificate webhook event. */
  nonce: string;
  /** Host name of the page showing the QR code (displayed in the app). */
  domainName: string;
  /** Registered app-claimed https link the user returns to (optional, ≤ 255). */
  appLink?: string;
}

const RETRYABLE_STATUS = new Set([500, 502, 503, 504]);

/**
 * Client of the Singpass document signing API (spec §4): create a session, submit the document hash. Every call
 * carries a fresh `X-Dss-Assertion` (new `jti`), inputs are validated before the call, and service errors become
 * stable codes with the service's `id`/`trace_id` in `details`.
 *
 * Retry policy: the hash call is retried (default once) on 500/502/503/504, network errors and timeouts — it
 * re-submits the same data for the same session. Create-session is not retried unless `retry.createSession`.
 * 4xx answers (including `SIGN_REF_NOT_FOUND`, whose repetition the service logs as an attack) are never retried.
 *
 * @example
 * const client = new SigningApiClient({ baseUrl, clientId, signingKey: await loadSigningKey({ key: jwk }) });
 * const { signRef, qrPayload } = await client.createSession({ clientNotificationToken: token, tenantId: 'acme' });
 */
export class SigningApiClient {
  private readonly config: SigningApiConfig;
  private readonly baseUrl: string;
  private readonly audience: string;
  /** HTTP calls made (including retries), for tests and metrics. */
  requestCount = 0;

  constructor(config: SigningApiConfig) {
    if (!config || typeof config !== 'object') throw invalidInput('config', 'the signing API client needs { baseUrl, clientId, signingKey }');
    this.baseUrl = checkBaseUrl(config.baseUrl);
    if (typeof config.clientId !== 'string' || config.clientId.trim() === '') throw invalidInput('clientId', 'is required (the client ID given at onboarding)');
    if (!config.signingKey && !config.auth?.basic) throw invalidInput('signingKey', 'is required (or the deprecated auth.basic credentials)');
    if (config.signingKey && config.signingKey.use !== 'sig') throw invalidInput('signingKey', 'must be a signing key loaded with loadSigningKey()');
    if (!config.signingKey && config.auth?.basic) {
      const { clientId, clientSecret } = config.auth.basic;
      if (!clientId || !clientSecret) throw invalidInput('auth.basic', 'needs both clientId and clientSecret');
    }
    checkTimeoutMs('timeoutMs', config.timeoutMs);
    checkNumberSetting('assertionLifetimeSeconds', config.assertionLifetimeSeconds, { min: 1, max: ASSERTION_MAX_LIFETIME_S, integer: true, unit: 'seconds' });
    checkNumberSetting('retry.attempts', config.retry?.attempts, { min: 1, max: 10, integer: true, unit: 'attempts' });
    checkNumberSetting('retry.delayMs', config.retry?.delayMs, { min: 0, max: 60_000, unit: 'milliseconds' });
    if (config.audience !== undefined && (typeof config.audience !== 'string' || config.audience === '')) throw invalidInput('audience', 'must be the signing API\'s origin, e.g. https://staging.sign.singpass.gov.sg');
    this.audience = config.audience ?? defaultAudience(this.baseUrl);
    this.config = config;
  }

  /** Start a signing session; show `qrPayload` as a QR code and wait for the certificate webhook. */
  async createSession(input: CreateSessionInput): Promise<SigningSession> {
    const body = {
      [CREATE_SESSION_FIELDS.notificationToken]: checkSessionField('clientNotificationToken', input?.clientNotificationToken),
      [CREATE_SESSION_FIELDS.tenantId]: checkSessionField('tenantId', input?.tenantId),
    };
    const res = await this.call(SESSIONS_PATH, body, this.config.retry?.createSession === true, 'create the signing session');
    return parseSession(res, (this.config.clock ?? systemClock)());
  }

  /**
   * Send the hash for the user to sign; call it right after the certificate webhook (the user is waiting).
   * `resubmission`: this exact hash may already have reached the service (sent before a crash or restart), so a
   * refusal ("already submitted") is reported as `possiblyAccepted`, like a retry after a lost answer.
   */
  async submitDocumentHash(signRef: string, input: DocumentHashInput, options: { resubmission?: boolean } = {}): Promise<void> {
    const ref = checkSignRef(signRef);
    const body: Record<string, string> = {
      [HASH_FIELDS.documentName]: checkDocumentName(input?.documentName),
      [HASH_FIELDS.documentHash]: checkDocumentHash(input?.documentHash),
      [HASH_FIELDS.challengeCode]: checkChallengeCode(input?.challengeCode),
      [HASH_FIELDS.nonce]: checkNonce(input?.nonce),
      [HASH_FIELDS.domainName]: checkDomainName(input?.domainName),
    };
    const appLink = checkAppLink(input?.appLink);
    if (appLink) body[HASH_FIELDS.appLink] = appLink;
    await this.call(hashPath(ref), body, true, 'submit the document hash', options.resubmission === true);
  }

  /** `sentBefore`: an earlier attempt (e.g. by a process that died) may have been processed already. */
  private async call(path: string, body: Record<string, string>, retryable: boolean, what: string, sentBefore = false): Promise<HttpResponse> {
    const attempts = retryable ? Math.max(1, this.config.retry?.attempts ?? 2) : 1;
    const sleep = this.config.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    let last: SingpassFlowsError | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) await sleep(this.config.retry?.delayMs ?? 500);
      const headers = { 'content-type': 'application/json; charset=UTF-8', accept: 'application/json', ...(await this.authHeaders()) };
      let res: HttpResponse;
      try {
        this.requestCount++;
        res = await httpRequest(this.baseUrl + path, { method: 'POST', headers, body: JSON.stringify(body) }, { fetch: this.config.fetch, timeoutMs: this.config.timeoutMs });
      } catch (e) {
        if (!(e instanceof SingpassFlowsError) || (e.code !== 'HTTP_NETWORK' && e.code !== 'HTTP_TIMEOUT')) throw e;
        last = e;
        continue;
      }
      if (res.status >= 200 && res.status < 300) return res;
      const ambiguous = sentBefore || last !== undefined; // an earlier attempt may have been processed before its answer was lost
      last = serviceError(res, what);
      if (!RETRYABLE_STATUS.has(res.status)) {
        if (ambiguous && last.code === 'SIGN_REQUEST_REJECTED') {
          // e.g. "hash already submitted": the lost first attempt was probably accepted
          last.details.possiblyAccepted = true;
          last.message += '. An earlier attempt got no clear answer and may have been accepted: wait for the signature webhook before starting over';
        }
        throw last;
      }
    }
    if (last && attempts > 1) last.details.attempts = attempts;
    throw last!;
  }

  /** A new assertion per HTTP request (retries included): the service rejects a reused `jti`. */
  private async authHeaders(): Promise<Record<string, string>> {
    const { signingKey, auth } = this.config;
    if (signingKey) {
      const jwt = await createDssAssertion({
        clientId: this.config.clientId, key: signingKey, audience: this.audience,
        clock: this.config.clock ?? systemClock, lifetimeSeconds: this.config.assertionLifetimeSeconds,
      });
      return { [ASSERTION_HEADER]: jwt };
    }
    const { clientId, clientSecret } = auth!.basic;
    return { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`, 'utf8').toString('base64')}` };
  }
}

function checkBaseUrl(value: unknown): string {
  const url = requireHttpsUrl('baseUrl', value, { allowLoopbackHttp: true, example: 'https://staging.sign.singpass.gov.sg/api/v1' });
  if (url.search || url.hash) throw invalidInput('baseUrl', 'must not contain a query or fragment');
  return url.toString().replace(/\/+$/, '');
}

function parseSession(res: HttpResponse, nowMs: number): SigningSession {
  const json = parseJsonBody(res, 'The create-session answer') as Record<string, unknown>;
  if (!json || typeof json !== 'object') throw new SingpassFlowsError('HTTP_UNEXPECTED_RESPONSE', 'The create-session answer is not a JSON object', { status: res.status });
  const signRef = pickString(json, SESSION_RESPONSE_FIELDS.signRef);
  const rawExpires = pickValue(json, SESSION_RESPONSE_FIELDS.expiresAt);
  const expiresAt = typeof rawExpires === 'string' && /^\d+$/.test(rawExpires) ? Number(rawExpires) : rawExpires;
  const qr = pickValue(json, SESSION_RESPONSE_FIELDS.qrCode);
  const qrObj = qr && typeof qr === 'object' ? (qr as Record<string, unknown>) : undefined;
  const qrPayload = typeof qr === 'string' ? qr : pickString(qrObj, SESSION_RESPONSE_FIELDS.qrPayload) ?? pickString(json, SESSION_RESPONSE_FIELDS.qrPayload);
  const qrLogo = pickString(qrObj, SESSION_RESPONSE_FIELDS.qrLogo) ?? pickString(json, SESSION_RESPONSE_FIELDS.qrLogo);
  const missing = !signRef ? 'sign_ref' : typeof expiresAt !== 'number' || !Number.isFinite(expiresAt) ? 'expires_at' : !qrPayload ? 'QR payload' : undefined;
  if (missing) throw new SingpassFlowsError('HTTP_UNEXPECTED_RESPONSE', `The create-session answer has no usable ${missing}`, { status: res.status, field: missing });
  const unusable = (field: string, why: string) => new SingpassFlowsError('HTTP_UNEXPECTED_RESPONSE', `The create-session answer's ${field} ${why}`, { status: res.status, field });
  // Checked now, before the QR is shown: the same sign_ref goes back in the hash call, after the user has scanned.
  try {
    checkSignRef(signRef);
  } catch {
    throw unusable('sign_ref', 'is not 1 to 512 printable characters, as the hash call needs it');
  }
  const seconds = expiresAt as number;
  const nowSeconds = nowMs / 1000;
  if (!Number.isInteger(seconds)) throw unusable('expires_at', `(${seconds}) is not whole seconds since 1970`);
  if (seconds > nowSeconds + MAX_SESSION_SECONDS) {
    throw unusable('expires_at', `(${seconds}) is more than a day away${seconds > 1e11 ? ' (it looks like milliseconds, not seconds)' : ''}; check the service URL and this machine's clock`);
  }
  if (seconds < nowSeconds - CLOCK_SKEW_SECONDS) throw unusable('expires_at', `(${new Date(seconds * 1000).toISOString()}) has already passed; check this machine's clock`);
  if (qrPayload!.length > QR_MAX_CHARS || /[\u0000-\u001f\u007f]/.test(qrPayload!)) throw unusable('QR payload', `is not text that fits a QR code (at most ${QR_MAX_CHARS} characters, no control characters)`);
  return { signRef: signRef!, qrPayload: qrPayload!, expiresAt: seconds, ...(qrLogo ? { qrLogo } : {}) };
}

/** A session lasts minutes (spec: 2 minutes); a deadline further than a day away is a misread answer. */
const MAX_SESSION_SECONDS = 24 * 3600;
/** How far behind the service's clock ours may be before a fresh deadline looks already passed. */
const CLOCK_SKEW_SECONDS = 60;
/** A QR code's largest byte capacity (version 40, level L). */
const QR_MAX_CHARS = 2953;

/** Map a non-2xx answer to a stable code, keeping the service's id/trace_id/code (log-safe) in details. */
function serviceError(res: HttpResponse, what: string): SingpassFlowsError {
  let body: Record<string, unknown> | undefined;
  try {
    const parsed = JSON.parse(res.body.toString('utf8')) as unknown;
    if (parsed && typeof parsed === 'object') body = parsed as Record<string, unknown>;
  } catch {
    // non-JSON error pages (proxies, gateways) are common; the status alone decides
  }
  const serviceCode = pickString(body, API_ERROR_FIELDS.code);
  const serviceMessage = pickString(body, API_ERROR_FIELDS.message)?.slice(0, 300);
  const details: ErrorDetails = { status: res.status, retryable: RETRYABLE_STATUS.has(res.status) || res.status === 429 };
  const id = pickString(body, API_ERROR_FIELDS.id);
  const traceId = pickString(body, API_ERROR_FIELDS.traceId);
  if (id) details.serviceErrorId = id;
  if (traceId) details.traceId = traceId;
  if (serviceCode) details.serviceCode = serviceCode;
  const ref = [id && `id ${id}`, traceId && `trace ${traceId}`].filter(Boolean).join(', ');
  const suffix = `${serviceMessage ? `: ${serviceMessage}` : ''}${ref ? ` (${ref})` : ''}`;
  let code: ErrorCode;
  let message: string;
  if (serviceCode === SIGN_REF_NOT_FOUND) {
    code = 'SIGN_REF_NOT_FOUND';
    details.retryable = false;
    message = `The signing session is unknown or has expired; start a new session${suffix}`;
  } else if (res.status === 401 || res.status === 403) {
    code = 'SIGN_AUTH_REJECTED';
    message = `The signing service refused our credentials when trying to ${what} (HTTP ${res.status}); check the client ID, that the signing key's kid is in the registered key set, the clock, and the assertion audience if the service gave you one${suffix}`;
  } else if (res.status === 429) {
    code = 'SIGN_RATE_LIMITED';
    message = `The signing service is rate-limiting us; try again later${suffix}`;
  } else if (res.status >= 500) {
    code = 'SIGN_SERVICE_ERROR';
    message = `The signing service failed to ${what} (HTTP ${res.status}); try again later${suffix}`;
  } else {
    code = 'SIGN_REQUEST_REJECTED';
    message = `The signing service rejected the request to ${what} (HTTP ${res.status})${suffix}`;
  }
  return new SingpassFlowsError(code, message, details);
}
