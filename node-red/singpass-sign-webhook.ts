/**
 * "Signing webhook" in-node: serves the notification URL you registered on Node-RED's own HTTP server
 * (RED.httpNode). Each delivery goes through the core's front door (`receiveDelivery`, the same for the n8n trigger
 * and `serve`): Bearer issued by this DSAP and bound to the stored session, service JWT verified, kept in the session
 * store (written through to disk or PostgreSQL) and only then answered 200 — so a crash right after the answer loses
 * nothing (kept deliveries not yet applied are sent again when the flows start). The answer never waits for the rest
 * of the flow, and each edge gets the one answer docs/faults.md lists (200, 400 with the spec's error body, 503 when
 * the fault is ours or the session is not found yet: the service retries).
 * Certificate, signature and error events leave on three outputs; a repeated delivery never comes out twice.
 * With the PostgreSQL session store (several Node-RED instances behind one URL) the same holds across instances: the
 * store says which instance's copy of a delivery is fresh, and the sweep takes due sessions and deliveries an
 * instance left (it died) with leases, so two instances never work on one record at once. The sweep runs each due
 * session through the core's entry point (`step`), as the CLI's runner and n8n do.
 * A fourth output gives the signed PDF of a session the node's sweep finished (after a temporary TSA / OCSP failure,
 * or left signed by a crash) or hands over again (its storage not acknowledged within the client's hand-over lease,
 * or reported failed): the finish node's message, so wire it where the finish node's output goes.
 */
import { hostname } from 'node:os';
import { SingpassFlowsError, type ErrorCode } from '../src/errors';
import { signWire, temporaryWebhookFailure, webhookErrorBody, type SigningEvent } from '../src/sign';
import { asError } from './lib/run';
import { isSessionEnded, isStoreOutage, isSubmitDeferred, receiveDelivery, signerIdSetting, signerOf, step, type StepOutcome, type KeptDelivery, type SessionRecord, type SignerIdInOutput } from '../src/session';
import { exclusiveFinish, handOverOutcome, recordForMessage, sessionError, short, statusReporter } from './lib/session-steps';
import { signClientOf, type SignClientNode } from './lib/sign-client';
import type { HttpRequest, HttpResponse, Node, NodeAPI, NodeDef, NodeMessage } from './lib/types';

const OUTPUT: Record<SigningEvent['type'] | 'finished', number> = { certificate: 0, signature: 1, error: 2, finished: 3 };
const MAX_BODY = 1024 * 1024;
/** How often the webhook node looks for sessions with something due (`nextStep`): resubmit, finish, expire. */
const SWEEP_MS = 5_000;
/*
 * How long a record left in the middle of a step (claimed; at the save point; signed and not finished) belongs to the
 * node working on it before the sweep takes it over as interrupted is the store's `idleMs` (the session policy's 45 s
 * with the folder store; the config node's "take over after" with PostgreSQL). Longer than the slowest step that
 * leaves it so: a hash call (2 attempts × 10 s timeout), or the hand-over from apply event (signature saved) to
 * finish signing. A finish that has started in this process is never raced (finishing.ts knows it).
 */

/** One Express route per path for the process; the node currently deployed on the path handles it. */
const routes = new Map<string, (req: HttpRequest, res: HttpResponse) => void>();
const registered = new Set<string>();
/** Sign clients whose kept deliveries were already replayed by a webhook node (one replay per deploy). */
const replaying = new Set<string>();

type Def = NodeDef & { client?: string; url?: string; signerId?: string };

/** Each webhook node's "Signer's ID in output" (none or masked; never the full NRIC), read where its events go out. */
const signerIds = new WeakMap<Node, SignerIdInOutput>();

