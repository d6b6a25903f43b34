import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { invalidInput, isSingpassFlowsError } from '../errors';
import { temporaryWebhookFailure, type WebhookRequest, type WebhookResponse } from '../sign/webhook';
import type { ValidationDataSummary } from '../pades/ltv';
import type { PdfVerificationReport } from '../pades/verify';
import type { SigningEngine } from './engine';
import { isCertificateClaimed, isSessionEnded, isSigningOver, nextStep, type SessionAction } from './next-step';
import { MemorySessionStore, type SessionStore } from './store';
import type { SessionRecord, SessionStarted, SessionStep, StartSessionInput, StepOptions, VerifiedDelivery } from './types';
import type { HandOverItem } from './driver';
import { step, type NamedStep, type StepOutcome, type StepTrigger } from './step';
import { sessionPolicy, type SessionPolicy } from './policy';
import { sessionPhase } from './transitions';
import { receiveDelivery } from './front-door';
import { createCertificateGate } from './runner-parts/certificate-gate';
import { createSessionQueues } from './runner-parts/session-queues';
import { LOOP_DELAY_LIMIT_DEFAULTS, createLoopDelayLimit } from './runner-parts/loop-delay-limit';
import { startRetention } from './runner-parts/retention';

/** How a session run by the runner ended. */
export interface SessionOutcome {
  record: SessionRecord;
  /** The signed PDF (at `record.result.level`), when a signature was embedded. */
  pdf?: Buffer;
  /** `report.newest` is OUR signature's verdict (see `FinishResult`). */
  report?: PdfVerificationReport;
  /** B-LT/B-LTA: validation data per signature; what others' earlier signatures could not get (see `FinishResult`). */
  validationData?: ValidationDataSummary;
}

export interface SessionRunnerOptions {
  engine: SigningEngine;
  /** Default: in memory. */
  store?: SessionStore;
  /** Every step of every session (narration, metrics, Node-RED status). Errors thrown here are ignored. */
  onStep?: (signRef: string, step: SessionStep) => void | Promise<void>;
  /** Every session's end of signing (finished, failed, expired), with the signed PDF when there is one. */
  onEnded?: (outcome: SessionOutcome) => void | Promise<void>;
  /**
   * Where a finished session's signed PDF goes (a folder, an upload): resolve once it is stored there, and the
   * session ends completed; reject, and it is handed over again after a backoff (the failure kept in the record);
   * resolve `false` when something else acknowledges it later (`acknowledge`, e.g. an application's download).
   * Called at least once per session, again (same bytes, same file name) when an earlier call's process died before
   * the acknowledgement was saved, until the hand-over window closes (the session then ends undelivered). Without
   * it the signed PDF is acknowledged as soon as it is stored: the caller takes it from `outcome()` or the store.
   */
  onHandOver?: (item: HandOverItem) => Promise<void | boolean>;
  /** The session policy where a deployment changes it (hand-over lease and window); default SESSION_POLICY. */
  policy?: Partial<SessionPolicy>;
  /** Every delivery the runner refused or ignored (log-safe), e.g. for a security log. */
  onRefused?: (info: { signRef?: string; code: string; message: string; status: number }) => void;
  /** A sweep that could not read the store (it is tried again at the next interval); errors thrown here are ignored. */
  onSweepFailed?: (info: { code: string; message: string }) => void;
  /**
   * Certificate events (chain, OCSP, prepare, hash call) worked on at once; later ones wait in arrival order.
   * Default: sized by this process's event-loop delay (`runner-parts/loop-delay-limit.ts`), from 4 up while the loop
   * stays responsive, halved when it lags, so a burst of scans overlaps its OCSP, store and hash-call waits without
   * starving the webhook answers. A number fixes it (`Infinity`: no limit).
   */
  certificateConcurrency?: number;
  /**
   * Several runner processes over one shared store (PostgreSQL) behind one webhook URL: every `sweepIntervalMs` each
   * looks for stored sessions whose next step is due (`nextStep`) and that no process took care of — the one that
   * started or received them died, or its timers were lost — and does it (compare-and-set decides if two try).
   * Default: off (one process: its own timers and `resume()` after a restart are enough).
   */
  sweepIntervalMs?: number;
  /**
   * How long a session in the middle of a step (claimed, at the save point, signed) is left to the process working on
   * it before a sweep takes it over as abandoned. Default `SESSION_POLICY.takeOverIdleMs` (45 s, the same in every
   * front end): longer than a step takes (the hash call's timeout and retry, a finishing run), short enough that the
   * user at the phone does not give up.
   */
  takeOverAfterMs?: number;
  /**
   * Long-running runners (`serve`): every `cleanUpIntervalMs`, and once at start, the store deletes the sessions that
   * ended `retentionMs` ago or more, with their PDFs (its `cleanUp`; stores without one are left alone). Default: off.
   */
  cleanUpIntervalMs?: number;
  /** How long an ended session is kept. Default `SESSION_POLICY.retentionMs` (7 days, the same in every front end). */
  retentionMs?: number;
  /** The clean-up deleted ended sessions. */
  onCleanedUp?: (info: { deleted: number }) => void;
  /** The clean-up could not reach the store (tried again at the next interval). */
  onCleanUpFailed?: (info: { code: string; message: string }) => void;
}

