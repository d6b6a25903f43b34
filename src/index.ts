/**
 * Engine-agnostic core of the package. Adapters (n8n, Node-RED) and the CLI import from here.
 */
export * from './errors';
export * from './clock';
export * from './http';
export * from './keys';
export * from './sign';
export * from './login';
export * from './pki';
export * from './pades';
// LTV, document timestamps and verification build on ./pades (and import it), so they are exported here rather
// than from pades/index.ts, which would make a cycle.
export * from './pades/ltv';
export * from './pades/doc-timestamp';
export * from './pades/verify';
export * from './secrets';
// The signing-session engine (step functions over a JSON record, multi-session runner)
export * from './session';