export = function register(RED: NodeAPI): void {
  function Webhook(this: Node, def: Def) {
    RED.nodes.createNode(this, def);
    const node = this;
    const url = normalisePath(def.url);
    signerIds.set(node, signerIdSetting(def.signerId));
    let client: SignClientNode;
    try {
      client = signClientOf(RED, def.client, 'signing webhook');
    } catch (e) {
      node.error(asError(e));
      node.status({ fill: 'red', shape: 'ring', text: 'no Singpass Sign API client' });
      return;
    }

    routes.set(url, (req, res) => {
      handle(node, client, req, res).catch((e: unknown) => {
        // handle() answers before anything can throw; this is only a last guard
        node.error(asError(e), answered(503));
        if (!res.headersSent) answer(res, 503, temporaryWebhookFailure().body);
      });
    });
    if (!registered.has(url)) {
      registered.add(url);
      RED.httpNode.post(url, (req, res, next) => {
        const h = routes.get(url);
        if (h) h(req, res);
        else next();
      });
    }
    node.status({ fill: 'grey', shape: 'ring', text: `listening on ${url}` });

    // After a restart this instance alone had the folder's sessions: what the last run left mid-step is its own to
    // carry on now (as the runner's resume), not after the take-over time meant for another live process.
    const replay = () => replayKept(node, client).then(() => sweep(node, client, `${hostname()}:${process.pid}:${node.id}`.slice(0, 200), { resuming: true })).catch((e: unknown) => node.error(asError(e), {}));
    // A shared store (PostgreSQL) is not replayed at start: another live instance may be applying those deliveries
    // right now; the sweep claims the ones left unapplied for the take-over time instead.
    if (!client.store.shared && !replaying.has(client.id)) {
      replaying.add(client.id);
      if (RED.events) RED.events.on('flows:started', onStarted);
      else setTimeout(() => void replay(), 0);
    }
    function onStarted() {
      RED.events?.removeListener('flows:started', onStarted);
      void replay();
    }

    let sweeping = false;
    /** This instance's name in the store's leases (host, process, node): who took a session, for an admin. */
    const owner = `${hostname()}:${process.pid}:${node.id}`.slice(0, 200);
    let storeDown = false;
    const sweeper = setInterval(() => {
      if (sweeping) return; // a finish can outlast the interval: one sweep at a time
      sweeping = true;
      sweep(node, client, owner).then(() => {
        if (storeDown) node.status({ fill: 'grey', shape: 'ring', text: `listening on ${url}` });
        storeDown = false;
      }, (e: unknown) => {
        const err = asError(e);
        // A store that is down (PostgreSQL restarting, a full or read-only disk) is reported once, not every sweep;
        // the next sweep tries again
        if (isStoreOutage(err)) {
          if (!storeDown) node.warn(`signing webhook: the session store is unreachable (${err.message}); sessions continue when it is back`);
          storeDown = true;
          node.status({ fill: 'red', shape: 'ring', text: 'session store unreachable' });
        } else node.error(err, {});
      }).finally(() => (sweeping = false));
    }, SWEEP_MS);
    sweeper.unref?.();

    node.on('close', (_removed, done) => {
      clearInterval(sweeper);
      if (routes.get(url)) routes.delete(url);
      replaying.delete(client.id);
      RED.events?.removeListener('flows:started', onStarted);
      done();
    });
  }
  RED.nodes.registerType('singpass-sign-webhook', Webhook as never);
};

async function handle(node: Node, client: SignClientNode, req: HttpRequest, res: HttpResponse): Promise<void> {
  let body: unknown;
  try {
    body = req._body || req.body !== undefined ? req.body : await readBody(req);
  } catch {
    return answer(res, 400, webhookErrorBody('Request body too large or unreadable', signWire.WEBHOOK_ERROR_CODES.invalidRequest));
  }
  let engine;
  try {
    engine = await client.engine();
  } catch (e) {
    const err = asError(e);
    node.error(err, answered(503));
    node.status({ fill: 'red', shape: 'ring', text: `not ready: ${err.code}` });
    return answer(res, 503, temporaryWebhookFailure().body);
  }
  // The core's front door decides every edge once, as for the n8n trigger and `serve`: verified, bound to the stored
  // session's own token, kept in the store before the 200 (the store, not this process's memory, says what is a copy),
  // and the answer for each edge (another session's token, an ended session, an unknown sign_ref, the store down).
  const receipt = await receiveDelivery(engine, client.store, { headers: req.headers, body: body as Buffer });
  const r = receipt.response;
  answer(res, r.status, 'body' in r ? r.body : undefined);
  if (receipt.verdict === 'handOver' && receipt.delivery) {
    node.log(`signing webhook: ${receipt.delivery.event.type} event for session ${receipt.delivery.event.signRef}`);
    emit(node, receipt.delivery.event);
    return;
  }
  if (receipt.verdict === 'copy') return; // a copy of an event kept or applied: answered 200, nothing comes out twice
  const error = receipt.error ?? { code: 'WEBHOOK_HANDLER_FAILED', message: receipt.verdict };
  node.status({ fill: 'yellow', shape: 'ring', text: `refused: ${error.code}` });
  node.warn(`signing webhook refused a delivery (${r.status}): ${error.code} ${error.message}`);
  if (receipt.verdict === 'storeDown') {
    // our fault, not the delivery's: a Catch node can alert on it (the service retries the 503)
    const signRef = receipt.record?.state.signRef;
    node.error(new SingpassFlowsError(error.code as ErrorCode, error.message, { retryable: true }), { ...answered(r.status), ...(signRef ? { signRef } : {}) });
  }
}

/**
 * The message a Catch node gets for a delivery the node could not take (there is no flow message yet): what the
 * service was answered, so a flow can alert on it.
 */
function answered(status: number): NodeMessage {
  return { payload: { webhookAnswered: status } };
}