/**
 * Many sessions behind ONE webhook URL, for long-running front ends (CLI, the bench): routes verified events by
 * sign_ref to their session, saves what the event says in the store (a certificate: the claim; a signature or an
 * error: its effect) BEFORE answering 200 (a 200 is final: the service never resends it), then does the slow part
 * behind the answer (one session's work at a time), expires sessions at their deadline, and is idempotent under
 * duplicate deliveries (a second copy of an event is acknowledged and dropped: never a second hash).
 */
export interface SessionRunner {
  /** Preflight + create-session (see `SigningEngine.start`); the runner then drives the session to its end. */
  start(pdf: Buffer, input: StartSessionInput): Promise<SessionStarted>;
  /**
   * Handle one POST to the webhook URL; resolve with the HTTP answer to send. Never throws. A verified event is in the
   * store when this resolves with 200; a store that fails gets 503 (the service retries).
   */
  handleWebhook(request: Pick<WebhookRequest, 'headers' | 'body'>): Promise<WebhookResponse>;
  /**
   * Resolves when the session ends (completed, failed or expired); never rejects. The signed PDF is kept for this
   * call for 60 s after the end (or take it from `onEnded`); later calls get the stored record only.
   */
  outcome(signRef: string): Promise<SessionOutcome>;
  /**
   * Pick up unfinished sessions from the store (after a restart): re-arm their expiry, finish the signed ones,
   * continue the certificate step of those claimed but not prepared (acknowledged, then the process died: chain,
   * OCSP, prepare, save point, hash), and resubmit the saved hash of those a crash (or a temporary failure of the
   * hash call) left at the save point before the hash call (never a new hash; a temporary failure again is retried
   * with backoff until the deadline).
   */
  resume(): Promise<number>;
  /** The flow stored the session's signed PDF (for a front end whose storage acknowledges later, e.g. an HTTP call). */
  acknowledge(signRef: string): Promise<SessionRecord | undefined>;
  /**
   * Do what is due for stored sessions no one here is working on (see `sweepIntervalMs`); resolves with how many were
   * taken up. Also called by the interval when `sweepIntervalMs` is set.
   */
  sweep(): Promise<number>;
  /** Stop timers (sessions stay in the store). */
  close(): Promise<void>;
}

const RETAIN_OUTCOME_MS = 60_000;

