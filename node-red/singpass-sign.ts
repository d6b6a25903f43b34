/**
 * Signing nodes. A session runs through the engine's steps, one node each, so the flow reads like the process:
 *   start signing  →  (webhook)  →  apply event [certificate: status check → prepare → submit hash]
 *                                   (or the same in two nodes: prepare signature → [store, review] → submit hash)
 *                  →  (webhook)  →  apply event [signature]  →  finish [embed → validation data → timestamp → verify]
 *                  →  the flow's storage  →  signed PDF stored (the hand-over acknowledged: completed)
 * plus PDF tools usable on their own: certificate status (OCSP), add validation data, add document timestamp, verify.
 * `msg.payload` is the PDF (Buffer); `msg.session` the session record (plain JSON); the record itself lives in the
 * session store (a folder of the user directory, or PostgreSQL), so any later message — after a restart or a crash
 * too — continues the session.
 */
import { SingpassFlowsError } from '../src/errors';
import { addValidationDataWithSummary } from '../src/pades';
import { addDocumentTimestamp } from '../src/pades';
import { problemSummary, verifyPdfSignatures, type PadesLevel } from '../src/pades';
import { renderQr } from '../src/sign';
import { checkOnBehalfOf, checkSessionAppearance, documentNameFor, isAtSavePoint, isSigningOver, isSubmitDeferred, issueSignerLink, startNextSigner, step, type KeptDelivery, type SessionAppearance, type SessionStarted } from '../src/session';
import { appearanceFromSettings, inSetting } from '../src/setup';
import type { SigningEvent } from '../src/sign';
import { asError, onInput, pdfPayload } from './lib/run';
import { exclusiveFinish, handOverOutcome, loadSession, notFound, recordForMessage, sessionError, short, signRefInput, statusReporter } from './lib/session-steps';
import { signClientOf, signerLinkKeyOf, type SignClientNode } from './lib/sign-client';
import type { Node, NodeAPI, NodeDef, NodeMessage } from './lib/types';

const LEVELS: PadesLevel[] = ['B-B', 'B-T', 'B-LT', 'B-LTA'];
const EVENT_TYPES: SigningEvent['type'][] = ['certificate', 'signature', 'error'];

type Def = NodeDef & {
  client?: string; documentName?: string; level?: string; reason?: string; location?: string; appLink?: string; failInvalid?: boolean;
  box?: string; boxPage?: string; boxCorner?: string; boxRect?: string; boxField?: string; boxSize?: string;
};

const BOX_LABELS = {
  where: 'start signing',
  fields: { appearance: 'Signature box', 'appearance.placement': 'Signature box', 'appearance.page': 'Page', 'appearance.corner': 'Corner', 'appearance.rect': 'Rectangle', 'appearance.field': 'Form field', 'appearance.size': 'Size', 'appearance.image': 'msg.signatureImage' },
};

/**
 * The signature box: `msg.appearance` (an object as the core takes it, or `false` for invisible) over the node's
 * settings; `msg.signatureImage` (PNG or JPEG Buffer) drawn in it.
 */
function boxAppearance(def: Def, msg: NodeMessage): SessionAppearance | undefined {
  const image = Buffer.isBuffer(msg.signatureImage) ? msg.signatureImage.toString('base64') : typeof msg.signatureImage === 'string' ? msg.signatureImage : undefined;
  if (msg.appearance === false) return undefined;
  if (msg.appearance !== undefined) return inSetting(BOX_LABELS, 'appearance', () => checkSessionAppearance({ ...(msg.appearance as object), ...(image ? { image } : {}) }));
  return appearanceFromSettings({ placement: def.box, page: def.boxPage, corner: def.boxCorner, rect: def.boxRect, field: def.boxField, size: def.boxSize, image }, BOX_LABELS);
}

const withAppearance = (a: SessionAppearance | undefined) => (a ? { appearance: a } : {});

