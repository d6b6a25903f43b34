import type { JWTPayload } from 'jose';
import { SingpassFlowsError, invalidInput } from '../errors';
import { httpRequest, safeUrl } from '../http';
import { verifyJwsWithKeySet } from '../keys';
import { activeRoles, parseAuthorizationInfo, type ActiveRole, type AuthorizationInfo } from './authorization-info';
import { validateCallback, type CallbackInput } from './callback';
import { clientAssertionParams } from './client-auth';
import { checkTransactionOwner, providerIo, resolveConfig, takeTransaction, type LoginClientOptions, type ResolvedConfig } from './config';
import { dataEndpointFor, type ProviderMetadata } from './discovery';
import { verifyIdToken } from './id-token';
import { refuseRepeatedClaims } from './nested-jwt';
import { parseCorppassSubject, type CorppassSubject } from './corppass-subject';
import { FORM_HEADERS, formBody, oauthError, parseTokenResponse } from './token';
import type { LoginTransaction } from './transaction';
import { normaliseScope, pkcePair } from './util';
import { constantTimeEqual, randomToken } from '../secrets';
import { CORPPASS_JWE_ENCS, PROVIDER_SIGNING_ALGS } from './wire';
import { createCorppassFapiClient, type CorppassFapiClient, type CorppassFapiClientOptions } from './corppass-fapi';

export interface CorppassClientOptions extends LoginClientOptions {
  /**
   * Also read the access token as a JWS and verify its signature (provider keys, ES256) and `iss`; default false.
   * Corppass tells relying parties to treat access tokens as opaque (their format may change without notice), so by
   * default it is only passed back to the authorization-info endpoint, which is what validates it.
   */
  verifyAccessToken?: boolean;
}

export interface CorppassLoginResult {
  /** The ID token `sub` as sent (the stable user key; `subject` has it parsed). */
  sub: string;
  subject: CorppassSubject;
  /** Authentication methods (`amr`). */
  amr: string[];
  /** Every verified ID token claim. */
  idTokenClaims: JWTPayload;
  /** `userInfo` claim: CPAccType, CPUID_FullName, ISSPHOLDER, … */
  userInfo: Record<string, unknown>;
  /** `entityInfo` claim: CPEntID, CPEnt_TYPE, CPEnt_Status, … */
  entityInfo: Record<string, unknown>;
  /** For getAuthorizationInfo; a secret: do not log or store it. */
  accessToken: string;
  /** ms since epoch, when the provider said how long the access token lives. */
  expiresAt?: number;
  scope: string;
  /** The user's authorization info, when the granted scope includes `authinfo` or `tpauthinfo` (or it was forced). */
  authorizationInfo?: AuthorizationInfo;
  /** Roles active today (Singapore date) from `authorizationInfo`; empty when it was not fetched. */
  roles: ActiveRole[];
}

export interface CorppassClient {
  readonly profile: 'legacy';
  /**
   * Build the authorization URL and the transaction to keep until the callback. `scope` default `openid`; add
   * `authinfo` (and `tpauthinfo` for third-party roles) to receive the user's roles with the login.
   */
  startLogin(options?: { scope?: string; responseMode?: 'query' | 'form_post' | 'fragment' }): Promise<{ url: string; transaction: LoginTransaction }>;
  /**
   * Check the callback, exchange the code, decrypt and verify the ID token, and — when the granted scope includes
   * `authinfo` or `tpauthinfo` — fetch and verify the authorization info. `fetchAuthorizationInfo` forces it on/off.
   */
  completeLogin(input: { transaction: LoginTransaction; callback: CallbackInput; fetchAuthorizationInfo?: boolean }): Promise<CorppassLoginResult>;
  /** The user's roles (AuthInfo, TPAuthInfo) from the authorization-info endpoint, signature and claims verified. */
  getAuthorizationInfo(input: { accessToken: string; expectedSub: string }): Promise<AuthorizationInfo>;
  /** Validated, cached provider metadata. */
  metadata(): Promise<ProviderMetadata>;
  /** Fetch discovery and the provider keys now, bypassing the shared cache (cached copies stay if it fails). */
  refresh(): Promise<ProviderMetadata>;
}

