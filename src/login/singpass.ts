import type { JWTPayload } from 'jose';
import { SingpassFlowsError, invalidInput } from '../errors';
import type { HttpResponse } from '../http';
import type { CallbackInput } from './callback';
import { checkTransactionOwner, providerIo, resolveConfig, type LoginClientOptions, type ResolvedConfig } from './config';
import { dataEndpointFor, type ProviderMetadata } from './discovery';
import { sharedDpopNonces } from './dpop';
import { exchangeCode, getWithDpop, pushAuthorizationRequest, userinfoJwt, type FapiContext, type FapiLoginStart } from './fapi';
import { verifyIdToken } from './id-token';
import { decryptAndVerify } from './nested-jwt';
import type { LoginTransaction } from './transaction';
import { normaliseScope } from './util';
import { requireHttpsUrl } from '../http';
import { AMR_ALIASES, AUTHENTICATION_CONTEXT_MESSAGE_MAX, AUTHENTICATION_CONTEXT_TYPE_PATTERN, REDIRECT_URI_HTTPS_TYPES, SINGPASS_ACR_PREFIX, SINGPASS_JWE_ENCS } from './wire';

export interface SingpassClientOptions extends LoginClientOptions {
  /** Minimum level of assurance, e.g. `urn:singpass:authentication:loa:2` (or just 2); lower logins are refused. */
  requiredAcr?: string | number;
}

export interface SingpassStartOptions {
  /**
   * Space-separated scopes; `openid` is added when missing. Default `openid` (the user's UUID only). Login apps add
   * ID-token scopes (`user.identity name mobileno email` → `subAttributes`); person-data (Myinfo) apps add their
   * scopes (`uinfin sex dob …` → `person`, read from userinfo).
   */
  scope?: string;
  /** Acceptable levels, e.g. ['urn:singpass:authentication:loa:2']; the returned acr must reach the lowest. */
  acrValues?: string[] | string;
  authenticationContextType?: string;
  /** Shown to the user in the Singpass app (≤ 100 characters). */
  authenticationContextMessage?: string;
  redirectUriHttpsType?: (typeof REDIRECT_URI_HTTPS_TYPES)[number];
  /** https URL of the calling app (app-claimed https only; custom schemes are refused). */
  appLaunchUrl?: string;
}

export interface SingpassLoginResult {
  /** The user's UUID (stable per user). */
  sub: string;
  subType?: string;
  /** account_type, identity_number (NRIC/FIN/foreign id), identity_coi — when the matching scopes were requested. */
  subAttributes: Record<string, unknown>;
  acr?: string;
  /** Authentication methods, old names mapped to current ones (sms→otp-sms, fv→face, fv-alt→face-alt). */
  amr: string[];
  idTokenClaims: JWTPayload;
  /** person_info flattened to values, e.g. `{ uinfin: 'S1234567A', name: 'TAN AH KOW' }`. */
  person: Record<string, unknown>;
  /** person_info as sent (with lastupdated/source/classification per attribute). */
  personInfo: Record<string, unknown>;
  scope: string;
}

export interface SingpassClient {
  /** Push the authorization request (PAR + DPoP) and return the URL to send the browser to and until when it works. */
  startLogin(options?: SingpassStartOptions): Promise<FapiLoginStart>;
  /**
   * Check the callback, exchange the code with DPoP, verify the ID token, and — when a granted scope releases person
   * data there (any scope besides openid, user.identity, name, mobileno, email) — fetch and verify userinfo.
   * `fetchUserinfo` forces the call on (true) or off (false).
   */
  completeLogin(input: { transaction: LoginTransaction; callback: CallbackInput; fetchUserinfo?: boolean }): Promise<SingpassLoginResult>;
  /** Validated, cached provider metadata. */
  metadata(): Promise<ProviderMetadata>;
  /** Fetch discovery and the provider keys now, bypassing the shared cache (cached copies stay if it fails). */
  refresh(): Promise<ProviderMetadata>;
}

