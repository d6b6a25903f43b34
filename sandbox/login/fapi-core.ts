/**
 * What the two FAPI 2.0 sandbox providers (Singpass FAPI and Corppass FAPI) share: PAR (`request_uri`, 60 s, single
 * use), the PAR-only authorization endpoint, DPoP on PAR / token / userinfo (RFC 9449 proof checks, key binding from
 * PAR to the code to the access token, `ath`, server nonces with the misbehaviour switches), the DPoP-bound token
 * response and the userinfo endpoint's token checks. Each provider adds its own PAR parameters, users and claims.
 */
import type * as http from 'node:http';
import * as crypto from 'node:crypto';
import { ProviderCore, Refusal, applyOverrides, randomToken } from './provider-core';
import { decodeCompact, isObject, verifyEcCompact, type ContentEnc, type JsonObject } from './jose-forge';
import type { ClientRegistration, ProviderOptions, RecordedRequest } from './types';

const REQUEST_URI_TTL_S = 60;
const CODE_TTL_S = 60;
const DPOP_MAX_AGE_S = 120;
const SKEW_S = 10;

/** A pushed authorization request; `details` holds what only one provider checks (acr values, app type, …). */
export interface PushedRequest<D> {
  clientId: string;
  redirectUri: string;
  scope: string;
  state?: string;
  nonce?: string;
  codeChallenge: string;
  jkt: string;
  expiresAt: number;
  used: boolean;
  details: D;
}

export interface CodeGrant<U, D> extends PushedRequest<D> {
  user: U;
}

export interface AccessGrant<U, D> {
  clientId: string;
  user: U;
  scope: string;
  jkt: string;
  expiresAt: number;
  details: D;
}

export type DpopEndpoint = 'par' | 'token' | 'userinfo';

/** Reads one PAR form parameter (a repeated one is refused; `required` refuses a missing or empty one). */
export type ParamReader = (name: string, required?: boolean) => string | undefined;

function isLoopbackHttp(u: URL): boolean {
  return u.protocol === 'http:' && (u.hostname === '127.0.0.1' || u.hostname === 'localhost' || u.hostname === '[::1]');
}

export abstract class FapiProviderCore<U extends { id: string }, D> extends ProviderCore {
  private readonly pushed = new Map<string, PushedRequest<D>>();
  private readonly codes = new Map<string, CodeGrant<U, D>>();
  private readonly accessTokens = new Map<string, AccessGrant<U, D>>();
  private readonly seenDpopJti = new Map<string, number>();
  private asNonce = randomToken(16);
  private rsNonce = randomToken(16);

  protected constructor(opts: ProviderOptions, defaultPrefix: string, issuerPath: string, defaultIssParameter: boolean) {
    super(opts, defaultPrefix, issuerPath, defaultIssParameter);
  }

  abstract get parEndpoint(): string;
  abstract get authorizationEndpoint(): string;
  abstract get userinfoEndpoint(): string;
  abstract get jwksUri(): string;

  /** Fixture users, the first being the default. */
  protected abstract readonly users: readonly U[];
  /** Access-token lifetime (s). */
  protected abstract readonly accessTokenTtlS: number;
  /** DPoP proofs must carry `exp` (Singpass: ≤ iat + 120 s); Corppass publishes no such rule. */
  protected readonly dpopExpRequired: boolean = false;
  /** Content encryption of the ID token (the userinfo JWE uses A256GCM). */
  protected abstract readonly idTokenEnc: ContentEnc;
  /** Validate this provider's own PAR parameters (throw a Refusal); the result is kept with the request. */
  protected abstract pushedDetails(p: ParamReader, client: ClientRegistration, scope: string): D;
  /** The access token's `sub` (opaque to clients, recorded for tests). */
  protected abstract tokenSubject(user: U): string;
  /** ID token claims before the `idToken` overrides (nonce is added here when the request had one). */
  protected abstract idTokenClaims(grant: CodeGrant<U, D>, clientId: string): JsonObject;
  /** Claims of a signed authorization-info-shaped token, for the cross-JWT confusion switch ([53]). */
  protected abstract authInfoLikeClaims(grant: CodeGrant<U, D>, clientId: string): JsonObject;
  /** Userinfo claims before the `userinfo` overrides. */
  protected abstract userinfoClaims(grant: AccessGrant<U, D>): JsonObject;
  /** Whether the userinfo answer is a JWE around the JWS (true) or the bare JWS (false), switches applied. */
  protected abstract userinfoEncrypted(): boolean;

