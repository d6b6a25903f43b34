/**
 * Misbehaviour switches for the sandbox login providers (Corppass legacy OIDC and Singpass FAPI 2.0).
 *
 * A provider normally behaves like the real service. `provider.misbehave(m)` merges `m` into the active set; every
 * later response is affected until `provider.reset()`. Each switch reproduces one (or one family of) item(s) of the
 * RP conformance checklist (its item numbers in brackets). Items that only a client
 * can get wrong (3–7, 10, 14, 20, 29, 66–69, 78, 79) need no switch: the provider RECORDS what the client sent
 * (`provider.requests()`, see `types.ts`) so tests can assert on PAR bodies, client assertions, DPoP proofs and keys.
 *
 * Conventions:
 * - Claim override maps (`idToken`, `userinfo`, `authInfo`): a value replaces the claim, `null` removes it.
 *   Special values: `{ $secondsFromNow: n }` → provider clock (s) + n; `{ $clientIdPlus: ['x'] }` →
 *   `[clientId, 'x']`; `{ $literal: v }` → `v` verbatim (use it to send a JSON `null`).
 * - "Sandbox" issuers are `http://127.0.0.1:PORT/...`, so issuer near-misses are documented per variant below.
 * - A switch never changes what is RECORDED; it only changes what is SENT.
 *
 * `CONFORMANCE_CASES` at the end maps every applicable checklist item to a ready-made switch set.
 */

/** Endpoints of a provider, as named in request records and in endpoint-scoped switches. */
export type LoginEndpoint = 'discovery' | 'jwks' | 'authorize' | 'par' | 'token' | 'userinfo' | 'authorizationInfo';

/**
 * How to distort an issuer string (authorization-response `iss`, discovery `issuer`).
 * - `wrong`: issuer + `1` (the OIDF suite's value).
 * - `missing`: parameter / member left out.
 * - `trailingSlash`: issuer + `/`.
 * - `upperHost`: scheme and host upper-cased (`HTTP://127.0.0.1:…` — an IP host has no letters, so the scheme is
 *   upper-cased too; either way a different string).
 * - `port443`: explicit default port (`:443` for https, `:80` for http) if the issuer has no port; if it has one
 *   (the sandbox), the port with a leading zero (`:05123`) — equal after URL normalisation, different as a string.
 * - `http`: scheme flipped (https → http; in the http sandbox: http → https).
 * - `extraPath`: issuer + `/x`.
 * - `doubleEncoded`: percent-encoded twice on the wire (only meaningful for the authorization response).
 * - `otherProvider`: the OTHER sandbox provider's real issuer (Singpass ↔ Corppass, mix-up [14]).
 */
export type IssuerVariant =
  | 'wrong'
  | 'missing'
  | 'trailingSlash'
  | 'upperHost'
  | 'port443'
  | 'http'
  | 'extraPath'
  | 'doubleEncoded'
  | 'otherProvider';

/** A claim override map; see the module doc for `null` and the `$…` special values. */
export type ClaimOverrides = Record<string, unknown>;

/** A JSON body replacement for an endpoint. `raw` is sent verbatim (e.g. non-JSON). */
export type BodyOverride = { json: unknown; contentType?: string } | { raw: string; contentType?: string };

/** An OAuth error response to send instead of the normal answer. */
export interface OAuthErrorResponse {
  /** HTTP status, default 400 (401 for `invalid_client`). */
  status?: number;
  error: string;
  error_description?: string;
}

/**
 * JOSE-level misbehaviour of a signed-then-encrypted token (ID token, userinfo) or a signed token (Corppass
 * authorization info, where the encryption switches do not apply). Applied by `idTokenJose`, `userinfoJose`,
 * `authInfoJose`.
 */
