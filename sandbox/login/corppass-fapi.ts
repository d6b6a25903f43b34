/**
 * Sandbox Corppass Authorization API, FAPI 2.0 profile (as the real provider publishes it). Issuer
 * `${baseUrl}/corppass-fapi` (the real one shares its host with the legacy profile; the sandbox mounts it apart).
 *
 * Routes (under the prefix): `/.well-known/openid-configuration`, `/.well-known/keys`, `POST /request` (PAR),
 * `GET /mga/sps/oauth/oauth20/authorize` (only `client_id` + `request_uri`, plus `sandbox_user` / `sandbox_action`),
 * `POST /mga/sps/oauth/oauth20/token`, `GET|POST /userinfo`.
 *
 * Strict like the real service: PAR required, PKCE S256, DPoP on PAR / token / userinfo with the same key (PAR may
 * name it by `dpop_jkt` instead), `ath` at userinfo, 60 s single-use request URIs and codes, no refresh token;
 * `authentication_context_type` required for Login apps (allow-listed per client), `authentication_context_*`
 * refused for Myinfo Business apps; only scopes enabled for the client. The ID token's `sub` is the ENTITY and `act`
 * the acting user; authorization info (`auth_info` / `tp_auth_info`) comes from userinfo, signed (JWS) by default,
 * or a JWE around the JWS with the `userinfoEncrypted` switch (the docs disagree on which). Like the real Corppass
 * today it sends no `iss` on redirects (`issParameter: true` rehearses the day it does). Same misbehaviour switches
 * as the other providers (misbehaviour.ts).
 */
import type * as http from 'node:http';
import { CORPPASS_USERS, corppassAuthorization, type CorppassUser } from './fixtures';
import { Refusal } from './provider-core';
import { FapiProviderCore, type AccessGrant, type CodeGrant, type ParamReader } from './fapi-core';
import type { JsonObject } from './jose-forge';
import type { ClientRegistration, ProviderOptions, RecordedRequest } from './types';

const ACCESS_TOKEN_TTL_S = 600;
const ID_TOKEN_TTL_S = 600;
const USERINFO_TTL_S = 600;

/** Scopes every Corppass FAPI app may be given [C, S9]: ID token (`openid`, entity.*, user.*) and userinfo (authinfo). */
export const CORPPASS_FAPI_STANDARD_SCOPES = [
  'openid', 'authinfo', 'tpauthinfo', 'entity.identity', 'entity.basic_profile.name', 'entity.basic_profile.uen_status', 'user.identity', 'user.name',
] as const;
/** Myinfo Business scopes of this sandbox (MIB apps only; released in userinfo `entity_info` / `person_info` / `corppass_info`). */
export const CORPPASS_FAPI_MIB_SCOPES = ['entity.basic_profile', 'entity.addresses', 'user.email', 'user.mobileno', 'corppass.email'] as const;
/** The only `authentication_context_type` value today [C, S5]. */
export const DEFAULT_AUTHENTICATION_CONTEXT_TYPE = 'APP_AUTHENTICATION_DEFAULT';

/** A Corppass FAPI client: a Login app (from CDP) or a Myinfo Business app (from SDP). */
export interface CorppassFapiClientRegistration extends ClientRegistration {
  /** Default `login`. */
  appType?: 'login' | 'myinfo-business';
  /** Scopes enabled for the client (default: the standard scopes, plus the MIB scopes for an MIB app). */
  scopes?: string[];
  /** Allowed `authentication_context_type` values (Login apps; default `APP_AUTHENTICATION_DEFAULT`). */
  authenticationContextTypes?: string[];
  /** Third-party authorization enabled for the service (default true): `tp_auth_info` is released. */
  thirdParty?: boolean;
}

interface FapiClient {
  appType: 'login' | 'myinfo-business';
  scopes: string[];
  contextTypes: string[];
  thirdParty: boolean;
}

/** What a Corppass pushed request carries beyond the FAPI basics. */
interface CorppassDetails {
  client: FapiClient;
  authenticationContextType?: string;
  authenticationContextMessage?: string;
}

/** The FAPI view of a sandbox Corppass user (derived from the legacy fixtures, so both profiles show one person). */
export interface CorppassFapiIdentity {
  entity: { sub: string; attributes: JsonObject };
  user: { uuid: string; identity: JsonObject; name: string };
  email: string;
}

