import * as crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as http from 'node:http';
import { SignJWT, type JWK } from 'jose';
import { readBody, sendJson, type SandboxService } from '../http';
import { verifyDigest } from '../phone/digest-signer';
import { ApiError, ClientAuthenticator, safeEqual, type DsapClient } from './client-auth';
import { ServiceKeyRing, type ServiceKeyState } from './service-keys';
import { deliverNotification, type DeliveryAttempt, type DeliveryFailure, type DeliveryResult } from './webhook';
import {
  API_ERRORS,
  CLAIMS,
  CREATE_FIELDS,
  ERROR_BODY,
  HASH_FIELDS,
  KEYS_PATH,
  NOTIFICATION_ERRORS,
  QR_PAYLOAD_FORMAT,
  REQUEST_TYPES,
  SESSIONS_PATH,
  SESSION_RESPONSE,
  TOKEN_CHARSET,
  WEBHOOK_TOKEN_LIFETIME_S,
  type RequestType,
} from './wire';

export type { DsapClient } from './client-auth';

/** Options of {@link createSignService}. Every duration has a spec-like default and is shortened by tests. */
export interface SignServiceOptions {
  /** Origin the service is reachable at (e.g. `http://127.0.0.1:5156`); decides the accepted assertion `aud`. When
   * unset, the request's Host header is used. Can be set later with `setBaseUrl` (the port is known after listen). */
  baseUrl?: string;
  /** Service path prefix; default `/sign` (so `dss_base_url` = `<origin>/sign`, API at `<origin>/sign/api/v1`). */
  prefix?: string;
  /** Session lifetime from creation, default 120 s. */
  sessionTtlSeconds?: number;
  /** Extra lifetime granted when the user scans (older docs: "2 min + 2 min after scanning"), default 120 s. */
  scanExtensionSeconds?: number;
  /** Webhook: attempts (default 3), delay between them (default 2000 ms), per-attempt timeout (default 2000 ms). */
  webhookAttempts?: number;
  webhookRetryDelayMs?: number;
  webhookTimeoutMs?: number;
  /** How long old service keys stay published after a rotation, default 1 hour. */
  keyGraceSeconds?: number;
  /** How long a fetched DSAP key set is reused, default 60 s. */
  clientJwksCacheSeconds?: number;
  /** HTTP status of a successful create-session call (the real API is seen answering 200 or 201), default 200. */
  createSessionStatus?: 200 | 201;
  /** CA certificates (DER) the user certificate must chain to when the phone scans (root + intermediate). */
  caCertificates?: Buffer[];
  /** Directory to persist service keys and registered clients (`sign-service.json`). */
  dir?: string;
  clock?: () => number;
  fetch?: typeof fetch;
}

/** What the phone and the demo page may see of a session (no secrets: no notification token). */
export interface SessionView {
  signRef: string;
  clientId: string;
  tenantId: string;
  state: SessionState;
  createdAt: number;
  expiresAt: number;
  /** Shown to the user in the app after the hash call. */
  docName?: string;
  docHash?: string;
  challengeCode?: string;
  domainName?: string;
  appLaunchUrl?: string;
}

export type SessionState = 'created' | 'cert_sent' | 'hash_submitted' | 'signed' | 'error';

interface Session extends SessionView {
  notificationToken: string;
  nonce?: string;
  userCert?: crypto.X509Certificate;
}

/** One call of the hash route as the service answered it (`service.hashCalls()`, `GET <prefix>/sandbox/hashes`). */
export interface HashCall {
  signRef: string;
  /** `doc_hash` of the body (first 64 characters), when the call got that far (not for a fault or an unknown sign_ref). */
  docHash?: string;
  /** HTTP status of the answer: 200 = the hash was accepted (once per session at most). */
  status: number;
  at: number;
}