export interface JoseMisbehaviour {
  // ---- outer JWE ------------------------------------------------------------------------------------------------
  /** [31] send the inner JWS without encryption. */
  unencrypted?: boolean;
  /**
   * [32] JWE `alg`. `RSA1_5` is encrypted to a throw-away RSA key (undecryptable by design: the RP must reject on the
   * header alone); `dir` uses a random CEK nobody knows; `ECDH-ES` (direct key agreement) IS decryptable with the
   * RP's key — the RP must still refuse it by allow-list; `ECDH-ES+A128KW`/`A192KW`/`A256KW` are genuine.
   */
  jweAlg?: 'RSA1_5' | 'dir' | 'ECDH-ES' | 'ECDH-ES+A128KW' | 'ECDH-ES+A192KW' | 'ECDH-ES+A256KW';
  /** [32] JWE `enc` (real encryption with that enc). */
  jweEnc?: 'A128GCM' | 'A192GCM' | 'A256GCM' | 'A128CBC-HS256' | 'A192CBC-HS384' | 'A256CBC-HS512';
  /** [33] JWE `kid`: `unknown` = a kid the RP never published (still encrypted to its real key); `missing` = no kid. */
  jweKid?: 'unknown' | 'missing';
  /** [33] encrypt to this RP key kid instead of the current enc key (e.g. a retired key; decryption-key rotation). */
  jweEncryptToKid?: string;
  /** [34] `zip: "DEF"` with a genuinely deflated plaintext. */
  zip?: boolean;
  /**
   * [34] integrity: flip one byte of `ciphertext` / `iv` / `tag`; `header` = add a member to the protected header
   * after encryption (AAD mismatch); `fourParts` / `sixParts` = wrong number of segments.
   */
  tamper?: 'ciphertext' | 'iv' | 'tag' | 'header' | 'fourParts' | 'sixParts';
  /** [34] invalid-curve family: `epk` replaced by a point on another curve (`otherCurve`) or not on P-256 (`offCurve`). */
  epk?: 'otherCurve' | 'offCurve';
  // ---- inner JWS ------------------------------------------------------------------------------------------------
  /**
   * [35/36/37] inner signature algorithm:
   * - `none`: unsecured JWT (`alg: none`, empty signature);
   * - `RS256`: signed with an RSA key that IS published in the provider JWKS (kid `rsa-alt`), as OIDF does;
   * - `HS256`: HMAC with the provider's current public signing key (SPKI PEM bytes) as the secret;
   * - `ES384-header`: header says ES384 but signed ES256 with the real P-256 key (alg inconsistent with the JWK).
   */
  innerAlg?: 'none' | 'RS256' | 'HS256' | 'ES384-header';
  /** [35] signed by a fresh P-256 key that is NOT in the provider JWKS (header kid = the real kid). */
  foreignKey?: boolean;
  /** [38] valid signature, then one payload byte changed (a claim value edited after signing). */
  badSignature?: boolean;
  /** [71] header `kid` set to this value (signature by the real key). */
  kid?: string;
  /** [72/73] no `kid` header (signature by the real key). Combine with `jwks.extraSigKeys` for several candidates. */
  noKid?: boolean;
  /**
   * [76] signed by an attacker key that is carried in the header (`jwk`, `x5c` self-signed cert) or pointed to by
   * URL (`jku`/`x5u` → `<provider>/sandbox/attacker-jwks`). Header kid = the real kid.
   */
  embeddedKey?: 'jwk' | 'jku' | 'x5c' | 'x5u';
  /** [52] extra protected-header members, e.g. `{ crit: ['urn:x'], 'urn:x': 1 }`. */
  header?: Record<string, unknown>;
  /** [52] payload JSON gets a second member with this name (different value) appended — duplicate member names. */
  duplicateClaim?: string;
  /** [52] payload contains an invalid UTF-8 byte sequence (inside a string value). */
  nonUtf8?: boolean;
  /** [53] (ID token only) put another token kind in place of the ID token (same signing key, encrypted as usual). */
  substitute?: 'accessToken' | 'authInfo' | 'logoutToken' | 'dpopProof';
}

/** DPoP server-nonce behaviour (Singpass: PAR, token, userinfo). [60–65] */
export type DpopNonceMode =
  /** [60–62] OIDF happy path: every endpoint demands a current nonce; a NEW nonce is minted after each response and
   *  not sent on the 200, so each call needs exactly one retry. */
  | 'require'
  /** [65] the retry is answered with `use_dpop_nonce` again (new nonce each time). */
  | 'requireTwice'
  /** [65] `use_dpop_nonce` without a `DPoP-Nonce` header. */
  | 'missingHeader'
  /** [65] `use_dpop_nonce` with two `DPoP-Nonce` headers. */
  | 'twoHeaders'
  /** [65] `DPoP-Nonce` violating NQCHAR (contains a space and a quote). */
  | 'badSyntax'
  /** [61] like `require`, but the freshly minted nonce IS sent on 200 responses (client must use it next). */
  | 'sendOn200'
  /**
   * A server whose nonce stays valid (one value for the whole origin, AS and RS alike, never rotated after a
   * response): the first call is challenged once; a client that remembers the nonce per origin pays no further
   * round trip, not even in a new client instance.
   */
  | 'stable';

/** Broken key-set endpoint behaviour. [77] */
export type JwksMode =
  | 'status500'
  | 'status404'
  | 'notJson'
  | 'noKeys' /* `{}` */
  | 'keysNotArray' /* `{keys: {}}` */
  | 'empty' /* `{keys: []}` */
  | 'privateKey' /* real keys published WITH their private `d` */
  | 'htmlContentType';

/** The full set of switches. All optional; `{}` = normal behaviour. */
export interface Misbehaviour {
  // ---- discovery [1, 2] --------------------------------------------------------------------------------------
  /** [1] `issuer` member distorted. */
  discoveryIssuer?: IssuerVariant;
  /** [2] no `pushed_authorization_request_endpoint` (Singpass). */
  discoveryDropPar?: boolean;
  /** [2] `authorization_response_iss_parameter_supported` set to false (`'false'`) or removed (`'missing'`). */
  discoveryNoIssParam?: 'false' | 'missing';
  /** [2] `code_challenge_methods_supported` = `['plain']`. */
  discoveryNoS256?: boolean;
  /** [2] `dpop_signing_alg_values_supported` replaced (e.g. `['PS256']`). */
  discoveryDpopAlgs?: string[];
  /** [2] this endpoint's URL in the metadata becomes non-loopback `http://insecure.sandbox.invalid/...`. */
  discoveryInsecureEndpoint?: 'authorization' | 'par' | 'token' | 'jwks' | 'userinfo' | 'authorizationInfo';
  /** Any other metadata member override (`null` removes). */
  discoveryOverride?: Record<string, unknown>;