export = function register(RED: NodeAPI): void {
  /**
   * Create the session: QR code (PNG + payload), challenge code and expiry for the page; PDF and record stored;
   * `msg.signerLink` opens the session's signer page (a *signer page* node checks it). `msg.onBehalfOf` (from the
   * *officer check* node) and `msg.signer` (several signers in order) go into the record; signing for a company, the
   * document name the user sees in the app names the entity and the role.
   */
  function Start(this: Node, def: Def) {
    RED.nodes.createNode(this, def);
    const node = this;
    onInput(node, async (msg) => {
      const client = signClientOf(RED, def.client, 'start signing');
      const level = (typeof msg.level === 'string' && msg.level) || def.level || 'B-LTA';
      if (!LEVELS.includes(level as PadesLevel)) throw new SingpassFlowsError('INVALID_INPUT', `level: "${level}" is not one of ${LEVELS.join(', ')}`, { field: 'level' });
      const onBehalfOf = checkOnBehalfOf(msg.onBehalfOf);
      const documentName = documentNameFor(pickText(msg.documentName) ?? pickText(def.documentName) ?? fileName(msg.filename) ?? 'Document.pdf', onBehalfOf);
      const linkKey = signerLinkKeyOf(RED, client);
      const engine = await client.engine();
      const text = { reason: pickText(msg.reason) ?? pickText(def.reason), location: pickText(msg.location) ?? pickText(def.location) };
      const previousSignRef = pickText((msg.signer as { previousSignRef?: unknown } | undefined)?.previousSignRef);
      let started: Pick<SessionStarted, 'record' | 'signRef' | 'qrPayload' | 'qrLogo' | 'challengeCode' | 'expiresAt'>;
      if (previousSignRef) {
        // The next of several signers: the core starts it on the previous session's signed PDF as stored, once; a
        // repeated hand-over of that PDF gets the session started then.
        const label = pickText((msg.signer as { label?: unknown }).label);
        const next = await startNextSigner(engine, client.store, {
          previousSignRef, level: level as PadesLevel, documentName, ...text, ...(label ? { label } : {}), ...withAppearance(boxAppearance(def, msg)),
        });
        if (next.outcome !== 'started') throw new SingpassFlowsError('STATE_INVALID', `msg.signer.previousSignRef: session ${previousSignRef} has no next signer to start (${next.outcome})`, { field: 'msg.signer', retryable: false });
        const { state } = next.record;
        started = next.started ?? { record: next.record, signRef: state.signRef, qrPayload: state.qrPayload ?? '', challengeCode: state.challengeCode, expiresAt: state.expiresAt };
      } else {
        const pdf = pdfPayload(msg);
        started = await engine.start(pdf, {
          documentName, level: level as PadesLevel,
          ...(onBehalfOf !== undefined ? { onBehalfOf } : {}),
          ...(msg.signer !== undefined ? { signer: msg.signer as never } : {}),
          ...text, appLink: pickText(msg.appLink) ?? pickText(def.appLink),
          ...withAppearance(boxAppearance(def, msg)),
        });
        // The PDF first: the certificate webhook may arrive as soon as the record exists.
        await client.store.putDocument(started.signRef, pdf);
        if (!(await client.store.put(started.record, undefined))) throw new SingpassFlowsError('STATE_INVALID', `A session ${started.signRef} already exists in the session store`);
      }
      const png = await renderQr(started.qrPayload, { format: 'png' });
      const signerLink = issueSignerLink({ ...linkKey, signRef: started.signRef, purpose: 'page' });
      node.status({ fill: 'yellow', shape: 'ring', text: `${short(started.signRef)} waiting for scan (${started.challengeCode})` });
      return {
        ...msg,
        signRef: started.signRef,
        session: recordForMessage(started.record),
        challengeCode: started.challengeCode,
        expiresAt: started.expiresAt,
        documentName,
        signerLink,
        qr: { png, payload: started.qrPayload, dataUrl: `data:image/png;base64,${png.toString('base64')}`, ...(started.qrLogo ? { logo: started.qrLogo } : {}) },
      };
    }, 'creating session');
  }
  RED.nodes.registerType('singpass-sign-start', Start as never);

  /**
   * Apply a webhook event (from the webhook node) to its session. Certificate: the engine checks the user's
   * certificate (chain + OCSP) BEFORE preparing the PDF and submitting the hash. A repeated event is dropped.
   */
  function Apply(this: Node, def: Def) {
    RED.nodes.createNode(this, def);
    const node = this;
    onInput(node, async (msg) => {
      const client = signClientOf(RED, def.client, 'apply signing event');
      const type = (msg.event as { type?: string } | undefined)?.type as SigningEvent['type'] | 'expired';
      if (type === 'expired') {
        // the webhook node ended it at its deadline (no event can come any more): pass the ended session on
        const { signRef, record } = await loadSession(client, msg.signRef);
        node.status({ fill: 'red', shape: 'ring', text: `${short(signRef)} expired` });
        return { ...msg, signRef, session: recordForMessage(record) };
      }
      if (!EVENT_TYPES.includes(type)) throw new SingpassFlowsError('INVALID_INPUT', 'msg.event.type: connect this node to a signing webhook node output', { field: 'msg.event' });
      const pending = await pendingDelivery(client, msg.signRef, type);
      if (!pending.stored) return duplicate(node, pending.signRef, type);
      const { signRef, pdf, stored } = pending;
      const engine = await client.engine();
      const onStep = statusReporter(node, signRef);
      // The core's entry point, as every front end: the event saved into the record (a certificate only claimed), then
      // the steps the table says the same event leads to (check, prepare, the save point, the hash call). A Node-RED
      // killed in between leaves the claim or the save point, continued by the replayed delivery or, once idle, by the
      // webhook node's sweep.
      const r = await step(client.store, signRef, { on: 'event', delivery: stored.delivery, through: true }, { engine, onStep });
      if (r.refused) throw asError(r.refused);
      if (!r.record) throw notFound(signRef);
      if (r.documentMissing) throw new SingpassFlowsError('STATE_INVALID', `The PDF of session ${signRef} is no longer in the session store`);
      const result = { record: r.record, duplicate: r.lost === true || !r.moved };
      // A hash call that failed temporarily leaves the session at the save point: not applied yet (the webhook
      // node resubmits the same hash; after a restart the kept event is replayed and does the same).
      const deferred = isSubmitDeferred(result.record);
      if (!deferred) await client.store.markDeliveryApplied(signRef, type);
      if (result.duplicate) return duplicate(node, signRef, type);
      const out: NodeMessage = { ...msg, payload: pdf, signRef, session: recordForMessage(result.record), ...(deferred ? { readyToSubmit: true, retryLater: true } : {}) };
      const err = type !== 'error' ? sessionError(result.record) : undefined;
      if (err) {
        node.error(err, out);
        return;
      }
      if (type === 'error') node.status({ fill: 'red', shape: 'ring', text: `${short(signRef)} ended: ${result.record.state.error?.code ?? 'error'}` });
      return out;
    }, 'applying event');
  }
  RED.nodes.registerType('singpass-sign-apply', Apply as never);

  /**
   * The certificate event's first half, for flows that store or review the session between the two halves: the
   * user's certificate is checked (chain + OCSP) and the PDF prepared; the record with the exact hash is saved (the
   * engine's save point) and nothing is sent; `msg.readyToSubmit` says the session waits for submit hash. A refused
   * certificate ends the session and goes to a Catch node; a repeat sends nothing. The delivery stays "not applied"
   * until submit hash ran, so after a restart the kept event is replayed and prepare hands on the same saved record.
   */
  function Prepare(this: Node, def: Def) {
    RED.nodes.createNode(this, def);
    const node = this;
    onInput(node, async (msg) => {
      const client = signClientOf(RED, def.client, 'prepare signature');
      if ((msg.event as { type?: string } | undefined)?.type !== 'certificate') {
        throw new SingpassFlowsError('INVALID_INPUT', 'msg.event.type: prepare signature takes the signing webhook node\'s certificate output (use apply event for the others)', { field: 'msg.event' });
      }
      const pending = await pendingDelivery(client, msg.signRef, 'certificate');
      if (!pending.stored) return duplicate(node, pending.signRef, 'certificate');
      const { signRef, pdf, stored } = pending;
      const engine = await client.engine();
      // the core's entry point: claimed, checked, prepared and the save point saved with compare-and-set; nothing sent
      const prepared = await step(client.store, signRef, { on: 'prepare', delivery: stored.delivery }, { engine });
      if (prepared.documentMissing) throw new SingpassFlowsError('STATE_INVALID', `The PDF of session ${signRef} is no longer in the session store`);
      if (!prepared.record) throw notFound(signRef);
      // nothing done by this run: at the save point already (the kept event replayed after a restart: handed on as
      // saved), or past it (a repeat), or another run's
      const result = { record: prepared.record, duplicate: prepared.lost === true || (prepared.action === 'none' && !isAtSavePoint(prepared.record)) };
      if (result.duplicate) return duplicate(node, signRef, 'certificate');
      const out: NodeMessage = { ...msg, payload: pdf, signRef, session: recordForMessage(result.record), readyToSubmit: isAtSavePoint(result.record) };
      const err = sessionError(result.record);
      if (err) {
        node.error(err, out);
        return;
      }
      node.status({ fill: 'blue', shape: 'ring', text: `${short(signRef)} prepared, hash not sent yet` });
      return out;
    }, 'preparing');
  }
  RED.nodes.registerType('singpass-sign-prepare', Prepare as never);

  /**
   * Send the hash of a session prepare signature saved (`msg.signRef`). Only such a session is accepted, so no hash
   * leaves without the certificate check. Sent again after a crash, the service's "already submitted" means the first
   * call got through: the session waits for the signature.
   */
  function Submit(this: Node, def: Def) {
    RED.nodes.createNode(this, def);
    const node = this;
    onInput(node, async (msg) => {
      const client = signClientOf(RED, def.client, 'submit hash');
      const { signRef, record } = await loadSession(client, msg.signRef);
      if (!isAtSavePoint(record)) {
        throw new SingpassFlowsError('STATE_INVALID', `submit hash takes a session prepare signature saved (certificate checked, PDF prepared); session ${signRef} is ${record.state.status}`, { retryable: false });
      }
      const engine = await client.engine();
      // The core's entry point (`sendHash`): the call is counted in the stored record BEFORE it leaves (compare-and-set), so a refusal of
      // the first call is the service's verdict (the session fails with its code and message) and a resend after a
      // crash knows it is one; another execution already sending this hash makes this one a duplicate that sends nothing.
      const sent = await step(client.store, signRef, { on: 'sendHash' }, { engine });
      if (!sent.record) throw notFound(signRef);
      const result = { record: sent.record, duplicate: sent.lost === true || sent.action === 'none' };
      if (result.duplicate) return duplicate(node, signRef, 'hash submission');
      // The service could not take the hash just now (unreachable, timeout, 5xx, 429): the session is still at the
      // save point, not failed; the signing webhook node sends the same hash again (status: "will retry").
      const deferred = isSubmitDeferred(result.record);
      if (!deferred) await client.store.markDeliveryApplied(signRef, 'certificate');
      const out: NodeMessage = { ...msg, signRef, session: recordForMessage(result.record), readyToSubmit: deferred, retryLater: deferred };
      const err = sessionError(result.record);
      if (err) {
        node.error(err, out);
        return;
      }
      return out;
    }, 'submitting the hash');
  }
  RED.nodes.registerType('singpass-sign-submit', Submit as never);

  /**
   * After the signature event: the core's entry point (`finish`) finishes the session (embed, extend to the session's level, verify,
   * the signed PDF stored) and hands the signed PDF over: `msg.payload` becomes it, `msg.filename` the name to store
   * it under. Store it, then acknowledge it with a *signed PDF stored* node; unacknowledged, the signing webhook node
   * hands it over again after the client's hand-over lease. A temporary failure (TSA, OCSP/CRL responder, network)
   * keeps the session signed, with `lastFinishFailure`: no output, no error (status "… unavailable, will retry"); the
   * signing webhook node's sweep finishes it later and sends this same message on its "finished" output.
   */
  function Finish(this: Node, def: Def) {
    RED.nodes.createNode(this, def);
    const node = this;
    onInput(node, async (msg) => {
      const client = signClientOf(RED, def.client, 'finish signing');
      const signRef = signRefInput(msg.signRef);
      const engine = await client.engine();
      const onStep = statusReporter(node, signRef);
      const r = await exclusiveFinish(signRef, () => step(client.store, signRef, { on: 'finish' }, { engine, policy: client.handOverPolicy, onStep }));
      if (!r || r.lost) {
        node.status({ fill: 'grey', shape: 'ring', text: `${short(signRef)} being finished elsewhere` });
        return;
      }
      if (!r.record) throw notFound(signRef);
      if (r.documentMissing) throw new SingpassFlowsError('STATE_INVALID', `The PDF of session ${signRef} is no longer in the session store`);
      if (r.action === 'none') {
        if (!isSigningOver(r.record)) throw new SingpassFlowsError('STATE_INVALID', `Nothing to finish: the session is ${r.record.state.status} (finish signing takes the session after its signature event)`, { signRef, retryable: false });
        // finished already (the sweep after a restart, or a repeated message): its PDF was handed over then
        node.status({ fill: 'grey', shape: 'ring', text: `${short(signRef)} already ${r.record.state.status}` });
        return;
      }
      const outcome = handOverOutcome(r);
      if (outcome.error) {
        node.error(outcome.error, { ...msg, ...outcome.msg });
        return;
      }
      if (!outcome.msg) return; // deferred: the status says "will retry"; the sweep takes it from here
      return { ...msg, ...outcome.msg };
    }, 'finishing');
  }
  RED.nodes.registerType('singpass-sign-finish', Finish as never);

  /**
   * After the flow's storage node: tells the engine where the hand-over of the signed PDF (`msg.signRef`) ended.
   * Stored: the hand-over is acknowledged and the session completed (twice is harmless). Failed (`msg.error` from a
   * Catch node on the storage node, or the node set to "failed"): the failure is kept in the record and the signed
   * PDF is handed over again after a short backoff. `msg.session` becomes the record as stored now.
   */
  function Stored(this: Node, def: Def & { outcome?: string }) {
    RED.nodes.createNode(this, def);
    const node = this;
    onInput(node, async (msg) => {
      const client = signClientOf(RED, def.client, 'signed PDF stored');
      const signRef = signRefInput(msg.signRef);
      const failed = def.outcome === 'failed' || (def.outcome !== 'stored' && msg.error !== undefined && msg.error !== null);
      if (failed) {
        const e = (msg.error ?? {}) as { code?: unknown; message?: unknown };
        const failure = { ...(typeof e.code === 'string' && e.code ? { code: e.code } : {}), message: typeof e.message === 'string' && e.message ? e.message : 'the flow\'s storage step failed' };
        const r = await step(client.store, signRef, { on: 'handOverFailed', failure }, { policy: client.handOverPolicy });
        if (!r.record) throw notFound(signRef);
        const code = r.record.handOver?.lastFailure?.code ?? failure.code ?? 'HANDOVER_FAILED';
        node.status(r.moved ? { fill: 'yellow', shape: 'ring', text: `${short(signRef)} storing failed (${code}), handed over again later` } : { fill: 'grey', shape: 'ring', text: `${short(signRef)} not waiting for storage (${r.record.state.status})` });
        return { ...msg, signRef, session: recordForMessage(r.record) };
      }
      const r = await step(client.store, signRef, { on: 'acknowledge' });
      if (!r.record) throw notFound(signRef);
      node.status(r.moved ? { fill: 'green', shape: 'dot', text: `${short(signRef)} signed PDF stored` } : { fill: 'grey', shape: 'ring', text: `${short(signRef)} acknowledged already` });
      return { ...msg, signRef, session: recordForMessage(r.record) };
    }, 'acknowledging');
  }
  RED.nodes.registerType('singpass-sign-stored', Stored as never);

  /** OCSP status of a certificate (msg.payload: PEM, DER Buffer or base64 DER), chained to the client's trusted roots. */
  function CertStatus(this: Node, def: Def) {
    RED.nodes.createNode(this, def);
    onInput(this, async (msg) => {
      const client = signClientOf(RED, def.client, 'certificate status');
      const cert = certificateInput(msg.payload);
      const certificateStatus = await (await client.engine()).certificateStatus(cert);
      this.status({ fill: certificateStatus.good ? 'green' : 'red', shape: 'dot', text: certificateStatus.status });
      if (!certificateStatus.good) {
        // the certificate step's own code (OCSP_REVOKED, CERTIFICATE_EXPIRED, CERTIFICATE_UNTRUSTED…), to a Catch node
        this.error(new SingpassFlowsError(certificateStatus.code!, `${certificateStatus.message ?? certificateStatus.status}; do not submit a hash for it`), { ...msg, certificateStatus });
        return;
      }
      return { ...msg, certificateStatus };
    }, 'asking OCSP');
  }
  RED.nodes.registerType('singpass-cert-status', CertStatus as never);

  /** PAdES B-LT: certificates and OCSP answers of every signature and timestamp into the PDF's DSS. */
  function AddValidationData(this: Node, def: Def) {
    RED.nodes.createNode(this, def);
    onInput(this, async (msg) => {
      const client = signClientOf(RED, def.client, 'add validation data');
      const pdf = pdfPayload(msg);
      const { config } = await client.engine();
      const r = await addValidationDataWithSummary(pdf, { trustedRoots: config.trustedRoots, intermediates: config.intermediates });
      this.status({ fill: 'green', shape: 'dot', text: `${r.summary.certificates} certificates, ${r.summary.ocspResponses} OCSP` });
      return { ...msg, payload: r.pdf, validationData: r.summary };
    }, 'fetching OCSP');
  }
  RED.nodes.registerType('singpass-pdf-validation-data', AddValidationData as never);

  /** PAdES B-LTA: a document timestamp from the client's TSA over the whole PDF. */
  function AddDocumentTimestamp(this: Node, def: Def) {
    RED.nodes.createNode(this, def);
    onInput(this, async (msg) => {
      const client = signClientOf(RED, def.client, 'add document timestamp');
      const pdf = pdfPayload(msg);
      const { config } = await client.engine();
      if (!config.tsaUrl) throw new SingpassFlowsError('INVALID_INPUT', 'TSA URL: set a timestamp authority in the Singpass Sign API client', { field: 'tsaUrl' });
      const out = await addDocumentTimestamp(pdf, { tsaUrl: config.tsaUrl });
      this.status({ fill: 'green', shape: 'dot', text: 'timestamped' });
      return { ...msg, payload: out };
    }, 'asking the TSA');
  }
  RED.nodes.registerType('singpass-pdf-timestamp', AddDocumentTimestamp as never);

  /** Verify every signature in the PDF: integrity, chain to the trusted roots, timestamps, revocation data, level. */
  function Verify(this: Node, def: Def) {
    RED.nodes.createNode(this, def);
    onInput(this, async (msg) => {
      const client = signClientOf(RED, def.client, 'verify PDF');
      const pdf = pdfPayload(msg);
      const { config } = await client.engine();
      const report = await verifyPdfSignatures(pdf, { trustedRoots: config.trustedRoots });
      this.status({ fill: report.valid ? 'green' : 'red', shape: 'dot', text: report.valid ? `valid ${report.level ?? ''}` : 'NOT valid' });
      const out = { ...msg, verification: report };
      if (!report.valid && def.failInvalid !== false) {
        this.error(new SingpassFlowsError('SIGNATURE_INVALID', `The PDF's signatures do not verify${problemSummary(report) || ' (see msg.verification)'}`), out);
        return;
      }
      return out;
    }, 'verifying');
  }
  RED.nodes.registerType('singpass-pdf-verify', Verify as never);
};

