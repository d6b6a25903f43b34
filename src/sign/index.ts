/** Singpass document signing API: client (create session, submit hash), webhook verification, session state. */
export * from './assertion';
export * from './client';
export * from './codes';
export * from './qr';
export * from './notification-token';
export * from './webhook';
export * from './delivery-log';
export * from './session';
export * from './environments';
export * as signWire from './wire';
export { checkAppLink } from './validate';