/** Entity names the legacy fixtures do not carry (UEN entities). */
const ENTITY_NAMES: Record<string, string> = { '201500001A': 'ACME WIDGETS PTE. LTD.' };
const FOREIGN_IDS: Record<string, string> = { 'cp-foreign': 'A51234567' };

/** Map a legacy fixture user to the FAPI claims (`sub` = entity, `act` = user). */
export function corppassFapiIdentity(u: CorppassUser): CorppassFapiIdentity {
  const pairs = Object.fromEntries(u.sub.split(',').map((p) => p.split('=') as [string, string]));
  const e = u.entityInfo;
  const uen = e.CPEnt_TYPE === 'UEN';
  return {
    entity: {
      sub: e.CPEntID,
      attributes: {
        entity_type: e.CPEnt_TYPE,
        entity_reg_number: uen ? e.CPEntID : e.CPNonUEN_RegNo,
        entity_coi: uen ? 'SG' : e.CPNonUEN_Country,
        entity_name: uen ? (ENTITY_NAMES[e.CPEntID] ?? e.CPEntID) : e.CPNonUEN_Name,
        entity_uen_status: e.CPEnt_Status,
      },
    },
    user: {
      uuid: pairs.uuid,
      identity: pairs.s
        ? { account_type: 'standard', identity_number: pairs.s, identity_coi: pairs.c ?? 'SG' }
        : { account_type: 'foreign', identity_number: FOREIGN_IDS[u.id] ?? 'UNKNOWN', identity_coi: pairs.c ?? '' },
      name: u.userInfo.CPUID_FullName,
    },
    email: `${u.id}@example.sg`,
  };
}

export class CorppassFapiProvider extends FapiProviderCore<CorppassUser, CorppassDetails> {
  protected readonly users = CORPPASS_USERS;
  protected readonly accessTokenTtlS = ACCESS_TOKEN_TTL_S;
  protected readonly idTokenEnc = 'A256GCM' as const;
  private readonly fapiClients = new Map<string, FapiClient>();

  constructor(opts: ProviderOptions) {
    // No `iss` on redirects and the discovery flag false by default, like the real Corppass today.
    super(opts, '/corppass-fapi', '', false);
    this.publishCertificates = true;
  }

  get parEndpoint(): string {
    return `${this.issuer}/request`;
  }
  get authorizationEndpoint(): string {
    return `${this.issuer}/mga/sps/oauth/oauth20/authorize`;
  }
  get tokenEndpoint(): string {
    return `${this.issuer}/mga/sps/oauth/oauth20/token`;
  }
  get userinfoEndpoint(): string {
    return `${this.issuer}/userinfo`;
  }
  get jwksUri(): string {
    return `${this.issuer}/.well-known/keys`;
  }

  protected otherIssuer(): string {
    return `${this.baseUrl}/singpass/fapi`;
  }

  /** Register a Login app (default) or a Myinfo Business app. */
  override registerClient(client: CorppassFapiClientRegistration): void {
    super.registerClient(client);
    const appType = client.appType ?? 'login';
    if (appType !== 'login' && appType !== 'myinfo-business') throw new Error('appType must be login or myinfo-business');
    this.fapiClients.set(client.clientId, {
      appType,
      scopes: client.scopes ?? [...CORPPASS_FAPI_STANDARD_SCOPES, ...(appType === 'myinfo-business' ? CORPPASS_FAPI_MIB_SCOPES : [])],
      contextTypes: client.authenticationContextTypes ?? [DEFAULT_AUTHENTICATION_CONTEXT_TYPE],
      thirdParty: client.thirdParty ?? true,
    });
  }

