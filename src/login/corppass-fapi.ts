import type { JWTPayload } from 'jose';
import { SingpassFlowsError, invalidInput } from '../errors';
import { activeRoles, parseAuthorizationInfo, singaporeDate, type ActiveRole, type AuthorizationInfo } from './authorization-info';
import type { CallbackInput } from './callback';
import { checkTransactionOwner, providerIo, resolveConfig, type LoginClientOptions, type ResolvedConfig } from './config';
import { dataEndpointFor, type ProviderMetadata } from './discovery';
import { sharedDpopNonces } from './dpop';
import { exchangeCode, getWithDpop, pushAuthorizationRequest, userinfoJwt, type FapiContext, type FapiLoginStart } from './fapi';
import { verifyIdToken } from './id-token';
import { decryptAndVerify } from './nested-jwt';
import { flattenPersonInfo } from './singpass';
import type { LoginTransaction } from './transaction';
import { normaliseScope } from './util';
import {
  AUTHENTICATION_CONTEXT_TYPE_PATTERN,
  CORPPASS_AUTHENTICATION_CONTEXT_MESSAGE,
  CORPPASS_DEFAULT_AUTHENTICATION_CONTEXT_TYPE,
  CORPPASS_FAPI_JWE_ENCS,
  FAPI_AUTH_INFO_MEMBERS,
} from './wire';

/** Which kind of Corppass app the client ID belongs to. */
export type CorppassAppType = 'login' | 'myinfo-business';

export interface CorppassFapiClientOptions extends LoginClientOptions {
  /**
   * `login` (default): a Corppass Login app (client ID from the Corppass Developer Portal). `myinfo-business`: a
   * Myinfo Business app (client ID from the Singpass Developer Portal), which must not send an authentication context.
   */
  appType?: CorppassAppType;
}

export interface CorppassFapiStartOptions {
  /**
   * Space-separated scopes; `openid` is added when missing. Default `openid` (the entity and the acting user's UUID).
   * Add `authinfo` / `tpauthinfo` for roles, `entity.identity entity.basic_profile.name user.identity user.name` for
   * identity details. Only scopes enabled for the app are accepted by Corppass.
   */
  scope?: string;
  /** Login apps only; default `APP_AUTHENTICATION_DEFAULT` (the only value Corppass offers today). */
  authenticationContextType?: string;
  /** Login apps only: what the user is approving, shown to them later (letters, digits and spaces, ≤ 100 characters). */
  authenticationContextMessage?: string;
}

/** The acting user (`act` claim): key your user records on `uuid`, never on the NRIC. */
export interface CorppassFapiUser {
  /** Corppass user UUID (`act.sub`), stable per user. */
  uuid: string;
  /** `standard` or `foreign` (scope `user.identity`). */
  accountType?: string;
  /** NRIC/FIN or foreign ID (scope `user.identity`). */
  identityNumber?: string;
  /** Country of issue of that ID (scope `user.identity`). */
  identityCoi?: string;
  /** Full name (scope `user.name`). */
  name?: string;
  /** `act.sub_attributes` as sent (including members this version does not know). */
  attributes: Record<string, unknown>;
}

/** The entity the user acts for (`sub` claim). */
export interface CorppassFapiEntity {
  /** UEN, or the Corppass-issued ID of a non-UEN entity (`sub`). */
  id: string;
  /** `UEN`, `NON-UEN`, … (scope `entity.identity`). */
  type?: string;
  /** Registration number (foreign number for non-UEN entities; scope `entity.identity`). */
  registrationNumber?: string;
  /** Country of incorporation (scope `entity.identity`). */
  countryOfIncorporation?: string;
  /** Scope `entity.basic_profile.name`. */
  name?: string;
  /** Registered, De-registered, Withdrawn, … (scope `entity.basic_profile.uen_status`). */
  uenStatus?: string;
  /** `sub_attributes` as sent. */
  attributes: Record<string, unknown>;
}

export interface CorppassFapiLoginResult {
  user: CorppassFapiUser;
  entity: CorppassFapiEntity;
  /** Authentication methods. */
  amr: string[];
  /** Every verified ID token claim. */
  idTokenClaims: JWTPayload;
  /**
   * Scopes `authinfo` / `tpauthinfo`: the user's roles, in the same shape as the legacy profile's
   * `getAuthorizationInfo` (`sub` is the user's UUID). Absent when neither scope was granted.
   */
  authorizationInfo?: AuthorizationInfo;
  /** Roles active today (Singapore date) from `authorizationInfo`, as `activeRoles()` gives them (same as legacy `roles`); [] without it. */
  roles: ActiveRole[];
  /** Myinfo Business apps: `entity_info` / `person_info` flattened to values, and `corppass_info`. */
  myinfo?: { entity: Record<string, unknown>; person: Record<string, unknown>; email?: string; emailVerified?: boolean; raw: Record<string, unknown> };
  /** Granted scope. */
  scope: string;
}

