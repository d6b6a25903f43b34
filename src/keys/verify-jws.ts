import { errors as joseErrors, jwtVerify, decodeProtectedHeader, type JWTPayload, type JWSHeaderParameters } from 'jose';
import { SingpassFlowsError, type ErrorCode, type ErrorDetails } from '../errors';
import { epochSeconds, systemClock, type Clock } from '../clock';
import type { RemoteKeySet } from './remote-key-set';

/** Where verification keys come from: a {@link RemoteKeySet}, or a view of a shared cache with the same two calls. */
export type KeySource = Pick<RemoteKeySet, 'getKey' | 'refreshIfAllowed'>;

export interface VerifyJwsOptions {
  /** Allow-list; `none` and HMAC algorithms are never accepted, whatever is passed. */
  algorithms: string[];
  issuer?: string;
  audience?: string;
  /** Expected `typ` header, if the token kind has one. */
  typ?: string;
  /** The header must name its key (`kid`): the issuer's spec says to pick the key by kid, never by position. */
  requireKid?: boolean;
  /** Claims that must be present (exp and iat are always required). */
  requiredClaims?: string[];
  /** Accept a token without `exp` (still checked when present): Singpass userinfo JWTs carry only `iat`. */
  expOptional?: boolean;
  /** Seconds of clock skew tolerated on exp/nbf/iat (default 30). */
  clockToleranceSeconds?: number;
  /** Reject tokens whose iat is older than this many seconds. */
  maxAgeSeconds?: number;
  clock?: Clock;
  /** Code to throw for an invalid token (e.g. WEBHOOK_TOKEN_INVALID, ID_TOKEN_INVALID). */
  errorCode: ErrorCode;
  /** Code for an expired token; defaults to errorCode. */
  expiredCode?: ErrorCode;
  /** Human name of the token for messages ("webhook token", "ID token"). */
  what: string;
}

/**
 * Verify a compact JWS/JWT against a service key set: algorithm allow-list checked before any key lookup, header
 * keys (jwk/jku/x5u/x5c) refused — keys come only from the configured set — and one rate-limited refetch of the set
 * when the signature fails (the service rotated keys under an old kid or we had a stale set).
 */