function emit(node: Node, event: SigningEvent): void {
  const outputs: (NodeMessage | null)[] = [null, null, null, null];
  const said = summary(event, signerIds.get(node) ?? 'none');
  outputs[OUTPUT[event.type]] = { payload: said, signRef: event.signRef, event: { ...said } };
  node.status({ fill: 'green', shape: 'dot', text: `${event.type} for ${short(event.signRef)}` });
  node.send(outputs);
}

/**
 * What the event says, without the user's certificate (personal data; the engine reads it from the store): for a
 * certificate the signer's name, and the NRIC masked only when the node is set to.
 */
function summary(event: SigningEvent, signerId: SignerIdInOutput): Record<string, unknown> {
  switch (event.type) {
    case 'certificate': {
      // a kept event the store has redacted names nobody
      const signer = event.certificate.subject ? { signer: signerOf(event.certificate, signerId) } : {};
      return { type: event.type, signRef: event.signRef, issuedAt: event.issuedAt, ...signer };
    }
    case 'signature': return { type: event.type, signRef: event.signRef, issuedAt: event.issuedAt, documentHash: event.documentHash };
    case 'error': return { type: event.type, signRef: event.signRef, issuedAt: event.issuedAt, errorCode: event.errorCode, message: event.message, correlationId: event.correlationId };
  }
}

/**
 * Each stored session whose next step is due (the core's `nextStep`; a shared store leases it to this instance) runs
 * through the core's one entry point (`step`, trigger `due`), as under the CLI's runner and n8n's Run Due Step — so the same
 * record gets the same step everywhere. What is Node-RED's is what each outcome sends (see {@link afterDueStep}) and
 * that an ended session's PDF and kept deliveries leave the store:
 * - `continueCertificate`: a certificate claimed and left (the node working on it died) once idle for the store's
 *   `idleMs`: checked, prepared, the hash sent.
 * - `submitHash`: the saved hash again after a temporary failure (from `retryAt`), or once idle (a call that started
 *   and never ended, or a hash prepare signature saved that submit hash never sent: the flow had its chance).
 * - `finish`: a signed session whose finishing failed temporarily (from `retryAt`), or left signed once idle: the signed
 *   PDF out on the "finished" output (a failure for good to a Catch node). A signed session never expires.
 * - `handOver`: a finished session whose signed PDF the flow did not acknowledge within the hand-over lease (or whose
 *   storage failed): the same PDF and file name out on the "finished" output again; past the hand-over window the
 *   session ends undelivered (HANDOVER_UNACKNOWLEDGED to a Catch node).
 * - `expire`: past the deadline (no event can come any more): SESSION_EXPIRED on the error output.
 * Ended sessions leave the store by its clean-up (hourly, the session policy's retention), not by the sweep.
 */
async function sweep(node: Node, client: SignClientNode, owner: string, o: { resuming?: boolean } = {}): Promise<void> {
  let engine;
  try {
    engine = await client.engine();
  } catch {
    return; // a configuration problem: reported when a delivery or a node uses the client
  }
  await housekeeping(client);
  // resuming: every session idle at all is a candidate (the driver still waits for a retry's time and the deadline)
  const idleMs = o.resuming ? 0 : client.store.policy.takeOverIdleMs;
  const { due: dueList } = await client.store.claimDue({ owner, limit: SWEEP_LIMIT, ...(o.resuming ? { now: Date.now() + client.store.policy.takeOverIdleMs } : {}) });
  for (const due of dueList) {
    const { signRef } = due;
    try {
      const run = () => step(client.store, signRef, { on: 'due', idleMs }, { engine, policy: client.handOverPolicy, onStep: statusReporter(node, signRef) });
      // never a second finish beside one the finish node is running in this process (it would lose the compare-and-set)
      const result = due.action === 'finish' ? await exclusiveFinish(signRef, run) : await run();
      if (result) await afterDueStep(node, client, result);
    } catch (e) {
      // a store that is down fails every session alike: the sweep reports it once and tries again later
      if (isStoreOutage(e)) throw e;
      node.error(asError(e), { payload: { type: due.action, signRef }, signRef }); // this session only; the others go on
    }
  }
  if (client.store.shared) {
    for (const { kept } of await client.store.claimDeliveriesToReplay({ owner, limit: SWEEP_LIMIT })) takeOver(node, kept);
  }
}

/** At most this many sessions per sweep and instance; the rest wait for the next sweep (or another instance). */
const SWEEP_LIMIT = 100;
const CLEAN_UP_EVERY_MS = 3600 * 1000;
const lastCleanUp = new WeakMap<SignClientNode['store'], number>();

/**
 * At most hourly per store: the sessions whose `forget` step is due leave it (record, PDFs, kept deliveries), with
 * what a crash left — the store's one clean-up, by the session policy's retention.
 */
