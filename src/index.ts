/**
 * The package's public API: the engine-agnostic core that adapters (n8n, Node-RED), the CLI and developers import.
 * Each area's index (keys, sign, login, pki, pades, session) lists what it makes public; internals (the HTTP client,
 * constant-time comparison, clocks' helpers) stay inside.
 */
export { SingpassFlowsError, isSingpassFlowsError } from './errors';
export type { ErrorCode, ErrorDetails } from './errors';
export type { Clock } from './clock';
export type { Fetch, HttpOptions } from './http';
export * from './keys';
export * from './sign';
export * from './login';
export * from './pki';
export * from './pades';
// The signing-session engine: step functions over a JSON record, the multi-session runner, the stores.
export * from './session';
