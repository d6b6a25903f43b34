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