export async function verifyJwsWithKeySet(token: string, keySet: KeySource, options: VerifyJwsOptions): Promise<{ payload: JWTPayload; protectedHeader: JWSHeaderParameters }> {
  // Errors are logged and shown in flows: a cause that holds the decoded claims (jose's claim errors keep the whole
  // payload: names, NRICs) is never attached — its claim and reason go into the details instead (safeCause).
  const fail = (message: string, cause?: unknown, code: ErrorCode = options.errorCode, details: ErrorDetails = {}) =>
    new SingpassFlowsError(code, `The ${options.what} ${message}`, details, safeCause(cause));
  const allowed = options.algorithms.filter((a) => a !== 'none' && !a.startsWith('HS'));
  /** The header rules, in the order their messages name them; run on the header jose has already parsed. */
  const checkHeader = (header: JWSHeaderParameters) => {
    if (!header.alg || !allowed.includes(header.alg)) throw fail(`uses algorithm "${header.alg}", which is not accepted (allowed: ${allowed.join(', ')})`);
    for (const member of ['jwk', 'jku', 'x5u', 'x5c'] as const) {
      if (member in header) throw fail(`carries its own key ("${member}" header); keys are only taken from the published key set`);
    }
    if (options.typ && header.typ?.toLowerCase() !== options.typ.toLowerCase()) throw fail(`has typ "${header.typ}", expected "${options.typ}"`);
    if (options.requireKid && (typeof header.kid !== 'string' || header.kid === '')) throw fail('names no key ("kid" header); these tokens must name the key of the published set they were signed with', undefined, options.errorCode, { field: 'kid' });
  };
  /** Why jose refused the token before asking for a key, in our words (the header decoded again: only on failure). */
  const explainEarlyRefusal = () => {
    if (typeof token !== 'string' || token.split('.').length !== 3) throw fail('is not a signed JWT (expected three dot-separated parts)');
    let header: JWSHeaderParameters;
    try {
      header = decodeProtectedHeader(token);
    } catch (e) {
      throw fail('has an unreadable header', e);
    }
    checkHeader(header);
  };
  if (typeof token !== 'string') explainEarlyRefusal();

  const clock = options.clock ?? systemClock;
  const tolerance = options.clockToleranceSeconds ?? 30;
  let keyAsked = false;
  // The key is chosen inside jwtVerify, from the header jose parsed (strictly, once): the algorithm allow-list is
  // checked by jose before it asks, the header-key and typ rules here before any key lookup.
  const resolveKey = (header: JWSHeaderParameters) => {
    keyAsked = true;
    checkHeader(header);
    return keySet.getKey(header);
  };
  const attempt = () => jwtVerify(token, resolveKey, {
    algorithms: allowed,
    issuer: options.issuer,
    audience: options.audience,
    clockTolerance: tolerance,
    currentDate: new Date(clock()),
    maxTokenAge: options.maxAgeSeconds,
    requiredClaims: [...(options.expOptional ? [] : ['exp']), 'iat', ...(options.requiredClaims ?? [])],
  });
  let result;
  try {
    try {
      result = await attempt();
    } catch (e) {
      if (!(e instanceof joseErrors.JWSSignatureVerificationFailed) || !(await keySet.refreshIfAllowed())) throw e;
      result = await attempt();
    }
  } catch (e) {
    if (!keyAsked && !(e instanceof SingpassFlowsError)) explainEarlyRefusal();
    if (e instanceof SingpassFlowsError) {
      if (e.code === 'KEY_NOT_FOUND') throw fail(`is signed with a key that is not in the published key set (${e.message})`, e);
      throw e;
    }
    // maxTokenAge is reported as JWTExpired on "iat": the token is old, not expired — say so.
    if (e instanceof joseErrors.JWTExpired && e.claim === 'iat') throw fail(`was issued too long ago ("iat" is more than ${options.maxAgeSeconds} s in the past): a replayed or stale token, or a wrong clock`, e, options.errorCode, claimDetails(e));
    if (e instanceof joseErrors.JWTExpired) throw fail('has expired', e, options.expiredCode ?? options.errorCode, claimDetails(e));
    if (e instanceof joseErrors.JWSSignatureVerificationFailed) throw fail('has an invalid signature', e);
    if (e instanceof joseErrors.JWTClaimValidationFailed) throw fail(claimProblem(e, options), e, options.errorCode, claimDetails(e));
    throw fail(`is invalid: ${(e as Error).message}`, e);
  }
  const iat = result.payload.iat;
  if (typeof iat === 'number' && iat > epochSeconds(clock) + tolerance) throw fail('was issued in the future (check the clock)', undefined, options.errorCode, { field: 'iat' });
  return { payload: result.payload, protectedHeader: result.protectedHeader };
}

type ClaimError = InstanceType<typeof joseErrors.JWTClaimValidationFailed> | InstanceType<typeof joseErrors.JWTExpired>;

/** Which claim failed and why (jose's `claim` / `reason` strings): log-safe, unlike the error itself. */
function claimDetails(e: ClaimError): ErrorDetails {
  return { field: e.claim, claim: e.claim, reason: e.reason };
}

/**
 * The cause to attach to an error about a token, or none: jose's claim errors (JWTClaimValidationFailed, JWTExpired)
 * carry the token's decoded payload, on themselves and on their own `cause`, and adapters copy a cause into what
 * they log and output (Node-RED's Catch message). Our own errors and jose's other errors hold no claims.
 */
function safeCause(cause: unknown): { cause: unknown } | undefined {
  if (!cause || cause instanceof joseErrors.JWTClaimValidationFailed || cause instanceof joseErrors.JWTExpired) return undefined;
  return { cause };
}

/** What a failed claim check means, in words a workflow builder can act on. */
function claimProblem(e: ClaimError, o: VerifyJwsOptions): string {
  if (e.reason === 'missing') return `has no "${e.claim}" claim`;
  if (e.reason === 'invalid') return `has an "${e.claim}" claim that is not a number of seconds`;
  switch (e.claim) {
    case 'iss': return `was issued by someone else ("iss" is not ${o.issuer})`;
    case 'aud': return `is addressed to someone else ("aud" does not name ${o.audience})`;
    case 'nbf': return 'is not valid yet ("nbf" is in the future; check the clock)';
    case 'iat': return 'was issued in the future (check the clock)';
    default: return `has an unexpected "${e.claim}" claim value`;
  }
}
