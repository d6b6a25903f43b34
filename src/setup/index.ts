/**
 * Engine-neutral setup shared by the front ends (n8n, Node-RED, CLI): environment tables, settings → checked clients
 * (errors named with each front end's own field labels), login cookie and transaction I/O.
 */
export * from './labels';
export * from './environments';
export * from './sign-setup';
export * from './login-setup';
export * from './login-io';
export * from './appearance-setup';
