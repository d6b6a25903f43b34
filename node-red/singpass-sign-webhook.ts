/**
 * "Signing webhook" in-node: serves the notification URL you registered on Node-RED's own HTTP server
 * (RED.httpNode). Each delivery is checked by the engine (Bearer issued by this DSAP, service JWT verified against
 * the service key set), kept in the session store (written through to disk or PostgreSQL), and only then answered
 * 200 — so a crash right after the answer loses nothing (kept deliveries not yet applied are sent again when the flows start). The answer never waits for
 * the rest of the flow: 200, or 400 with the spec's error body, or 503 when the fault is ours (the service retries).
 * Certificate, signature and error events leave on three outputs; a repeated delivery never comes out twice.
 * With the PostgreSQL session store (several Node-RED instances behind one URL) the same holds across instances: the
 * store says which instance's copy of a delivery is fresh, and the sweep takes due sessions and deliveries an
 * instance left (it died) with leases, so two instances never work on one record at once.
 * A fourth output gives the signed PDF of a session the node's sweep finished (after a temporary TSA / OCSP failure,
 * or left signed by a crash): the finish node's message, so wire it where the finish node's output goes.
 */
import { hostname } from 'node:os';
import { SingpassFlowsError } from '../src/errors';
import { signWire, temporaryWebhookFailure, webhookErrorBody, type SigningEvent } from '../src/sign';
import { asError } from './lib/run';
import { isSessionEnded, isSubmitDeferred, stepSaver, type KeptDelivery, type NextStepPolicy, type SessionRecord, type SigningEngine } from '../src/session';
import { finishSigned } from './lib/finishing';
import { KEEP_ENDED_MS } from './lib/store-factory';
import { isStoreOutage } from './lib/session-store';
import { endSession, recordForMessage, sessionError, short, statusReporter } from './lib/session-steps';
import { signClientOf, type SignClientNode } from './lib/sign-client';
import type { HttpRequest, HttpResponse, Node, NodeAPI, NodeDef, NodeMessage } from './lib/types';

const OUTPUT: Record<SigningEvent['type'] | 'finished', number> = { certificate: 0, signature: 1, error: 2, finished: 3 };
const MAX_BODY = 1024 * 1024;
/** How often the webhook node looks for sessions with something due (`nextStep`): resubmit, finish, expire, forget. */
const SWEEP_MS = 5_000;
/*
 * How long a record left in the middle of a step (signed and not finished; at the save point after a hash call was
 * started) belongs to the node working on it before the sweep takes it over as interrupted is the store's `idleMs`
 * (60 s with the folder store; the config node's "take over after" with PostgreSQL). Longer than the slowest step
 * that leaves it so: a hash call (2 attempts × 10 s timeout), or the hand-over from apply event (signature saved) to
 * finish signing. A finish that has started in this process is never raced (finishing.ts knows it).
 */

/** One Express route per path for the process; the node currently deployed on the path handles it. */
const routes = new Map<string, (req: HttpRequest, res: HttpResponse) => void>();
const registered = new Set<string>();
/** Sign clients whose kept deliveries were already replayed by a webhook node (one replay per deploy). */
const replaying = new Set<string>();

type Def = NodeDef & { client?: string; url?: string };