async function housekeeping(client: SignClientNode): Promise<void> {
  const last = lastCleanUp.get(client.store) ?? 0;
  if (Date.now() - last < CLEAN_UP_EVERY_MS) return;
  lastCleanUp.set(client.store, Date.now());
  await client.store.cleanUp();
}

/**
 * What the flow gets from a step the sweep ran: a finished or handed-over-again session's signed PDF on the "finished"
 * output (the finish node's message), an expired one on the error output, a failure for good or a hand-over given up
 * to a Catch node; nothing while the session goes on (waiting for the signature, or a temporary failure the engine
 * will retry). The deliveries the step used are marked applied, so that no replay brings them out again.
 */
async function afterDueStep(node: Node, client: SignClientNode, result: StepOutcome): Promise<void> {
  const { action, record } = result;
  if (action === 'none' || !record || result.lost || result.documentMissing) return; // nothing due, or another node moved it on
  const { signRef } = record.state;
  node.log(`signing webhook: ${action} for session ${signRef} by the sweep: ${record.state.status}`);
  if (action === 'finish' || action === 'handOver') {
    const { msg, error } = handOverOutcome(result);
    if (msg && !error) {
      const outputs: (NodeMessage | null)[] = [null, null, null, null];
      outputs[OUTPUT.finished] = msg;
      node.status({ fill: 'blue', shape: 'dot', text: `${short(signRef)} signed PDF handed over${(result.handOver?.attempt ?? 1) > 1 ? ` again (${result.handOver!.attempt})` : ''}` });
      node.send(outputs);
    } else if (error) node.error(error, msg);
    else if (record.handOver?.undelivered) {
      const { code, message } = record.handOver.undelivered;
      node.status({ fill: 'red', shape: 'ring', text: `${short(signRef)} signed PDF never stored (${code})` });
      node.error(new SingpassFlowsError(code, message, { signRef, retryable: false }), { signRef, session: recordForMessage(record), payload: { type: 'undelivered', signRef } });
    }
    return; // else deferred: saved with lastFinishFailure, retried from retryAt
  }
  if (action === 'continueCertificate' || action === 'submitHash') {
    if (isSubmitDeferred(record)) return; // the hash call failed temporarily: the same hash again from retryAt
    await client.store.markDeliveryApplied(signRef, 'certificate');
  }
  if (!isSessionEnded(record)) return; // hash submitted: the session waits for the signature
  if (record.state.status === 'expired') return sendExpired(node, record);
  node.error(sessionError(record)!, { signRef, session: recordForMessage(record), payload: { type: record.state.status, signRef } });
}

/**
 * A delivery another instance answered and did not apply within the take-over time (it died, or its step failed),
 * that its session still needs (the store marks the others applied): out on this node's output as if it had just
 * come in (leased to this instance by the store).
 */
function takeOver(node: Node, kept: KeptDelivery): void {
  node.log(`signing webhook: taking over the ${kept.type} event of session ${kept.delivery.event.signRef} (not applied in time by the instance that received it)`);
  emit(node, kept.delivery.event);
}

/** An expired session out on the error output (`msg.event.type` "expired"). */
function sendExpired(node: Node, expired: SessionRecord): void {
  const { signRef } = expired.state;
  const outputs: (NodeMessage | null)[] = [null, null, null, null];
  outputs[OUTPUT.error] = { payload: { type: 'expired', signRef }, signRef, event: { type: 'expired', signRef }, session: recordForMessage(expired) };
  node.status({ fill: 'yellow', shape: 'ring', text: `${short(signRef)} expired` });
  node.send(outputs);
}

/**
 * Deliveries acknowledged but not applied before the last stop, that their session still needs, go out again (the
 * apply node drops repeats): the store's replay, with no idle time (this is the folder's only process, just started).
 */
async function replayKept(node: Node, client: SignClientNode): Promise<void> {
  for (const { kept } of await client.store.claimDeliveriesToReplay({ owner: `${hostname()}:${process.pid}`, idleMs: 0 })) {
    node.log(`signing webhook: resuming the ${kept.type} event of session ${kept.delivery.event.signRef} received before the restart`);
    emit(node, kept.delivery.event);
  }
}

function answer(res: HttpResponse, status: number, body?: unknown): void {
  if (res.headersSent) return;
  if (body === undefined) {
    res.writeHead(status, { 'content-length': '0' }).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

function readBody(req: HttpRequest): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new SingpassFlowsError('INVALID_INPUT', 'webhook body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function normalisePath(url: unknown): string {
  const u = typeof url === 'string' && url.trim() ? url.trim() : '/singpass/sign/webhook';
  return u.startsWith('/') ? u : `/${u}`;
}
