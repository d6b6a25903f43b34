import * as crypto from 'node:crypto';
import type * as http from 'node:http';
import { decodeJwt, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose';
import { API_ERRORS, ASSERTION_ALGS, ASSERTION_HEADER, ASSERTION_MAX_LIFETIME_S, ASSERTION_TYP, type ApiErrorCode } from './wire';

/** A DSAP known to the sandbox (what onboarding registers at the real service). */
export interface DsapClient {
  clientId: string;
  /** URL of the DSAP's public JWK Set (EC keys) used to verify `X-Dss-Assertion`. */
  jwksUrl?: string;
  /** The DSAP's webhook (receives the three notifications). */
  notificationUrl: string;
  /** Deprecated Basic authentication secret; Basic is refused when not set. */
  basicSecret?: string;
  /**
   * The one assertion `aud` this DSAP's calls must carry, as when the service gives a DSAP its own value at
   * onboarding; default: the service's base URL or its origin.
   */
  audience?: string;
}

/** An API error the service answers with `{id, error, error_description, trace_id}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ApiErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const invalid = (msg: string): ApiError => new ApiError(401, API_ERRORS.invalidAssertion, msg);

const ALG_CURVE: Record<string, string> = { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' };

export interface ClientAuthOptions {
  clients: Map<string, DsapClient>;
  /** Accepted `aud` values (computed per request: the API base URL and its origin). */
  audiences: () => string[];
  clock: () => number;
  /** How long a fetched DSAP key set is reused (ms). Short: the sandbox should see key changes quickly. */
  jwksCacheMs: number;
  fetch: typeof fetch;
}

/**
 * Authenticates a DSAP call: `X-Dss-Assertion` (JWT signed with a key from the DSAP's registered key set) or, only
 * when that header is absent, the deprecated `Authorization: Basic`. Returns the authenticated client.
 */
export class ClientAuthenticator {
  private readonly keySets = new Map<string, { fetchedAt: number; keys: JWK[] }>();
  /** `clientId␟jti` → exp (ms): replay protection, entries dropped once the assertion would be expired anyway. */
  private readonly seenJti = new Map<string, number>();

  constructor(private readonly opts: ClientAuthOptions) {}

