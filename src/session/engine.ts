import { createHash, type Hash } from 'node:crypto';
import { systemClock } from '../clock';
import { SingpassFlowsError, invalidInput } from '../errors';
import { checkSignablePdf } from '../pades';
import { checkSignatureText } from '../pades/signature';
import { checkOnBehalfOf, checkSessionAppearance, checkSignerPlace } from './request-context';
import type { PadesLevel } from '../pades/verify';
import { constantTimeEqual } from '../secrets';
import {
  applySigningEvent, createWebhookVerifier, expireSigningSession, generateChallengeCode, isSigningSessionFinished, newSigningSessionState,
  readBearer, signingSessionDeadline, type CertificateEvent, type SignatureEvent, type SigningErrorEvent, type WebhookRequest, type WebhookResponse, type WebhookVerifier,
} from '../sign';
import { readUserCertificate } from '../sign/user-certificate';
import { checkAppLink, checkDocumentName, checkDomainName, checkSessionField } from '../sign/validate';
import { certificateStep, prepareStep } from './certificate-step';
import { eventStanding } from './event-standing';
import { finishSession } from './finishing';
import { DEFAULT_FINISH_RETRY_WINDOW_SECONDS } from './policy';
import { DEFAULT_SCAN_EXTENSION_SECONDS, isAtSavePoint, isCertificateClaimed } from './next-step';
import { checkRecord, say, serviceEventFailure, sha256, withoutSessionData, type StepContext } from './record-ops';
import { advance, created, type SessionTrigger } from './transitions';
import { hashSubmitted, submitHash, type HashCall } from './submission';
import { UserCertificateChecker, type CertificateStatusReport } from './user-certificate';
import { certsFromPemOrDer } from '../pki';
import type {
  FinishResult, SessionRecord, SessionStarted, SigningEngineConfig, StartSessionInput, StepOptions, StepResult, VerifiedDelivery,
} from './types';

// Which failures are temporary and the backoffs between retries: the session policy (policy.ts); re-exported for callers.
export { isTemporarySubmitFailure, submitRetryDelayMs, DEFAULT_FINISH_RETRY_WINDOW_SECONDS, finishRetryDelayMs, isTemporaryFinishFailure } from './policy';