/**
 * Singpass login under the FAPI 2.0 profile: PAR, PKCE S256, private_key_jwt, DPoP (fresh key per login, one
 * nonce retry), encrypted and signed ID token and userinfo.
 *
 * @example
 * const sp = createSingpassClient({ issuer: 'https://stg-id.singpass.gov.sg/fapi', clientId, signingKey, decryptionKeys: [encKey], redirectUri });
 * const { url, transaction } = await sp.startLogin({ scope: 'openid user.identity name' });
 * const login = await sp.completeLogin({ transaction, callback });  // login.person.uinfin, login.sub …
 */
export function createSingpassClient(options: SingpassClientOptions): SingpassClient {
  const c: ResolvedConfig = resolveConfig(options);
  const requiredLevel = options.requiredAcr === undefined ? undefined : acrLevel(options.requiredAcr, 'requiredAcr');
  const f: FapiContext = { c, nonces: sharedDpopNonces, io: providerIo(c) };
  const io = f.io;
  const metadata = () => c.providerCache.metadata(c.issuer, 'singpass-fapi', c.allowInsecureLoopback, io);
  const refresh = () => c.providerCache.refresh(c.issuer, 'singpass-fapi', c.allowInsecureLoopback, io);

  return {
    metadata,
    refresh,

    async startLogin(opts = {}) {
      if (!opts || typeof opts !== 'object') throw invalidInput('options', 'pass an object such as { scope: "openid user.identity name" }, or nothing');
      const scope = normaliseScope(opts.scope);
      const acrValues = opts.acrValues === undefined ? undefined : (Array.isArray(opts.acrValues) ? opts.acrValues : opts.acrValues.split(/\s+/).filter(Boolean));
      acrValues?.forEach((v) => acrLevel(v, 'acrValues'));
      if (opts.authenticationContextType !== undefined && !AUTHENTICATION_CONTEXT_TYPE_PATTERN.test(opts.authenticationContextType)) {
        throw invalidInput('authenticationContextType', 'an upper-case identifier such as APP_AUTHENTICATION_DEFAULT');
      }
      const message = opts.authenticationContextMessage;
      if (message !== undefined && (typeof message !== 'string' || !message.trim() || message.length > AUTHENTICATION_CONTEXT_MESSAGE_MAX || /[\u0000-\u001f<>]/.test(message))) {
        throw invalidInput('authenticationContextMessage', `plain text of 1 to ${AUTHENTICATION_CONTEXT_MESSAGE_MAX} characters, no control characters or < >`);
      }
      if (opts.redirectUriHttpsType !== undefined && !REDIRECT_URI_HTTPS_TYPES.includes(opts.redirectUriHttpsType)) {
        throw invalidInput('redirectUriHttpsType', `one of ${REDIRECT_URI_HTTPS_TYPES.join(', ')}`);
      }
      if (opts.appLaunchUrl !== undefined) requireHttpsUrl('appLaunchUrl', opts.appLaunchUrl, { allowLoopbackHttp: c.allowInsecureLoopback });

      const md = await metadata();
      dataEndpointFor(md, 'singpass-fapi', scope); // a needed userinfo endpoint must exist before the user logs in
      return pushAuthorizationRequest(f, md, {
        provider: 'singpass', scope, transaction: { acrValues },
        params: {
          acr_values: acrValues?.join(' '), authentication_context_type: opts.authenticationContextType,
          authentication_context_message: message, redirect_uri_https_type: opts.redirectUriHttpsType, app_launch_url: opts.appLaunchUrl,
        },
      });
    },

    async completeLogin({ transaction, callback, fetchUserinfo }) {
      const tx = checkTransactionOwner(transaction, c, 'singpass');
      const { md, tokens, dpop } = await exchangeCode(f, metadata, tx, callback);
      const keySet = c.providerCache.keySet(md.jwksUri, io);
      const claims = await verifyIdToken(tokens.idToken, { tx, clientId: c.clientId, issuer: c.issuer, decryptionKeys: c.decryptionKeys, encs: SINGPASS_JWE_ENCS, keySet, clock: c.clock, accessToken: tokens.accessToken });
      const acr = typeof claims.acr === 'string' ? claims.acr : undefined;
      enforceAssurance(acr, requiredLevel, tx.acrValues);
      const amr = Array.isArray(claims.amr) ? claims.amr.filter((a): a is string => typeof a === 'string').map((a) => AMR_ALIASES[a] ?? a) : [];

      let personInfo: Record<string, unknown> = {};
      const ui = fetchUserinfo === false ? undefined : dataEndpointFor(md, 'singpass-fapi', tokens.scope, fetchUserinfo === true);
      if (ui) {
        const uiRes = await getWithDpop(f, ui, tokens.accessToken, dpop);
        personInfo = await verifyUserinfo(uiRes, claims.sub);
      }
      const subAttributes = claims.sub_attributes && typeof claims.sub_attributes === 'object' && !Array.isArray(claims.sub_attributes) ? (claims.sub_attributes as Record<string, unknown>) : {};
      return {
        sub: claims.sub,
        subType: typeof claims.sub_type === 'string' ? claims.sub_type : undefined,
        subAttributes,
        acr,
        amr,
        idTokenClaims: claims,
        person: flattenPersonInfo(personInfo),
        personInfo,
        scope: tokens.scope,
      };

      async function verifyUserinfo(r: HttpResponse, sub: string): Promise<Record<string, unknown>> {
        const { payload } = await decryptAndVerify(userinfoJwt(r, 'an encrypted JWT'), {
          decryptionKeys: c.decryptionKeys, encs: SINGPASS_JWE_ENCS, keySet, issuer: c.issuer, audience: c.clientId, clock: c.clock,
          errorCode: 'USERINFO_INVALID', what: 'userinfo', requiredClaims: ['iss', 'aud', 'sub'], expOptional: true,
        });
        if (payload.sub !== sub) throw new SingpassFlowsError('USERINFO_INVALID', 'The userinfo is about another user than the ID token; all claims are discarded');
        const pi = payload.person_info;
        if (pi !== undefined && (!pi || typeof pi !== 'object' || Array.isArray(pi))) throw new SingpassFlowsError('USERINFO_INVALID', 'The userinfo "person_info" is not an object');
        return (pi as Record<string, unknown> | undefined) ?? {};
      }
    },
  };
}