/**
 * Corppass login (authorization code + PKCE + private_key_jwt, encrypted ID token) and authorization info.
 *
 * @example
 * const cp = createCorppassClient({ issuer, clientId, signingKey, decryptionKeys: [encKey], redirectUri });
 * const { url, transaction } = await cp.startLogin();            // redirect the browser to url, keep transaction
 * const login = await cp.completeLogin({ transaction, callback }); // callback = the URL the browser came back to
 * const info = await cp.getAuthorizationInfo({ accessToken: login.accessToken, expectedSub: login.subject.raw });
 * const roles = activeRoles(info);
 */
export function createCorppassClient(options: CorppassFapiClientOptions & { profile: 'fapi' }): CorppassFapiClient;
export function createCorppassClient(options: CorppassClientOptions & { profile?: 'legacy' }): CorppassClient;
/**
 * `profile` chooses the Corppass protocol: `legacy` (default; services onboarded before FAPI, until 31 March 2027)
 * or `fapi` (FAPI 2.0, mandatory for new services; see {@link createCorppassFapiClient}).
 */
export function createCorppassClient(options: (CorppassClientOptions & { profile?: 'legacy' }) | (CorppassFapiClientOptions & { profile: 'fapi' })): CorppassClient | CorppassFapiClient {
  const profile = (options as { profile?: unknown } | undefined)?.profile;
  if (profile === 'fapi') return createCorppassFapiClient(options);
  if (profile !== undefined && profile !== 'legacy') throw invalidInput('profile', 'use "legacy" (services onboarded before Corppass FAPI 2.0) or "fapi" (FAPI 2.0, required for new services)');
  return createLegacyCorppassClient(options);
}

