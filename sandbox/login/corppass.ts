/**
 * Sandbox Corppass (legacy OIDC profile, per the Corppass Authorization API spec). Issuer `${baseUrl}/corppass`.
 *
 * Routes (under the prefix): `/.well-known/openid-configuration`, `/.well-known/keys`,
 * `GET /mga/sps/oauth/oauth20/authorize`, `POST /mga/sps/oauth/oauth20/token`, `POST /authorization-info`.
 * Headless authorization: the user comes from `sandbox_user` / `X-Sandbox-User` (see fixtures.ts);
 * `sandbox_action=deny` answers `error=access_denied`.
 * Like the real Corppass today, it sends no `iss` on redirects and publishes
 * `authorization_response_iss_parameter_supported: false`; `issParameter: true` rehearses the day it turns `iss` on.
 */
import type * as http from 'node:http';
import { CORPPASS_USERS, corppassAuthorization, type CorppassUser } from './fixtures';
import { ProviderCore, Refusal, applyOverrides, randomToken } from './provider-core';
import type { ProviderOptions, RecordedRequest } from './types';
import type { JsonObject } from './jose-forge';

const CODE_TTL_S = 60;
const ACCESS_TOKEN_TTL_S = 600;
const ID_TOKEN_TTL_S = 600;
const AUTH_INFO_TTL_S = 600;

interface CodeGrant {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  nonce?: string;
  scope: string;
  user: CorppassUser;
  expiresAt: number;
  used: boolean;
}

interface AccessGrant {
  clientId: string;
  user: CorppassUser;
  expiresAt: number;
}

export class CorppassProvider extends ProviderCore {
  private readonly codes = new Map<string, CodeGrant>();
  private readonly accessTokens = new Map<string, AccessGrant>();

  constructor(opts: ProviderOptions) {
    super(opts, '/corppass', '', false);
    this.publishCertificates = true;
  }

  get authorizationEndpoint(): string {
    return `${this.issuer}/mga/sps/oauth/oauth20/authorize`;
  }
  get tokenEndpoint(): string {
    return `${this.issuer}/mga/sps/oauth/oauth20/token`;
  }
  get authorizationInfoEndpoint(): string {
    return `${this.issuer}/authorization-info`;
  }
  get jwksUri(): string {
    return `${this.issuer}/.well-known/keys`;
  }

  protected otherIssuer(): string {
    return `${this.baseUrl}/singpass/fapi`;
  }

  protected async route(req: http.IncomingMessage, res: http.ServerResponse, url: URL, rec: RecordedRequest): Promise<void> {
    const path = url.pathname.slice(this.prefix.length);
    const method = req.method ?? 'GET';
    if (path === '/.well-known/openid-configuration' && method === 'GET') return this.discovery(res, rec);
    if (path === '/.well-known/keys' && method === 'GET') return this.serveJwks(res, rec);
    if (path === '/mga/sps/oauth/oauth20/authorize' && method === 'GET') return this.authorize(req, res, url, rec);
    if (path === '/mga/sps/oauth/oauth20/token' && method === 'POST') return this.token(req, res, rec);
    if (path === '/authorization-info' && method === 'POST') return this.authorizationInfo(req, res, rec);
    this.json(res, rec, 404, { error: 'not_found', error_description: `no Corppass sandbox route ${method} ${url.pathname}` });
  }