/**
 * The session a webhook event names, its PDF and the kept delivery not applied yet; without `stored` when that
 * delivery was already applied (a repeat, to be dropped).
 */
async function pendingDelivery(client: SignClientNode, signRefIn: unknown, type: SigningEvent['type']): Promise<{ signRef: string; pdf: Buffer; stored: KeptDelivery } | { signRef: string; stored?: undefined }> {
  const { signRef, pdf } = await loadSession(client, signRefIn);
  const stored = await client.store.getDelivery(signRef, type);
  if (!stored) throw new SingpassFlowsError('STATE_INVALID', `No ${type} delivery was received for session ${signRef}`);
  if (stored.applied) return { signRef };
  if (!pdf) throw new SingpassFlowsError('STATE_INVALID', `The PDF of session ${signRef} is no longer in the session store`);
  return { signRef, pdf, stored };
}

function duplicate(node: Node, signRef: string, type: string): void {
  node.status({ fill: 'grey', shape: 'ring', text: `${short(signRef)}: repeated ${type} event ignored` });
}


function pickText(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

function fileName(v: unknown): string | undefined {
  const s = pickText(v);
  return s ? s.split(/[\\/]/).pop() : undefined;
}

function certificateInput(p: unknown): Buffer | string {
  if (Buffer.isBuffer(p) && p.length > 0) return p;
  if (typeof p === 'string' && p.trim() !== '') return p.trim();
  if (p && typeof p === 'object' && typeof (p as { base64?: unknown }).base64 === 'string') return (p as { base64: string }).base64;
  throw new SingpassFlowsError('INVALID_INPUT', 'msg.payload: expected a certificate (PEM text, DER Buffer or base64 DER)', { field: 'msg.payload' });
}