  // ---- key set [70–77] ---------------------------------------------------------------------------------------
  /** [77] broken key-set endpoint. */
  jwks?: JwksMode;
  /** [77] delay the key-set response by this many ms (client timeout). */
  jwksDelayMs?: number;
  /** [74] decoys sharing the real kid with other kty/alg (EdDSA, PS256, ES384) listed BEFORE the real key. */
  decoyKeys?: boolean;
  /** [73] publish N extra genuine ES256 `use: sig` keys (other kids). */
  extraSigKeys?: number;
  /** [75] the real signing key is published with `use: 'enc'` (`enc`) or `key_ops: ['deriveBits']` (`keyOpsNoVerify`). */
  jwksSigKeyUse?: 'enc' | 'keyOpsNoVerify';
  /** [70] rotate the signing key right before the next ID token is signed (then this switch clears itself). */
  rotateKeysBeforeNextIdToken?: boolean;

  // ---- authorization response [11–19] -----------------------------------------------------------------------
  /**
   * [11–13, 14, 15] `iss` of the authorization response (success AND error), sent even by a provider created with
   * `issParameter: false` (`missing` removes it from one that sends it).
   */
  authIss?: IssuerVariant;
  /** [16–18] `state`: `wrong` value, `missing`, or `unsolicited` (added although the RP sent none). */
  authState?: 'wrong' | 'missing' | 'unsolicited';
  /** [18] this parameter appears twice (second copy has a different value). */
  authDuplicateParam?: 'code' | 'state' | 'iss';
  /** [18] `code=` (empty). */
  authEmptyCode?: boolean;
  /** [19] an extra front-channel artifact: `id_token`, `access_token`, `token` or JARM `response`. */
  authExtraArtifact?: 'id_token' | 'access_token' | 'token' | 'response';
  /** [15] answer with this OAuth error (same as `sandbox_action`, but without touching the URL). */
  authError?: 'access_denied' | 'login_required' | 'cancel' | 'server_error' | 'temporarily_unavailable';

  // ---- PAR [8, 9] (Singpass) ---------------------------------------------------------------------------------
  /** [8] answer PAR with an OAuth error (e.g. `{status: 400, error: 'invalid_request'}`, 401 `invalid_client`, 500). */
  parError?: OAuthErrorResponse;
  /** [9] success body but with this status (e.g. 200 instead of 201). */
  parStatus?: number;
  /** [9] success body replaced. */
  parBody?: BodyOverride;
  /** [9] success body members overridden (`null` removes): e.g. `{request_uri: null}`, `{expires_in: 'soon'}`. */
  parFields?: Record<string, unknown>;

  // ---- token endpoint [21–27] --------------------------------------------------------------------------------
  /** [21] answer with an OAuth error (`invalid_grant`, `invalid_client`, `invalid_dpop_proof`, …). */
  tokenError?: OAuthErrorResponse;
  /** [22] success body replaced (non-JSON, array, …). */
  tokenBody?: BodyOverride;
  /** [22] success body members overridden (`null` removes): e.g. `{token_type: 'mac'}`, `{expires_in: '3600'}`. */
  tokenFields?: Record<string, unknown>;
  /** [24] Singpass answers `token_type: "Bearer"` although DPoP was used. */
  tokenTypeBearer?: boolean;
  /** [23] `token_type` case: `lower` (`dpop`/`bearer`), `upper` (`DPOP`/`BEARER`), `mixed` (`dPoP`/`bEaReR`). */
  tokenTypeCase?: 'lower' | 'upper' | 'mixed';
  /** [25] no `expires_in`. */
  tokenNoExpiresIn?: boolean;
  /** [26] no `scope`. */
  tokenNoScope?: boolean;
  /** [27] no `id_token`. */
  tokenNoIdToken?: boolean;

  // ---- back-channel redirects [28] ----------------------------------------------------------------------------
  /**
   * [28] this endpoint answers `307` with `Location: <provider>/sandbox/redirect-sink`; the sink records every request
   * it receives (endpoint `redirectSink` is NOT a LoginEndpoint: look for `path` ending in `/sandbox/redirect-sink`).
   */
  redirectBackChannel?: 'discovery' | 'jwks' | 'par' | 'token' | 'userinfo' | 'authorizationInfo';

  // ---- ID token [31–54] --------------------------------------------------------------------------------------
  /** [39–54] claim overrides of the ID token (see module doc). E.g. `{iss: 'https://evil'}`, `{aud: null}`. */
  idToken?: ClaimOverrides;
  /** [31–38, 52, 53, 71–76] JOSE misbehaviour of the ID token. */
  idTokenJose?: JoseMisbehaviour;

  // ---- userinfo [55–58] (Singpass) ---------------------------------------------------------------------------
  /** [55, 57] claim overrides of the userinfo JWT (`sub`, `iss`, `aud`, …). */
  userinfo?: ClaimOverrides;
  /** [57] JOSE misbehaviour of the userinfo JWT. */
  userinfoJose?: JoseMisbehaviour;
  /** [56] plain `application/json` claims instead of a JWT. */
  userinfoPlainJson?: boolean;
  /** [56] signed but not encrypted (`application/jwt`). */
  userinfoSignedOnly?: boolean;
  /**
   * Corppass FAPI (not a fault, must ACCEPT): userinfo as a JWE around the JWS, as unofficial notes describe (the
   * official page says JWS). The `userinfoJose` JWE switches apply only with this on.
   */
  userinfoEncrypted?: boolean;
  /**
   * [58] error status: 401 (with `WWW-Authenticate: DPoP error="invalid_token"`), 403, 500, …
   */
  userinfoStatus?: number;
  /** [58] success body with this content type instead of `application/jwt`. */
  userinfoContentType?: string;

