/**
 * The RP conformance checklist as it applies to the Corppass FAPI 2.0 profile, as switch sets
 * for the Corppass FAPI sandbox provider. Derived from {@link CONFORMANCE_CASES}: every FAPI case (PAR, DPoP, token,
 * ID token, userinfo, keys) applies as is; these differ:
 * - `iss` in the authorization response follows discovery (Corppass publishes the flag false): a missing `iss` or
 *   flag is ACCEPTED, a present-but-wrong `iss` is still refused;
 * - userinfo is a JWS (official docs) or a JWE around a JWS (unofficial notes): both ACCEPTED, so the Singpass
 *   "signed only" downgrade case does not apply, and the JWE cases run with `userinfoEncrypted`;
 * - the Corppass authorization-info checks ([59]) apply to userinfo, which now carries `auth_info`/`tp_auth_info`;
 * - Singpass assurance levels ([54]) do not exist at Corppass;
 * - plus the FAPI-only claims: `act` (the acting user) must be present with a `sub`.
 */
import { CONFORMANCE_CASES, type ConformanceCase, type Misbehaviour } from './misbehaviour';

/** A conformance case for the single Corppass FAPI provider. */
export type CorppassFapiCase = Omit<ConformanceCase, 'provider'>;

const R = 'reject' as const;
const A = 'accept' as const;

/** Cases of the shared list that do not apply (reason in the module doc), by name. */
const NOT_APPLICABLE = new Set([
  'id-token-acr-too-low', // [54] Singpass levels
  'userinfo-signed-only', // [56] a bare JWS is what Corppass documents
  'authinfo-sub-mismatch', // [59] userinfo carries no user `sub`; [55] covers a wrong one
  'redirect-authorization-info', // [28] no authorization-info endpoint; redirect-userinfo covers it
  // [2, 12, 15] replaced below by their "as advertised" versions
  'discovery-iss-param-false', 'discovery-iss-param-missing', 'discovery-iss-param-missing-not-required',
  'auth-iss-missing', 'auth-iss-missing-not-advertised', 'auth-error-missing-iss', 'auth-error-iss-not-advertised',
]);

/** [59] the authorization-info switches, moved to userinfo (which now carries the authorization info). */
function toUserinfo(m: Misbehaviour): Misbehaviour {
  const { authInfo, authInfoJose, ...rest } = m;
  return { ...rest, ...(authInfo ? { userinfo: authInfo } : {}), ...(authInfoJose ? { userinfoJose: authInfoJose } : {}) };
}

/** [57] userinfo JWE switches need the JWE variant turned on to mean anything. */
function withUserinfoJwe(m: Misbehaviour): Misbehaviour {
  const jwe = m.userinfoJose && (m.userinfoJose.jweAlg || m.userinfoJose.tamper || m.userinfoJose.jweEnc || m.userinfoJose.jweKid);
  return jwe ? { ...m, userinfoEncrypted: true } : m;
}

const derived: CorppassFapiCase[] = CONFORMANCE_CASES.filter((c) => !NOT_APPLICABLE.has(c.name)).map(({ provider: _p, ...c }) => ({
  ...c,
  misbehaviour: withUserinfoJwe(toUserinfo(c.misbehaviour)),
}));

export const CORPPASS_FAPI_CASES: readonly CorppassFapiCase[] = [
  ...derived,
  // [2, 12, 15] `iss` as Corppass advertises it (flag false today).
  { item: 2, name: 'fapi-discovery-iss-param-missing', expect: A, misbehaviour: { discoveryNoIssParam: 'missing' } },
  { item: 12, name: 'fapi-auth-iss-missing-not-advertised', expect: A, misbehaviour: { authIss: 'missing' } },
  { item: 15, name: 'fapi-auth-error-iss-not-advertised', expect: R, misbehaviour: { authError: 'login_required', authIss: 'missing' } },
  // [56, 57] userinfo as a JWE around the JWS is accepted; a bad JWE layer is not.
  { item: 56, name: 'fapi-userinfo-jwe-around-jws', expect: A, misbehaviour: { userinfoEncrypted: true } },
  { item: 57, name: 'fapi-userinfo-jwe-unknown-kid', expect: R, misbehaviour: { userinfoEncrypted: true, userinfoJose: { jweKid: 'unknown' } } },
  { item: 57, name: 'fapi-userinfo-jwe-inner-alg-none', expect: R, misbehaviour: { userinfoEncrypted: true, userinfoJose: { innerAlg: 'none' } } },
  { item: 57, name: 'fapi-userinfo-exp-missing', expect: R, misbehaviour: { userinfo: { exp: null } } },
  { item: 57, name: 'fapi-userinfo-duplicate-claim', expect: R, misbehaviour: { userinfoJose: { duplicateClaim: 'aud' } } },
  { item: 57, name: 'fapi-userinfo-embedded-jwk', expect: R, misbehaviour: { userinfoJose: { embeddedKey: 'jwk' } } },
  // [59] authorization info in userinfo: malformed rows are refused, not half-read.
  { item: 59, name: 'fapi-auth-info-not-an-object', expect: R, misbehaviour: { userinfo: { auth_info: 7 } } },
  { item: 59, name: 'fapi-auth-info-bad-date', expect: R, misbehaviour: { userinfo: { auth_info: { Result_Set: { ESrvc_Row_Count: 1, ESrvc_Result: [{ CPESrvcID: 'X', Auth_Result_Set: { Row_Count: 1, Row: [{ CPEntID_SUB: '', CPRole: 'R', StartDate: '01/01/2026', EndDate: '9999-12-31', Parameter: [] }] } }] } } } } },
  // [49-like] FAPI ID token: the acting user is mandatory (it is the user key).
  { item: 49, name: 'fapi-id-token-act-missing', expect: R, misbehaviour: { idToken: { act: null } } },
  { item: 49, name: 'fapi-id-token-act-sub-missing', expect: R, misbehaviour: { idToken: { act: { sub_type: 'user' } } } },
  { item: 49, name: 'fapi-id-token-act-sub-number', expect: R, misbehaviour: { idToken: { act: { sub: 42, sub_type: 'user' } } } },
];