function createLegacyCorppassClient(options: CorppassClientOptions): CorppassClient {
  const c: ResolvedConfig = resolveConfig(options);
  const verifyAccessToken = options.verifyAccessToken === true;
  const io = providerIo(c);
  const metadata = () => c.providerCache.metadata(c.issuer, 'corppass', c.allowInsecureLoopback, io);
  const refresh = () => c.providerCache.refresh(c.issuer, 'corppass', c.allowInsecureLoopback, io);

  /** POST the authorization-info endpoint with the access token; verify the JWS (checklist item 59) and parse it. */
  async function readAuthorizationInfo(md: ProviderMetadata, url: string, accessToken: string, expectedSub: string): Promise<AuthorizationInfo> {
    const res = await httpRequest(url, { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, accept: 'application/jwt' } }, { fetch: c.fetch, timeoutMs: c.timeoutMs });
    if (res.status !== 200) {
      const e = oauthError(res, 'AUTHORIZATION_INFO_INVALID', `authorization-info endpoint (${safeUrl(url)})`);
      if (res.status === 401) e.message += ' – the access token is invalid or expired; log in again';
      throw e;
    }
    const token = res.body.toString('utf8').trim();
    refuseRepeatedClaims(token, 'AUTHORIZATION_INFO_INVALID', 'authorization info');
    const { payload } = await verifyJwsWithKeySet(token, c.providerCache.keySet(md.jwksUri, io), {
      algorithms: [...PROVIDER_SIGNING_ALGS], issuer: c.issuer, audience: c.clientId, requiredClaims: ['iss', 'aud', 'sub'], clock: c.clock,
      errorCode: 'AUTHORIZATION_INFO_INVALID', what: 'authorization info',
    });
    if (typeof payload.sub !== 'string' || !constantTimeEqual(payload.sub, expectedSub)) {
      throw new SingpassFlowsError('AUTHORIZATION_INFO_INVALID', 'The authorization info is about another user than the one who logged in');
    }
    return { sub: payload.sub, issuedAt: payload.iat!, expiresAt: payload.exp!, ...parseAuthorizationInfo(payload) };
  }

  return {
    profile: 'legacy',
    metadata,
    refresh,

    async startLogin(opts = {}) {
      const scope = normaliseScope(opts.scope);
      const responseMode = opts.responseMode;
      if (responseMode !== undefined && !['query', 'form_post', 'fragment'].includes(responseMode)) throw invalidInput('responseMode', 'use query, form_post or fragment');
      const md = await metadata();
      dataEndpointFor(md, 'corppass', scope); // a needed authorization-info endpoint must exist before the user logs in
      const { verifier, challenge } = pkcePair();
      const now = c.clock();
      const tx: LoginTransaction = {
        v: 1, provider: 'corppass', id: randomToken(), issuer: c.issuer, clientId: c.clientId, redirectUri: c.redirectUri,
        state: randomToken(), nonce: randomToken(), codeVerifier: verifier, scope, responseMode,
        issRequired: md.responseIssRequired, createdAt: now, expiresAt: now + c.transactionTtlSeconds * 1000,
      };
      const url = new URL(md.authorizationEndpoint);
      const q: Record<string, string | undefined> = {
        response_type: 'code', client_id: c.clientId, redirect_uri: c.redirectUri, scope, state: tx.state, nonce: tx.nonce,
        code_challenge: challenge, code_challenge_method: 'S256', response_mode: responseMode,
      };
      for (const [k, v] of Object.entries(q)) if (v !== undefined) url.searchParams.set(k, v);
      await c.transactionStore.put(tx.id, tx.expiresAt);
      return { url: url.toString(), transaction: tx };
    },

    async completeLogin({ transaction, callback, fetchAuthorizationInfo }) {
      const tx = checkTransactionOwner(transaction, c, 'corppass');
      const code = validateCallback(callback, tx);
      await takeTransaction(tx, c);
      const md = await metadata();
      const res = await httpRequest(md.tokenEndpoint, {
        method: 'POST',
        headers: FORM_HEADERS,
        body: formBody({
          grant_type: 'authorization_code', code, redirect_uri: tx.redirectUri, client_id: c.clientId, code_verifier: tx.codeVerifier,
          ...(await clientAssertionParams(c.signingKey, c.clientId, c.issuer, c.clock)),
        }),
      }, { fetch: c.fetch, timeoutMs: c.timeoutMs });
      const tokens = parseTokenResponse(res, md.tokenEndpoint, 'Bearer', tx.scope);
      const keySet = c.providerCache.keySet(md.jwksUri, io);
      const claims = await verifyIdToken(tokens.idToken, { tx, clientId: c.clientId, issuer: c.issuer, decryptionKeys: c.decryptionKeys, encs: CORPPASS_JWE_ENCS, keySet, clock: c.clock, accessToken: tokens.accessToken });
      if (verifyAccessToken) {
        await verifyJwsWithKeySet(tokens.accessToken, keySet, { algorithms: [...PROVIDER_SIGNING_ALGS], issuer: c.issuer, clock: c.clock, errorCode: 'LOGIN_RESPONSE_INVALID', what: 'access token' });
      }
      const obj = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
      const infoUrl = fetchAuthorizationInfo === false ? undefined : dataEndpointFor(md, 'corppass', tokens.scope, fetchAuthorizationInfo === true);
      const authorizationInfo = infoUrl ? await readAuthorizationInfo(md, infoUrl, tokens.accessToken, claims.sub) : undefined;
      return {
        sub: claims.sub,
        subject: parseCorppassSubject(claims.sub),
        amr: Array.isArray(claims.amr) ? claims.amr.filter((a): a is string => typeof a === 'string') : [],
        idTokenClaims: claims,
        userInfo: obj(claims.userInfo),
        entityInfo: obj(claims.entityInfo ?? claims.EntityInfo),
        accessToken: tokens.accessToken,
        expiresAt: tokens.expiresIn === undefined ? undefined : c.clock() + tokens.expiresIn * 1000,
        scope: tokens.scope,
        authorizationInfo,
        roles: authorizationInfo ? activeRoles(authorizationInfo, new Date(c.clock())) : [],
      };
    },

    async getAuthorizationInfo({ accessToken, expectedSub }) {
      if (typeof accessToken !== 'string' || !accessToken) throw invalidInput('accessToken', 'pass the accessToken returned by completeLogin');
      if (typeof expectedSub !== 'string' || !expectedSub) throw invalidInput('expectedSub', 'pass the sub returned by completeLogin');
      const md = await metadata();
      return readAuthorizationInfo(md, dataEndpointFor(md, 'corppass', '', true)!, accessToken, expectedSub);
    },
  };
}