/** Fault switches: make the service (or its webhook calls) misbehave so a DSAP's error handling can be tested. */
export interface SignFaults {
  /** The next `n` API calls answer `status` (default 500) `SERVER_SIDE_ERROR`. */
  serviceError(n: number, status?: number): void;
  /** The next `n` API calls answer 429 `TOO_MANY_REQUESTS`. */
  rateLimit(n: number): void;
  /** The next `n` webhook attempts fail without contacting the DSAP: `'connection'`, `'timeout'` or an HTTP status. */
  failDeliveries(n: number, failure?: DeliveryFailure): void;
  /** Deliver every notification twice (the same token again after it was acknowledged). */
  deliverTwice(on: boolean): void;
  /**
   * Deliver the user's certificate without the service's own checks (validity period, issued by the national CA):
   * a misconfigured or compromised service, to show that the DSAP checks the certificate itself before any hash.
   */
  skipUserCertificateChecks(on: boolean): void;
  /** Expire a session now (later calls get `SIGN_REF_NOT_FOUND`, as after `expires_at`). */
  expireSession(signRef: string): void;
  /**
   * Answer every hash call `ms` late (0: off). The call takes effect at once (the hash is accepted, the phone can
   * approve); only the answer waits: a slow service, or one whose answer a client's timeout cuts off.
   */
  hashAnswerDelay(ms: number): void;
  /**
   * Refuse the next `n` hash calls with 400 `ARGUMENTS_NOT_VALID` and `message` (nothing is recorded: the session
   * still waits for a hash): a service that refuses a hash for good, to show the DSAP ends the session with the reason.
   */
  refuseHash(n: number, message?: string): void;
  /** Rotate the service signing key (same as `rotateKeys`). */
  rotateKeys(): string;
  /** Clear every pending fault. */
  reset(): void;
}

/** The user certificate the phone presents when scanning. */
export interface PhoneUser {
  certDer: Buffer;
}

export interface SignService extends SandboxService {
  registerClient(client: DsapClient): void;
  clients(): DsapClient[];
  setBaseUrl(origin: string): void;
  /** Accepted assertion `aud` values: `<origin><prefix>` (the `dss_base_url`) and `<origin>`. */
  audiences(): string[];
  /** Add a new service signing key (new kid, used from now on); old keys stay published for the grace period. */
  rotateKeys(): string;
  /** Stop publishing every key but the current one. */
  retireOldKeys(): void;
  currentKid(): string;
  publishedKeys(): { keys: JWK[] };
  /** Every webhook delivery attempt so far, oldest first. */
  deliveries(): DeliveryAttempt[];
  /** Every call of the hash route so far (accepted or refused), oldest first. */
  hashCalls(): HashCall[];
  /** Live (unexpired) sessions. */
  sessions(): SessionView[];
  session(signRef: string): SessionView | undefined;
  /** Unknown `sign_ref` values presented by authenticated clients (the real service logs these as attacks). */
  securityEvents(): { at: number; clientId: string; kind: 'unknown_sign_ref' }[];
  /** Phone side: the user scanned the QR code → certificate notification (with a fresh nonce). */
  userScanned(signRef: string, user: PhoneUser): Promise<DeliveryResult>;
  /** Phone side: the user signed the submitted digest (hex DER signature) → verified, then signature notification. */
  userSigned(signRef: string, signatureHex: string): Promise<DeliveryResult>;
  /** Phone side: the user declined / the app failed → error notification. */
  userFailed(signRef: string, code: string, description: string): Promise<DeliveryResult>;
  /** `created` (SessionView) when a DSAP creates a session, `hash` (SessionView) when a hash is accepted. */
  events: EventEmitter;
  faults: SignFaults;
}

/** Thrown by the phone-side methods (scan an expired session, sign before a hash, …). */
export class PhoneFlowError extends Error {}

/** The delivery and hash-call logs keep the newest entries only: a sandbox left running for days must not grow. */
const LOG_LIMIT = 10_000;
function keepLast<T>(log: T[], entry: T): void {
  log.push(entry);
  if (log.length > LOG_LIMIT) log.splice(0, log.length - LOG_LIMIT);
}