export interface CorppassFapiClient {
  readonly profile: 'fapi';
  /** Push the authorization request (PAR + DPoP) and return the URL to send the browser to and until when it works. */
  startLogin(options?: CorppassFapiStartOptions): Promise<FapiLoginStart>;
  /** Check the callback, exchange the code with DPoP, verify the ID token, and read userinfo when a scope needs it. */
  completeLogin(input: { transaction: LoginTransaction; callback: CallbackInput }): Promise<CorppassFapiLoginResult>;
  /** Validated, cached provider metadata. */
  metadata(): Promise<ProviderMetadata>;
  /** Fetch discovery and the provider keys now, bypassing the shared cache (cached copies stay if it fails). */
  refresh(): Promise<ProviderMetadata>;
}

/**
 * Corppass login under the FAPI 2.0 profile (mandatory for new services; the legacy profile ends 31 March 2027):
 * PAR, PKCE S256, private_key_jwt, DPoP (fresh key per login), encrypted ID token whose `sub` is the ENTITY and whose
 * `act` is the acting user, and authorization info from userinfo (JWS, or JWE around a JWS).
 *
 * @example
 * const cp = createCorppassFapiClient({ issuer: 'https://stg-id.corppass.gov.sg', clientId, signingKey, decryptionKeys: [encKey], redirectUri });
 * const { url, transaction } = await cp.startLogin({ scope: 'openid authinfo user.name', authenticationContextMessage: 'Submit GST return' });
 * const login = await cp.completeLogin({ transaction, callback });  // login.user.uuid, login.entity.id, login.roles
 */
export function createCorppassFapiClient(options: CorppassFapiClientOptions): CorppassFapiClient {
  const c: ResolvedConfig = resolveConfig(options);
  const appType = options.appType ?? 'login';
  if (appType !== 'login' && appType !== 'myinfo-business') throw invalidInput('appType', 'use "login" (Corppass Login app) or "myinfo-business" (Myinfo Business app)');
  const f: FapiContext = { c, nonces: sharedDpopNonces, io: providerIo(c) };
  const metadata = () => c.providerCache.metadata(c.issuer, 'corppass-fapi', c.allowInsecureLoopback, f.io);
  const refresh = () => c.providerCache.refresh(c.issuer, 'corppass-fapi', c.allowInsecureLoopback, f.io);

  return {
    profile: 'fapi',
    metadata,
    refresh,

    async startLogin(opts = {}) {
      if (!opts || typeof opts !== 'object') throw invalidInput('options', 'pass an object such as { scope: "openid authinfo" }');
      const scope = normaliseScope(opts.scope);
      const context = authenticationContext(appType, opts);
      const md = await metadata();
      dataEndpointFor(md, 'corppass-fapi', scope); // a needed userinfo endpoint must exist before the user logs in
      return pushAuthorizationRequest(f, md, { provider: 'corppass-fapi', scope, params: context });
    },

    async completeLogin({ transaction, callback }) {
      const tx = checkTransactionOwner(transaction, c, 'corppass-fapi');
      const { md, tokens, dpop } = await exchangeCode(f, metadata, tx, callback);
      const keySet = c.providerCache.keySet(md.jwksUri, f.io);
      const claims = await verifyIdToken(tokens.idToken, { tx, clientId: c.clientId, issuer: c.issuer, decryptionKeys: c.decryptionKeys, encs: CORPPASS_FAPI_JWE_ENCS, keySet, clock: c.clock, accessToken: tokens.accessToken });
      const user = actingUser(claims);
      const entity = entityOf(claims);
      const amr = Array.isArray(claims.amr) ? claims.amr.filter((a): a is string => typeof a === 'string') : [];
      const result: CorppassFapiLoginResult = { user, entity, amr, idTokenClaims: claims, roles: [], scope: tokens.scope };

      // Userinfo only when a granted scope releases data there (authinfo, tpauthinfo, Myinfo Business scopes).
      const ui = dataEndpointFor(md, 'corppass-fapi', tokens.scope);
      if (!ui) return result;
      const scopes = tokens.scope.split(' ');
      const res = await getWithDpop(f, ui, tokens.accessToken, dpop);
      const { payload } = await decryptAndVerify(userinfoJwt(res, 'a signed JWT'), {
        decryptionKeys: c.decryptionKeys, encs: CORPPASS_FAPI_JWE_ENCS, keySet, issuer: c.issuer, audience: c.clientId, clock: c.clock,
        errorCode: 'USERINFO_INVALID', what: 'userinfo', requiredClaims: ['iss', 'aud', 'iat', 'exp'], allowSignedOnly: true,
      });
      // Corppass documents no userinfo `sub`; one that is present must name this login's entity or user.
      if (payload.sub !== undefined && payload.sub !== entity.id && payload.sub !== user.uuid) {
        throw new SingpassFlowsError('USERINFO_INVALID', 'The userinfo is about another user or entity than the ID token; all claims are discarded');
      }
      const info = payload as Record<string, unknown>;
      if (scopes.includes('authinfo') || scopes.includes('tpauthinfo')) {
        result.authorizationInfo = { sub: user.uuid, issuedAt: payload.iat!, expiresAt: payload.exp!, ...parseAuthorizationInfo(info, FAPI_AUTH_INFO_MEMBERS) };
        result.roles = activeRoles(result.authorizationInfo, singaporeDate(c.clock()));
      }
      if (appType === 'myinfo-business') result.myinfo = myinfoOf(info);
      return result;
    },
  };
}