/** The PAdES baseline levels, lowest first. */
export const PADES_LEVELS: readonly PadesLevel[] = ['B-B', 'B-T', 'B-LT', 'B-LTA'];

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
   * → 503) is answered and ignored: it never touches a session. A runner that has the records passes
   * `expectedToken` (sign_ref → the session's token) to bind the delivery to its session already here.
   */
  checkDelivery(request: Pick<WebhookRequest, 'headers' | 'body'>, expectedToken?: WebhookRequest['expectedToken']): Promise<DeliveryCheck>;

  /**
   * Apply a verified delivery to its session (the record whose sign_ref the event names). Refuses (throws
   * `WEBHOOK_UNAUTHORIZED` / `STATE_INVALID`, record untouched: keep waiting) a delivery presented with another
   * session's token or for another sign_ref. Certificate → {@link acceptCertificate}; signature →
   * {@link acceptSignature}; error event → the session fails. Re-applying an applied event is a no-op
   * (`duplicate: true`): never a second hash.
   */
  applyDelivery(record: SessionRecord, delivery: VerifiedDelivery, pdf: Buffer, options?: StepOptions): Promise<StepResult>;

  /**
   * Put what a verified delivery says into its record and nothing more, for a webhook that must have the event stored
   * before it answers 200 (the service never resends an acknowledged event): a certificate is claimed (recorded,
   * `isCertificateClaimed`; nothing checked, prepared or sent, no PDF needed: store it, then
   * {@link continueCertificate}), a signature or an error event applied as {@link applyDelivery} does. A certificate
   * whose step is under way (claimed, or at the save point) returns the record unchanged: its next step carries on
   * (`nextStep`). Refuses deliveries and answers copies (`duplicate: true`) as {@link applyDelivery} does.
   */
  recordDelivery(record: SessionRecord, delivery: VerifiedDelivery, options?: Pick<StepOptions, 'onStep'>): Promise<StepResult>;

  /**
   * The user scanned: chain the certificate to the trusted roots and check OCSP (revoked / unknown / expired /
   * not-yet-valid / untrusted → the session ends with that typed error and NO hash is submitted), prepare the PDF,
   * submit the hash. Returns the record in `hash_submitted` (or ended). A temporary failure of the hash call
   * (`isTemporarySubmitFailure`) returns the save point's record, with `lastSubmitFailure` (step `submitDeferred`):
   * not failed; resubmit from `lastSubmitFailure.retryAt` on with {@link resumeSubmission}. Replayed on a record at
   * the save point it sends the same hash again (as {@link resubmitHash}); on a claimed record (same nonce) with
   * `save`, it continues that record (without `save`: `duplicate: true`, the claimer may still be at work).
   */
  acceptCertificate(record: SessionRecord, delivery: VerifiedDelivery, pdf: Buffer, options?: StepOptions): Promise<StepResult>;

  /**
   * The certificate event's first half, for engines that cannot save inside one step (n8n: the workflow stores the
   * record after the node): as {@link acceptCertificate} up to the save point — the certificate checked, the PDF
   * prepared, the record returned with `submitting` (no hash call counted) and nothing sent. Store it, then
   * {@link resumeSubmission} in a later step. Replayed on a record at the save point it returns that record
   * unchanged; on a claimed record (same nonce) with `save`, it continues that record to its save point.
   */
  prepareCertificate(record: SessionRecord, delivery: VerifiedDelivery, pdf: Buffer, options?: StepOptions): Promise<StepResult>;

  /**
   * Send the hash saved at the certificate step's save point (`record.submitting`), the next step after
   * {@link prepareCertificate} was stored: exactly the saved hash, never a new one. The record counts the calls made
   * for it: on the first, a refusal is the service's verdict (the session fails with its reason); on a resend,
   * "already submitted" means an earlier call got through and the session waits for the signature. Returns the
   * record in `hash_submitted` (or ended). A temporary failure keeps the save point (`lastSubmitFailure` updated,
   * backoff in `retryAt`); past the deadline the session expires and nothing is sent.
   */
  resumeSubmission(record: SessionRecord, options?: StepOptions): Promise<StepResult>;

  /**
   * {@link resumeSubmission} for a record found at the save point after an interruption (a scheduler, a restart, a
   * resume schedule): a call the record does not count may have been made (the process died before saving it), so the
   * service's "already submitted" means that call got through.
   */
  resubmitHash(record: SessionRecord, options?: StepOptions): Promise<StepResult>;

  /**
   * Continue a record claimed at the certificate step and saved there (`isCertificateClaimed(record)`: the
   * certificate recorded, nothing prepared, e.g. the process died after the claim) from the stored certificate: the
   * rest of the certificate step (chain + OCSP, prepare, the save point through `options.save`, the hash call), as
   * {@link acceptCertificate} does. Two executions continuing the same claimed record each prepare, but only the one
   * whose `save` (compare-and-set against the claimed revision) wins submits; the other gets `duplicate: true` and
   * sends nothing — so `options.save` is required. Past the deadline the session expires and nothing is sent.
   */
  continueCertificate(record: SessionRecord, pdf: Buffer, options?: StepOptions): Promise<StepResult>;

  /** The user signed: record the signature (checked against the submitted hash). Then call {@link finish}. */
  acceptSignature(record: SessionRecord, delivery: VerifiedDelivery, options?: StepOptions): Promise<StepResult>;

  /**
   * Embed the signature and extend to the requested level (B-T timestamp, B-LT validation data, B-LTA document
   * timestamp), then verify OUR signature (the newest; the PDF may carry others). Ends the session: the certificate
   * and prepared state are removed. A temporary failure defers (`deferred`, see `isTemporaryFinishFailure`); a
   * failure for good after the user signed still completes, with `pdf` at the highest level reached (at least B-B)
   * and `record.result.missing` saying what is missing and why; only a verdict on the signature fails it.
   */
  finish(record: SessionRecord, pdf: Buffer, options?: StepOptions): Promise<FinishResult>;

  /**
   * "Check Certificate Status" for every front end: the certificate step's checks (valid now, chain to the trusted
   * roots, OCSP) as a report with the same stable codes, not thrown for the certificate's verdict. `certificate`:
   * PEM, DER, or base64 DER.
   */
  certificateStatus(certificate: Buffer | string): Promise<CertificateStatusReport>;

  /** End the session as expired when its deadline has passed (no-op otherwise, and for ended sessions). */
  expire(record: SessionRecord): StepResult;

  /**
   * UNIX ms after which no event can come any more: the service's `expires_at` while waiting for the scan, then
   * `expires_at` extended by `scanExtensionSeconds` after the scan.
   */
  deadline(record: SessionRecord): number;
}