export = function register(RED: NodeAPI): void {
  function Webhook(this: Node, def: Def) {
    RED.nodes.createNode(this, def);
    const node = this;
    const url = normalisePath(def.url);
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

    const replay = () => replayKept(node, client).catch((e: unknown) => node.error(asError(e), {}));
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
  // The delivery is bound to its session here, before the answer: the Bearer must be the token THAT session was
  // created with (one store read), so a token issued for another session is answered 400 and nothing is kept or sent
  // (an unknown or forgotten session too). A failing store is our fault: 503, the service retries.
  let stored: SessionRecord | undefined;
  const check = await engine.checkDelivery({ headers: req.headers, body: body as Buffer }, async (signRef) => (stored = await client.store.get(signRef))?.state.clientNotificationToken);
  let fresh = false;
  // The store decides what is fresh, not this process's memory of deliveries it saw: a copy this process answered
  // 503 (the store failed) and sees again on the service's retry must be kept now, and with several instances only
  // the store knows what the others took. An ended session keeps nothing more.
  if (check.delivery && stored && !isFinished(stored)) {
    const { signRef } = check.delivery.event;
    try {
      fresh = await client.store.rememberDelivery(check.delivery);
    } catch (e) {
      // Not kept = not safe to acknowledge: the service retries a 503.
      node.error(asError(e), { ...answered(503), signRef });
      return answer(res, 503, temporaryWebhookFailure().body);
    }
  }
  const r = check.response;
  answer(res, r.status, 'body' in r ? r.body : undefined);
  if (check.error) {
    node.status({ fill: 'yellow', shape: 'ring', text: `refused: ${check.error.code}` });
    node.warn(`signing webhook refused a delivery (${r.status}): ${check.error.code} ${check.error.message}`);
  }
  if (fresh && check.delivery) {
    node.log(`signing webhook: ${check.delivery.event.type} event for session ${check.delivery.event.signRef}`);
    emit(node, check.delivery.event);
  }
}

/** Completed, failed or expired: no event changes it any more. */
function isFinished(record: SessionRecord): boolean {
  return record.state.status === 'completed' || record.state.status === 'failed' || record.state.status === 'expired';
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
  outputs[OUTPUT[event.type]] = { payload: summary(event), signRef: event.signRef, event: summary(event) };
  node.status({ fill: 'green', shape: 'dot', text: `${event.type} for ${short(event.signRef)}` });
  node.send(outputs);
}

/** What the event says, without the user's certificate (personal data; the engine reads it from the store). */
function summary(event: SigningEvent): Record<string, unknown> {
  switch (event.type) {
    case 'certificate': return { type: event.type, signRef: event.signRef, issuedAt: event.issuedAt };
    case 'signature': return { type: event.type, signRef: event.signRef, issuedAt: event.issuedAt, documentHash: event.documentHash };
    case 'error': return { type: event.type, signRef: event.signRef, issuedAt: event.issuedAt, errorCode: event.errorCode, message: event.message, correlationId: event.correlationId };
  }
}

/**
 * What each stored session needs, by the engine's one rule (`nextStep`):
 * - `finish`: a signed session whose finishing failed temporarily (from `lastFinishFailure.retryAt`, the engine's
 *   backoff), or left signed for {@link IDLE_MS} (a crash after the signature was stored): finished here, the signed
 *   PDF out on the "finished" output (a failure for good to a Catch node). A signed session never expires: the
 *   service's deadline covers the signing, the finishing window (`finishBy`) is the engine's.
 * - `submitHash`: the saved hash again after a temporary failure (from `retryAt`), or after a call that started and
 *   never ended ({@link IDLE_MS}); past the deadline the session expires. A hash prepare signature saved and submit
 *   hash has not sent yet (no call made) is the flow's to send (it may be under review): only expired here.
 * - `expire`: past the deadline (the user never scanned or never approved: no event can come any more), the session
 *   ends as SESSION_EXPIRED — PDF and deliveries deleted, the certificate dropped — out on the error output
 *   (`msg.event.type` "expired") so the flow records it.
 * - `forget`: ended records leave the session store a day after they ended.
 */
async function sweep(node: Node, client: SignClientNode, owner: string): Promise<void> {
  let engine;
  try {
    engine = await client.engine();
  } catch {
    return; // a configuration problem: reported when a delivery or a node uses the client
  }
  const policy: NextStepPolicy = { scanExtensionSeconds: engine.config.scanExtensionSeconds, idleMs: client.store.idleMs, retentionMs: KEEP_ENDED_MS };
  for (const due of await client.store.dueSessions(policy, owner)) {
    const { record } = due;
    const { signRef } = record.state;
    try {
      switch (due.action) {
        case 'forget':
          await endSession(client, signRef);
          await client.store.delete(signRef);
          break;
        case 'finish':
          await finishLater(node, client, engine, record);
          break;
        case 'submitHash':
          if (record.submitting?.attempts === 0 && !isSubmitDeferred(record)) await expire(node, client, engine, record);
          else await resubmit(node, client, engine, record);
          break;
        case 'continueCertificate': // not made by these nodes (no claim): the replayed delivery continues it
        case 'expire':
          await expire(node, client, engine, record);
          break;
      }
    } catch (e) {
      node.error(asError(e), { payload: { type: due.action, signRef }, signRef }); // this session only; the others go on
    }
  }
  if (client.store.claimStaleDeliveries) {
    for (const kept of await client.store.claimStaleDeliveries(owner)) takeOver(node, kept);
  }
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

/** End a session past its deadline as expired (no-op before it). */
async function expire(node: Node, client: SignClientNode, engine: SigningEngine, record: SessionRecord): Promise<void> {
  const { record: expired } = engine.expire(record);
  if (expired === record || !(await client.store.put(expired, record.revision))) return; // not yet, or changed meanwhile: next round
  await endSession(client, record.state.signRef);
  sendExpired(node, expired);
}

/**
 * Finish a signed session the flow's finish node could not (a temporary TSA / OCSP failure, or a crash): the same
 * message as the finish node's, on the "finished" output; a failure for good goes to a Catch node.
 */
async function finishLater(node: Node, client: SignClientNode, engine: SigningEngine, record: SessionRecord): Promise<void> {
  const { signRef } = record.state;
  const pdf = await client.store.getDocument(signRef);
  if (!pdf) return; // kept until the session ends; gone means another Node-RED on this store owns it
  const r = await finishSigned(client, engine, record, pdf, statusReporter(node, signRef));
  if (r.kind !== 'ended') return; // busy (a live finish), lost (changed meanwhile), deferred (saved, retried later)
  // a signature delivery not applied yet (a crash between saving the signature and marking it) must not come out again
  await client.store.markDeliveryApplied(signRef, 'signature');
  if (r.error) {
    node.error(r.error, r.msg);
    return;
  }
  const outputs: (NodeMessage | null)[] = [null, null, null, null];
  outputs[OUTPUT.finished] = r.msg;
  node.send(outputs);
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
 * A session whose hash call failed temporarily (service unreachable, timeout, 5xx, 429), or was interrupted: the SAME
 * saved hash goes out again (the engine's backoff in `retryAt`, checked every sweep). Through: the session waits for
 * the signature as usual. Refused for good: the session ends, to a Catch node. Past the deadline: expired (error output).
 */
async function resubmit(node: Node, client: SignClientNode, engine: SigningEngine, record: SessionRecord): Promise<void> {
  const { signRef } = record.state;
  // The call is counted in the stored record before it leaves (compare-and-set): a live node sending the same hash
  // meanwhile makes this a duplicate that sends nothing.
  const saver = stepSaver(client.store, record);
  const r = await engine.resumeSubmission(record, { onStep: statusReporter(node, signRef), save: saver.save });
  if (r.duplicate || !(await saver.save(r.record))) return; // another node moved the session on meanwhile
  if (isSubmitDeferred(r.record)) return;
  await client.store.markDeliveryApplied(signRef, 'certificate');
  if (!isSessionEnded(r.record)) return;
  await endSession(client, signRef);
  if (r.record.state.status === 'expired') return sendExpired(node, r.record);
  node.error(sessionError(r.record)!, { payload: { type: r.record.state.status, signRef }, signRef, session: recordForMessage(r.record) });
}

/** Deliveries acknowledged but not applied before the last stop go out again (the apply node drops repeats). */
async function replayKept(node: Node, client: SignClientNode): Promise<void> {
  for (const { signRef, type } of await client.store.pendingDeliveries()) {
    const kept = await client.store.getDelivery(signRef, type);
    if (kept && !kept.applied) {
      node.log(`signing webhook: resuming the ${type} event of session ${signRef} received before the restart`);
      emit(node, kept.delivery.event);
    }
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
