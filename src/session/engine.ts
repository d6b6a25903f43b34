import type { WebhookRequest, WebhookResponse, WebhookVerifier } from '../sign';
import type {
  FinishResult, SessionRecord, SessionStarted, SigningEngineConfig, StartSessionInput, StepOptions, StepResult, VerifiedDelivery,
} from './types';

/** What the webhook trigger learns from one delivery, before any session record is loaded. */
export interface DeliveryCheck {
  /** Answer the service with this, always (200 / 400 / 503). */
  response: WebhookResponse;
  /** Set when the delivery is genuine (service JWT verified, Bearer issued by this DSAP): apply it to its session. */
  delivery?: VerifiedDelivery;
  /** Already delivered once (acknowledged, do not apply again). */
  duplicate: boolean;
  /** Why it was refused (log-safe); the session it names is NOT affected. */
  error?: { code: string; message: string };
}

/**
 * The signing-session engine: step functions over a plain-JSON {@link SessionRecord}, shared by the CLI, the n8n
 * and the Node-RED adapters. No step needs in-process memory for correctness: persist the returned record, hand it
 * back to the next step (possibly in another process). The engine object only holds configuration and caches
 * (service key set, intermediate CA certificates).
 *
 * Order of a session: `start` → (webhook) `checkDelivery` → `applyDelivery` (certificate: checks the user's
 * certificate, prepares the PDF, submits the hash) → (webhook) `checkDelivery` → `applyDelivery` (signature) →
 * `finish` (embed, B-T, B-LT, B-LTA, verify). `expire` whenever `deadline(record)` has passed.
 */
export interface SigningEngine {
  readonly config: Readonly<SigningEngineConfig>;
  /** The webhook verifier (one service key-set cache per engine). */
  readonly verifier: WebhookVerifier;

  /**
   * Preflight the PDF (readable, not encrypted, not certified "no changes") BEFORE the service session exists, then
   * create the session with a fresh notification token and challenge code. Throws (typed) when the PDF is refused or
   * the service call fails; no session then exists.
   */
  start(pdf: Buffer, input: StartSessionInput, options?: StepOptions): Promise<SessionStarted>;

  /**
   * The webhook trigger's check, stateless: Bearer issued by this DSAP (HMAC), service JWT verified, duplicates
   * recognised. Never throws. A refused delivery (no/foreign Bearer, garbage, rotation inside the key-set cooldown
   * → 503) is answered and ignored: it never touches a session.
   */
  checkDelivery(request: Pick<WebhookRequest, 'headers' | 'body'>): Promise<DeliveryCheck>;

  /**
   * Apply a verified delivery to its session (the record whose sign_ref the event names). Refuses (throws
   * `WEBHOOK_UNAUTHORIZED` / `STATE_INVALID`, record untouched: keep waiting) a delivery presented with another
   * session's token or for another sign_ref. Certificate → {@link acceptCertificate}; signature →
   * {@link acceptSignature}; error event → the session fails. Re-applying an applied event is a no-op
   * (`duplicate: true`): never a second hash.
   */
  applyDelivery(record: SessionRecord, delivery: VerifiedDelivery, pdf: Buffer, options?: StepOptions): Promise<StepResult>;

  /**
   * The user scanned: chain the certificate to the trusted roots and check OCSP (revoked / unknown / expired /
   * not-yet-valid / untrusted → the session ends with that typed error and NO hash is submitted), prepare the PDF,
   * submit the hash. Returns the record in `hash_submitted` (or ended).
   */
  acceptCertificate(record: SessionRecord, delivery: VerifiedDelivery, pdf: Buffer, options?: StepOptions): Promise<StepResult>;

  /** The user signed: record the signature (checked against the submitted hash). Then call {@link finish}. */
  acceptSignature(record: SessionRecord, delivery: VerifiedDelivery, options?: StepOptions): Promise<StepResult>;

  /**
   * Embed the signature and extend to the requested level (B-T timestamp, B-LT validation data, B-LTA document
   * timestamp), then verify OUR signature (the newest; the PDF may carry others). Ends the session: the certificate
   * and prepared state are removed. On a failure after embedding, `pdf` holds the best level reached and
   * `record.error` says what failed.
   */
  finish(record: SessionRecord, pdf: Buffer, options?: StepOptions): Promise<FinishResult>;

  /** End the session as expired when its deadline has passed (no-op otherwise, and for ended sessions). */
  expire(record: SessionRecord): StepResult;

  /**
   * UNIX ms after which no event can come any more: the service's `expires_at` while waiting for the scan, then
   * `expires_at` extended by `scanExtensionSeconds` after the scan.
   */
  deadline(record: SessionRecord): number;
}

/** Build the engine for one DSAP and environment (cheap; reuse it to keep its caches). */
export declare function createSigningEngine(config: SigningEngineConfig & { verifier?: WebhookVerifier; serviceKeySetUrl?: string }): SigningEngine;

/** True once the session has ended (completed, failed, expired). */
export declare function isSessionEnded(record: SessionRecord): boolean;
