/**
 * Wire names and value tables of the Corppass and Singpass login protocols that the specs leave open ([I] inferred,
 * [NF] not found) or that vary between provider versions. Every such name lives here, so a correction is one line.
 */

/** Discovery member for the Corppass authorization-info endpoint (the literal name has a hyphen) and its fallback. */
export const AUTHORIZATION_INFO_ENDPOINT_KEYS = ['authorization-info_endpoint', 'authorization_info_endpoint', 'userinfo_endpoint'] as const;

/** Corppass ID token `sub` is `key=value` pairs; these keys have a known meaning. [C] */
export const CORPPASS_SUB_KEYS = { s: 'nric', uuid: 'uuid', u: 'userId', c: 'country' } as const;

/** Corppass authorization-info members that may arrive as an object or as stringified JSON. [C] */
export const AUTH_INFO_MEMBERS = ['AuthInfo', 'TPAuthInfo'] as const;

/**
 * Singpass FAPI scopes whose data comes in the ID token (`sub_attributes`, Singpass FAPI profile §2.1). Any other
 * scope is a person-data (Myinfo) scope, released as `person_info` at userinfo. [C]
 */
export const SINGPASS_ID_TOKEN_SCOPES = ['openid', 'user.identity', 'name', 'mobileno', 'email'] as const;

/** Corppass scopes whose data (AuthInfo / TPAuthInfo) comes from the authorization-info endpoint. [C] */
export const CORPPASS_AUTHORIZATION_SCOPES = ['authinfo', 'tpauthinfo'] as const;

/** Older Singpass `amr` values and their current names. [C] */
export const AMR_ALIASES: Readonly<Record<string, string>> = { sms: 'otp-sms', fv: 'face', 'fv-alt': 'face-alt' };

/** Singpass level-of-assurance `acr` values, `urn:singpass:authentication:loa:<n>`. [C] */
export const SINGPASS_ACR_PREFIX = 'urn:singpass:authentication:loa:';

/** Values of `redirect_uri_https_type`. [C] */
export const REDIRECT_URI_HTTPS_TYPES = ['standard_https', 'app_claimed_https'] as const;

/** `authentication_context_type` values are upper-case identifiers such as `APP_AUTHENTICATION_DEFAULT` (both providers). [C] */
export const AUTHENTICATION_CONTEXT_TYPE_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;

/** Singpass `authentication_context_message` limit (characters). [I] */
export const AUTHENTICATION_CONTEXT_MESSAGE_MAX = 100;

/** ID token / userinfo JWE key management: ECDH-ES with key wrapping only (direct ECDH-ES is refused). */
export { JWE_KEY_ALGS } from '../keys/algs';
/** Content encryption accepted per provider (Singpass uses both, Corppass only CBC-HMAC). */
export const CORPPASS_JWE_ENCS = ['A256CBC-HS512'] as const;
export const SINGPASS_JWE_ENCS = ['A256CBC-HS512', 'A256GCM'] as const;

/** The providers sign ID tokens, userinfo and authorization info with ES256 only. */
export const PROVIDER_SIGNING_ALGS = ['ES256'] as const;

/** A PAR `request_uri` expires in less than this many seconds (an authorization-server duty of FAPI 2.0 Security Profile). [C] */
export const PAR_REQUEST_URI_MAX_SECONDS = 600;

/** DPoP proof lifetime: Singpass requires `exp` ≤ `iat` + 120 s (the most tolerant of clock skew that is allowed). [C] */
export const DPOP_PROOF_LIFETIME_SECONDS = 120;

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

// ---- Corppass FAPI 2.0 ----------------------------------------------------------------------------------------------

/** The same authorization rows as {@link AUTH_INFO_MEMBERS}, as the FAPI userinfo names them. [C] */
export const FAPI_AUTH_INFO_MEMBERS = ['auth_info', 'tp_auth_info'] as const;

/**
 * What Corppass may put in `CPEntID_SUB` when a row has no sub-entity, instead of "" [C]; read as "", never as an id.
 * Also applied to `CP_ClntEnt_SUB`, the same member of third-party rows [I].
 */
export const CORPPASS_MISSING_VALUE = 'ERROR_MISSING_VALUE';

/** Scopes whose data Corppass FAPI puts in the ID token; every other scope but `openid` is released at userinfo. [C] */
export const CORPPASS_FAPI_ID_TOKEN_SCOPES = ['entity.identity', 'entity.basic_profile.name', 'entity.basic_profile.uen_status', 'user.identity', 'user.name'] as const;

/** The only `authentication_context_type` today; mandatory for Login apps, refused for Myinfo Business apps. [C] */
export const CORPPASS_DEFAULT_AUTHENTICATION_CONTEXT_TYPE = 'APP_AUTHENTICATION_DEFAULT';
/** `authentication_context_message`: letters, digits and spaces only, 1 to 100 characters. [C] */
export const CORPPASS_AUTHENTICATION_CONTEXT_MESSAGE = /^[A-Za-z0-9 ]{1,100}$/;

/** ID token content encryption: the FAPI docs say AES-GCM, legacy metadata A256CBC-HS512 — both accepted. [C]/[I] */
export const CORPPASS_FAPI_JWE_ENCS = ['A256GCM', 'A256CBC-HS512'] as const;