  // ---- DPoP -------------------------------------------------------------------------------------------------------
  /**
   * RFC 9449 §4.3 proof checks: one `DPoP` header; typ dpop+jwt; ES256; public EC P-256 `jwk`; valid signature;
   * unique `jti`; `htm`/`htu` match; `iat` fresh; `exp` ≤ iat + 120 s (required where {@link dpopExpRequired}); `ath` only (and then exactly) when
   * an access token is presented. Nonces are checked separately ({@link nonceCheck}).
   */
  protected async checkDpop(req: http.IncomingMessage, rec: RecordedRequest, endpoint: DpopEndpoint, htu: string, accessToken?: string): Promise<{ jkt: string; payload: JsonObject }> {
    const values = this.dpopHeaders(req, rec);
    const isRs = endpoint === 'userinfo';
    const bad = (why: string) =>
      new Refusal(isRs ? 401 : 400, 'invalid_dpop_proof', `DPoP proof rejected: ${why}`, isRs ? { 'www-authenticate': `DPoP error="invalid_dpop_proof", algs="ES256"` } : {});
    if (values.length === 0) throw bad('a DPoP header is required');
    if (values.length > 1) throw bad('exactly one DPoP header is allowed');
    const proof = values[0];
    const decoded = decodeCompact(proof);
    if (!decoded) throw bad('not a compact JWS');
    const { header, payload } = decoded;
    const jwk = header.jwk;
    if (isObject(jwk)) {
      try {
        rec.dpopJkt = await this.thumbprint(jwk);
      } catch {
        /* recorded without thumbprint */
      }
    }
    if (header.typ !== 'dpop+jwt') throw bad('typ must be dpop+jwt');
    if (header.alg !== 'ES256') throw bad('alg must be ES256');
    if (!isObject(jwk) || jwk.kty !== 'EC' || jwk.crv !== 'P-256') throw bad('jwk must be a public EC P-256 key');
    if ('d' in jwk) throw bad('jwk must not contain the private key');
    if (!verifyEcCompact(proof, jwk)) throw bad('signature does not verify with the header jwk');
    const now = this.nowS();
    if (typeof payload.jti !== 'string' || payload.jti.length < 16) throw bad('jti must be a random string (at least 96 bits)');
    for (const [j, t] of this.seenDpopJti) if (t < now - 600) this.seenDpopJti.delete(j);
    if (this.seenDpopJti.has(payload.jti)) throw bad('jti was already used (replay)');
    this.seenDpopJti.set(payload.jti, now);
    if (payload.htm !== (req.method ?? '')) throw bad(`htm must be ${req.method}`);
    if (typeof payload.htu !== 'string' || payload.htu.replace(/[?#].*$/, '') !== htu) throw bad(`htu must be ${htu}`);
    if (typeof payload.iat !== 'number' || payload.iat > now + SKEW_S || payload.iat < now - DPOP_MAX_AGE_S - SKEW_S) throw bad('iat must be the current time');
    if (payload.exp === undefined && this.dpopExpRequired) throw bad(`exp is required (at most ${DPOP_MAX_AGE_S} s after iat)`);
    if (payload.exp !== undefined) {
      if (typeof payload.exp !== 'number' || payload.exp <= now - SKEW_S) throw bad('expired');
      if (payload.exp - payload.iat > DPOP_MAX_AGE_S) throw bad(`exp must be at most ${DPOP_MAX_AGE_S} s after iat`);
    }
    if (accessToken === undefined) {
      if (payload.ath !== undefined) throw bad('ath must not be sent to the authorization server');
    } else {
      const ath = crypto.createHash('sha256').update(accessToken).digest('base64url');
      if (payload.ath !== ath) throw bad('ath must be the base64url SHA-256 of the access token');
    }
    return { jkt: await this.thumbprint(jwk), payload };
  }

  /** Every `DPoP` header value as sent (recorded, decoded, in `rec.dpop`). */
  protected dpopHeaders(req: http.IncomingMessage, rec: RecordedRequest): string[] {
    const values: string[] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === 'dpop') values.push(req.rawHeaders[i + 1]);
    if (values.length) rec.dpop = values.map((v) => ({ ...(decodeCompact(v) ?? { header: {}, payload: {} }), compact: v }));
    return values;
  }

  private nonceApplies(endpoint: DpopEndpoint): boolean {
    const m = this.m;
    return !!m.dpopNonce && (!m.dpopNonceAt || m.dpopNonceAt.includes(endpoint));
  }

  /** [60–65] Server nonce challenge according to the `dpopNonce` switch; throws the challenge. */
  protected nonceCheck(endpoint: DpopEndpoint, proofNonce: unknown): void {
    if (!this.nonceApplies(endpoint)) return;
    const isRs = endpoint === 'userinfo';
    const challenge = (value: string | string[] | undefined): never => {
      const headers: Record<string, string | string[]> = {};
      if (value !== undefined) headers['dpop-nonce'] = value;
      if (isRs) {
        const scheme = this.m.dpopChallengeSchemeCase === 'lower' ? 'dpop' : this.m.dpopChallengeSchemeCase === 'upper' ? 'DPOP' : 'DPoP';
        headers['www-authenticate'] = `${scheme} error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof"`;
      }
      throw new Refusal(isRs ? 401 : 400, 'use_dpop_nonce', `${isRs ? 'Resource' : 'Authorization'} server requires nonce in DPoP proof`, headers);
    };
    const current = isRs ? this.rsNonce : this.asNonce;
    switch (this.m.dpopNonce) {
      case 'stable':
        if (proofNonce !== this.asNonce) challenge(this.asNonce);
        return;
      case 'require':
      case 'sendOn200':
        if (proofNonce !== current) challenge(current);
        return;
      case 'requireTwice': {
        const fresh = randomToken(16);
        if (isRs) this.rsNonce = fresh;
        else this.asNonce = fresh;
        return challenge(fresh);
      }
      case 'missingHeader':
        return challenge(undefined);
      case 'twoHeaders':
        return challenge([randomToken(16), randomToken(16)]);
      case 'badSyntax':
        return challenge('bad nonce "x"');
    }
  }

  /** After a successful response: mint a new nonce (OIDF behaviour); returns headers to add to the 200. */
  private rotateNonce(endpoint: DpopEndpoint): Record<string, string> {
    if (!this.nonceApplies(endpoint) || this.m.dpopNonce === 'stable') return {};
    const fresh = randomToken(16);
    if (endpoint === 'userinfo') this.rsNonce = fresh;
    else this.asNonce = fresh;
    return this.m.dpopNonce === 'sendOn200' ? { 'dpop-nonce': fresh } : {};
  }

  // ---- PAR --------------------------------------------------------------------------------------------------------
  protected async par(req: http.IncomingMessage, res: http.ServerResponse, rec: RecordedRequest): Promise<void> {
    rec.endpoint = 'par';
    if (this.redirectedAway('par', res, rec)) return;
    const form = await this.readForm(req, rec);
    const client = await this.authenticateClient(form);
    const p: ParamReader = (n, required = false) => this.param(form, n, required);
    const { jkt, payload } = await this.parDpopKey(req, rec, p);
    this.nonceCheck('par', payload?.nonce);
    const m = this.m;
    this.refuseAsConfigured(m.parError);

    const invalid = (why: string) => new Refusal(400, 'invalid_request', why);
    if (p('client_id', true) !== client.clientId) throw invalid('client_id must match the client assertion');
    if (form.has('request_uri')) throw invalid('request_uri must not be sent to the PAR endpoint');
    if (form.has('request')) throw new Refusal(400, 'request_not_supported', 'request objects are not supported');
    if (p('response_type', true) !== 'code') throw new Refusal(400, 'unsupported_response_type', 'response_type must be code');
    const scope = p('scope', true)!;
    if (!scope.split(' ').includes('openid')) throw new Refusal(400, 'invalid_scope', 'scope must include openid');
    if (!/^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/.test(scope)) throw new Refusal(400, 'invalid_scope', 'malformed scope');
    const redirectUri = p('redirect_uri', true)!;
    if (!this.redirectUriAllowed(client, redirectUri)) throw invalid('redirect_uri is not registered for this client');
    let ru: URL;
    try {
      ru = new URL(redirectUri);
    } catch {
      throw invalid('redirect_uri is not a URL');
    }
    if (ru.protocol !== 'https:' && !isLoopbackHttp(ru)) throw invalid('redirect_uri must use https');
    const challenge = p('code_challenge', true)!;
    if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) throw invalid('code_challenge must be a base64url SHA-256 (43 characters)');
    if (p('code_challenge_method', true) !== 'S256') throw invalid('code_challenge_method must be S256');
    const state = p('state');
    if (state !== undefined && state.length > 255) throw invalid('state is too long');
    const nonce = p('nonce');
    if (nonce !== undefined && nonce.length > 255) throw invalid('nonce is too long');
    const details = this.pushedDetails(p, client, scope);

    const requestUri = `urn:ietf:params:oauth:request_uri:${randomToken(24)}`;
    this.pushed.set(requestUri, { clientId: client.clientId, redirectUri, scope, state, nonce, codeChallenge: challenge, jkt, expiresAt: this.now() + REQUEST_URI_TTL_S * 1000, used: false, details });
    const extra = this.rotateNonce('par');
    if (m.parBody) return this.sendOverride(res, rec, m.parStatus ?? 201, m.parBody);
    const body = applyOverrides({ request_uri: requestUri, expires_in: REQUEST_URI_TTL_S }, m.parFields, { nowS: this.nowS(), clientId: client.clientId });
    this.json(res, rec, m.parStatus ?? 201, body, extra);
  }

  /** The DPoP key a pushed request is bound to: the proof's, and `dpop_jkt` (if sent) must name the same key. */
  protected async parDpopKey(req: http.IncomingMessage, rec: RecordedRequest, p: ParamReader): Promise<{ jkt: string; payload?: JsonObject }> {
    const { jkt, payload } = await this.checkDpop(req, rec, 'par', this.parEndpoint);
    const dpopJkt = p('dpop_jkt');
    if (dpopJkt !== undefined && dpopJkt !== jkt) throw new Refusal(400, 'invalid_request', 'dpop_jkt does not match the DPoP proof key');
    return { jkt, payload };
  }

  // ---- authorization ----------------------------------------------------------------------------------------------
  protected async authorize(req: http.IncomingMessage, res: http.ServerResponse, url: URL, rec: RecordedRequest): Promise<void> {
    rec.endpoint = 'authorize';
    const q = url.searchParams;
    const allowed = new Set(['client_id', 'request_uri', 'sandbox_user', 'sandbox_action']);
    for (const name of new Set(q.keys())) {
      if (!allowed.has(name)) throw new Refusal(400, 'invalid_request', `only client_id and request_uri may be sent to the authorization endpoint (got ${name}); put everything else in the PAR body`);
      if (q.getAll(name).length > 1) throw new Refusal(400, 'invalid_request', `parameter ${name} must not be repeated`);
    }
    const requestUri = q.get('request_uri');
    const pushed = requestUri ? this.pushed.get(requestUri) : undefined;
    if (!pushed) throw new Refusal(400, 'invalid_request', 'unknown request_uri (push the request to the PAR endpoint first)');
    if (pushed.clientId !== q.get('client_id')) throw new Refusal(400, 'invalid_request', 'client_id does not match the pushed request');
    if (pushed.used) throw new Refusal(400, 'invalid_request', 'request_uri was already used');
    if (pushed.expiresAt <= this.now()) throw new Refusal(400, 'invalid_request', `request_uri expired (lifetime ${REQUEST_URI_TTL_S} s)`);
    pushed.used = true;
    const fail = (error: string, description: string) => {
      rec.reason = description;
      return this.authRespond(res, rec, { redirectUri: pushed.redirectUri, mode: 'query', state: pushed.state, error: { error, description } });
    };
    let user: U;
    try {
      user = this.chooseUser(req, url, this.users);
    } catch (e) {
      return fail('invalid_request', (e as Error).message);
    }
    const action = q.get('sandbox_action');
    if (action === 'deny') return fail('access_denied', 'The user denied the request');
    if (action === 'cancel') return fail('access_denied', 'The user cancelled the login');
    if (action === 'login_required') return fail('login_required', 'The user must log in');
    if (this.m.authError) return fail(this.m.authError === 'cancel' ? 'access_denied' : this.m.authError, `sandbox: ${this.m.authError}`);
    const code = randomToken();
    this.purgeExpired(this.pushed, this.codes, this.accessTokens);
    this.codes.set(code, { ...pushed, user, expiresAt: this.now() + CODE_TTL_S * 1000, used: false });
    return this.authRespond(res, rec, { redirectUri: pushed.redirectUri, mode: 'query', state: pushed.state, code });
  }

  // ---- token ------------------------------------------------------------------------------------------------------
  protected async token(req: http.IncomingMessage, res: http.ServerResponse, rec: RecordedRequest): Promise<void> {
    rec.endpoint = 'token';
    if (this.redirectedAway('token', res, rec)) return;
    const form = await this.readForm(req, rec);
    if (this.param(form, 'grant_type') !== 'authorization_code') throw new Refusal(400, 'unsupported_grant_type', 'grant_type must be authorization_code');
    const client = await this.authenticateClient(form);
    const { jkt, payload } = await this.checkDpop(req, rec, 'token', this.tokenEndpoint);
    this.nonceCheck('token', payload.nonce);
    const m = this.m;
    this.refuseAsConfigured(m.tokenError);
    const grant = this.redeemCode(this.codes, form, client, CODE_TTL_S, 'pushed authorization request');
    if (jkt !== grant.jkt) throw new Refusal(400, 'invalid_dpop_proof', 'the DPoP key differs from the key used at the PAR endpoint');

    const now = this.nowS();
    const ttl = this.accessTokenTtlS;
    const accessToken = this.sign({ iss: this.issuer, sub: this.tokenSubject(grant.user), aud: this.issuer, client_id: client.clientId, scope: grant.scope, iat: now, exp: now + ttl, jti: randomToken(16), cnf: { jkt } }, 'at+jwt');
    this.accessTokens.set(accessToken, { clientId: client.clientId, user: grant.user, scope: grant.scope, jkt, expiresAt: (now + ttl) * 1000, details: grant.details });

    await this.maybeRotateBeforeIdToken();
    const claims = applyOverrides(this.idTokenClaims(grant, client.clientId), m.idToken, { nowS: this.nowS(), clientId: client.clientId });
    const inner = this.substituteIdToken(m.idTokenJose?.substitute, {
      accessToken, clientId: client.clientId, sub: String(claims.sub ?? ''), nowS: now,
      authInfoClaims: () => this.authInfoLikeClaims(grant, client.clientId),
    });
    const idToken = await this.seal(claims, m.idTokenJose, client, { enc: this.idTokenEnc }, inner);
    const extra = this.rotateNonce('token');
    if (m.tokenBody) return this.sendOverride(res, rec, 200, m.tokenBody);
    const body = this.finishTokenResponse({ access_token: accessToken, token_type: 'DPoP', expires_in: ttl, scope: grant.scope, id_token: idToken }, true);
    this.json(res, rec, 200, body, extra);
  }

  // ---- userinfo ---------------------------------------------------------------------------------------------------
  /** `Authorization: DPoP <token>` with a proof bound to the token's key and carrying `ath`; claims per provider. */
  protected async userinfo(req: http.IncomingMessage, res: http.ServerResponse, rec: RecordedRequest): Promise<void> {
    rec.endpoint = 'userinfo';
    if (this.redirectedAway('userinfo', res, rec)) return;
    const m = this.m;
    const invalidToken = (why: string) => new Refusal(401, 'invalid_token', why, { 'www-authenticate': `DPoP error="invalid_token", algs="ES256"` });
    const auth = String(req.headers.authorization ?? '');
    const match = /^([A-Za-z]+) ([A-Za-z0-9\-._~+/]+=*)$/.exec(auth);
    if (!match) throw invalidToken('Authorization: DPoP <access token> is required');
    if (match[1].toLowerCase() !== 'dpop') throw invalidToken('the access token is DPoP-bound: use the DPoP scheme, not ' + match[1]);
    const at = match[2];
    const grant = this.accessTokens.get(at);
    if (!grant) throw invalidToken('unknown access token');
    if (grant.expiresAt <= this.now()) throw invalidToken('access token expired');
    const { jkt, payload } = await this.checkDpop(req, rec, 'userinfo', this.userinfoEndpoint, at);
    if (jkt !== grant.jkt) throw new Refusal(401, 'invalid_dpop_proof', 'the DPoP key is not the one the access token is bound to', { 'www-authenticate': `DPoP error="invalid_dpop_proof", algs="ES256"` });
    this.nonceCheck('userinfo', payload.nonce);
    if (m.userinfoStatus) {
      const s = m.userinfoStatus;
      throw new Refusal(s, s === 401 ? 'invalid_token' : s === 403 ? 'insufficient_scope' : 'server_error', `sandbox: status ${s}`, s === 401 ? { 'www-authenticate': 'DPoP error="invalid_token"' } : {});
    }
    const claims = applyOverrides(this.userinfoClaims(grant), m.userinfo, { nowS: this.nowS(), clientId: grant.clientId });
    const extra = this.rotateNonce('userinfo');
    if (m.userinfoPlainJson) return this.json(res, rec, 200, claims, extra);
    const body = this.userinfoEncrypted() ? await this.seal(claims, m.userinfoJose, this.client(grant.clientId), { enc: 'A256GCM' }) : await this.signWith(claims, m.userinfoJose);
    this.raw(res, rec, 200, body, m.userinfoContentType ?? 'application/jwt', extra);
  }
}
