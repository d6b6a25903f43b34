/** Corppass and Singpass FAPI 2.0 login clients (relying-party side). */
export { createCorppassClient, type CorppassClient, type CorppassClientOptions, type CorppassLoginResult } from './corppass';
export { createCorppassFapiClient, type CorppassAppType, type CorppassFapiClient, type CorppassFapiClientOptions, type CorppassFapiEntity, type CorppassFapiLoginResult, type CorppassFapiStartOptions, type CorppassFapiUser } from './corppass-fapi';
export { createSingpassClient, flattenPersonInfo, type SingpassClient, type SingpassClientOptions, type SingpassLoginResult, type SingpassStartOptions } from './singpass';
export { corppassEntity, officerDecision, requireRolesScope, type OfficerDecision, type OfficerRule, type OnBehalfOf } from './officer';
export { parseCorppassSubject, type CorppassSubject } from './corppass-subject';
export { activeRoles, parseAuthorizationInfo, singaporeDate, type ActiveRole, type AuthInfo, type AuthInfoRow, type AuthInfoEService, type AuthorizationInfo, type AuthParameter, type TPAuthInfo, type TPAuthInfoRow, type TPAuthClient, type TPAuthInfoEService } from './authorization-info';
export { LOGIN_PROVIDERS, sealTransaction, openTransaction, InMemoryTransactionStore, defaultTransactionStore, type LoginTransaction, type TransactionStore } from './transaction';
export { ProviderCache, defaultProviderCache, type ProviderCacheOptions, type ProviderMetadata } from './discovery';
export type { CallbackInput } from './callback';
export type { FapiLoginStart } from './fapi';
export type { LoginClientOptions } from './config';
export { keySetResponse, type KeySetHttpResponse } from './key-set-response';