export function createSessionRunner(options: SessionRunnerOptions): SessionRunner {
  const { engine } = options;
  const store: SessionStore = options.store ?? new MemorySessionStore();
  const policy = sessionPolicy(options.policy);
  // the user at the phone first (certificate-gate.ts); each session's work in order (session-queues.ts)
  const adaptive = options.certificateConcurrency === undefined
    ? createLoopDelayLimit({ ...LOOP_DELAY_LIMIT_DEFAULTS, saturated: () => certificates.queued() > 0 })
    : undefined;
  const certificates = createCertificateGate(adaptive ?? options.certificateConcurrency!);
  const yieldToCertificates = (): Promise<void> => certificates.yieldTo();
  /** Finishing runs one session at a time (the heavy part), behind certificates. */
  let finishing: Promise<void> = Promise.resolve();
  /** Each session's next step here, by sign_ref: its timer and what it will do. */
  const timers = new Map<string, NodeJS.Timeout>();
  const planned = new Map<string, SessionAction>();
  const waiting = new Map<string, { promise: Promise<SessionOutcome>; resolve: (o: SessionOutcome) => void }>();
  let closed = false;

  const refused = (info: { signRef?: string; code: string; message: string; status: number }): void => {
    try {
      options.onRefused?.(info);
    } catch {
      // a logging hook must not break the webhook
    }
  };
  const stepOptions = (signRef: string): StepOptions => ({
    onStep: async (step) => {
      try {
        await options.onStep?.(signRef, step);
      } catch {
        // narration failures never change a session
      }
    },
  });

  const waiter = (signRef: string) => {
    let w = waiting.get(signRef);
    if (!w) {
      let resolve!: (o: SessionOutcome) => void;
      const promise = new Promise<SessionOutcome>((r) => (resolve = r));
      w = { promise, resolve };
      waiting.set(signRef, w);
    }
    return w;
  };

  const queues = createSessionQueues((signRef, e) => {
    refused({ signRef, code: isSingpassFlowsError(e) ? e.code : 'WEBHOOK_HANDLER_FAILED', message: (e as Error)?.message ?? String(e), status: 200 });
  });
  const enqueue = (signRef: string, work: () => Promise<void>): Promise<void> => queues.enqueue(signRef, work);

  /** Save with compare-and-set; false when another writer changed the record meanwhile. */
  const save = async (record: SessionRecord, expected: number | undefined): Promise<boolean> => store.put(record, expected);

  /** Signing is over (finished, failed, expired): outcome() and onEnded hear of it (`step` removed the PDF being signed). */
  const settle = async (record: SessionRecord, extra: Omit<SessionOutcome, 'record'> = {}): Promise<void> => {
    const signRef = record.state.signRef;
    const outcome = { record, ...extra };
    waiter(signRef).resolve(outcome);
    const t = setTimeout(() => waiting.delete(signRef), RETAIN_OUTCOME_MS);
    t.unref?.();
    try {
      await options.onEnded?.(outcome);
    } catch {
      // the session has ended either way
    }
  };

  /**
   * THE runner's one rule: after every change of a stored record, its next step is the one `nextStep` names, at the
   * time it names (the transitions table's due triggers: continue a claimed certificate, resend the saved hash,
   * finish, hand over, expire). One timer per session; the driver runs the step and the table checks the move.
   */
  const plan = (record: SessionRecord): void => {
    const signRef = record.state.signRef;
    clearTimeout(timers.get(signRef));
    timers.delete(signRef);
    planned.delete(signRef);
    if (closed || isSessionEnded(record)) return;
    const next = nextStep(record, { scanExtensionSeconds: engine.config.scanExtensionSeconds });
    if (!Number.isFinite(next.at)) return;
    // +1 s for expiry: it is decided in whole seconds, so fire just after the deadline is certainly past.
    const delay = Math.max(0, next.at - Date.now()) + (next.action === 'expire' ? 1000 : 0);
    if (delay === 0) return take(signRef, next.action);
    const t = setTimeout(() => {
      timers.delete(signRef);
      planned.delete(signRef);
      take(signRef, next.action);
    }, Math.min(delay, 2 ** 31 - 1));
    t.unref?.();
    timers.set(signRef, t);
    planned.set(signRef, next.action);
  };

  /** Run `action` on the stored session behind its earlier work: certificates through their gate, finishing one at a time. */
  const take = (signRef: string, action: SessionAction): void => {
    if (action === 'forget') return; // ended records are the store's clean-up
    if (action === 'continueCertificate') return continueLater(signRef);
    void enqueue(signRef, () => (action === 'finish' ? finishNow(signRef) : runAction(signRef, action)));
  };

  /** The one entry point, with this runner's policy and narration. */
  const stepOn = (signRef: string, trigger: StepTrigger, onStep = stepOptions(signRef).onStep): Promise<StepOutcome> => step(store, signRef, trigger, { engine, policy, ...(onStep ? { onStep } : {}) });

  const runAction = async (signRef: string, action: NamedStep): Promise<void> => {
    // the planned step, if it is still what the record's phase calls for: loaded, run, saved with compare-and-set
    return after(await stepOn(signRef, { on: action }));
  };

  const finishNow = (signRef: string): Promise<void> => {
    const run = finishing.then(() => finishOne(signRef));
    finishing = run.catch(() => undefined);
    return run;
  };
  const finishOne = async (signRef: string): Promise<void> => {
    await yieldToCertificates();
    const narrate = stepOptions(signRef);
    // The driver stores the signed PDF before the record says finished (a crash in between finishes again).
    return after(await stepOn(signRef, { on: 'finish' }, async (s) => {
      await narrate.onStep!(s);
      await yieldToCertificates();
    }));
  };

  /** What a step the driver ran leads to here: signing over (settled), a hand-over, or the next step planned. */
  const after = async (r: StepOutcome): Promise<void> => {
    // not due any more (another process moved it on), or another process owns this session's document
    if (r.action === 'none' || r.documentMissing || !r.record) return;
    const record = r.record;
    const signRef = record.state.signRef;
    if (r.lost) {
      // The signature (saved at once by the webhook) or an error event got there first: nothing was lost.
      if (isSigningOver(record) || sessionPhase(record) === 'signed') return;
      if (r.action === 'continueCertificate' || r.action === 'submitHash') refused({ signRef, code: 'STATE_INVALID', message: 'the session record changed meanwhile (another process); event dropped', status: 200 });
      return;
    }
    if (r.action === 'expire') await stepOptions(signRef).onStep!({ step: 'ended', status: record.state.status, error: record.error });
    if (r.action === 'handOver' && sessionPhase(record) === 'undelivered') await stepOptions(signRef).onStep!({ step: 'undelivered', code: record.handOver?.undelivered?.code ?? 'HANDOVER_UNACKNOWLEDGED' });
    // signing just ended (a hand-over only repeats one): the outcome, the PDF being signed deleted
    if (r.signingEnded) {
      await settle(record, { ...(r.pdf ? { pdf: r.pdf } : {}), ...(r.report ? { report: r.report } : {}), ...(r.validationData ? { validationData: r.validationData } : {}) });
    }
    if (r.handOver) return handOver(r.handOver, record);
    plan(record);
  };

  /** The signed PDF to the flow's storage; acknowledged once stored there, else handed over again later. */
  const handOver = async (item: HandOverItem, handing: SessionRecord): Promise<void> => {
    let stored: void | boolean;
    try {
      stored = await options.onHandOver?.(item);
    } catch (e) {
      const failed = await stepOn(item.signRef, { on: 'handOverFailed', failure: { code: isSingpassFlowsError(e) ? e.code : 'HANDOVER_FAILED', message: (e as Error)?.message ?? String(e) } });
      await stepOptions(item.signRef).onStep!({ step: 'handOverFailed', attempt: item.attempt, code: failed.record?.handOver?.lastFailure?.code ?? 'HANDOVER_FAILED' });
      if (failed.record) plan(failed.record);
      return;
    }
    // acknowledged by someone else meanwhile, or handed over again when its lease passes
    if (stored === false) return plan(handing);
    const done = await stepOn(item.signRef, { on: 'acknowledge' });
    if (done.moved) await stepOptions(item.signRef).onStep!({ step: 'delivered', attempt: item.attempt });
    if (done.record) plan(done.record);
  };

  /** Sessions whose claimed certificate is scheduled to be continued here (a replay or resume() adds no second run). */
  const continuing = new Set<string>();
  /** A claimed certificate: continue it behind the session's earlier work, a few certificates at a time. */
  const continueLater = (signRef: string): void => {
    if (continuing.has(signRef)) return;
    continuing.add(signRef);
    certificates.pending();
    // After the answer is on its way (the work's first steps would otherwise run before it, hashing the PDF).
    setImmediate(() => void enqueue(signRef, async () => {
      try {
        // Chain, OCSP, prepare, save point (saved before the hash call), hash: loaded fresh, compare-and-set.
        await certificates.withSlot(() => runAction(signRef, 'continueCertificate'));
      } finally {
        continuing.delete(signRef);
        certificates.done();
      }
    }));
  };

  /**
   * Before the 200: what the event says goes into the store (certificate: the claim, cheap, no outbound call;
   * signature and error: the new state). The service's duplicate flag (an in-memory log) is not trusted for that: a
   * delivery answered 503 comes back flagged; the stored record says whether the event is already in. Throws when
   * the store fails (answered 503: the service retries).
   */
  const receive = async (delivery: VerifiedDelivery): Promise<void> => {
    const signRef = delivery.event.signRef;
    const r = await stepOn(signRef, { on: 'event', delivery });
    if (r.refused !== undefined) {
      // The event does not fit the session (e.g. it already ended): acknowledged and dropped, the session untouched.
      const e = r.refused;
      refused({ signRef, code: isSingpassFlowsError(e) ? e.code : 'WEBHOOK_HANDLER_FAILED', message: (e as Error)?.message ?? String(e), status: 200 });
      return;
    }
    const record = r.record;
    if (!record) return;
    // The rest happens behind the answer, as the record's next step says (a copy of a claim left before a restart
    // continues it too). A copy that finds the record further on moves nothing here: the record is another
    // process's work (a shared store), whose sweep takes it over only once idle.
    if (r.signingEnded) setImmediate(() => void enqueue(signRef, () => settle(record)));
    else if (r.moved || isCertificateClaimed(record)) setImmediate(() => plan(record));
  };

  const takeOverAfterMs = options.takeOverAfterMs ?? policy.takeOverIdleMs;
  if (options.sweepIntervalMs !== undefined && !(options.sweepIntervalMs >= 100)) throw invalidInput('sweepIntervalMs', 'must be at least 100 (milliseconds), or left out');
  if (!(takeOverAfterMs >= 0)) throw invalidInput('takeOverAfterMs', 'must be 0 or more milliseconds');
  /** Sessions this process is at work on or has scheduled (a sweep leaves them alone). */
  // (a session merely waiting for its deadline here may still be taken over: another process may have moved it on)
  const busyHere = (signRef: string): boolean => queues.busy(signRef) || continuing.has(signRef) || (planned.has(signRef) && planned.get(signRef) !== 'expire');
  /** This process's name for the leases of a store that hands out due sessions (claimDue). */
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  /** Candidates for a sweep: the due sessions the store leased to us (an index, shared stores), or every record. */
  const sweepCandidates = async (): Promise<string[]> => {
    if (!store.claimDue) return store.list();
    const { due } = await store.claimDue({ owner, limit: 200 });
    return due.map((d) => d.signRef);
  };
  const sweep = async (): Promise<number> => {
    let n = 0;
    const now = Date.now();
    for (const signRef of await sweepCandidates()) {
      const record = closed || busyHere(signRef) ? undefined : await store.get(signRef);
      const due = record && !isSessionEnded(record) ? nextStep(record, { scanExtensionSeconds: engine.config.scanExtensionSeconds, idleMs: takeOverAfterMs }) : undefined;
      if (!due || due.at > now) {
        // Not taken up here (worked on here already, or not due by our take-over time): a lease this process would
        // hold while dying would keep the others off it for nothing.
        await store.releaseClaim?.(signRef, owner);
        continue;
      }
      n++;
      take(signRef, due.action);
    }
    return n;
  };
  let sweeping = false;
  const sweeper = options.sweepIntervalMs ? setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    sweep().catch((e: unknown) => {
      try {
        options.onSweepFailed?.({ code: isSingpassFlowsError(e) ? e.code : 'STORE_BUSY', message: (e as Error)?.message ?? String(e) });
      } catch {
        // a logging hook must not stop the next sweep
      }
    }).finally(() => { sweeping = false; });
  }, options.sweepIntervalMs) : undefined;
  sweeper?.unref?.();
  const retention = options.cleanUpIntervalMs !== undefined
    ? startRetention(store, {
      intervalMs: options.cleanUpIntervalMs, retentionMs: options.retentionMs ?? policy.retentionMs,
      ...(options.onCleanedUp ? { onCleaned: options.onCleanedUp } : {}),
      ...(options.onCleanUpFailed ? { onFailed: options.onCleanUpFailed } : {}),
    })
    : undefined;

  return {
    sweep,

    async start(pdf, input) {
      const s = await engine.start(pdf, input);
      const signRef = s.signRef;
      waiter(signRef);
      // Stored BEFORE anyone can scan: the first webhook may arrive as soon as the QR code is shown.
      await store.putDocument(signRef, pdf);
      await save(s.record, undefined);
      plan(s.record);
      await stepOptions(signRef).onStep!({ step: 'created', signRef, qrPayload: s.qrPayload, challengeCode: s.challengeCode, expiresAt: s.expiresAt });
      return s;
    },

    async handleWebhook(request) {
      // The one front door decides the answer of every edge (forgery, another session's token, unknown, ended, store).
      // The event goes into the record itself before the 200, so no delivery is kept apart here.
      const receipt = await receiveDelivery(engine, { get: (signRef) => store.get(signRef) }, request);
      if (receipt.verdict !== 'handOver' && receipt.verdict !== 'copy') {
        refused({ ...(receipt.record ? { signRef: receipt.record.state.signRef } : {}), code: receipt.error?.code ?? 'WEBHOOK_TOKEN_INVALID', message: receipt.error?.message ?? 'refused', status: receipt.response.status });
        return receipt.response;
      }
      try {
        // Stored before the 200 (a crash after the answer loses nothing: resume() continues a claimed certificate and
        // finishes a signed session); the slow part (chain, OCSP, prepare, hash; finishing) runs behind the answer.
        // Cheap on purpose: a store read and one compare-and-set write (the service gives up after 2 s). A copy of a
        // claimed certificate continues it (claimed before a restart).
        await receive(receipt.delivery!);
        return receipt.response;
      } catch (e) {
        // checkDelivery never throws; a failing store (lookup or saving the event) is our fault: 503, the service retries
        refused({ code: 'WEBHOOK_HANDLER_FAILED', message: (e as Error)?.message ?? String(e), status: 503 });
        return temporaryWebhookFailure();
      }
    },

    async outcome(signRef) {
      const stored = await store.get(signRef);
      if (stored && isSigningOver(stored) && !waiting.has(signRef)) return { record: stored };
      return waiter(signRef).promise;
    },

    async resume() {
      let n = 0;
      for (const signRef of await store.list()) {
        const record = await store.get(signRef);
        if (!record || isSessionEnded(record)) continue;
        n++;
        if (!isSigningOver(record)) waiter(signRef);
        // Due now, or at the backoff's retryAt after a temporary failure, or at the deadline (the one rule: nextStep).
        plan(record);
      }
      return n;
    },

    async acknowledge(signRef) {
      return (await stepOn(signRef, { on: 'acknowledge' })).record;
    },

    async close() {
      closed = true;
      if (sweeper) clearInterval(sweeper);
      retention?.stop();
      adaptive?.stop();
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      planned.clear();
      await queues.drained();
    },
  };
}