  protected async route(req: http.IncomingMessage, res: http.ServerResponse, url: URL, rec: RecordedRequest): Promise<void> {
    const path = url.pathname.slice(this.prefix.length);
    const method = req.method ?? 'GET';
    if (path === '/.well-known/openid-configuration' && method === 'GET') return this.discovery(res, rec);
    if (path === '/.well-known/keys' && method === 'GET') return this.serveJwks(res, rec);
    if (path === '/request' && method === 'POST') return this.par(req, res, rec);
    if (path === '/mga/sps/oauth/oauth20/authorize' && method === 'GET') return this.authorize(req, res, url, rec);
    if (path === '/mga/sps/oauth/oauth20/token' && method === 'POST') return this.token(req, res, rec);
    // POST is allowed too; its body is ignored [C, S8].
    if (path === '/userinfo' && (method === 'GET' || method === 'POST')) return this.userinfo(req, res, rec);
    this.json(res, rec, 404, { error: 'not_found', error_description: `no Corppass FAPI sandbox route ${method} ${url.pathname}` });
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
      scopes_supported: [...CORPPASS_FAPI_STANDARD_SCOPES, ...CORPPASS_FAPI_MIB_SCOPES],
      subject_types_supported: ['public'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['private_key_jwt'],
      token_endpoint_auth_signing_alg_values_supported: ['ES256', 'ES256K', 'ES384', 'ES512'],
      dpop_signing_alg_values_supported: m.discoveryDpopAlgs ?? ['ES256'],
      id_token_signing_alg_values_supported: ['ES256'],
      id_token_encryption_alg_values_supported: ['ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW'],
      id_token_encryption_enc_values_supported: ['A256GCM'],
      userinfo_signing_alg_values_supported: ['ES256'],
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

  // ---- PAR: Corppass parameters -----------------------------------------------------------------------------------
  /** The DPoP header may be left out when the body names the key (`dpop_jkt`) [C, S4]; if both, they must match. */
  protected override async parDpopKey(req: http.IncomingMessage, rec: RecordedRequest, p: ParamReader): Promise<{ jkt: string; payload?: JsonObject }> {
    const dpopJkt = p('dpop_jkt');
    if (dpopJkt !== undefined && this.dpopHeaders(req, rec).length === 0) {
      if (!/^[A-Za-z0-9_-]{43}$/.test(dpopJkt)) throw new Refusal(400, 'invalid_request', 'dpop_jkt must be a base64url SHA-256 JWK thumbprint');
      return { jkt: dpopJkt };
    }
    return super.parDpopKey(req, rec, p);
  }

  protected pushedDetails(p: ParamReader, client: ClientRegistration, scope: string): CorppassDetails {
    const invalid = (why: string) => new Refusal(400, 'invalid_request', why);
    const fc = this.fapiClient(client.clientId);
    const notEnabled = scope.split(' ').filter((s) => !fc.scopes.includes(s));
    if (notEnabled.length) throw new Refusal(400, 'invalid_scope', `scope ${notEnabled.join(', ')} is not enabled for this client`);
    // state and nonce are mandatory at Corppass [C, S4].
    p('state', true);
    p('nonce', true);
    const ctxType = p('authentication_context_type');
    const ctxMsg = p('authentication_context_message');
    if (fc.appType === 'myinfo-business') {
      if (ctxType !== undefined || ctxMsg !== undefined) throw invalid('authentication_context_type and authentication_context_message are not allowed for Myinfo Business apps');
    } else {
      if (ctxType === undefined) throw invalid('authentication_context_type is required for Corppass Login apps');
      if (!fc.contextTypes.includes(ctxType)) throw invalid(`authentication_context_type ${ctxType} is not allowed for this client`);
      if (ctxMsg !== undefined && !/^[A-Za-z0-9 ]{1,100}$/.test(ctxMsg)) throw invalid('authentication_context_message must be 1 to 100 letters, digits and spaces');
    }
    return { client: fc, authenticationContextType: ctxType, authenticationContextMessage: ctxMsg };
  }

  private fapiClient(clientId: string): FapiClient {
    const fc = this.fapiClients.get(clientId);
    if (!fc) throw new Refusal(401, 'invalid_client', 'unknown client_id (register it with registerClient)');
    return fc;
  }

  // ---- tokens -----------------------------------------------------------------------------------------------------
  protected tokenSubject(user: CorppassUser): string {
    return corppassFapiIdentity(user).entity.sub;
  }

  /** `sub` = the entity, `act` = the acting user; attributes only for the scopes that release them [C, S1, S9]. */
  protected idTokenClaims(grant: CodeGrant<CorppassUser, CorppassDetails>, clientId: string): JsonObject {
    const id = corppassFapiIdentity(grant.user);
    const scopes = grant.scope.split(' ');
    const has = (s: string) => scopes.includes(s);
    const entityAttrs: JsonObject = {};
    const a = id.entity.attributes;
    if (has('entity.identity')) Object.assign(entityAttrs, { entity_type: a.entity_type, entity_reg_number: a.entity_reg_number, entity_coi: a.entity_coi });
    if (has('entity.basic_profile.name')) entityAttrs.entity_name = a.entity_name;
    if (has('entity.basic_profile.uen_status')) entityAttrs.entity_uen_status = a.entity_uen_status;
    const userAttrs: JsonObject = {};
    if (has('user.identity')) Object.assign(userAttrs, id.user.identity);
    if (has('user.name')) userAttrs.name = id.user.name;
    const act: JsonObject = { sub: id.user.uuid, sub_type: 'user' };
    if (Object.keys(userAttrs).length) act.sub_attributes = userAttrs;
    const claims: JsonObject = {
      iss: this.issuer,
      aud: clientId,
      iat: this.nowS(),
      exp: this.nowS() + ID_TOKEN_TTL_S,
      sub: id.entity.sub,
      sub_type: 'entity',
      act,
      amr: grant.user.amr,
    };
    if (Object.keys(entityAttrs).length) claims.sub_attributes = entityAttrs;
    if (grant.nonce !== undefined) claims.nonce = grant.nonce;
    return claims;
  }

  protected authInfoLikeClaims(grant: CodeGrant<CorppassUser, CorppassDetails>, clientId: string): JsonObject {
    return this.userinfoClaims({ ...grant, clientId });
  }

  // ---- userinfo ---------------------------------------------------------------------------------------------------
  /** `auth_info` (scope authinfo), `tp_auth_info` (tpauthinfo, third party enabled, user holds grants), MIB data. */
  protected userinfoClaims(grant: Pick<AccessGrant<CorppassUser, CorppassDetails>, 'clientId' | 'user' | 'scope' | 'details'>): JsonObject {
    const now = this.nowS();
    const scopes = grant.scope.split(' ');
    const { AuthInfo, TPAuthInfo } = corppassAuthorization(grant.user);
    const stringify = (v: unknown) => (this.m.authInfoStringified ? JSON.stringify(v) : v);
    const claims: JsonObject = { iss: this.issuer, aud: grant.clientId, iat: now, exp: now + USERINFO_TTL_S };
    if (scopes.includes('authinfo')) claims.auth_info = stringify(AuthInfo);
    if (scopes.includes('tpauthinfo') && grant.details.client.thirdParty && Object.keys(grant.user.tpAuthInfo).length) claims.tp_auth_info = stringify(TPAuthInfo);
    if (grant.details.client.appType === 'myinfo-business') {
      const id = corppassFapiIdentity(grant.user);
      const a = id.entity.attributes;
      const item = (value: unknown) => ({ lastupdated: '2026-01-05', source: '1', classification: 'C', value });
      const entityInfo: JsonObject = {};
      if (scopes.includes('entity.basic_profile')) {
        entityInfo.basic_profile = { uen: item(a.entity_reg_number), entity_name: item(a.entity_name), entity_type: item(a.entity_type), entity_status: item(a.entity_uen_status) };
      }
      if (scopes.includes('entity.addresses')) entityInfo.addresses = [{ type: { code: 'REGISTERED' }, postal: item('018989'), street: item('MARINA BOULEVARD'), country: { code: 'SG', desc: 'SINGAPORE' } }];
      const personInfo: JsonObject = {};
      if (scopes.includes('user.email')) personInfo.email = item(id.email);
      if (scopes.includes('user.mobileno')) personInfo.mobileno = { prefix: item('+'), areacode: item('65'), nbr: item('91234567') };
      if (Object.keys(entityInfo).length) claims.entity_info = entityInfo;
      if (Object.keys(personInfo).length) claims.person_info = personInfo;
      if (scopes.includes('corppass.email')) claims.corppass_info = { email: id.email, email_verified: true };
    }
    return claims;
  }

  /** Signed only by default (official docs); a JWE around the JWS with `userinfoEncrypted` (unofficial notes). */
  protected userinfoEncrypted(): boolean {
    return !!this.m.userinfoEncrypted;
  }
}

/** Create the Corppass FAPI 2.0 sandbox provider (mount it at `/corppass-fapi`). */
export function createCorppassFapiProvider(opts: ProviderOptions): CorppassFapiProvider {
  return new CorppassFapiProvider(opts);
}
