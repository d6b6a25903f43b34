/** The sandbox signing service (stand-in for the Singpass document signing API). */
export { createSignService, PhoneFlowError } from './service';
export type { SignService, SignServiceOptions, SignFaults, SessionView, SessionState, PhoneUser, DsapClient, HashCall } from './service';
export type { DeliveryAttempt, DeliveryFailure, DeliveryResult } from './webhook';
export * as signWire from './wire';
