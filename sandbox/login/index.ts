/**
 * Sandbox login providers: Corppass (legacy OIDC + authorization info), Corppass FAPI 2.0 and Singpass FAPI 2.0, all with
 * misbehaviour switches for RP conformance tests. A peer of the client in src/login: nothing here imports src/.
 *
 * @example
 * const corppass = createCorppassProvider({ baseUrl });
 * const singpass = createSingpassProvider({ baseUrl });
 * const server = await listen(mount([corppass, singpass]));
 */
export { createCorppassProvider, CorppassProvider } from './corppass';
export { createSingpassProvider, SingpassProvider } from './singpass';
export { createCorppassFapiProvider, CorppassFapiProvider, corppassFapiIdentity, CORPPASS_FAPI_STANDARD_SCOPES, CORPPASS_FAPI_MIB_SCOPES, DEFAULT_AUTHENTICATION_CONTEXT_TYPE } from './corppass-fapi';
export type { CorppassFapiClientRegistration, CorppassFapiIdentity } from './corppass-fapi';
export { CORPPASS_FAPI_CASES, type CorppassFapiCase } from './corppass-fapi-cases';
export { CORPPASS_USERS, SINGPASS_USERS, corppassAuthorization } from './fixtures';
export type { CorppassUser, SingpassUser } from './fixtures';
export { CONFORMANCE_CASES } from './misbehaviour';
export type * from './misbehaviour';
export type * from './types';
