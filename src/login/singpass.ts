import type { JWTPayload } from 'jose';
import { SingpassFlowsError, invalidInput } from '../errors';
import { httpRequest, safeUrl, type HttpResponse } from '../http';
import { validateCallback, type CallbackInput } from './callback';
import { clientAssertionParams } from './client-auth';
import { checkTransactionOwner, resolveConfig, takeTransaction, type LoginClientOptions, type ResolvedConfig } from './config';
import type { ProviderMetadata } from './discovery';
import { DpopNonces, dpopProof, generateDpopKey, importDpopKey, isAsNonceChallenge, isRsNonceChallenge, withDpopNonceRetry, type DpopKey } from './dpop';
import { verifyIdToken } from './id-token';
import { decryptAndVerify } from './nested-jwt';
import { FORM_HEADERS, formBody, oauthError, parseTokenResponse } from './token';
import type { LoginTransaction } from './transaction';
import { normaliseScope, pkcePair } from './util';
import { randomToken } from '../secrets';
import { requireHttpsUrl } from '../http';
import { AMR_ALIASES, AUTHENTICATION_CONTEXT_MESSAGE_MAX, REDIRECT_URI_HTTPS_TYPES, SINGPASS_ACR_PREFIX, SINGPASS_JWE_ENCS } from './wire';

export interface SingpassClientOptions extends LoginClientOptions {
  /** Minimum level of assurance, e.g. `urn:singpass:authentication:loa:2` (or just 2); lower logins are refused. */
  requiredAcr?: string | number;
}

export interface SingpassStartOptions {
  /** Space-separated scopes; `openid` is added when missing (e.g. `openid user.identity name`). */
  scope: string;
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
  /** Push the authorization request (PAR + DPoP) and return the URL to send the browser to. */
  startLogin(options: SingpassStartOptions): Promise<{ url: string; transaction: LoginTransaction }>;
  /** Check the callback, exchange the code with DPoP, verify the ID token, fetch and verify userinfo. */
  completeLogin(input: { transaction: LoginTransaction; callback: CallbackInput; fetchUserinfo?: boolean }): Promise<SingpassLoginResult>;
  metadata(): Promise<ProviderMetadata>;
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
  const nonces = new DpopNonces();
  const metadata = () => c.providerCache.metadata(c.issuer, 'singpass-fapi', c.allowInsecureLoopback);
  const http = (url: string, init: RequestInit) => httpRequest(url, init, { fetch: c.fetch, timeoutMs: c.timeoutMs });