export interface SigningEngineOptions extends SigningEngineConfig {
  /** A long-lived webhook verifier to share (it caches the service key set); else one is made from `serviceKeySetUrl`. */
  verifier?: WebhookVerifier;
  /** `{dss_static_url}/.well-known/keys.json`, when no `verifier` is given. */
  serviceKeySetUrl?: string;
  /** Minimum seconds between on-demand key-set refetches of the engine's own verifier (default 1; see below). */
  keySetRefetchCooldownSeconds?: number;
}

/**
 * Default minimum seconds between on-demand key-set refetches of the engine's own verifier. Shorter than the
 * service's retry interval (3 attempts, 2 s apart), so a key rotation that lands right after another refetch is
 * answered 503 once and the service's retry finds the new key; only deliveries whose Bearer this DSAP issued ever
 * reach the key lookup, so this does not open a refetch flood.
 */
const REFETCH_COOLDOWN_S = 1;

/** Build the engine for one DSAP and environment (cheap; reuse it to keep its caches). */
export function createSigningEngine(options: SigningEngineOptions): SigningEngine {
  if (!options || typeof options !== 'object') throw invalidInput('config', 'expected the signing engine configuration');
  if (!options.client) throw invalidInput('client', 'is required (a SigningApiClient)');
  if (!options.notificationTokens) throw invalidInput('notificationTokens', 'is required (createNotificationTokens({ secret }))');
  if (!Array.isArray(options.trustedRoots) || options.trustedRoots.length === 0) throw invalidInput('trustedRoots', 'needs at least one root CA certificate');
  // Checked now with the rules of the hash call, which sends them after the user has scanned: a bad value must stop
  // the configuration, not every session halfway.
  if (options.domainName === undefined || options.domainName === '') throw invalidInput('domainName', 'is required (the host name of the page showing the QR code)');
  checkDomainName(options.domainName);
  if (options.tenantId === undefined || options.tenantId === '') throw invalidInput('tenantId', 'is required');
  checkSessionField('tenantId', options.tenantId);
  if (!options.verifier && !options.serviceKeySetUrl) throw invalidInput('serviceKeySetUrl', 'is required (the signing service key set URL)');
  const clock = options.clock ?? systemClock;
  const config: SigningEngineConfig = { ...options };
  const verifier = options.verifier ?? createWebhookVerifier({ keySetUrl: options.serviceKeySetUrl!, fetch: options.fetch, clock, refetchCooldownSeconds: options.keySetRefetchCooldownSeconds ?? REFETCH_COOLDOWN_S });
  const certificates = new UserCertificateChecker({ trustedRoots: options.trustedRoots, intermediates: options.intermediates, fetch: options.fetch, clock });
  const scanExtensionSeconds = options.scanExtensionSeconds ?? DEFAULT_SCAN_EXTENSION_SECONDS;
  const finishWindowMs = (options.finishRetryWindowSeconds ?? DEFAULT_FINISH_RETRY_WINDOW_SECONDS) * 1000;
  if (!(finishWindowMs >= 0)) throw invalidInput('finishRetryWindowSeconds', 'must be a number of seconds, 0 or more');
  const tokens = options.notificationTokens;

  function bind(record: SessionRecord, delivery: VerifiedDelivery): void {
    checkRecord(record);
    if (!delivery || typeof delivery !== 'object' || !delivery.event) throw invalidInput('delivery', 'expected the delivery from checkDelivery()');
    if (delivery.event.signRef !== record.state.signRef) {
      throw new SingpassFlowsError('STATE_INVALID', 'The webhook event is for another signing session than this record', { retryable: false });
    }
    // The Bearer must be the token THIS session was created with, not any token this DSAP issued.
    if (typeof delivery.notificationToken !== 'string' || !constantTimeEqual(delivery.notificationToken, record.state.clientNotificationToken)) {
      throw new SingpassFlowsError('WEBHOOK_UNAUTHORIZED', 'The webhook delivery was presented with a client notification token that is not this session\'s; ignored', { retryable: false });
    }
  }

  /** Refuses another PDF than the session's; returns the running SHA-256 of `pdf` so the step need not hash it again. */
  function checkDocument(record: SessionRecord, pdf: Buffer): Hash {
    if (!Buffer.isBuffer(pdf)) throw invalidInput('pdf', 'expected the PDF bytes given to start()');
    const h = createHash('sha256').update(pdf);
    if (pdf.length !== record.document.length || h.copy().digest('hex') !== record.document.sha256) {
      throw invalidInput('pdf', 'is not the PDF this signing session was started with');
    }
    return h;
  }

  /** The certificate recorded: the claim (applySigningEvent refuses one in any other state than waiting_for_scan). */
  function claim(record: SessionRecord, event: CertificateEvent): SessionRecord {
    return advance(record, 'claimCertificate', { ...record, state: applySigningEvent(record.state, event, clock) }, clock, 'certificate');
  }

  /** The service's error event ends the session. */
  async function failByService(record: SessionRecord, event: SigningErrorEvent, stepOptions: StepOptions | undefined): Promise<StepResult> {
    if (isSigningSessionFinished(record.state)) throw new SingpassFlowsError('STATE_INVALID', `The session is already ${record.state.status}`, { retryable: false });
    const state = applySigningEvent(record.state, event, clock);
    const error = serviceEventFailure(event);
    const out = advance(record, 'failByService', { ...withoutSessionData(record), state, error }, clock, 'error');
    await say(stepOptions, { step: 'ended', status: state.status, error });
    return { record: out };
  }

  /**
   * A certificate event through `run`: claimed, then `run.fromClaim`; replayed on a record at the save point,
   * `run.atSavePoint`; replayed on a claimed record, continued by `run` (only with a compare-and-set `save`).
   */
  async function certificateEvent(record: SessionRecord, delivery: VerifiedDelivery, pdf: Buffer, stepOptions: StepOptions | undefined, run: CertificateRun): Promise<StepResult> {
    bind(record, delivery);
    const standing = eventStanding(record, delivery.event);
    if (standing === 'taken') return { record, duplicate: true };
    const event = delivery.event as CertificateEvent;
    if (event.type !== 'certificate') throw new SingpassFlowsError('STATE_INVALID', `Expected a certificate event, got ${event.type}`, { retryable: false });
    // Replayed on a claimed record (nothing prepared yet; its claimer died, or is still at work): the rest of the step,
    // from the stored certificate, only with a compare-and-set save point (two executions may then both prepare,
    // only one submits). Without `save` it cannot be told apart from the claimer's own work: a duplicate.
    if (standing === 'midStep' && isCertificateClaimed(record)) return stepOptions?.save ? continueClaim(record, pdf, stepOptions, run, 'certificate') : { record, duplicate: true };
    const pdfHash = checkDocument(record, pdf);
    // Replayed after a crash past the save point: the hash may be with the user already; never a new one.
    if (standing === 'midStep') return run.atSavePoint(on('certificate'), record, stepOptions);
    const claimed = claim(record, event);
    if (stepOptions?.claim && !(await stepOptions.claim(claimed))) return { record, duplicate: true };
    return run.fromClaim(on('certificate'), claimed, event, pdf, stepOptions, pdfHash);
  }

  /** A claimed record (saved there, nothing prepared) continued through `run` from its stored certificate. */
  async function continueClaim(record: SessionRecord, pdf: Buffer, stepOptions: StepOptions | undefined, run: CertificateRun, trigger: SessionTrigger): Promise<StepResult> {
    checkRecord(record);
    if (!isCertificateClaimed(record)) throw new SingpassFlowsError('STATE_INVALID', `No claimed certificate to continue: the session is ${record.state.status}${isAtSavePoint(record) ? ' at the save point (resumeSubmission)' : ''}`, { retryable: false });
    if (!stepOptions?.save) throw invalidInput('save', 'is required to continue a claimed certificate (a compare-and-set save point: another execution may be continuing it too)');
    const pdfHash = checkDocument(record, pdf);
    const expired = await expiredNow(record, stepOptions, trigger);
    if (expired) return expired;
    const s = record.state;
    const event: CertificateEvent = {
      type: 'certificate', signRef: s.signRef, nonce: s.nonce!, certificate: readUserCertificate(Buffer.from(s.certificate!, 'base64'), s.certificate), issuedAt: s.scannedAt ?? s.updatedAt,
    };
    return run.fromClaim(on(trigger), record, event, pdf, stepOptions, pdfHash);
  }

  /** The hash call of a record at the save point (`call`: how it stands to the calls before it). */
  async function fromSavePoint(record: SessionRecord, call: HashCall, stepOptions: StepOptions | undefined): Promise<StepResult> {
    checkRecord(record);
    if (!isAtSavePoint(record)) throw new SingpassFlowsError('STATE_INVALID', `No hash submission to resume: the session is ${record.state.status}`, { retryable: false });
    return (await expiredNow(record, stepOptions, 'submitHash')) ?? submitHash(on('submitHash'), record, call, stepOptions);
  }

  /** Past the deadline no event can come any more: the session expires (what it held goes with it), nothing is sent. */
  async function expiredNow(record: SessionRecord, stepOptions: StepOptions | undefined, trigger: SessionTrigger): Promise<StepResult | undefined> {
    const expired = expireOn(record, trigger);
    if (expired.record === record) return undefined;
    await say(stepOptions, { step: 'ended', status: expired.record.state.status, error: expired.record.error });
    return expired;
  }

  const ctx: StepContext = {
    config, clock, certificates, finishWindowMs,
    expire: (record) => engine.expire(record),
    deadline: (record) => engine.deadline(record),
  };
  /** The steps' context for a step that `trigger` led to (its moves are checked against that row of the table). */
  const on = (trigger: SessionTrigger): StepContext => ({ ...ctx, trigger, expire: (record) => expireOn(record, trigger) });

  /** How far a certificate event goes: the whole step (the hash sent), or to the save point (a later step sends it). */
  interface CertificateRun {
    /** `pdfHash`: the running SHA-256 of `pdf` from the document check, reused by prepare. */
    fromClaim(c: StepContext, claimed: SessionRecord, event: CertificateEvent, pdf: Buffer, options: StepOptions | undefined, pdfHash: Hash): Promise<StepResult>;
    atSavePoint(c: StepContext, record: SessionRecord, options: StepOptions | undefined): Promise<StepResult>;
  }
  const WHOLE_STEP: CertificateRun = {
    fromClaim: (c, claimed, event, pdf, options, pdfHash) => certificateStep(c, claimed, event, pdf, options, pdfHash),
    atSavePoint: (c, record, options) => submitHash(c, record, 'afterInterruption', options),
  };
  const TO_SAVE_POINT: CertificateRun = {
    fromClaim: (c, claimed, event, pdf, options, pdfHash) => prepareStep(c, claimed, event, pdf, options, pdfHash),
    atSavePoint: async (_c, record) => ({ record }),
  };

  const engine: SigningEngine = {
    config,
    verifier,

    async start(pdf, input, stepOptions) {
      if (!input || typeof input !== 'object') throw invalidInput('input', 'expected { documentName, level? }');
      const documentName = checkDocumentName(input.documentName);
      checkSignatureText('reason', input.reason);
      checkSignatureText('location', input.location);
      const onBehalfOf = checkOnBehalfOf(input.onBehalfOf);
      const signer = checkSignerPlace(input.signer);
      const appLink = checkAppLink(input.appLink);
      const appearance = checkSessionAppearance(input.appearance);
      const level = input.level ?? 'B-LTA';
      if (!PADES_LEVELS.includes(level)) throw invalidInput('level', `must be one of ${PADES_LEVELS.join(', ')}`);
      if (level !== 'B-B' && !config.tsaUrl) throw invalidInput('tsaUrl', `is required for level ${level} (a signature timestamp); set the TSA URL or choose B-B`);
      // Everything that can be refused about the PDF is refused now, before the user is asked to scan.
      checkSignablePdf(pdf);
      const clientNotificationToken = tokens.issue();
      const challengeCode = generateChallengeCode();
      const session = await config.client.createSession({ clientNotificationToken, tenantId: config.tenantId });
      const record = created({
        format: 'singpass-flows/signing-session@1',
        state: newSigningSessionState(session, { challengeCode, clientNotificationToken }, clock),
        request: {
          documentName, level, ...(input.reason !== undefined ? { reason: input.reason } : {}), ...(input.location !== undefined ? { location: input.location } : {}),
          ...(onBehalfOf ? { onBehalfOf } : {}), ...(signer ? { signer } : {}), ...(appLink ? { appLink } : {}), ...(appearance ? { appearance } : {}),
        },
        document: { length: pdf.length, sha256: sha256(pdf) },
      });
      const started: SessionStarted = {
        record, signRef: session.signRef, qrPayload: session.qrPayload, challengeCode, expiresAt: session.expiresAt,
        ...(session.qrLogo ? { qrLogo: session.qrLogo } : {}),
      };
      await say(stepOptions, { step: 'created', signRef: session.signRef, qrPayload: session.qrPayload, challengeCode, expiresAt: session.expiresAt });
      return started;
    },

    async checkDelivery(request, expectedToken?: WebhookRequest['expectedToken']) {
      const bearer = readBearer(request?.headers ?? {});
      // Stateless: any Bearer this DSAP issued passes here; the session binding is checked where the record is.
      const ours = bearer !== undefined && tokens.isIssued(bearer) ? bearer : '';
      const r = await verifier.handle({ headers: request?.headers ?? {}, body: request?.body, expectedToken: expectedToken ?? ours });
      if (r.error) return { response: r.response, duplicate: false, error: r.error };
      return { response: r.response, duplicate: r.duplicate, delivery: { event: r.event!, notificationToken: bearer! } };
    },

    async applyDelivery(record, delivery, pdf, stepOptions) {
      bind(record, delivery);
      if (eventStanding(record, delivery.event) === 'taken') return { record, duplicate: true };
      const e = delivery.event;
      if (e.type === 'certificate') return engine.acceptCertificate(record, delivery, pdf, stepOptions);
      if (e.type === 'signature') return engine.acceptSignature(record, delivery, stepOptions);
      return failByService(record, e, stepOptions);
    },

    async recordDelivery(record, delivery, stepOptions) {
      bind(record, delivery);
      const e = delivery.event;
      const standing = eventStanding(record, e);
      if (standing === 'taken') return { record, duplicate: true };
      // claimed or at the save point: the step the claim started carries on from the record (nextStep)
      if (standing === 'midStep') return { record };
      if (e.type === 'certificate') return { record: claim(record, e) };
      if (e.type === 'signature') return engine.acceptSignature(record, delivery, stepOptions);
      return failByService(record, e, stepOptions);
    },

    acceptCertificate: (record, delivery, pdf, stepOptions) => certificateEvent(record, delivery, pdf, stepOptions, WHOLE_STEP),

    prepareCertificate: (record, delivery, pdf, stepOptions) => certificateEvent(record, delivery, pdf, stepOptions, TO_SAVE_POINT),

    async continueCertificate(record, pdf, stepOptions) {
      return continueClaim(record, pdf, stepOptions, WHOLE_STEP, 'continueCertificate');
    },

    resumeSubmission: (record, stepOptions) => fromSavePoint(record, 'next', stepOptions),

    resubmitHash: (record, stepOptions) => fromSavePoint(record, 'afterInterruption', stepOptions),

    async acceptSignature(record, delivery, stepOptions) {
      bind(record, delivery);
      if (eventStanding(record, delivery.event) === 'taken') return { record, duplicate: true };
      const event = delivery.event as SignatureEvent;
      if (event.type !== 'signature') throw new SingpassFlowsError('STATE_INVALID', `Expected a signature event, got ${event.type}`, { retryable: false });
      // A signature over the save point's hash proves the hash got through (a process died before recording it).
      const base = isAtSavePoint(record) && event.documentHash === record.submitting!.documentHash ? hashSubmitted(on('signature'), record) : record;
      // Refuses a signature before a hash, or over another hash (record untouched).
      const out = advance(base, 'acceptSignature', { ...base, state: applySigningEvent(base.state, event, clock) }, clock, 'signature');
      await say(stepOptions, { step: 'signature', event });
      return { record: out };
    },

    async finish(record, pdf, stepOptions) {
      return finishSession(on('finish'), record, pdf, stepOptions, checkDocument);
    },

    async certificateStatus(certificate) {
      let der: Buffer | undefined;
      try {
        der = typeof certificate === 'string' && !certificate.includes('-----BEGIN') ? Buffer.from(certificate.trim(), 'base64') : certsFromPemOrDer(certificate)[0];
      } catch {
        der = undefined;
      }
      if (!der || der.length === 0) throw invalidInput('certificate', 'is not an X.509 certificate (PEM, DER or base64 DER)');
      return certificates.report(der);
    },

    expire: (record) => expireOn(record, 'expire'),

    deadline(record) {
      checkRecord(record);
      return signingSessionDeadline(record.state, scanExtensionSeconds) * 1000;
    },
  };

  /** The session past its deadline expires (what it held goes with it); the record unchanged before the deadline. */
  function expireOn(record: SessionRecord, trigger: SessionTrigger): StepResult {
    checkRecord(record);
    const state = expireSigningSession(record.state, clock, { scanExtensionSeconds });
    if (state === record.state) return { record };
    return {
      record: advance(record, 'expire', {
        ...withoutSessionData(record), state,
        error: { code: 'SESSION_EXPIRED', message: `The signing session expired at ${new Date(engine.deadline(record)).toISOString()} before the user ${record.state.status === 'waiting_for_scan' ? 'scanned the QR code' : 'approved'}; start a new session` },
      }, clock, trigger),
    };
  }
  return engine;
}
