import type { WebhookRequest, WebhookResponse } from '../sign';
import type { PdfVerificationReport } from '../pades/verify';
import type { SigningEngine } from './engine';
import type { SessionStore } from './store';
import type { SessionRecord, SessionStarted, SessionStep, StartSessionInput } from './types';

/** How a session run by the runner ended. */
export interface SessionOutcome {
  record: SessionRecord;
  /** The signed PDF (at `record.result.level`), when a signature was embedded. */
  pdf?: Buffer;
  report?: PdfVerificationReport;
}

export interface SessionRunnerOptions {
  engine: SigningEngine;
  /** Default: in memory. */
  store?: SessionStore;
  /** Every step of every session (narration, metrics, Node-RED status). Errors thrown here are ignored. */
  onStep?: (signRef: string, step: SessionStep) => void | Promise<void>;
  /** Every delivery the runner refused or ignored (log-safe), e.g. for a security log. */
  onRefused?: (info: { signRef?: string; code: string; message: string; status: number }) => void;
}

/**
 * Many sessions behind ONE webhook URL, for long-running front ends (CLI, Node-RED, the bench): routes verified
 * events by sign_ref to their session, answers the service at once and processes the event behind it (one event
 * at a time per session), expires sessions at their deadline, and is idempotent under duplicate deliveries (a
 * second copy of an event is acknowledged and dropped: never a second hash).
 */
export interface SessionRunner {
  /** Preflight + create-session (see `SigningEngine.start`); the runner then drives the session to its end. */
  start(pdf: Buffer, input: StartSessionInput): Promise<SessionStarted>;
  /** Handle one POST to the webhook URL; resolve with the HTTP answer to send. Never throws. */
  handleWebhook(request: Pick<WebhookRequest, 'headers' | 'body'>): Promise<WebhookResponse>;
  /** Resolves when the session ends (completed, failed or expired); never rejects. */
  outcome(signRef: string): Promise<SessionOutcome>;
  /** Pick up unfinished sessions from the store (after a restart): re-arm their expiry. */
  resume(): Promise<number>;
  /** Stop timers (sessions stay in the store). */
  close(): Promise<void>;
}

export declare function createSessionRunner(options: SessionRunnerOptions): SessionRunner;
