/**
 * Sandbox Singpass FAPI 2.0 provider (spec: singpass-fapi-profile.md, wire names: wire-names.md). Issuer
 * `${baseUrl}/singpass/fapi`.
 *
 * Routes (under `${prefix}/fapi`): `/.well-known/openid-configuration`, `/.well-known/keys`, `POST /par`,
 * `GET /auth` (only `client_id` + `request_uri`, plus the sandbox's own `sandbox_user` / `sandbox_action`),
 * `POST /token`, `GET /userinfo`.
 *
 * Deviation for local demos (documented): besides `https:` redirect URIs, registered loopback `http://127.0.0.1…` /
 * `http://localhost…` redirect URIs are accepted.
 */
import type * as http from 'node:http';
import * as crypto from 'node:crypto';
import type { JWK } from 'jose';
import { SINGPASS_USERS, type SingpassUser } from './fixtures';
import { ProviderCore, Refusal, applyOverrides, randomToken } from './provider-core';
import { decodeCompact, isObject, verifyEcCompact, type JsonObject } from './jose-forge';
import type { ProviderOptions, RecordedRequest } from './types';

const REQUEST_URI_TTL_S = 60;
const CODE_TTL_S = 60;
const ACCESS_TOKEN_TTL_S = 1800;
const ID_TOKEN_TTL_S = 600;
const DPOP_MAX_AGE_S = 120;
const SKEW_S = 10;
const ACR = ['urn:singpass:authentication:loa:1', 'urn:singpass:authentication:loa:2', 'urn:singpass:authentication:loa:3'];
/** Scopes that make Singpass add `sub_attributes` to the ID token. */
const SUB_ATTRIBUTE_SCOPES = ['user.identity', 'name', 'mobileno', 'email'];

interface PushedRequest {
  clientId: string;
  redirectUri: string;
  scope: string;
  state?: string;
  nonce?: string;
  codeChallenge: string;
  acrValues?: string[];
  jkt: string;
  expiresAt: number;
  used: boolean;
}

interface CodeGrant extends PushedRequest {
  user: SingpassUser;
}

interface AccessGrant {
  clientId: string;
  user: SingpassUser;
  scope: string;
  jkt: string;
  expiresAt: number;
}

type DpopEndpoint = 'par' | 'token' | 'userinfo';

function isLoopbackHttp(u: URL): boolean {
  return u.protocol === 'http:' && (u.hostname === '127.0.0.1' || u.hostname === 'localhost' || u.hostname === '[::1]');
}

export class SingpassProvider extends ProviderCore {
  private readonly pushed = new Map<string, PushedRequest>();
  private readonly codes = new Map<string, CodeGrant>();
  private readonly accessTokens = new Map<string, AccessGrant>();
  private readonly seenDpopJti = new Map<string, number>();
  private asNonce = randomToken(16);
  private rsNonce = randomToken(16);

  constructor(opts: ProviderOptions) {
    super(opts, '/singpass', '/fapi', true);
  }

  get parEndpoint(): string {
    return `${this.issuer}/par`;
  }
  get authorizationEndpoint(): string {
    return `${this.issuer}/auth`;
  }
  get tokenEndpoint(): string {
    return `${this.issuer}/token`;
  }
  get userinfoEndpoint(): string {
    return `${this.issuer}/userinfo`;
  }
  get jwksUri(): string {
    return `${this.issuer}/.well-known/keys`;
  }

  protected otherIssuer(): string {
    return `${this.baseUrl}/corppass`;
  }

  protected async route(req: http.IncomingMessage, res: http.ServerResponse, url: URL, rec: RecordedRequest): Promise<void> {
    const issuerPath = new URL(this.issuer).pathname;
    const path = url.pathname.startsWith(issuerPath) ? url.pathname.slice(issuerPath.length) : '';
    const method = req.method ?? 'GET';
    if (path === '/.well-known/openid-configuration' && method === 'GET') return this.discovery(res, rec);
    if (path === '/.well-known/keys' && method === 'GET') return this.serveJwks(res, rec);
    if (path === '/par' && method === 'POST') return this.par(req, res, rec);
    if (path === '/auth' && method === 'GET') return this.authorize(req, res, url, rec);
    if (path === '/token' && method === 'POST') return this.token(req, res, rec);
    if (path === '/userinfo' && method === 'GET') return this.userinfo(req, res, rec);
    this.json(res, rec, 404, { error: 'not_found', error_description: `no Singpass sandbox route ${method} ${url.pathname}` });
  }

