/**
 * Sandbox Singpass FAPI 2.0 provider (Singpass's FAPI 2.0 profile, with the wire names it publishes). Issuer
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
import { SINGPASS_USERS, type SingpassUser } from './fixtures';
import { Refusal } from './provider-core';
import { FapiProviderCore, type AccessGrant, type CodeGrant, type ParamReader } from './fapi-core';
import type { JsonObject } from './jose-forge';
import type { ProviderOptions, RecordedRequest } from './types';

const ACCESS_TOKEN_TTL_S = 1800;
const ID_TOKEN_TTL_S = 600;
const ACR = ['urn:singpass:authentication:loa:1', 'urn:singpass:authentication:loa:2', 'urn:singpass:authentication:loa:3'];
/** Scopes that make Singpass add `sub_attributes` to the ID token. */
const SUB_ATTRIBUTE_SCOPES = ['user.identity', 'name', 'mobileno', 'email'];

/** What a Singpass pushed request carries beyond the FAPI basics. */
interface SingpassDetails {
  acrValues?: string[];
}

export class SingpassProvider extends FapiProviderCore<SingpassUser, SingpassDetails> {
  protected readonly users = SINGPASS_USERS;
  protected readonly accessTokenTtlS = ACCESS_TOKEN_TTL_S;
  protected readonly idTokenEnc = 'A256CBC-HS512' as const;
  // Singpass requires `exp`, at most 120 s after `iat` (its FAPI profile).
  protected override readonly dpopExpRequired = true;

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

  // ---- PAR: Singpass parameters -----------------------------------------------------------------------------------
  protected pushedDetails(p: ParamReader): SingpassDetails {
    const invalid = (why: string) => new Refusal(400, 'invalid_request', why);
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
    return { acrValues };
  }

  // ---- tokens -----------------------------------------------------------------------------------------------------
  protected tokenSubject(user: SingpassUser): string {
    return user.uuid;
  }

  protected idTokenClaims(grant: CodeGrant<SingpassUser, SingpassDetails>, clientId: string): JsonObject {
    const user = grant.user;
    const scopes = grant.scope.split(' ');
    const base: JsonObject = {
      iss: this.issuer,
      aud: clientId,
      sub: user.uuid,
      sub_type: 'user',
      iat: this.nowS(),
      exp: this.nowS() + ID_TOKEN_TTL_S,
      acr: this.reachedAcr(user, grant.details.acrValues),
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
    return base;
  }

  protected authInfoLikeClaims(grant: CodeGrant<SingpassUser, SingpassDetails>, clientId: string): JsonObject {
    const now = this.nowS();
    return { iss: this.issuer, aud: clientId, sub: grant.user.uuid, iat: now, exp: now + 600, AuthInfo: { Result_Set: { ESrvc_Row_Count: 0, ESrvc_Result: [] } } };
  }

  /** The user authenticates at least at the requested level (the sandbox user always can). */
  private reachedAcr(user: SingpassUser, requested?: string[]): string {
    if (!requested?.length) return user.acr;
    const want = Math.min(...requested.map((a) => ACR.indexOf(a)));
    return ACR[Math.max(want, ACR.indexOf(user.acr))];
  }

  // ---- userinfo ---------------------------------------------------------------------------------------------------
  protected userinfoClaims(grant: AccessGrant<SingpassUser, SingpassDetails>): JsonObject {
    const scopes = grant.scope.split(' ');
    const person: JsonObject = {};
    for (const [k, v] of Object.entries(grant.user.person)) {
      if (scopes.includes(k)) person[k] = { lastupdated: '2024-05-20', source: '1', classification: 'C', value: v };
    }
    return { iss: this.issuer, sub: grant.user.uuid, aud: grant.clientId, iat: this.nowS(), person_info: person };
  }

  /** Singpass always encrypts userinfo; `userinfoSignedOnly` is the downgrade switch ([56]). */
  protected userinfoEncrypted(): boolean {
    return !this.m.userinfoSignedOnly;
  }
}

/** Create the Singpass FAPI 2.0 sandbox provider (mount it at `/singpass`). */
export function createSingpassProvider(opts: ProviderOptions): SingpassProvider {
  return new SingpassProvider(opts);
}