  return {
    metadata,

    async startLogin(opts) {
      if (!opts || typeof opts !== 'object') throw invalidInput('options', 'startLogin needs at least a scope');
      if (typeof opts.scope !== 'string' || !opts.scope.trim()) throw invalidInput('scope', 'e.g. "openid user.identity name"');
      const scope = normaliseScope(opts.scope);
      const acrValues = opts.acrValues === undefined ? undefined : (Array.isArray(opts.acrValues) ? opts.acrValues : opts.acrValues.split(/\s+/).filter(Boolean));
      acrValues?.forEach((v) => acrLevel(v, 'acrValues'));
      if (opts.authenticationContextType !== undefined && !/^[A-Z][A-Z0-9_]{0,63}$/.test(opts.authenticationContextType)) {
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
      const { verifier, challenge } = pkcePair();
      const dpopJwk = generateDpopKey();
      const dpop = importDpopKey(dpopJwk);
      const now = c.clock();
      const tx: LoginTransaction = {
        v: 1, provider: 'singpass', id: randomToken(), issuer: c.issuer, clientId: c.clientId, redirectUri: c.redirectUri,
        state: randomToken(), nonce: randomToken(), codeVerifier: verifier, scope, dpopKey: dpopJwk, acrValues,
        issRequired: md.responseIssRequired, createdAt: now, expiresAt: now + c.transactionTtlSeconds * 1000,
      };
      const par = md.parEndpoint!;
      const res = await withDpopNonceRetry(par, nonces, 'pushed authorization endpoint', async (nonce) => http(par, {
        method: 'POST',
        headers: { ...FORM_HEADERS, dpop: await dpopProof(dpop, 'POST', par, c.clock, { nonce }) },
        // A fresh client assertion per attempt: its jti must never repeat, not even on the nonce retry.
        body: formBody({
          response_type: 'code', client_id: c.clientId, redirect_uri: c.redirectUri, scope, state: tx.state, nonce: tx.nonce,
          code_challenge: challenge, code_challenge_method: 'S256',
          acr_values: acrValues?.join(' '), authentication_context_type: opts.authenticationContextType,
          authentication_context_message: message, redirect_uri_https_type: opts.redirectUriHttpsType, app_launch_url: opts.appLaunchUrl,
          ...(await clientAssertionParams(c.signingKey, c.clientId, c.issuer, c.clock)),
        }),
      }), isAsNonceChallenge);
      const requestUri = parseParResponse(res, par);
      const url = new URL(md.authorizationEndpoint);
      url.search = '';
      url.searchParams.set('client_id', c.clientId);
      url.searchParams.set('request_uri', requestUri);
      await c.transactionStore.put(tx.id, tx.expiresAt);
      return { url: url.toString(), transaction: tx };
    },

    async completeLogin({ transaction, callback, fetchUserinfo = true }) {
      const tx = checkTransactionOwner(transaction, c, 'singpass');
      const dpop = importDpopKey(tx.dpopKey);
      const code = validateCallback(callback, tx);
      await takeTransaction(tx, c);
      const md = await metadata();
      const tokenUrl = md.tokenEndpoint;
      const res = await withDpopNonceRetry(tokenUrl, nonces, 'token endpoint', async (nonce) => http(tokenUrl, {
        method: 'POST',
        headers: { ...FORM_HEADERS, dpop: await dpopProof(dpop, 'POST', tokenUrl, c.clock, { nonce }) },
        body: formBody({
          grant_type: 'authorization_code', code, redirect_uri: tx.redirectUri, client_id: c.clientId, code_verifier: tx.codeVerifier,
          ...(await clientAssertionParams(c.signingKey, c.clientId, c.issuer, c.clock)),
        }),
      }), isAsNonceChallenge);
      const tokens = parseTokenResponse(res, tokenUrl, 'DPoP', tx.scope);
      const keySet = c.providerCache.keySet(md.jwksUri);
      const claims = await verifyIdToken(tokens.idToken, { tx, clientId: c.clientId, issuer: c.issuer, decryptionKeys: c.decryptionKeys, encs: SINGPASS_JWE_ENCS, keySet, clock: c.clock });
      const acr = typeof claims.acr === 'string' ? claims.acr : undefined;
      enforceAssurance(acr, requiredLevel, tx.acrValues);
      const amr = Array.isArray(claims.amr) ? claims.amr.filter((a): a is string => typeof a === 'string').map((a) => AMR_ALIASES[a] ?? a) : [];

      let personInfo: Record<string, unknown> = {};
      if (fetchUserinfo) {
        const ui = md.userinfoEndpoint!;
        const uiRes = await withDpopNonceRetry(ui, nonces, 'userinfo endpoint', async (nonce) => http(ui, {
          method: 'GET',
          headers: { authorization: `DPoP ${tokens.accessToken}`, dpop: await dpopProof(dpop, 'GET', ui, c.clock, { nonce, accessToken: tokens.accessToken }), accept: 'application/jwt' },
        }), isRsNonceChallenge);
        personInfo = await verifyUserinfo(uiRes, ui, claims.sub);
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

      async function verifyUserinfo(r: HttpResponse, url: string, sub: string): Promise<Record<string, unknown>> {
        if (r.status !== 200) {
          const e = oauthError(r, 'USERINFO_INVALID', `userinfo endpoint (${safeUrl(url)})`);
          const challenge = /error\s*=\s*"?([a-z_]+)"?/i.exec(r.headers.get('www-authenticate') ?? '');
          if (challenge) e.details.serviceCode = challenge[1];
          throw e;
        }
        const type = (r.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
        if (type !== 'application/jwt') throw new SingpassFlowsError('USERINFO_INVALID', `The userinfo answer is "${type || 'untyped'}", expected an encrypted JWT (application/jwt); refusing it`, { status: r.status });
        const { payload } = await decryptAndVerify(r.body.toString('utf8').trim(), {
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

function parseParResponse(res: HttpResponse, url: string): string {
  if (res.status !== 201) {
    if (res.status >= 200 && res.status < 300) throw new SingpassFlowsError('PAR_FAILED', `The pushed authorization endpoint answered HTTP ${res.status}, expected 201`, { status: res.status });
    throw oauthError(res, 'PAR_FAILED', `pushed authorization endpoint (${safeUrl(url)})`);
  }
  let body: unknown;
  try {
    body = JSON.parse(res.body.toString('utf8'));
  } catch {
    throw new SingpassFlowsError('PAR_FAILED', 'The pushed authorization response is not JSON', { status: res.status });
  }
  const b = body as { request_uri?: unknown; expires_in?: unknown } | null;
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw new SingpassFlowsError('PAR_FAILED', 'The pushed authorization response is not a JSON object', { status: res.status });
  if (typeof b.request_uri !== 'string' || !b.request_uri) throw new SingpassFlowsError('PAR_FAILED', 'The pushed authorization response has no request_uri', { status: res.status });
  if (typeof b.expires_in !== 'number' || !Number.isFinite(b.expires_in) || b.expires_in <= 0) throw new SingpassFlowsError('PAR_FAILED', 'The pushed authorization response has no valid expires_in', { status: res.status });
  return b.request_uri;
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