/** Local check of the authentication context before any call: required (defaulted) for Login apps, refused for MIB apps. */
function authenticationContext(appType: CorppassAppType, o: CorppassFapiStartOptions): Record<string, string | undefined> {
  const type = o.authenticationContextType;
  const message = o.authenticationContextMessage;
  if (appType === 'myinfo-business') {
    for (const [field, v] of [['authenticationContextType', type], ['authenticationContextMessage', message]] as const) {
      if (v !== undefined) throw invalidInput(field, 'Corppass refuses an authentication context from a Myinfo Business app (appType "myinfo-business"); leave it out');
    }
    return {};
  }
  if (type !== undefined && (typeof type !== 'string' || !AUTHENTICATION_CONTEXT_TYPE_PATTERN.test(type))) {
    throw invalidInput('authenticationContextType', `an upper-case identifier such as ${CORPPASS_DEFAULT_AUTHENTICATION_CONTEXT_TYPE} (the only value Corppass offers today)`);
  }
  if (message !== undefined) {
    if (typeof message !== 'string' || !message.length) throw invalidInput('authenticationContextMessage', 'a short text of letters, digits and spaces (1 to 100 characters), or leave it out');
    if (message.length > 100) throw invalidInput('authenticationContextMessage', `at most 100 characters (this one has ${message.length})`);
    if (!CORPPASS_AUTHENTICATION_CONTEXT_MESSAGE.test(message)) {
      const bad = [...new Set(message.replace(/[A-Za-z0-9 ]/g, ''))].slice(0, 5).map((ch) => JSON.stringify(ch)).join(' ');
      throw invalidInput('authenticationContextMessage', `only letters, digits and spaces are allowed (remove ${bad})`);
    }
  }
  return { authentication_context_type: type ?? CORPPASS_DEFAULT_AUTHENTICATION_CONTEXT_TYPE, authentication_context_message: message };
}

const record = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The acting user from `act`: mandatory, since its `sub` is the user key (the ID token `sub` is the entity). */
function actingUser(claims: JWTPayload): CorppassFapiUser {
  const act = claims.act;
  if (!act || typeof act !== 'object' || Array.isArray(act) || typeof (act as { sub?: unknown }).sub !== 'string' || !(act as { sub: string }).sub) {
    throw new SingpassFlowsError('ID_TOKEN_INVALID', 'The ID token names no acting user ("act" with a "sub"); a Corppass FAPI login always carries one');
  }
  const a = act as Record<string, unknown>;
  const attributes = record(a.sub_attributes);
  return {
    uuid: a.sub as string,
    accountType: text(attributes.account_type),
    identityNumber: text(attributes.identity_number),
    identityCoi: text(attributes.identity_coi),
    name: text(attributes.name),
    attributes,
  };
}

function entityOf(claims: JWTPayload & { sub: string }): CorppassFapiEntity {
  const attributes = record(claims.sub_attributes);
  return {
    id: claims.sub,
    type: text(attributes.entity_type),
    registrationNumber: text(attributes.entity_reg_number),
    countryOfIncorporation: text(attributes.entity_coi),
    name: text(attributes.entity_name),
    uenStatus: text(attributes.entity_uen_status),
    attributes,
  };
}

function myinfoOf(info: Record<string, unknown>): NonNullable<CorppassFapiLoginResult['myinfo']> {
  for (const name of ['entity_info', 'person_info', 'corppass_info']) {
    const v = info[name];
    if (v !== undefined && (!v || typeof v !== 'object' || Array.isArray(v))) throw new SingpassFlowsError('USERINFO_INVALID', `The userinfo "${name}" is not an object`);
  }
  const cp = record(info.corppass_info);
  return {
    entity: flattenPersonInfo(record(info.entity_info)),
    person: flattenPersonInfo(record(info.person_info)),
    email: text(cp.email),
    emailVerified: typeof cp.email_verified === 'boolean' ? cp.email_verified : undefined,
    raw: { entity_info: info.entity_info, person_info: info.person_info, corppass_info: info.corppass_info },
  };
}