  // ---- Corppass authorization info [59] ----------------------------------------------------------------------
  /** [59] claim overrides of the authorization-info JWS (`iss`, `aud`, `exp`, `iat`, `sub`, …). */
  authInfo?: ClaimOverrides;
  /** [59] JOSE misbehaviour of the authorization-info JWS (`innerAlg: 'none'`, `foreignKey`, …; JWE members ignored). */
  authInfoJose?: JoseMisbehaviour;
  /** Not a fault: `AuthInfo`/`TPAuthInfo` sent as JSON strings, as the real service sometimes does (must ACCEPT). */
  authInfoStringified?: boolean;
  /** [58-like] authorization-info error status (401 / 403 / 500). */
  authInfoStatus?: number;

  // ---- DPoP nonces [60–65] (Singpass) ------------------------------------------------------------------------
  /** [60–65] server nonce behaviour. */
  dpopNonce?: DpopNonceMode;
  /** Restrict `dpopNonce` to these endpoints (default all three). */
  dpopNonceAt?: Array<'par' | 'token' | 'userinfo'>;
  /** [63] scheme case in `WWW-Authenticate` of the userinfo nonce challenge: `dpop` / `DPOP`. */
  dpopChallengeSchemeCase?: 'lower' | 'upper';
}

/** One ready-made conformance case: which switches reproduce a checklist item, and what the RP must do. */
export interface ConformanceCase {
  /** Item number in the RP conformance checklist. */
  item: number;
  /** Short name, unique. */
  name: string;
  provider: 'singpass' | 'corppass' | 'both';
  /** `reject` = the RP must fail closed with no further calls; `accept` = the login must succeed. */
  expect: 'reject' | 'accept';
  misbehaviour: Misbehaviour;
}

const sp = 'singpass' as const;
const cp = 'corppass' as const;
const both = 'both' as const;
const R = 'reject' as const;
const A = 'accept' as const;

/**
 * Every applicable checklist item as data, so a client test can loop over it. Items needing a control call
 * instead of a switch: [70] `rotateKeys()` between two logins; [78] client side.
 */