  private discovery(res: http.ServerResponse, rec: RecordedRequest): void {
    rec.endpoint = 'discovery';
    if (this.redirectedAway('discovery', res, rec)) return;
    const meta: JsonObject = {
      issuer: this.issuer,
      authorization_endpoint: this.authorizationEndpoint,
      token_endpoint: this.tokenEndpoint,
      jwks_uri: this.jwksUri,
      userinfo_endpoint: this.authorizationInfoEndpoint,
      'authorization-info_endpoint': this.authorizationInfoEndpoint,
      name: 'Corppass sandbox',
      response_types_supported: ['code'],
      response_modes_supported: ['form_post', 'fragment', 'query'],
      grant_types_supported: ['authorization_code'],
      scopes_supported: ['openid'],
      subject_types_supported: ['public'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['private_key_jwt'],
      token_endpoint_auth_signing_alg_values_supported: ['ES256', 'ES256K', 'ES384', 'ES512'],
      id_token_signing_alg_values_supported: ['ES256'],
      id_token_encryption_alg_values_supported: ['ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW'],
      id_token_encryption_enc_values_supported: ['A256CBC-HS512'],
      userinfo_signing_alg_values_supported: ['ES256'],
      userinfo_encryption_alg_values_supported: ['A128KW', 'A256KW', 'ECDH-ES', 'RSA-OAEP', 'RSA-OAEP-256', 'dir'],
      userinfo_encryption_enc_values_supported: ['A128CBC-HS256', 'A128GCM', 'A256CBC-HS512', 'A256GCM'],
      claim_types_supported: ['normal'],
      claims_supported: ['nonce', 'aud', 'iss', 'sub', 'exp', 'iat', 'userInfo', 'entityInfo', 'AuthInfo', 'TPAuthInfo', 'rt_hash', 'at_hash', 'amr', 'email', 'email_verified', 'sid', 'auth_time', 'EntityInfo'],
      claims_parameter_supported: false,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
    };
    const out = this.finishDiscovery(meta, {
      authorization: 'authorization_endpoint',
      token: 'token_endpoint',
      jwks: 'jwks_uri',
      userinfo: 'userinfo_endpoint',
      authorizationInfo: 'authorization-info_endpoint',
    });
    this.json(res, rec, 200, out, { 'cache-control': 'public, max-age=3600' });
  }

  private async authorize(req: http.IncomingMessage, res: http.ServerResponse, url: URL, rec: RecordedRequest): Promise<void> {
    rec.endpoint = 'authorize';
    const q = url.searchParams;
    for (const name of new Set(q.keys())) {
      if (q.getAll(name).length > 1) throw new Refusal(400, 'invalid_request', `parameter ${name} must not be repeated`);
    }
    // Until client and redirect_uri are known to be good, errors are shown here, never redirected (open redirector).
    const client = this.clients.get(q.get('client_id') ?? '');
    if (!client) throw new Refusal(400, 'invalid_request', 'unknown client_id');
    const redirectUri = q.get('redirect_uri') ?? undefined;
    if (!this.redirectUriAllowed(client, redirectUri)) throw new Refusal(400, 'invalid_request', 'redirect_uri is not registered for this client');
    const modeParam = q.get('response_mode') ?? 'query';
    if (!['query', 'fragment', 'form_post'].includes(modeParam)) throw new Refusal(400, 'invalid_request', 'response_mode must be query, fragment or form_post');
    const mode = modeParam as 'query' | 'fragment' | 'form_post';
    const state = q.get('state') ?? undefined;
    const fail = (error: string, description: string) => {
      rec.reason = description;
      return this.authRespond(res, rec, { redirectUri, mode, state, error: { error, description } });
    };
    if (q.get('response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code');
    if (q.has('request')) return fail('request_not_supported', 'the request parameter is not supported');
    if (q.has('request_uri')) return fail('request_uri_not_supported', 'the request_uri parameter is not supported');
    if (q.has('claims')) return fail('invalid_request', 'the claims parameter is not supported');
    const scope = q.get('scope') ?? '';
    if (!scope.split(' ').includes('openid')) return fail('invalid_scope', 'scope must include openid');
    const challenge = q.get('code_challenge');
    if (!challenge || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) return fail('invalid_request', 'code_challenge (S256, 43 characters) is required');
    if (q.get('code_challenge_method') !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
    const nonce = q.get('nonce') ?? undefined;
    if (nonce !== undefined && nonce.length > 255) return fail('invalid_request', 'nonce is too long');
    let user: CorppassUser;
    try {
      user = this.chooseUser(req, url, CORPPASS_USERS);
    } catch (e) {
      return fail('invalid_request', (e as Error).message);
    }
    const action = q.get('sandbox_action');
    if (action === 'deny') return fail('access_denied', 'The user denied the request');
    if (this.m.authError) return fail(this.m.authError, `sandbox: ${this.m.authError}`);
    const code = randomToken();
    this.purgeExpired(this.codes, this.accessTokens);
    this.codes.set(code, { clientId: client.clientId, redirectUri, codeChallenge: challenge, nonce, scope, user, expiresAt: this.now() + CODE_TTL_S * 1000, used: false });
    return this.authRespond(res, rec, { redirectUri, mode, state, code });
  }

  private async token(req: http.IncomingMessage, res: http.ServerResponse, rec: RecordedRequest): Promise<void> {
    rec.endpoint = 'token';
    if (this.redirectedAway('token', res, rec)) return;
    const form = await this.readForm(req, rec);
    if (this.param(form, 'grant_type') !== 'authorization_code') throw new Refusal(400, 'unsupported_grant_type', 'grant_type must be authorization_code');
    const client = await this.authenticateClient(form);
    const m = this.m;
    this.refuseAsConfigured(m.tokenError);
    const grant = this.redeemCode(this.codes, form, client, CODE_TTL_S, 'authorization request');

    const now = this.nowS();
    const accessToken = this.sign({ iss: this.issuer, aud: this.authorizationInfoEndpoint, sub: grant.user.sub, client_id: client.clientId, scope: grant.scope, iat: now, exp: now + ACCESS_TOKEN_TTL_S, jti: randomToken(16) });
    this.accessTokens.set(accessToken, { clientId: client.clientId, user: grant.user, expiresAt: (now + ACCESS_TOKEN_TTL_S) * 1000 });

    await this.maybeRotateBeforeIdToken();
    const base: JsonObject = {
      iss: this.issuer,
      aud: client.clientId,
      sub: grant.user.sub,
      iat: this.nowS(),
      exp: this.nowS() + ID_TOKEN_TTL_S,
      auth_time: this.nowS(),
      amr: grant.user.amr,
      userInfo: grant.user.userInfo,
      entityInfo: grant.user.entityInfo,
    };
    if (grant.nonce !== undefined) base.nonce = grant.nonce;
    const claims = applyOverrides(base, m.idToken, { nowS: this.nowS(), clientId: client.clientId });
    const inner = this.substituteIdToken(m.idTokenJose?.substitute, {
      accessToken, clientId: client.clientId, sub: grant.user.sub, nowS: now,
      authInfoClaims: () => this.authInfoClaims(client.clientId, grant.user),
    });
    const idToken = await this.seal(claims, m.idTokenJose, client, { enc: 'A256CBC-HS512' }, inner);
    if (m.tokenBody) return this.sendOverride(res, rec, 200, m.tokenBody);
    const body = this.finishTokenResponse({ access_token: accessToken, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_S, scope: grant.scope, id_token: idToken }, false);
    this.json(res, rec, 200, body);
  }

  private authInfoClaims(clientId: string, user: CorppassUser): JsonObject {
    const now = this.nowS();
    const { AuthInfo, TPAuthInfo } = corppassAuthorization(user);
    const stringify = this.m.authInfoStringified;
    return {
      iss: this.issuer,
      aud: clientId,
      sub: user.sub,
      iat: now,
      exp: now + AUTH_INFO_TTL_S,
      AuthInfo: stringify ? JSON.stringify(AuthInfo) : AuthInfo,
      TPAuthInfo: stringify ? JSON.stringify(TPAuthInfo) : TPAuthInfo,
    };
  }

  private async authorizationInfo(req: http.IncomingMessage, res: http.ServerResponse, rec: RecordedRequest): Promise<void> {
    rec.endpoint = 'authorizationInfo';
    if (this.redirectedAway('authorizationInfo', res, rec)) return;
    const m = this.m;
    const challenge = { 'www-authenticate': 'Bearer error="invalid_token"' };
    const auth = String(req.headers.authorization ?? '');
    const match = /^bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(auth);
    if (!match) throw new Refusal(401, 'invalid_token', 'Authorization: Bearer <access token> is required', challenge);
    const grant = this.accessTokens.get(match[1]);
    if (!grant) throw new Refusal(401, 'invalid_token', 'unknown access token', challenge);
    if (grant.expiresAt <= this.now()) throw new Refusal(401, 'invalid_token', 'access token expired', challenge);
    if (m.authInfoStatus) throw new Refusal(m.authInfoStatus, m.authInfoStatus === 401 ? 'invalid_token' : 'server_error', `sandbox: status ${m.authInfoStatus}`, m.authInfoStatus === 401 ? challenge : {});
    const claims = applyOverrides(this.authInfoClaims(grant.clientId, grant.user), m.authInfo, { nowS: this.nowS(), clientId: grant.clientId });
    const jws = await this.signWith(claims, m.authInfoJose);
    this.raw(res, rec, 200, jws, 'application/jwt');
  }
}

/** Create the Corppass sandbox provider (mount it at `/corppass`). */
export function createCorppassProvider(opts: ProviderOptions): CorppassProvider {
  return new CorppassProvider(opts);
}
