/** The signing-session engine shared by the CLI and the n8n / Node-RED adapters (see README.md here). */
export * from './types';
export * from './engine';
export * from './store';
export * from './deliveries';
export * from './runner';
export * from './file-store';
export * from './pg-store';
export * from './next-step';
export { receiveDelivery, isCopyOf, type DeliveryReceipt, type DeliveryVerdict, type FrontDoorStore, type ReceiveDeliveryOptions } from './front-door';
export { recordEvent, runDueStep, type DriverStore, type RecordedEvent, type DueStepResult, type RunDueStepOptions } from './driver';
export { SESSION_POLICY } from './policy';
export { TRANSITIONS, observeTransitions, phaseFromFields, transitionKey, withPhase, type SessionTrigger, type SessionVerb, type Transition } from './transitions';
export { deliveryToJson, deliveryFromJson } from './delivery-codec';
export type { CertificateStatusReport } from './user-certificate';
export { finishShortfall } from './finishing';