/**
 * The sandbox's stand-in for the Singpass document signing API (per its spec), as a peer of our client: its own wire
 * table (`./wire`), assertion checks, session state machine, signed webhooks with retries, key rotation and faults.
 *
 * Routes under the prefix (default `/sign`): `POST /api/v1/doc-signing-sessions`,
 * `POST /api/v1/doc-signing-sessions/<sign_ref>/hash`, `GET /static/.well-known/keys.json`, and the sandbox-only
 * sandbox-only control routes (loopback, unauthenticated, for demos and low-code users without a test harness):
 * `POST /sandbox/clients` (register a DSAP: `{client_id, jwks_url, notification_url, basic_secret?}`),
 * `POST /sandbox/faults` (`{service_error?: n, service_error_status?, rate_limit?: n, fail_deliveries?: n,
 * delivery_failure?: 'connection'|'timeout'|status, deliver_twice?: bool, skip_user_certificate_checks?: bool, expire_session?: sign_ref,
 * hash_delay_ms?: n, refuse_hash?: n, refuse_hash_message?,
 * rotate_keys?: true, retire_old_keys?: true, reset?: true}`), `GET /sandbox/deliveries` and `GET /sandbox/hashes` (every
 * hash call and its answer's status: how many hashes a session got, from another process).
 *
 * @example
 * const sign = createSignService({ baseUrl: 'http://127.0.0.1:5156' });
 * sign.registerClient({ clientId: 'my-dsap', jwksUrl: 'http://127.0.0.1:3000/jwks', notificationUrl: 'http://127.0.0.1:3000/webhook' });
 */