export const CONFORMANCE_CASES: readonly ConformanceCase[] = [
  { item: 1, name: 'discovery-issuer-mismatch', provider: both, expect: R, misbehaviour: { discoveryIssuer: 'wrong' } },
  { item: 1, name: 'discovery-issuer-trailing-slash', provider: both, expect: R, misbehaviour: { discoveryIssuer: 'trailingSlash' } },
  { item: 2, name: 'discovery-no-par', provider: sp, expect: R, misbehaviour: { discoveryDropPar: true } },
  // [2, 12] The `iss` flag is required only where the profile requires it (Singpass FAPI); Corppass publishes it false.
  { item: 2, name: 'discovery-iss-param-false', provider: sp, expect: R, misbehaviour: { discoveryNoIssParam: 'false' } },
  { item: 2, name: 'discovery-iss-param-missing', provider: sp, expect: R, misbehaviour: { discoveryNoIssParam: 'missing' } },
  { item: 2, name: 'discovery-iss-param-missing-not-required', provider: cp, expect: A, misbehaviour: { discoveryNoIssParam: 'missing' } },
  { item: 2, name: 'discovery-no-s256', provider: both, expect: R, misbehaviour: { discoveryNoS256: true } },
  { item: 2, name: 'discovery-dpop-algs', provider: sp, expect: R, misbehaviour: { discoveryDpopAlgs: ['PS256'] } },
  { item: 2, name: 'discovery-insecure-token-endpoint', provider: both, expect: R, misbehaviour: { discoveryInsecureEndpoint: 'token' } },
  { item: 2, name: 'discovery-insecure-jwks', provider: both, expect: R, misbehaviour: { discoveryInsecureEndpoint: 'jwks' } },
  { item: 8, name: 'par-invalid-request', provider: sp, expect: R, misbehaviour: { parError: { status: 400, error: 'invalid_request' } } },
  { item: 8, name: 'par-invalid-client', provider: sp, expect: R, misbehaviour: { parError: { status: 401, error: 'invalid_client' } } },
  { item: 8, name: 'par-server-error', provider: sp, expect: R, misbehaviour: { parError: { status: 500, error: 'server_error' } } },
  { item: 9, name: 'par-status-200', provider: sp, expect: R, misbehaviour: { parStatus: 200 } },
  { item: 9, name: 'par-not-json', provider: sp, expect: R, misbehaviour: { parBody: { raw: '<html>ok</html>', contentType: 'text/html' } } },
  { item: 9, name: 'par-array-body', provider: sp, expect: R, misbehaviour: { parBody: { json: [] } } },
  { item: 9, name: 'par-no-request-uri', provider: sp, expect: R, misbehaviour: { parFields: { request_uri: null } } },
  { item: 9, name: 'par-request-uri-number', provider: sp, expect: R, misbehaviour: { parFields: { request_uri: 42 } } },
  { item: 9, name: 'par-no-expires-in', provider: sp, expect: R, misbehaviour: { parFields: { expires_in: null } } },
  { item: 9, name: 'par-expires-in-string', provider: sp, expect: R, misbehaviour: { parFields: { expires_in: '60' } } },
  { item: 11, name: 'auth-iss-wrong', provider: both, expect: R, misbehaviour: { authIss: 'wrong' } },
  { item: 12, name: 'auth-iss-missing', provider: sp, expect: R, misbehaviour: { authIss: 'missing' } },
  { item: 12, name: 'auth-iss-missing-not-advertised', provider: cp, expect: A, misbehaviour: { authIss: 'missing' } },
  { item: 13, name: 'auth-iss-trailing-slash', provider: both, expect: R, misbehaviour: { authIss: 'trailingSlash' } },
  { item: 13, name: 'auth-iss-upper-host', provider: both, expect: R, misbehaviour: { authIss: 'upperHost' } },
  { item: 13, name: 'auth-iss-port', provider: both, expect: R, misbehaviour: { authIss: 'port443' } },
  { item: 13, name: 'auth-iss-scheme', provider: both, expect: R, misbehaviour: { authIss: 'http' } },
  { item: 13, name: 'auth-iss-extra-path', provider: both, expect: R, misbehaviour: { authIss: 'extraPath' } },
  { item: 13, name: 'auth-iss-double-encoded', provider: both, expect: R, misbehaviour: { authIss: 'doubleEncoded' } },
  { item: 14, name: 'auth-iss-other-provider', provider: both, expect: R, misbehaviour: { authIss: 'otherProvider' } },
  { item: 15, name: 'auth-error-trusted', provider: both, expect: R, misbehaviour: { authError: 'access_denied' } },
  { item: 15, name: 'auth-error-wrong-iss', provider: both, expect: R, misbehaviour: { authError: 'access_denied', authIss: 'wrong' } },
  { item: 15, name: 'auth-error-missing-iss', provider: sp, expect: R, misbehaviour: { authError: 'login_required', authIss: 'missing' } },
  { item: 15, name: 'auth-error-iss-not-advertised', provider: cp, expect: R, misbehaviour: { authError: 'login_required', authIss: 'missing' } },
  { item: 16, name: 'auth-state-wrong', provider: both, expect: R, misbehaviour: { authState: 'wrong' } },
  { item: 17, name: 'auth-state-missing', provider: both, expect: R, misbehaviour: { authState: 'missing' } },
  { item: 18, name: 'auth-duplicate-code', provider: both, expect: R, misbehaviour: { authDuplicateParam: 'code' } },
  { item: 18, name: 'auth-duplicate-state', provider: both, expect: R, misbehaviour: { authDuplicateParam: 'state' } },
  { item: 18, name: 'auth-duplicate-iss', provider: both, expect: R, misbehaviour: { authDuplicateParam: 'iss' } },
  { item: 18, name: 'auth-empty-code', provider: both, expect: R, misbehaviour: { authEmptyCode: true } },
  { item: 19, name: 'auth-front-channel-id-token', provider: both, expect: R, misbehaviour: { authExtraArtifact: 'id_token' } },
  { item: 19, name: 'auth-front-channel-access-token', provider: both, expect: R, misbehaviour: { authExtraArtifact: 'access_token' } },
  { item: 19, name: 'auth-jarm-response', provider: both, expect: R, misbehaviour: { authExtraArtifact: 'response' } },
  { item: 21, name: 'token-invalid-grant', provider: both, expect: R, misbehaviour: { tokenError: { error: 'invalid_grant' } } },
  { item: 21, name: 'token-invalid-client', provider: both, expect: R, misbehaviour: { tokenError: { status: 401, error: 'invalid_client' } } },
  { item: 21, name: 'token-invalid-dpop-proof', provider: sp, expect: R, misbehaviour: { tokenError: { error: 'invalid_dpop_proof' } } },
  { item: 22, name: 'token-not-json', provider: both, expect: R, misbehaviour: { tokenBody: { raw: 'not json', contentType: 'text/plain' } } },
  { item: 22, name: 'token-array', provider: both, expect: R, misbehaviour: { tokenBody: { json: [] } } },
  { item: 22, name: 'token-no-access-token', provider: both, expect: R, misbehaviour: { tokenFields: { access_token: null } } },
  { item: 22, name: 'token-access-token-number', provider: both, expect: R, misbehaviour: { tokenFields: { access_token: 1 } } },
  { item: 22, name: 'token-type-missing', provider: both, expect: R, misbehaviour: { tokenFields: { token_type: null } } },
  { item: 22, name: 'token-type-mac', provider: both, expect: R, misbehaviour: { tokenFields: { token_type: 'mac' } } },
  { item: 22, name: 'token-expires-in-string', provider: both, expect: R, misbehaviour: { tokenFields: { expires_in: '3600' } } },
  { item: 22, name: 'token-scope-number', provider: both, expect: R, misbehaviour: { tokenFields: { scope: 7 } } },
  { item: 22, name: 'token-refresh-token-number', provider: both, expect: R, misbehaviour: { tokenFields: { refresh_token: 7 } } },
  { item: 23, name: 'token-type-upper', provider: both, expect: A, misbehaviour: { tokenTypeCase: 'upper' } },
  { item: 23, name: 'token-type-mixed', provider: both, expect: A, misbehaviour: { tokenTypeCase: 'mixed' } },
  { item: 24, name: 'token-type-bearer-downgrade', provider: sp, expect: R, misbehaviour: { tokenTypeBearer: true } },
  { item: 25, name: 'token-no-expires-in', provider: both, expect: A, misbehaviour: { tokenNoExpiresIn: true } },
  { item: 26, name: 'token-no-scope', provider: both, expect: A, misbehaviour: { tokenNoScope: true } },
  { item: 27, name: 'token-no-id-token', provider: both, expect: R, misbehaviour: { tokenNoIdToken: true } },
  { item: 28, name: 'redirect-token', provider: both, expect: R, misbehaviour: { redirectBackChannel: 'token' } },
  { item: 28, name: 'redirect-par', provider: sp, expect: R, misbehaviour: { redirectBackChannel: 'par' } },
  { item: 28, name: 'redirect-userinfo', provider: sp, expect: R, misbehaviour: { redirectBackChannel: 'userinfo' } },
  { item: 28, name: 'redirect-authorization-info', provider: cp, expect: R, misbehaviour: { redirectBackChannel: 'authorizationInfo' } },
  { item: 28, name: 'redirect-jwks', provider: both, expect: R, misbehaviour: { redirectBackChannel: 'jwks' } },
  { item: 31, name: 'id-token-unencrypted', provider: both, expect: R, misbehaviour: { idTokenJose: { unencrypted: true } } },
  { item: 32, name: 'id-token-jwe-rsa1_5', provider: both, expect: R, misbehaviour: { idTokenJose: { jweAlg: 'RSA1_5' } } },
  { item: 32, name: 'id-token-jwe-dir', provider: both, expect: R, misbehaviour: { idTokenJose: { jweAlg: 'dir' } } },
  { item: 32, name: 'id-token-jwe-ecdh-es-direct', provider: both, expect: R, misbehaviour: { idTokenJose: { jweAlg: 'ECDH-ES' } } },
  { item: 32, name: 'id-token-jwe-enc-a128cbc', provider: both, expect: R, misbehaviour: { idTokenJose: { jweEnc: 'A128CBC-HS256' } } },
  { item: 33, name: 'id-token-jwe-kid-unknown', provider: both, expect: R, misbehaviour: { idTokenJose: { jweKid: 'unknown' } } },
  { item: 34, name: 'id-token-jwe-zip', provider: both, expect: R, misbehaviour: { idTokenJose: { zip: true } } },
  { item: 34, name: 'id-token-jwe-tamper-ciphertext', provider: both, expect: R, misbehaviour: { idTokenJose: { tamper: 'ciphertext' } } },
  { item: 34, name: 'id-token-jwe-tamper-iv', provider: both, expect: R, misbehaviour: { idTokenJose: { tamper: 'iv' } } },
  { item: 34, name: 'id-token-jwe-tamper-tag', provider: both, expect: R, misbehaviour: { idTokenJose: { tamper: 'tag' } } },
  { item: 34, name: 'id-token-jwe-tamper-header', provider: both, expect: R, misbehaviour: { idTokenJose: { tamper: 'header' } } },
  { item: 34, name: 'id-token-jwe-four-parts', provider: both, expect: R, misbehaviour: { idTokenJose: { tamper: 'fourParts' } } },
  { item: 34, name: 'id-token-jwe-six-parts', provider: both, expect: R, misbehaviour: { idTokenJose: { tamper: 'sixParts' } } },
  { item: 34, name: 'id-token-jwe-epk-other-curve', provider: both, expect: R, misbehaviour: { idTokenJose: { epk: 'otherCurve' } } },
  { item: 34, name: 'id-token-jwe-epk-off-curve', provider: both, expect: R, misbehaviour: { idTokenJose: { epk: 'offCurve' } } },
  { item: 35, name: 'id-token-foreign-key', provider: both, expect: R, misbehaviour: { idTokenJose: { foreignKey: true } } },
  { item: 36, name: 'id-token-alg-none', provider: both, expect: R, misbehaviour: { idTokenJose: { innerAlg: 'none' } } },
  { item: 37, name: 'id-token-rs256-published-key', provider: both, expect: R, misbehaviour: { idTokenJose: { innerAlg: 'RS256' } } },
  { item: 37, name: 'id-token-hs256-public-key', provider: both, expect: R, misbehaviour: { idTokenJose: { innerAlg: 'HS256' } } },
  { item: 37, name: 'id-token-alg-inconsistent', provider: both, expect: R, misbehaviour: { idTokenJose: { innerAlg: 'ES384-header' } } },
  { item: 38, name: 'id-token-bad-signature', provider: both, expect: R, misbehaviour: { idTokenJose: { badSignature: true } } },
  { item: 39, name: 'id-token-iss-wrong', provider: both, expect: R, misbehaviour: { idToken: { iss: 'https://evil.example/fapi' } } },
  { item: 40, name: 'id-token-iss-missing', provider: both, expect: R, misbehaviour: { idToken: { iss: null } } },
  { item: 41, name: 'id-token-aud-wrong', provider: both, expect: R, misbehaviour: { idToken: { aud: 'someone-else' } } },
  { item: 42, name: 'id-token-aud-missing', provider: both, expect: R, misbehaviour: { idToken: { aud: null } } },
  { item: 43, name: 'id-token-aud-untrusted-second', provider: both, expect: R, misbehaviour: { idToken: { aud: { $clientIdPlus: ['untrusted'] }, azp: null } } },
  { item: 44, name: 'id-token-aud-array', provider: both, expect: A, misbehaviour: { idToken: { aud: { $clientIdPlus: [] } } } },
  { item: 45, name: 'id-token-azp-wrong', provider: both, expect: R, misbehaviour: { idToken: { azp: 'someone-else' } } },
  { item: 46, name: 'id-token-expired', provider: both, expect: R, misbehaviour: { idToken: { exp: { $secondsFromNow: -360 } } } },
  { item: 47, name: 'id-token-exp-missing', provider: both, expect: R, misbehaviour: { idToken: { exp: null } } },
  { item: 48, name: 'id-token-iat-missing', provider: both, expect: R, misbehaviour: { idToken: { iat: null } } },
  { item: 48, name: 'id-token-iat-week-old', provider: both, expect: R, misbehaviour: { idToken: { iat: { $secondsFromNow: -7 * 86400 } } } },
  { item: 48, name: 'id-token-iat-future', provider: both, expect: R, misbehaviour: { idToken: { iat: { $secondsFromNow: 600 } } } },
  { item: 49, name: 'id-token-sub-missing', provider: both, expect: R, misbehaviour: { idToken: { sub: null } } },
  { item: 50, name: 'id-token-nonce-wrong', provider: both, expect: R, misbehaviour: { idToken: { nonce: 'not-the-nonce-you-sent-0123456789' } } },
  { item: 51, name: 'id-token-nonce-missing', provider: both, expect: R, misbehaviour: { idToken: { nonce: null } } },
  { item: 52, name: 'id-token-exp-string', provider: both, expect: R, misbehaviour: { idToken: { exp: '9999999999' } } },
  { item: 52, name: 'id-token-iat-float-huge', provider: both, expect: R, misbehaviour: { idToken: { iat: 1e300 } } },
  { item: 52, name: 'id-token-aud-number', provider: both, expect: R, misbehaviour: { idToken: { aud: 12345 } } },
  { item: 52, name: 'id-token-aud-object', provider: both, expect: R, misbehaviour: { idToken: { aud: { a: 1 } } } },
  { item: 52, name: 'id-token-iss-number', provider: both, expect: R, misbehaviour: { idToken: { iss: 7 } } },
  { item: 52, name: 'id-token-sub-number', provider: both, expect: R, misbehaviour: { idToken: { sub: 7 } } },
  { item: 52, name: 'id-token-nbf-future', provider: both, expect: R, misbehaviour: { idToken: { nbf: { $secondsFromNow: 3600 } } } },
  { item: 52, name: 'id-token-crit-unknown', provider: both, expect: R, misbehaviour: { idTokenJose: { header: { crit: ['urn:sandbox:x'], 'urn:sandbox:x': 1 } } } },
  { item: 52, name: 'id-token-duplicate-iss', provider: both, expect: R, misbehaviour: { idTokenJose: { duplicateClaim: 'iss' } } },
  { item: 52, name: 'id-token-non-utf8', provider: both, expect: R, misbehaviour: { idTokenJose: { nonUtf8: true } } },
  { item: 53, name: 'id-token-is-access-token', provider: both, expect: R, misbehaviour: { idTokenJose: { substitute: 'accessToken' } } },
  { item: 53, name: 'id-token-is-authinfo', provider: both, expect: R, misbehaviour: { idTokenJose: { substitute: 'authInfo' } } },
  { item: 53, name: 'id-token-is-logout-token', provider: both, expect: R, misbehaviour: { idTokenJose: { substitute: 'logoutToken' } } },
  { item: 53, name: 'id-token-is-dpop-proof', provider: both, expect: R, misbehaviour: { idTokenJose: { substitute: 'dpopProof' } } },
  { item: 54, name: 'id-token-acr-too-low', provider: sp, expect: R, misbehaviour: { idToken: { acr: 'urn:singpass:authentication:loa:1', amr: ['pwd'] } } },
  { item: 55, name: 'userinfo-sub-mismatch', provider: sp, expect: R, misbehaviour: { userinfo: { sub: 'a3b5c7d9-0000-4000-8000-000000000000' } } },
  { item: 56, name: 'userinfo-plain-json', provider: sp, expect: R, misbehaviour: { userinfoPlainJson: true } },
  { item: 56, name: 'userinfo-signed-only', provider: sp, expect: R, misbehaviour: { userinfoSignedOnly: true } },
  { item: 57, name: 'userinfo-iss-wrong', provider: sp, expect: R, misbehaviour: { userinfo: { iss: 'https://evil.example/fapi' } } },
  { item: 57, name: 'userinfo-aud-wrong', provider: sp, expect: R, misbehaviour: { userinfo: { aud: 'someone-else' } } },
  { item: 57, name: 'userinfo-alg-none', provider: sp, expect: R, misbehaviour: { userinfoJose: { innerAlg: 'none' } } },
  { item: 57, name: 'userinfo-foreign-key', provider: sp, expect: R, misbehaviour: { userinfoJose: { foreignKey: true } } },
  { item: 57, name: 'userinfo-jwe-rsa1_5', provider: sp, expect: R, misbehaviour: { userinfoJose: { jweAlg: 'RSA1_5' } } },
  { item: 57, name: 'userinfo-jwe-tamper', provider: sp, expect: R, misbehaviour: { userinfoJose: { tamper: 'tag' } } },
  { item: 58, name: 'userinfo-401-invalid-token', provider: sp, expect: R, misbehaviour: { userinfoStatus: 401 } },
  { item: 58, name: 'userinfo-403', provider: sp, expect: R, misbehaviour: { userinfoStatus: 403 } },
  { item: 58, name: 'userinfo-500', provider: sp, expect: R, misbehaviour: { userinfoStatus: 500 } },
  { item: 58, name: 'userinfo-content-type-html', provider: sp, expect: R, misbehaviour: { userinfoContentType: 'text/html' } },
  { item: 59, name: 'authinfo-iss-wrong', provider: cp, expect: R, misbehaviour: { authInfo: { iss: 'https://evil.example' } } },
  { item: 59, name: 'authinfo-aud-wrong', provider: cp, expect: R, misbehaviour: { authInfo: { aud: 'someone-else' } } },
  { item: 59, name: 'authinfo-expired', provider: cp, expect: R, misbehaviour: { authInfo: { iat: { $secondsFromNow: -1200 }, exp: { $secondsFromNow: -600 } } } },
  { item: 59, name: 'authinfo-sub-mismatch', provider: cp, expect: R, misbehaviour: { authInfo: { sub: 's=S9999999Z,uuid=00000000-0000-4000-8000-000000000000,u=CP999,c=SG' } } },
  { item: 59, name: 'authinfo-alg-none', provider: cp, expect: R, misbehaviour: { authInfoJose: { innerAlg: 'none' } } },
  { item: 59, name: 'authinfo-rs256', provider: cp, expect: R, misbehaviour: { authInfoJose: { innerAlg: 'RS256' } } },
  { item: 59, name: 'authinfo-foreign-key', provider: cp, expect: R, misbehaviour: { authInfoJose: { foreignKey: true } } },
  { item: 59, name: 'authinfo-bad-signature', provider: cp, expect: R, misbehaviour: { authInfoJose: { badSignature: true } } },
  { item: 59, name: 'authinfo-stringified', provider: cp, expect: A, misbehaviour: { authInfoStringified: true } },
  { item: 60, name: 'dpop-nonce-everywhere', provider: sp, expect: A, misbehaviour: { dpopNonce: 'require' } },
  { item: 60, name: 'dpop-nonce-par-only', provider: sp, expect: A, misbehaviour: { dpopNonce: 'require', dpopNonceAt: ['par'] } },
  { item: 61, name: 'dpop-nonce-token-only', provider: sp, expect: A, misbehaviour: { dpopNonce: 'require', dpopNonceAt: ['token'] } },
  { item: 61, name: 'dpop-nonce-sent-on-200', provider: sp, expect: A, misbehaviour: { dpopNonce: 'sendOn200' } },
  { item: 62, name: 'dpop-nonce-userinfo-only', provider: sp, expect: A, misbehaviour: { dpopNonce: 'require', dpopNonceAt: ['userinfo'] } },
  { item: 63, name: 'dpop-challenge-scheme-lower', provider: sp, expect: A, misbehaviour: { dpopNonce: 'require', dpopNonceAt: ['userinfo'], dpopChallengeSchemeCase: 'lower' } },
  { item: 63, name: 'dpop-challenge-scheme-upper', provider: sp, expect: A, misbehaviour: { dpopNonce: 'require', dpopNonceAt: ['userinfo'], dpopChallengeSchemeCase: 'upper' } },
  { item: 64, name: 'dpop-no-nonce', provider: sp, expect: A, misbehaviour: {} },
  { item: 65, name: 'dpop-nonce-loop', provider: sp, expect: R, misbehaviour: { dpopNonce: 'requireTwice' } },
  { item: 65, name: 'dpop-nonce-missing-header', provider: sp, expect: R, misbehaviour: { dpopNonce: 'missingHeader' } },
  { item: 65, name: 'dpop-nonce-two-headers', provider: sp, expect: R, misbehaviour: { dpopNonce: 'twoHeaders' } },
  { item: 65, name: 'dpop-nonce-bad-syntax', provider: sp, expect: R, misbehaviour: { dpopNonce: 'badSyntax' } },
  { item: 70, name: 'key-rotation-just-before-signing', provider: both, expect: A, misbehaviour: { rotateKeysBeforeNextIdToken: true } },
  { item: 71, name: 'id-token-kid-unknown', provider: both, expect: R, misbehaviour: { idTokenJose: { kid: 'sandbox-unknown-kid' } } },
  { item: 72, name: 'id-token-no-kid-single-key', provider: both, expect: A, misbehaviour: { idTokenJose: { noKid: true } } },
  { item: 73, name: 'id-token-no-kid-several-keys', provider: both, expect: R, misbehaviour: { idTokenJose: { noKid: true }, extraSigKeys: 2 } },
  { item: 74, name: 'jwks-decoys', provider: both, expect: A, misbehaviour: { decoyKeys: true } },
  { item: 75, name: 'jwks-sig-key-use-enc', provider: both, expect: R, misbehaviour: { jwksSigKeyUse: 'enc' } },
  { item: 75, name: 'jwks-sig-key-ops-no-verify', provider: both, expect: R, misbehaviour: { jwksSigKeyUse: 'keyOpsNoVerify' } },
  { item: 76, name: 'id-token-embedded-jwk', provider: both, expect: R, misbehaviour: { idTokenJose: { embeddedKey: 'jwk' } } },
  { item: 76, name: 'id-token-jku', provider: both, expect: R, misbehaviour: { idTokenJose: { embeddedKey: 'jku' } } },
  { item: 76, name: 'id-token-x5c', provider: both, expect: R, misbehaviour: { idTokenJose: { embeddedKey: 'x5c' } } },
  { item: 77, name: 'jwks-500', provider: both, expect: R, misbehaviour: { jwks: 'status500' } },
  { item: 77, name: 'jwks-not-json', provider: both, expect: R, misbehaviour: { jwks: 'notJson' } },
  { item: 77, name: 'jwks-no-keys', provider: both, expect: R, misbehaviour: { jwks: 'noKeys' } },
  { item: 77, name: 'jwks-keys-not-array', provider: both, expect: R, misbehaviour: { jwks: 'keysNotArray' } },
  { item: 77, name: 'jwks-private-key', provider: both, expect: R, misbehaviour: { jwks: 'privateKey' } },
];
