import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { invalidInput, isSingpassFlowsError } from '../errors';
import { temporaryWebhookFailure, type WebhookRequest, type WebhookResponse } from '../sign/webhook';
import type { ValidationDataSummary } from '../pades/ltv';
import type { PdfVerificationReport } from '../pades/verify';
import type { SigningEngine } from './engine';
import { isAtSavePoint, isCertificateClaimed, isFinishDeferred, isSessionEnded, isSigningOver, isSubmitDeferred, nextStep } from './next-step';
import { MemorySessionStore, type SessionStore } from './store';
import type { SessionRecord, SessionStarted, SessionStep, StartSessionInput, StepOptions, VerifiedDelivery } from './types';
import { acknowledgeHandOver, recordEvent, reportHandOverFailure, runDueStep, runStepNow, type DueStepResult, type HandOverItem } from './driver';
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
  const timers = new Map<string, NodeJS.Timeout>();
  /** Retries after a temporary failure (the saved hash resubmitted; finishing run again), by sign_ref. */
  const retries = new Map<string, NodeJS.Timeout>();
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

  const settle = async (record: SessionRecord, extra: Omit<SessionOutcome, 'record'> = {}): Promise<void> => {
    const signRef = record.state.signRef;
    clearTimeout(timers.get(signRef));
    timers.delete(signRef);
    clearTimeout(retries.get(signRef));
    retries.delete(signRef);
    await store.deleteDocument(signRef); // the input PDF is not kept once the session ended
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

  const arm = (record: SessionRecord): void => {
    const signRef = record.state.signRef;
    clearTimeout(timers.get(signRef));
    const at = engine.deadline(record);
    if (closed || !Number.isFinite(at)) return;
    // +1 s: expiry is decided in whole seconds, so fire just after the deadline is certainly past.
    const t = setTimeout(() => void enqueue(signRef, () => expireNow(signRef)), Math.min(Math.max(0, at - Date.now()) + 1000, 2 ** 31 - 1));
    t.unref?.();
    timers.set(signRef, t);
  };

  const expireNow = async (signRef: string): Promise<void> => {
    const r = await runDueStep(engine, store, signRef, { only: ['expire'] });
    if (!r.record || (r.action === 'none' && isSessionEnded(r.record))) return;
    if (r.action === 'none') return arm(r.record); // not yet (e.g. the deadline moved after the scan)
    if (r.lost) return expireNow(signRef);
    await stepOptions(signRef).onStep!({ step: 'ended', status: r.record.state.status, error: r.record.error });
    await settle(r.record);
  };

  const finishNow = (record: SessionRecord): Promise<void> => {
    const run = finishing.then(() => finishOne(record));
    finishing = run.catch(() => undefined);
    return run;
  };
  const finishOne = async (record: SessionRecord): Promise<void> => {
    const signRef = record.state.signRef;
    await yieldToCertificates();
    const narrate = stepOptions(signRef);
    // The driver stores the signed PDF before the record says finished (a crash in between finishes again).
    const f = await runStepNow(engine, store, signRef, {
      only: ['finish'], policy,
      stepOptions: {
        onStep: async (step) => {
          await narrate.onStep!(step);
          await yieldToCertificates();
        },
      },
    });
    // not signed any more, another process owns this session's document, or another process saved first
    if (f.action === 'none' || f.documentMissing || f.lost || !f.record) return;
    // A finishing stage failed temporarily (TSA, OCSP…): the signature stays in the stored record; run it again later.
    if (isFinishDeferred(f.record)) return retryLater(f.record);
    await settle(f.record, { ...(f.pdf ? { pdf: f.pdf } : {}), ...(f.report ? { report: f.report } : {}), ...(f.validationData ? { validationData: f.validationData } : {}) });
    if (f.handOver) await handOver(f.handOver, f.record);
  };

  /** The signed PDF to the flow's storage; acknowledged once stored there, else handed over again later. */
  const handOver = async (item: HandOverItem, handing: SessionRecord): Promise<void> => {
    let stored: void | boolean;
    try {
      stored = await options.onHandOver?.(item);
    } catch (e) {
      const failed = await reportHandOverFailure(store, item.signRef, { code: isSingpassFlowsError(e) ? e.code : 'HANDOVER_FAILED', message: (e as Error)?.message ?? String(e) }, { policy });
      await stepOptions(item.signRef).onStep!({ step: 'handOverFailed', attempt: item.attempt, code: failed.record?.handOver?.lastFailure?.code ?? 'HANDOVER_FAILED' });
      if (failed.record && sessionPhase(failed.record) === 'handingOver') retryLater(failed.record);
      return;
    }
    // acknowledged by someone else meanwhile, or handed over again when its lease passes
    if (stored === false) return retryLater(handing);
    const done = await acknowledgeHandOver(store, item.signRef);
    if (done.moved) await stepOptions(item.signRef).onStep!({ step: 'delivered', attempt: item.attempt });
  };

  /** A finished session whose hand-over is due (the last one unacknowledged past its lease): hand it over again. */
  const handOverStored = async (signRef: string): Promise<void> => {
    const r = await runStepNow(engine, store, signRef, { only: ['handOver'], policy });
    if (r.action === 'none' || r.lost || !r.record) return;
    if (r.handOver) return handOver(r.handOver, r.record);
    if (r.documentMissing) return;
    if (sessionPhase(r.record) === 'undelivered') await stepOptions(signRef).onStep!({ step: 'undelivered', code: r.record.handOver?.undelivered?.code ?? 'HANDOVER_UNACKNOWLEDGED' });
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
        await certificates.withSlot(() => continueClaimed(signRef));
      } finally {
        continuing.delete(signRef);
        certificates.done();
      }
    }));
  };
  /** Chain, OCSP, prepare, save point, hash: loaded fresh, saved with compare-and-set (another process may have won). */
  const continueClaimed = async (signRef: string): Promise<void> => {
    // Saved at the save point before the hash call, and after the step (the driver).
    return moved(await runStepNow(engine, store, signRef, { only: ['continueCertificate'], stepOptions: stepOptions(signRef) }));
  };

  /**
   * Before the 200: what the event says goes into the store (certificate: the claim, cheap, no outbound call;
   * signature and error: the new state). The service's duplicate flag (an in-memory log) is not trusted for that: a
   * delivery answered 503 comes back flagged; the stored record says whether the event is already in. Throws when
   * the store fails (answered 503: the service retries).
   */
  const receive = async (delivery: VerifiedDelivery): Promise<void> => {
    const signRef = delivery.event.signRef;
    const r = await recordEvent(engine, store, delivery, stepOptions(signRef));
    if (r.refused !== undefined) {
      // The event does not fit the session (e.g. it already ended): acknowledged and dropped, the session untouched.
      const e = r.refused;
      refused({ signRef, code: isSingpassFlowsError(e) ? e.code : 'WEBHOOK_HANDLER_FAILED', message: (e as Error)?.message ?? String(e), status: 200 });
      return;
    }
    if (r.moved) return received(r.record!);
    // claimed before a restart: the replay continues it
    if (r.record && isCertificateClaimed(r.record)) continueLater(signRef);
  };

  /** The event is stored: the rest happens behind the answer. */
  const received = (record: SessionRecord): void => {
    const signRef = record.state.signRef;
    if (isCertificateClaimed(record)) {
      arm(record); // the deadline moved with the scan
      return continueLater(signRef);
    }
    if (record.state.status === 'signed') {
      setImmediate(() => void enqueue(signRef, async () => {
        const stored = await store.get(signRef);
        if (stored?.state.status === 'signed') await finishNow(stored);
      }));
      return;
    }
    if (isSessionEnded(record)) setImmediate(() => void enqueue(signRef, () => settle(record)));
  };

  /** After the driver ran a certificate or hash step: what comes next here. */
  const moved = async (r: DueStepResult): Promise<void> => {
    // not due any more (another process moved it on), or another process owns this session's document
    if (r.action === 'none' || r.documentMissing || !r.record) return;
    const record = r.record;
    if (r.lost) {
      // The signature (saved at once by the webhook) or an error event got there first: nothing was lost.
      if (record.state.status === 'signed' || isSessionEnded(record)) return;
      refused({ signRef: record.state.signRef, code: 'STATE_INVALID', message: 'the session record changed meanwhile (another process); event dropped', status: 200 });
      return;
    }
    if (record.state.status === 'signed') return finishNow(record);
    if (isSessionEnded(record)) return settle(record);
    arm(record);
    if (isSubmitDeferred(record)) retryLater(record);
  };

  /** A stored `signed` record (a finishing retry, or a restart): finish it if nothing else did meanwhile. */
  const finishStored = async (signRef: string): Promise<void> => {
    const stored = await store.get(signRef);
    if (stored?.state.status === 'signed') await finishNow(stored);
  };

  /**
   * A step failed temporarily: at the time the session's next step is due (`nextStep`: the engine's backoff in
   * `retryAt`), resubmit the SAME saved hash, or finish the signed session again.
   */
  const retryLater = (record: SessionRecord): void => {
    const signRef = record.state.signRef;
    clearTimeout(retries.get(signRef));
    if (closed) return;
    const due = nextStep(record, { scanExtensionSeconds: engine.config.scanExtensionSeconds });
    const work = due.action === 'finish' ? () => finishStored(signRef) : due.action === 'handOver' ? () => handOverStored(signRef) : () => resubmit(signRef);
    const t = setTimeout(() => {
      retries.delete(signRef);
      void enqueue(signRef, work);
    }, Math.min(Math.max(0, due.at - Date.now()), 2 ** 31 - 1));
    t.unref?.();
    retries.set(signRef, t);
  };

  /**
   * A record left at the save point (a process died around the hash call, or the call failed temporarily): send the
   * same hash again. Loaded fresh and saved with compare-and-set, so a record another process moved on is left alone.
   */
  const resubmit = async (signRef: string): Promise<void> => {
    // Saved with the call counted before it leaves (compare-and-set: another process resubmitting loses, sends nothing).
    return moved(await runStepNow(engine, store, signRef, { only: ['submitHash'], stepOptions: stepOptions(signRef) }));
  };

  const takeOverAfterMs = options.takeOverAfterMs ?? policy.takeOverIdleMs;
  if (options.sweepIntervalMs !== undefined && !(options.sweepIntervalMs >= 100)) throw invalidInput('sweepIntervalMs', 'must be at least 100 (milliseconds), or left out');
  if (!(takeOverAfterMs >= 0)) throw invalidInput('takeOverAfterMs', 'must be 0 or more milliseconds');
  /** Sessions this process is at work on or has scheduled (a sweep leaves them alone). */
  const busyHere = (signRef: string): boolean => queues.busy(signRef) || continuing.has(signRef) || retries.has(signRef);
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
      switch (due.action) {
        case 'continueCertificate': continueLater(signRef); break;
        case 'submitHash': void enqueue(signRef, () => resubmit(signRef)); break;
        case 'finish': void enqueue(signRef, () => finishStored(signRef)); break;
        case 'handOver': void enqueue(signRef, () => handOverStored(signRef)); break;
        case 'expire': void enqueue(signRef, () => expireNow(signRef)); break;
        case 'forget': break; // ended records are the store's clean-up
      }
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
      arm(s.record);
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
        // Due now, or at the backoff's retryAt after a temporary failure (the one rule: nextStep).
        if (sessionPhase(record) === 'handingOver') {
          retryLater(record);
          continue;
        }
        waiter(signRef);
        if (isFinishDeferred(record) || isSubmitDeferred(record)) {
          arm(record);
          retryLater(record);
        } else if (record.state.status === 'signed') void enqueue(signRef, () => finishNow(record));
        else if (isAtSavePoint(record)) void enqueue(signRef, () => resubmit(signRef));
        else {
          arm(record);
          if (isCertificateClaimed(record)) continueLater(signRef);
        }
      }
      return n;
    },

    async acknowledge(signRef) {
      return (await acknowledgeHandOver(store, signRef)).record;
    },

    async close() {
      closed = true;
      if (sweeper) clearInterval(sweeper);
      retention?.stop();
      adaptive?.stop();
      for (const t of [...timers.values(), ...retries.values()]) clearTimeout(t);
      timers.clear();
      retries.clear();
      await queues.drained();
    },
  };
}