export function createSignService(opts: SignServiceOptions = {}): SignService {
  const prefix = opts.prefix ?? '/sign';
  const clock = opts.clock ?? Date.now;
  const doFetch = opts.fetch ?? fetch;
  const ttlMs = (opts.sessionTtlSeconds ?? 120) * 1000;
  const scanExtensionMs = (opts.scanExtensionSeconds ?? 120) * 1000;
  const policy = {
    attempts: opts.webhookAttempts ?? 3,
    retryDelayMs: opts.webhookRetryDelayMs ?? 2000,
    timeoutMs: opts.webhookTimeoutMs ?? 2000,
  };
  const stateFile = opts.dir ? path.join(opts.dir, 'sign-service.json') : undefined;
  const saved = loadState(stateFile);
  let baseUrl = opts.baseUrl?.replace(/\/+$/, '');
  const clients = new Map<string, DsapClient>((saved?.clients ?? []).map((c) => [c.clientId, c]));
  const keys = new ServiceKeyRing(clock, (opts.keyGraceSeconds ?? 3600) * 1000, saved?.keys);
  const sessions = new Map<string, Session>();
  const attempts: DeliveryAttempt[] = [];
  const hashCalls: HashCall[] = [];
  const security: { at: number; clientId: string; kind: 'unknown_sign_ref' }[] = [];
  const pending = new Set<Promise<unknown>>();
  const events = new EventEmitter();
  const caCerts = (opts.caCertificates ?? []).map((d) => new crypto.X509Certificate(d));
  let requestHost: string | undefined;
  const fault = { serviceErrors: 0, serviceErrorStatus: 500, rateLimited: 0, deliveryFailures: [] as DeliveryFailure[], twice: false, uncheckedCerts: false, hashDelayMs: 0, refusedHashes: 0, refusalMessage: '' };

  const persist = (): void => {
    if (!stateFile) return;
    fs.mkdirSync(path.dirname(stateFile), { recursive: true });
    const state: SavedState = { keys: keys.toState(), clients: [...clients.values()] };
    fs.writeFileSync(stateFile, JSON.stringify(state, null, 2), { mode: 0o600 });
  };
  persist();

  const origin = (): string => baseUrl ?? `http://${requestHost ?? '127.0.0.1'}`;
  const audiences = (): string[] => [origin() + prefix, origin()];
  const auth = new ClientAuthenticator({ clients, audiences, clock, jwksCacheMs: (opts.clientJwksCacheSeconds ?? 60) * 1000, fetch: doFetch });

  const live = (signRef: string): Session | undefined => {
    const s = sessions.get(signRef);
    if (s && s.expiresAt <= clock()) {
      sessions.delete(signRef);
      return undefined;
    }
    return s;
  };
  const view = (s: Session): SessionView => {
    const { notificationToken: _t, nonce: _n, userCert: _c, ...v } = s;
    return { ...v };
  };

  /** Sign and deliver one notification (tracked so `close()` can wait for in-flight deliveries). */
  const notify = (s: Session, requestType: RequestType, claims: Record<string, unknown>): Promise<DeliveryResult> => {
    const p = (async () => {
      const client = clients.get(s.clientId);
      if (!client) return 'failed' as const;
      const key = keys.current();
      const iat = Math.floor(clock() / 1000);
      const token = await new SignJWT({ [CLAIMS.signRef]: s.signRef, [CLAIMS.requestType]: requestType, ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'JWT' })
        .setIssuedAt(iat)
        .setExpirationTime(iat + WEBHOOK_TOKEN_LIFETIME_S)
        .sign(key.privateKey);
      const deliveryId = crypto.randomUUID();
      const common = {
        url: client.notificationUrl,
        bearer: s.notificationToken,
        token,
        deliveryId,
        signRef: s.signRef,
        clientId: s.clientId,
        requestType,
        policy,
        fetch: doFetch,
        clock,
        record: (a: DeliveryAttempt) => keepLast(attempts, a),
        takeFailure: () => fault.deliveryFailures.shift(),
      };
      const result = await deliverNotification({ ...common, duplicate: false });
      if (result === 'acknowledged' && fault.twice) await deliverNotification({ ...common, duplicate: true });
      return result;
    })();
    pending.add(p);
    void p.finally(() => pending.delete(p));
    return p;
  };

  /** A notification the DSAP did not acknowledge puts the session in error and is reported once (spec §3). */
  const notifyOrFail = async (s: Session, requestType: RequestType, claims: Record<string, unknown>): Promise<DeliveryResult> => {
    const result = await notify(s, requestType, claims);
    if (result === 'failed' && sessions.get(s.signRef) === s) {
      s.state = 'error';
      await notify(s, REQUEST_TYPES.error, errorClaims(NOTIFICATION_ERRORS.clientNotificationFailed, `the ${requestType} notification was not acknowledged`));
    }
    return result;
  };

  const errorClaims = (code: string, description: string): Record<string, unknown> => ({
    [CLAIMS.error]: code,
    [CLAIMS.errorDescription]: description,
    [CLAIMS.correlationId]: crypto.randomUUID(),
  });

  async function createSession(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const client = await auth.authenticate(req);
    const body = await jsonBody(req);
    const token = body[CREATE_FIELDS.notificationToken];
    const tenant = body[CREATE_FIELDS.tenantId];
    for (const [name, v] of [[CREATE_FIELDS.notificationToken, token], [CREATE_FIELDS.tenantId, tenant]] as const) {
      if (typeof v !== 'string' || !TOKEN_CHARSET.test(v)) {
        throw argError(`${name} is required: 1-255 letters, digits, "_", "-" or spaces`);
      }
    }
    for (const [ref] of sessions) live(ref); // sweep expired sessions
    const now = clock();
    const signRef = newSignRef();
    const s: Session = {
      signRef,
      clientId: client.clientId,
      tenantId: tenant as string,
      notificationToken: token as string,
      state: 'created',
      createdAt: now,
      expiresAt: now + ttlMs,
    };
    sessions.set(signRef, s);
    sendJson(res, opts.createSessionStatus ?? 200, {
      [SESSION_RESPONSE.signRef]: signRef,
      [SESSION_RESPONSE.expiresAt]: Math.floor(s.expiresAt / 1000),
      [SESSION_RESPONSE.qrCode]: { [SESSION_RESPONSE.qrPayload]: QR_PAYLOAD_FORMAT(signRef) },
    });
    events.emit('created', view(s));
  }

  async function submitHash(req: http.IncomingMessage, res: http.ServerResponse, signRef: string, call: HashCall): Promise<void> {
    const client = await auth.authenticate(req);
    const s = live(signRef);
    if (!s || s.clientId !== client.clientId) {
      security.push({ at: clock(), clientId: client.clientId, kind: 'unknown_sign_ref' });
      throw new ApiError(400, API_ERRORS.signRefNotFound, 'sign_ref is unknown or expired');
    }
    const body = await jsonBody(req);
    if (typeof body[HASH_FIELDS.docHash[0]] === 'string') call.docHash = String(body[HASH_FIELDS.docHash[0]]).slice(0, 64);
    if (s.state === 'created') throw argError('the user certificate has not been delivered yet: wait for the user_cert notification');
    if (s.state === 'error') throw argError('the signing session has ended with an error (sent to the webhook as an error notification): start a new session');
    if (s.state !== 'cert_sent') throw argError(`a hash was already submitted for this sign_ref (state ${s.state})`);
    const pick = (names: readonly string[]): unknown => {
      for (const n of names) if (body[n] !== undefined) return body[n];
      return undefined;
    };
    const str = (names: readonly string[], min: number, max: number, optional = false): string | undefined => {
      const v = pick(names);
      if (v === undefined && optional) return undefined;
      if (typeof v !== 'string' || v.length < min || v.length > max) {
        throw argError(min === max ? `${names[0]} must be a string of exactly ${min} characters` : `${names[0]} must be a string of ${min}-${max} characters`);
      }
      return v;
    };
    const docName = str(HASH_FIELDS.docName, 1, 255) as string;
    const docHash = str(HASH_FIELDS.docHash, 64, 64) as string;
    if (!/^[0-9a-fA-F]{64}$/.test(docHash)) throw argError(`${HASH_FIELDS.docHash[0]} must be the SHA-256 digest as 64 hex characters`);
    const challengeCode = str(HASH_FIELDS.challengeCode, 4, 4) as string;
    const nonce = str(HASH_FIELDS.nonce, 1, 255) as string;
    const domainName = str(HASH_FIELDS.domainName, 1, 255) as string;
    const appLaunchUrl = str(HASH_FIELDS.appLaunchUrl, 0, 255, true);
    if (!s.nonce || !safeEqual(nonce, s.nonce)) throw argError(`${HASH_FIELDS.nonce[0]} does not match the nonce of the user_cert notification`);
    Object.assign(s, { state: 'hash_submitted', docName, docHash, challengeCode, domainName, appLaunchUrl });
    res.writeHead(200, { 'content-length': '0' });
    res.end();
    events.emit('hash', view(s));
  }

  /** The fault switches as JSON (the `/sandbox/faults` route). */
  const applyFaults = (b: Record<string, unknown>): Record<string, unknown> => {
    const count = (k: string): number | undefined => {
      const v = b[k];
      if (v === undefined) return undefined;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 1000) throw argError(`${k} must be a whole number 0-1000`);
      return v;
    };
    const done: Record<string, unknown> = {};
    if (b.reset === true) {
      service.faults.reset();
      done.reset = true;
    }
    const se = count('service_error');
    if (se !== undefined) {
      const st = count('service_error_status') ?? 500;
      if (st < 500 || st > 599) throw argError('service_error_status must be 5xx');
      service.faults.serviceError(se, st);
      done.service_error = se;
    }
    const rl = count('rate_limit');
    if (rl !== undefined) {
      service.faults.rateLimit(rl);
      done.rate_limit = rl;
    }
    const fd = count('fail_deliveries');
    if (fd !== undefined) {
      const f = b.delivery_failure ?? 503;
      if (f !== 'connection' && f !== 'timeout' && !(typeof f === 'number' && f >= 200 && f <= 599)) throw argError('delivery_failure must be "connection", "timeout" or an HTTP status');
      service.faults.failDeliveries(fd, f);
      done.fail_deliveries = fd;
    }
    if (typeof b.deliver_twice === 'boolean') {
      service.faults.deliverTwice(b.deliver_twice);
      done.deliver_twice = b.deliver_twice;
    }
    if (typeof b.skip_user_certificate_checks === 'boolean') {
      service.faults.skipUserCertificateChecks(b.skip_user_certificate_checks);
      done.skip_user_certificate_checks = b.skip_user_certificate_checks;
    }
    if (typeof b.expire_session === 'string') {
      service.faults.expireSession(b.expire_session);
      done.expire_session = b.expire_session;
    }
    if (b.hash_delay_ms !== undefined) {
      const ms = b.hash_delay_ms;
      if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > 120_000) throw argError('hash_delay_ms must be a whole number 0-120000');
      service.faults.hashAnswerDelay(ms);
      done.hash_delay_ms = ms;
    }
    const rh = count('refuse_hash');
    if (rh !== undefined) {
      const m = b.refuse_hash_message;
      if (m !== undefined && (typeof m !== 'string' || m.length === 0 || m.length > 300)) throw argError('refuse_hash_message must be 1-300 characters');
      service.faults.refuseHash(rh, m);
      done.refuse_hash = rh;
    }
    if (b.rotate_keys === true) done.rotated_to = service.rotateKeys();
    if (b.retire_old_keys === true) {
      service.retireOldKeys();
      done.retire_old_keys = true;
    }
    return done;
  };

  const service: SignService = {
    prefix,
    events,
    async handle(req, res, url) {
      if (!baseUrl && req.headers.host) requestHost = req.headers.host;
      const sub = url.pathname.slice(prefix.length);
      try {
        if (sub === KEYS_PATH) {
          if (req.method !== 'GET') throw new ApiError(405, API_ERRORS.clientSideError, 'use GET');
          return sendJson(res, 200, service.publishedKeys(), { 'cache-control': 'public, max-age=3600' });
        }
        if (sub === '/sandbox/clients' && req.method === 'POST') {
          const b = await jsonBody(req);
          if (typeof b.client_id !== 'string' || typeof b.notification_url !== 'string') throw argError('client_id and notification_url are required');
          service.registerClient({
            clientId: b.client_id,
            notificationUrl: b.notification_url,
            jwksUrl: typeof b.jwks_url === 'string' ? b.jwks_url : undefined,
            basicSecret: typeof b.basic_secret === 'string' ? b.basic_secret : undefined,
          });
          return sendJson(res, 200, { client_id: b.client_id, audiences: audiences() });
        }
        if (sub === '/sandbox/faults' && req.method === 'POST') return sendJson(res, 200, applyFaults(await jsonBody(req)));
        if (sub === '/sandbox/deliveries' && req.method === 'GET') return sendJson(res, 200, { deliveries: service.deliveries() });
        if (sub === '/sandbox/hashes' && req.method === 'GET') return sendJson(res, 200, { hashes: service.hashCalls() });
        // `<SESSIONS_PATH>` (create) or `<SESSIONS_PATH>/<sign_ref>/hash`
        const hashRef = sub.startsWith(SESSIONS_PATH + '/') ? /^\/([^/]+)\/hash$/.exec(sub.slice(SESSIONS_PATH.length))?.[1] : undefined;
        if (sub !== SESSIONS_PATH && hashRef === undefined) throw new ApiError(404, API_ERRORS.notFound, `no route ${url.pathname}`);
        if (req.method !== 'POST') throw new ApiError(405, API_ERRORS.clientSideError, 'use POST');
        // every hash call is logged with its answer's status (faults included)
        const call: HashCall | undefined = hashRef === undefined ? undefined : { signRef: decodeURIComponent(hashRef), status: 0, at: clock() };
        if (call) {
          keepLast(hashCalls, call);
          res.once('finish', () => { call.status = res.statusCode; });
        }
        if (fault.rateLimited > 0) {
          fault.rateLimited--;
          throw new ApiError(429, API_ERRORS.tooManyRequests, 'too many requests (sandbox fault)');
        }
        if (fault.serviceErrors > 0) {
          fault.serviceErrors--;
          throw new ApiError(fault.serviceErrorStatus, API_ERRORS.serverSideError, 'internal error (sandbox fault)');
        }
        if (!call) return await createSession(req, res);
        if (fault.refusedHashes > 0) {
          fault.refusedHashes--;
          throw new ApiError(400, API_ERRORS.argumentsNotValid, fault.refusalMessage);
        }
        if (fault.hashDelayMs > 0) answerLate(res, fault.hashDelayMs);
        return await submitHash(req, res, call.signRef, call);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        sendJson(res, e.status, {
          [ERROR_BODY.id]: crypto.randomUUID(),
          [ERROR_BODY.code]: e.code,
          [ERROR_BODY.message]: e.message,
          [ERROR_BODY.traceId]: crypto.randomBytes(8).toString('hex'),
        });
      }
    },
    registerClient(client) {
      if (!client.clientId || !client.notificationUrl) throw new Error('clientId and notificationUrl are required');
      clients.set(client.clientId, { ...client });
      persist();
    },
    clients: () => [...clients.values()].map((c) => ({ ...c })),
    setBaseUrl(o) {
      baseUrl = o.replace(/\/+$/, '');
    },
    audiences,
    rotateKeys() {
      const kid = keys.rotate();
      persist();
      return kid;
    },
    retireOldKeys() {
      keys.retireOld();
      persist();
    },
    currentKid: () => keys.current().kid,
    publishedKeys: () => ({ keys: keys.published() }),
    deliveries: () => attempts.map((a) => ({ ...a })),
    hashCalls: () => hashCalls.map((c) => ({ ...c })),
    sessions: () => [...sessions.keys()].map(live).filter((s): s is Session => !!s).map(view),
    session(signRef) {
      const s = live(signRef);
      return s && view(s);
    },
    securityEvents: () => security.map((e) => ({ ...e })),

    async userScanned(signRef, user) {
      const s = live(signRef);
      if (!s) throw new PhoneFlowError('QR code expired or unknown sign_ref');
      if (s.state !== 'created') throw new PhoneFlowError(`this QR code was already scanned (state ${s.state})`);
      const cert = new crypto.X509Certificate(user.certDer);
      if (!fault.uncheckedCerts) checkUserCertificate(cert, caCerts, clock());
      s.state = 'cert_sent';
      s.userCert = cert;
      s.nonce = crypto.randomBytes(18).toString('base64url');
      s.expiresAt = Math.max(s.expiresAt, clock() + scanExtensionMs);
      return notifyOrFail(s, REQUEST_TYPES.userCert, { [CLAIMS.userCert]: cert.raw.toString('base64'), [CLAIMS.nonce]: s.nonce });
    },
    async userSigned(signRef, signatureHex) {
      const s = live(signRef);
      if (!s) throw new PhoneFlowError('session expired');
      if (s.state !== 'hash_submitted' || !s.docHash || !s.userCert) throw new PhoneFlowError(`nothing to sign (state ${s.state})`);
      const sig = /^[0-9a-fA-F]+$/.test(signatureHex) && signatureHex.length % 2 === 0 ? Buffer.from(signatureHex, 'hex') : Buffer.alloc(0);
      if (!verifyDigest(Buffer.from(s.docHash, 'hex'), sig, s.userCert.publicKey)) {
        s.state = 'error';
        return notify(s, REQUEST_TYPES.error, errorClaims(NOTIFICATION_ERRORS.signatureInvalid, 'the signature from the app did not verify'));
      }
      s.state = 'signed';
      return notifyOrFail(s, REQUEST_TYPES.signedDocHash, { [CLAIMS.docHash]: s.docHash, [CLAIMS.docHashSignature]: sig.toString('hex') });
    },
    async userFailed(signRef, code, description) {
      const s = live(signRef);
      if (!s) throw new PhoneFlowError('session expired');
      if (s.state === 'signed' || s.state === 'error') throw new PhoneFlowError(`session already finished (state ${s.state})`);
      s.state = 'error';
      return notify(s, REQUEST_TYPES.error, errorClaims(code, description));
    },

    faults: {
      serviceError(n, status = 500) {
        fault.serviceErrors = n;
        fault.serviceErrorStatus = status;
      },
      rateLimit(n) {
        fault.rateLimited = n;
      },
      failDeliveries(n, failure = 503) {
        fault.deliveryFailures = Array.from({ length: n }, () => failure);
      },
      deliverTwice(on) {
        fault.twice = on;
      },
      skipUserCertificateChecks(on) {
        fault.uncheckedCerts = on;
      },
      expireSession(signRef) {
        const s = sessions.get(signRef);
        if (s) s.expiresAt = clock();
      },
      rotateKeys: () => service.rotateKeys(),
      hashAnswerDelay(ms) {
        fault.hashDelayMs = ms;
      },
      refuseHash(n, message = 'document hash refused (sandbox fault)') {
        fault.refusedHashes = n;
        fault.refusalMessage = message;
      },
      reset() {
        Object.assign(fault, { serviceErrors: 0, serviceErrorStatus: 500, rateLimited: 0, deliveryFailures: [], twice: false, uncheckedCerts: false, hashDelayMs: 0, refusedHashes: 0, refusalMessage: '' });
      },
    },
    async close() {
      await Promise.allSettled([...pending]);
    },
  };
  return service;
}