  async authenticate(req: http.IncomingMessage): Promise<DsapClient> {
    const assertions: string[] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      if (req.rawHeaders[i].toLowerCase() === ASSERTION_HEADER) assertions.push(req.rawHeaders[i + 1]);
    }
    if (assertions.length > 1) throw new ApiError(400, API_ERRORS.multipleAssertions, 'send exactly one X-Dss-Assertion header');
    if (assertions.length === 1) return this.verifyAssertion(assertions[0].trim());
    const authz = req.headers.authorization;
    if (!authz) throw new ApiError(401, API_ERRORS.unauthorized, 'X-Dss-Assertion header (or deprecated Authorization: Basic) required');
    return this.verifyBasic(authz);
  }

  private verifyBasic(authz: string): DsapClient {
    const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(authz.trim());
    if (!m) throw invalid('Authorization must be "Basic <base64(client_id:client_secret)>"');
    const decoded = Buffer.from(m[1], 'base64').toString('utf8');
    const sep = decoded.indexOf(':');
    const client = sep > 0 ? this.opts.clients.get(decoded.slice(0, sep)) : undefined;
    // compare even for an unknown client, so timing does not tell which client ids exist
    const matches = safeEqual(decoded.slice(sep + 1), client?.basicSecret ?? crypto.randomBytes(16).toString('hex'));
    if (!client || !client.basicSecret || !matches) throw invalid('invalid client credentials');
    return client;
  }

  private async verifyAssertion(token: string): Promise<DsapClient> {
    let header: ReturnType<typeof decodeProtectedHeader>;
    let claims: ReturnType<typeof decodeJwt>;
    try {
      header = decodeProtectedHeader(token);
      claims = decodeJwt(token);
    } catch {
      throw invalid('X-Dss-Assertion is not a compact signed JWT');
    }
    if (header.typ !== ASSERTION_TYP) throw invalid(`assertion header typ must be "${ASSERTION_TYP}"`);
    if (!header.alg || !(ASSERTION_ALGS as readonly string[]).includes(header.alg)) {
      throw invalid(`assertion alg must be one of ${ASSERTION_ALGS.join(', ')}`);
    }
    if (typeof header.kid !== 'string' || !header.kid) throw invalid('assertion header kid is required');
    const clientId = typeof claims.iss === 'string' ? claims.iss : '';
    const client = this.opts.clients.get(clientId);
    if (!client) throw invalid('assertion iss is not a registered client id');
    if (!client.jwksUrl) throw new ApiError(401, API_ERRORS.jwksNotFound, 'no key set URL registered for this client');

    const jwk = await this.findKey(client, header.kid);
    if (jwk.kty !== 'EC') throw invalid('only EC keys are accepted');
    if (jwk.use !== undefined && jwk.use !== 'sig') throw invalid('key use must be "sig"');
    if (jwk.alg !== undefined && jwk.alg !== header.alg) throw invalid('key alg does not match the assertion alg');
    if (jwk.crv !== ALG_CURVE[header.alg]) throw invalid(`${header.alg} requires a ${ALG_CURVE[header.alg]} key`);

    const now = this.opts.clock();
    try {
      const key = await importJWK(jwk, header.alg);
      await jwtVerify(token, key, {
        algorithms: [header.alg],
        typ: ASSERTION_TYP,
        issuer: client.clientId,
        subject: client.clientId,
        audience: client.audience ?? this.opts.audiences(),
        currentDate: new Date(now),
        requiredClaims: ['iss', 'sub', 'aud', 'iat', 'exp', 'jti'],
      });
    } catch (e) {
      throw invalid(`assertion rejected: ${(e as Error).message}`);
    }
    const iat = claims.iat as number;
    const exp = claims.exp as number;
    if (iat * 1000 > now + 1000) throw invalid('assertion iat is in the future');
    if (exp - iat > ASSERTION_MAX_LIFETIME_S) throw invalid(`assertion lifetime exp - iat must be at most ${ASSERTION_MAX_LIFETIME_S} s`);
    if (typeof claims.jti !== 'string' || !claims.jti) throw invalid('assertion jti must be a non-empty string');

    for (const [k, until] of this.seenJti) if (until < now) this.seenJti.delete(k);
    const replayKey = `${client.clientId}\u241f${claims.jti}`;
    if (this.seenJti.has(replayKey)) throw invalid('assertion jti was already used (replay); make a fresh assertion for every call');
    this.seenJti.set(replayKey, exp * 1000);
    return client;
  }

  /** Key by kid from the DSAP's key set; an unknown kid triggers one refetch (the DSAP may have just rotated). */
  private async findKey(client: DsapClient, kid: string): Promise<JWK> {
    const now = this.opts.clock();
    const cached = this.keySets.get(client.clientId);
    let keys = cached && now - cached.fetchedAt < this.opts.jwksCacheMs ? cached.keys : await this.fetchKeys(client);
    let jwk = keys.find((k) => k.kid === kid);
    if (!jwk && cached && keys === cached.keys) {
      keys = await this.fetchKeys(client);
      jwk = keys.find((k) => k.kid === kid);
    }
    if (!jwk) throw invalid('assertion kid not found in the client key set');
    return jwk;
  }

  private async fetchKeys(client: DsapClient): Promise<JWK[]> {
    let body: unknown;
    try {
      const res = await this.opts.fetch(client.jwksUrl as string, { redirect: 'manual', signal: AbortSignal.timeout(5000) });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      body = await res.json();
    } catch (e) {
      throw new ApiError(401, API_ERRORS.jwksInvalid, `client key set cannot be fetched (${(e as Error).message})`);
    }
    const keys = (body as { keys?: unknown })?.keys;
    if (!Array.isArray(keys) || !keys.every((k) => k && typeof k === 'object')) {
      throw new ApiError(401, API_ERRORS.jwksInvalid, 'client key set is not a JWK Set');
    }
    if (!keys.some((k: JWK) => k.kty === 'EC')) throw new ApiError(401, API_ERRORS.jwksInvalid, 'client key set has no EC key');
    this.keySets.set(client.clientId, { fetchedAt: this.opts.clock(), keys: keys as JWK[] });
    return keys as JWK[];
  }
}

/** Constant-time string equality: SHA-256 digests are compared, so neither content nor length leaks. */
export function safeEqual(a: string, b: string): boolean {
  const da = crypto.createHash('sha256').update(a).digest();
  const db = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(da, db);
}