  private discovery(res: http.ServerResponse, rec: RecordedRequest): void {
    rec.endpoint = 'discovery';
    if (this.redirectedAway('discovery', res, rec)) return;
    const m = this.m;
    const meta: JsonObject = {
      issuer: this.issuer,
      pushed_authorization_request_endpoint: this.parEndpoint,
      require_pushed_authorization_requests: true,
      authorization_endpoint: this.authorizationEndpoint,
      token_endpoint: this.tokenEndpoint,
      userinfo_endpoint: this.userinfoEndpoint,
      jwks_uri: this.jwksUri,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code'],
      scopes_supported: ['openid', 'user.identity', 'uinfin', 'name', 'sex', 'dob', 'nationality', 'residentialstatus', 'email', 'mobileno'],
      subject_types_supported: ['public'],
      acr_values_supported: ACR,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['private_key_jwt'],
      token_endpoint_auth_signing_alg_values_supported: ['ES256', 'ES384', 'ES512'],
      dpop_signing_alg_values_supported: m.discoveryDpopAlgs ?? ['ES256'],
      id_token_signing_alg_values_supported: ['ES256'],
      id_token_encryption_alg_values_supported: ['ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW'],
      id_token_encryption_enc_values_supported: ['A256CBC-HS512'],
      userinfo_signing_alg_values_supported: ['ES256'],
      userinfo_encryption_alg_values_supported: ['ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW'],
      userinfo_encryption_enc_values_supported: ['A256GCM'],
      claims_parameter_supported: false,
      request_parameter_supported: false,
    };
    if (m.discoveryDropPar) {
      delete meta.pushed_authorization_request_endpoint;
      delete meta.require_pushed_authorization_requests;
    }
    const out = this.finishDiscovery(meta, {
      authorization: 'authorization_endpoint',
      par: 'pushed_authorization_request_endpoint',
      token: 'token_endpoint',
      jwks: 'jwks_uri',
      userinfo: 'userinfo_endpoint',
    });
    this.json(res, rec, 200, out, { 'cache-control': 'public, max-age=3600' });
  }