/** `urn:singpass:authentication:loa:<n>` (or n) → n. */
export function acrLevel(value: string | number, field: string): number {
  const m = typeof value === 'number' ? [String(value), String(value)] : new RegExp(`^${SINGPASS_ACR_PREFIX.replace(/[.:]/g, '\\$&')}(\\d+)$`).exec(value) ?? /^(\d+)$/.exec(value);
  const n = m ? Number(m[1]) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 9) throw invalidInput(field, `use a Singpass level such as ${SINGPASS_ACR_PREFIX}2`);
  return n;
}

/** Refuse a login below the configured level or below the lowest level this login asked for (checklist item 54). */
function enforceAssurance(acr: string | undefined, requiredLevel: number | undefined, requested: string[] | undefined): void {
  const floor = Math.max(requiredLevel ?? 0, requested?.length ? Math.min(...requested.map((v) => acrLevel(v, 'acrValues'))) : 0);
  if (floor === 0) return;
  let got = 0;
  try {
    got = acr === undefined ? 0 : acrLevel(acr, 'acr');
  } catch {
    got = 0; // an unknown acr value is tolerated as a value but never counts as strong enough
  }
  if (got < floor) {
    throw new SingpassFlowsError('ASSURANCE_INSUFFICIENT', `The login reached assurance level ${got || 'unknown'}${acr ? ` (${acr})` : ''}, below the required level ${floor}`);
  }
}

/** `{ name: { value: 'X', source, … }, regadd: { block: { value } … } }` → `{ name: 'X', regadd: { block: … } }`. */
export function flattenPersonInfo(info: Record<string, unknown>): Record<string, unknown> {
  const flat = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(flat);
    if (!v || typeof v !== 'object') return v;
    const o = v as Record<string, unknown>;
    if ('value' in o) return o.value;
    if ('code' in o && 'desc' in o) return { code: o.code, desc: o.desc };
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(o)) {
      if (k === 'lastupdated' || k === 'source' || k === 'classification' || k === 'unavailable') continue;
      out[k] = flat(x);
    }
    return out;
  };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(info)) out[k] = flat(v);
  return out;
}