/** The service checks only validity period and issuer signature of the user certificate (spec §6), not revocation. */
function checkUserCertificate(cert: crypto.X509Certificate, cas: crypto.X509Certificate[], now: number): void {
  if (Date.parse(cert.validFrom) > now || Date.parse(cert.validTo) < now) throw new PhoneFlowError('user certificate is not valid now');
  if (cas.length === 0) return;
  let current = cert;
  for (let depth = 0; depth < 5; depth++) {
    const issuer = cas.find((ca) => current.checkIssued(ca) && current.verify(ca.publicKey));
    if (!issuer) throw new PhoneFlowError('user certificate is not issued by the sandbox CA');
    if (issuer.subject === issuer.issuer && issuer.verify(issuer.publicKey)) return;
    current = issuer;
  }
  throw new PhoneFlowError('user certificate chain too long');
}

interface SavedState {
  keys: ServiceKeyState[];
  clients: DsapClient[];
}

function loadState(file: string | undefined): SavedState | undefined {
  if (!file || !fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')) as SavedState;
}

/** Random, variable-length, URL-safe, deliberately not a UUID (spec §2.1). */
function newSignRef(): string {
  return crypto.randomBytes(15 + crypto.randomInt(10)).toString('base64url');
}

function argError(msg: string): ApiError {
  return new ApiError(400, API_ERRORS.argumentsNotValid, msg);
}

async function jsonBody(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (!type.startsWith('application/json')) throw new ApiError(400, API_ERRORS.clientSideError, 'request body must be application/json');
  let parsed: unknown;
  try {
    parsed = JSON.parse((await readBody(req, 64 * 1024)).toString('utf8'));
  } catch {
    throw new ApiError(400, API_ERRORS.clientSideError, 'request body is not valid JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ApiError(400, API_ERRORS.clientSideError, 'request body must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** Hold a response's end (the headers go with it) for `ms`: the work is done, only the answer is late. */
function answerLate(res: http.ServerResponse, ms: number): void {
  const end = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse;
  res.end = ((...args: unknown[]) => {
    setTimeout(() => {
      if (!res.destroyed) end(...args);
    }, ms).unref();
    return res;
  }) as typeof res.end;
}