  // ---- DPoP -------------------------------------------------------------------------------------------------------
  /**
   * RFC 9449 §4.3 proof checks: one `DPoP` header; typ dpop+jwt; ES256; public EC P-256 `jwk`; valid signature;
   * unique `jti`; `htm`/`htu` match; `iat` fresh; `exp` present and ≤ iat + 120 s; `ath` only (and then exactly) when
   * an access token is presented. Nonces are checked separately ({@link nonceCheck}).
   */
  private async checkDpop(req: http.IncomingMessage, rec: RecordedRequest, endpoint: DpopEndpoint, htu: string, accessToken?: string): Promise<{ jkt: string; payload: JsonObject }> {
    const values: string[] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'dpop') values.push(req.rawHeaders[i + 1]!);
    rec.dpop = values.map((v) => ({ ...(decodeCompact(v) ?? { header: {}, payload: {} }), compact: v }));
    const isRs = endpoint === 'userinfo';
    const bad = (why: string) =>
      new Refusal(isRs ? 401 : 400, 'invalid_dpop_proof', `DPoP proof rejected: ${why}`, isRs ? { 'www-authenticate': `DPoP error="invalid_dpop_proof", algs="ES256"` } : {});
    if (values.length === 0) throw bad('a DPoP header is required');
    if (values.length > 1) throw bad('exactly one DPoP header is allowed');
    const proof = values[0]!;
    const decoded = decodeCompact(proof);
    if (!decoded) throw bad('not a compact JWS');
    const { header, payload } = decoded;
    const jwk = header.jwk;
    if (isObject(jwk)) {
      try {
        rec.dpopJkt = await this.thumbprint(jwk as JWK);
      } catch {
        /* recorded without thumbprint */
      }
    }
    if (header.typ !== 'dpop+jwt') throw bad('typ must be dpop+jwt');
    if (header.alg !== 'ES256') throw bad('alg must be ES256');
    if (!isObject(jwk) || jwk.kty !== 'EC' || jwk.crv !== 'P-256') throw bad('jwk must be a public EC P-256 key');
    if ('d' in jwk) throw bad('jwk must not contain the private key');
    if (!verifyEcCompact(proof, jwk as JWK)) throw bad('signature does not verify with the header jwk');
    const now = this.nowS();
    if (typeof payload.jti !== 'string' || payload.jti.length < 16) throw bad('jti must be a random string (at least 96 bits)');
    for (const [j, t] of this.seenDpopJti) if (t < now - 600) this.seenDpopJti.delete(j);
    if (this.seenDpopJti.has(payload.jti)) throw bad('jti was already used (replay)');
    this.seenDpopJti.set(payload.jti, now);
    if (payload.htm !== (req.method ?? '')) throw bad(`htm must be ${req.method}`);
    if (typeof payload.htu !== 'string' || payload.htu.replace(/[?#].*$/, '') !== htu) throw bad(`htu must be ${htu}`);
    if (typeof payload.iat !== 'number' || payload.iat > now + SKEW_S || payload.iat < now - DPOP_MAX_AGE_S - SKEW_S) throw bad('iat must be the current time');
    // Singpass requires `exp`, at most 120 s after `iat` (wire-names.md).
    if (payload.exp === undefined) throw bad(`exp is required (at most ${DPOP_MAX_AGE_S} s after iat)`);
    if (typeof payload.exp !== 'number' || payload.exp <= now - SKEW_S) throw bad('expired');
    if (payload.exp - payload.iat > DPOP_MAX_AGE_S) throw bad(`exp must be at most ${DPOP_MAX_AGE_S} s after iat`);
    if (accessToken === undefined) {
      if (payload.ath !== undefined) throw bad('ath must not be sent to the authorization server');
    } else {
      const ath = crypto.createHash('sha256').update(accessToken).digest('base64url');
      if (payload.ath !== ath) throw bad('ath must be the base64url SHA-256 of the access token');
    }
    return { jkt: (await this.thumbprint(jwk as JWK)) as string, payload };
  }

  private nonceApplies(endpoint: DpopEndpoint): boolean {
    const m = this.m;
    return !!m.dpopNonce && (!m.dpopNonceAt || m.dpopNonceAt.includes(endpoint));
  }

  /** [60–65] Server nonce challenge according to the `dpopNonce` switch; throws the challenge. */
  private nonceCheck(endpoint: DpopEndpoint, proofNonce: unknown): void {
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
  private async par(req: http.IncomingMessage, res: http.ServerResponse, rec: RecordedRequest): Promise<void> {
    rec.endpoint = 'par';
    if (this.redirectedAway('par', res, rec)) return;
    const form = await this.readForm(req, rec);
    const client = await this.authenticateClient(form);
    const { jkt, payload } = await this.checkDpop(req, rec, 'par', this.parEndpoint);
    this.nonceCheck('par', payload.nonce);
    const m = this.m;
    this.refuseAsConfigured(m.parError);

    const p = (n: string, required = false) => this.param(form, n, required);
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
    const acr = p('acr_values');
    const acrValues = acr?.split(' ');
    if (acrValues && acrValues.some((a) => !ACR.includes(a))) throw invalid(`acr_values must be among ${ACR.join(', ')}`);
    const ctxType = p('authentication_context_type');
    if (ctxType !== undefined && !/^[A-Z][A-Z0-9_]{2,63}$/.test(ctxType)) throw invalid('authentication_context_type must be an upper-case identifier such as APP_AUTHENTICATION_DEFAULT');
    const ctxMsg = p('authentication_context_message');
    if (ctxMsg !== undefined && (ctxMsg.length > 100 || /[\u0000-\u001f<>]/.test(ctxMsg))) throw invalid('authentication_context_message must be at most 100 printable characters');
    const httpsType = p('redirect_uri_https_type');
    if (httpsType !== undefined && !['standard_https', 'app_claimed_https'].includes(httpsType)) throw invalid('redirect_uri_https_type must be standard_https or app_claimed_https');
    const appLaunch = p('app_launch_url');
    if (appLaunch !== undefined) {
      let ok = false;
      try {
        ok = new URL(appLaunch).protocol === 'https:';
      } catch {
        /* not a URL */
      }
      if (!ok) throw invalid('app_launch_url must be an https URL');
    }
    const dpopJkt = p('dpop_jkt');
    if (dpopJkt !== undefined && dpopJkt !== jkt) throw invalid('dpop_jkt does not match the DPoP proof key');

    const requestUri = `urn:ietf:params:oauth:request_uri:${randomToken(24)}`;
    this.pushed.set(requestUri, { clientId: client.clientId, redirectUri, scope, state, nonce, codeChallenge: challenge, acrValues, jkt, expiresAt: this.now() + REQUEST_URI_TTL_S * 1000, used: false });
    const extra = this.rotateNonce('par');
    if (m.parBody) return this.sendOverride(res, rec, m.parStatus ?? 201, m.parBody);
    const body = applyOverrides({ request_uri: requestUri, expires_in: REQUEST_URI_TTL_S }, m.parFields, { nowS: this.nowS(), clientId: client.clientId });
    this.json(res, rec, m.parStatus ?? 201, body, extra);
  }

  // ---- authorization ----------------------------------------------------------------------------------------------
  private async authorize(req: http.IncomingMessage, res: http.ServerResponse, url: URL, rec: RecordedRequest): Promise<void> {
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
    let user: SingpassUser;
    try {
      user = this.chooseUser(req, url, SINGPASS_USERS);
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
  private async token(req: http.IncomingMessage, res: http.ServerResponse, rec: RecordedRequest): Promise<void> {
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
    const user = grant.user;
    const accessToken = this.sign({ iss: this.issuer, sub: user.uuid, aud: this.issuer, client_id: client.clientId, scope: grant.scope, iat: now, exp: now + ACCESS_TOKEN_TTL_S, jti: randomToken(16), cnf: { jkt } }, 'at+jwt');
    this.accessTokens.set(accessToken, { clientId: client.clientId, user, scope: grant.scope, jkt, expiresAt: (now + ACCESS_TOKEN_TTL_S) * 1000 });

    await this.maybeRotateBeforeIdToken();
    const scopes = grant.scope.split(' ');
    const base: JsonObject = {
      iss: this.issuer,
      aud: client.clientId,
      sub: user.uuid,
      sub_type: 'user',
      iat: this.nowS(),
      exp: this.nowS() + ID_TOKEN_TTL_S,
      acr: this.reachedAcr(user, grant.acrValues),
      amr: user.amr,
    };
    if (scopes.some((s) => SUB_ATTRIBUTE_SCOPES.includes(s))) {
      const attrs: JsonObject = { account_type: user.accountType };
      if (scopes.includes('user.identity')) {
        attrs.identity_number = user.identityNumber;
        attrs.identity_coi = user.identityCoi;
      }
      for (const s of ['name', 'email', 'mobileno']) if (scopes.includes(s) && user.person[s]) attrs[s] = user.person[s];
      base.sub_attributes = attrs;
    }
    if (grant.nonce !== undefined) base.nonce = grant.nonce;
    const claims = applyOverrides(base, m.idToken, { nowS: this.nowS(), clientId: client.clientId });
    const inner = this.substituteIdToken(m.idTokenJose?.substitute, {
      accessToken, clientId: client.clientId, sub: user.uuid, nowS: now,
      authInfoClaims: () => ({ iss: this.issuer, aud: client.clientId, sub: user.uuid, iat: now, exp: now + 600, AuthInfo: { Result_Set: { ESrvc_Row_Count: 0, ESrvc_Result: [] } } }),
    });
    const idToken = await this.seal(claims, m.idTokenJose, client, { enc: 'A256CBC-HS512' }, inner);
    const extra = this.rotateNonce('token');
    if (m.tokenBody) return this.sendOverride(res, rec, 200, m.tokenBody);
    const body = this.finishTokenResponse({ access_token: accessToken, token_type: 'DPoP', expires_in: ACCESS_TOKEN_TTL_S, scope: grant.scope, id_token: idToken }, true);
    this.json(res, rec, 200, body, extra);
  }

  /** The user authenticates at least at the requested level (the sandbox user always can). */
  private reachedAcr(user: SingpassUser, requested?: string[]): string {
    if (!requested?.length) return user.acr;
    const want = Math.min(...requested.map((a) => ACR.indexOf(a)));
    return ACR[Math.max(want, ACR.indexOf(user.acr))]!;
  }

  // ---- userinfo ---------------------------------------------------------------------------------------------------
  private async userinfo(req: http.IncomingMessage, res: http.ServerResponse, rec: RecordedRequest): Promise<void> {
    rec.endpoint = 'userinfo';
    if (this.redirectedAway('userinfo', res, rec)) return;
    const m = this.m;
    const invalidToken = (why: string) => new Refusal(401, 'invalid_token', why, { 'www-authenticate': `DPoP error="invalid_token", algs="ES256"` });
    const auth = String(req.headers.authorization ?? '');
    const match = /^([A-Za-z]+) ([A-Za-z0-9\-._~+/]+=*)$/.exec(auth);
    if (!match) throw invalidToken('Authorization: DPoP <access token> is required');
    if (match[1]!.toLowerCase() !== 'dpop') throw invalidToken('the access token is DPoP-bound: use the DPoP scheme, not ' + match[1]);
    const at = match[2]!;
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
    const scopes = grant.scope.split(' ');
    const person: JsonObject = {};
    for (const [k, v] of Object.entries(grant.user.person)) {
      if (scopes.includes(k)) person[k] = { lastupdated: '2024-05-20', source: '1', classification: 'C', value: v };
    }
    const base: JsonObject = { iss: this.issuer, sub: grant.user.uuid, aud: grant.clientId, iat: this.nowS(), person_info: person };
    const claims = applyOverrides(base, m.userinfo, { nowS: this.nowS(), clientId: grant.clientId });
    const extra = this.rotateNonce('userinfo');
    if (m.userinfoPlainJson) return this.json(res, rec, 200, claims, extra);
    const client = this.client(grant.clientId);
    const body = m.userinfoSignedOnly ? await this.signWith(claims, m.userinfoJose) : await this.seal(claims, m.userinfoJose, client, { enc: 'A256GCM' });
    this.raw(res, rec, 200, body, m.userinfoContentType ?? 'application/jwt', extra);
  }
}

/** Create the Singpass FAPI 2.0 sandbox provider (mount it at `/singpass`). */
export function createSingpassProvider(opts: ProviderOptions): SingpassProvider {
  return new SingpassProvider(opts);
}
