import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError, invalidInput } from '../../../../src/errors';
import { isSessionEnded, sessionPhase, step, type SessionRecord, type StepOutcome, type VerifiedDelivery, type DurableSessionStore } from '../../../../src/session';
import { pdfBinary } from '../../../shared/binary';
import { signingEngine } from '../../../shared/engine';
import { idleSecondsInput, idleSecondsOf, sessionRecordStore, storeInputs, usesStoreCredential } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';
import { deliveryWithCertificate, readDelivery, storedRecordSummary } from '../../../shared/session-data';
import { pdfOutput } from '../fields';
import { handOverLeaseInput, handOverPolicyOf, handOverWindowInput } from './handOverPolicy';

export const description: INodeProperties[] = forOperation('sessionRecord', 'runDueStep', [
  ...storeInputs,
  {
    displayName: 'Session From',
    name: 'sessionFrom',
    type: 'options',
    options: [
      { name: 'Fields', value: 'fields', description: 'The Sign Ref and Webhook Event given below' },
      { name: 'The Incoming Item', value: 'item', description: 'The item of the Singpass Sign Trigger (signature, error) or of List Due Sessions: its "signRef" and, when it has one, its "delivery"; no expression to write' },
    ],
    default: 'fields',
  },
  {
    displayName: 'Sign Ref',
    name: 'signRef',
    type: 'string',
    default: '={{ $json.signRef }}',
    required: true,
    displayOptions: { show: { sessionFrom: ['fields'] } },
    description: 'The session to move on (List Due Sessions\' "signRef")',
  },
  {
    displayName: 'Webhook Event',
    name: 'delivery',
    type: 'json',
    default: '={{ $json.delivery ?? "" }}',
    displayOptions: { show: { sessionFrom: ['fields'] } },
    description: 'A webhook event to apply first, then the step it leads to: the Singpass Sign Trigger\'s "delivery" (signature, error), or List Due Sessions\' for a kept event no run applied (replayCertificate, replaySignature, replayError). Empty: the session\'s due step only.',
  },
  { ...idleSecondsInput, description: `${idleSecondsInput.description} For an item of List Due Sessions, the time it listed the session by is used instead.` },
  handOverLeaseInput,
  handOverWindowInput,
  { ...pdfOutput, description: 'Binary property to put the signed PDF in, for a signed PDF this step hands over' },
]);

/**
 * For the resume schedule, after List Due Sessions: the core's one entry point of a stored session (`step`, the
 * same the runner and the Node-RED nodes use) runs the step the record's phase calls for — continue a claimed
 * certificate, resubmit the saved hash, finish the signature, or expire — and saves it with compare-and-set. A
 * webhook event given with the item (the trigger's, or a kept one List Due hands back) is applied first (a
 * certificate only claimed, as the webhook would), then driven the same way: the workflow needs no routing by action.
 * Outputs the record as saved (`action`, `lost` when another run changed it first, `ended` when this run ended the
 * session: failed, expired, or undelivered once the hand-over window closed), for the workflow to record.
 *
 * Finishing takes the PDF to the level asked for and hands it over (`handOver: true`): the signed PDF as binary under
 * its hand-over file name, with only `signRef`, `attempt`, `fileName` and the result — no record, no personal data.
 * The workflow stores it, then Acknowledge Stored PDF; the storage's error output goes to Report Storage Failure. One
 * not acknowledged within the lease is handed over again by the schedule (the same bytes and name).
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const fromItem = this.getNodeParameter('sessionFrom', i, 'fields') === 'item';
  const signRef = String((fromItem ? item.json.signRef : this.getNodeParameter('signRef', i)) ?? '').trim();
  if (!signRef) throw invalidInput(fromItem ? 'Session From' : 'Sign Ref', fromItem ? 'the item has no "signRef": connect this node to the Singpass Sign Trigger or List Due Sessions' : 'is empty; pass List Due Sessions\' "signRef"');
  // the store credential's; a version-1 folder: the one List Due Sessions listed the item by (set in one node), else this node's
  const listed = item.json.idleSeconds;
  const ownIdle = usesStoreCredential(this) ? {} : { takeOverIdleMs: (typeof listed === 'number' && listed >= 0 ? listed : idleSecondsOf(this, i)) * 1000 };
  const store = await sessionRecordStore(this, i, ownIdle);
  // a version-1 PostgreSQL store keeps its credential's (part of every stored due time)
  const idleMs = store.kind === 'folder' && ownIdle.takeOverIdleMs !== undefined ? ownIdle.takeOverIdleMs : store.policy.takeOverIdleMs;
  const policy = handOverPolicyOf(this, i);
  const { engine } = await signingEngine(this);
  const given = await withStoredCertificate(store, givenDelivery(fromItem ? item.json.delivery : this.getNodeParameter('delivery', i, ''), signRef));
  let r: StepOutcome;
  let eventOutcome: IDataObject = {};
  let eventMoved = false;
  if (given) {
    const applied = await applyGivenEvent(engine, store, given);
    eventOutcome = { event: given.event.type, ...(applied.refused ? { eventRefused: applied.refused } : {}) };
    eventMoved = applied.moved;
    // the event moved the record: whatever it made due now (a claim continued, a signature finished), as this run
    // moved it, no idle time to wait for
    r = applied.moved ? await step(store, signRef, { on: 'due', idleMs: 0 }, { engine, policy }) : { on: 'event', action: 'none', moved: false, signingEnded: false, ...(applied.record ? { record: applied.record } : {}) };
    if (r.action === 'none' && applied.record) r = { ...r, record: (await store.get(signRef)) ?? applied.record };
  } else {
    r = await step(store, signRef, { on: 'due', idleMs }, { engine, policy });
  }
  if (!r.record) return { json: { signRef, action: r.action, found: false, ...eventOutcome }, binary: item.binary };
  // ended by this run (not found ended): what a workflow routes on to record the outcome once
  const ended = isSessionEnded(r.record) && !r.lost && (eventMoved || r.action !== 'none');
  if (r.handOver) {
    const h = r.handOver;
    const output = String(this.getNodeParameter('outputBinaryPropertyName', i, 'data'));
    const json: IDataObject = {
      action: r.action, lost: false, ended: false, handOver: true, ...eventOutcome, signRef, attempt: h.attempt, fileName: h.fileName,
      status: r.record.state.status, phase: sessionPhase(r.record), revision: r.record.revision,
      ...(r.record.result ? { result: { ...r.record.result } } : {}),
    };
    return { json, binary: { [output]: await pdfBinary(this, h.pdf, h.fileName) } };
  }
  const json: IDataObject = { action: r.action, lost: r.lost === true, ended, ...eventOutcome, revision: r.record.revision, phase: sessionPhase(r.record), ...storedRecordSummary(r.record) };
  if (r.documentMissing) {
    // nothing done: the store has no PDF for this session (deleted by hand, or saved in another store)
    const what = r.action === 'handOver' ? 'its signed PDF is not (deleted by hand?): there is nothing to hand over; acknowledge the session if your storage has it' : `its PDF is not: the ${r.action} step needs it (save it with the record after Create Session)`;
    return { json: { ...json, documentMissing: true, error: { code: 'STATE_INVALID', message: `The session record ${signRef} is in ${store.where} but ${what}` } } };
  }
  return { json };
}

/** A replayed certificate event whose item carries no certificate: the one the store kept (see `eventItem`). */
async function withStoredCertificate(store: DurableSessionStore, d: VerifiedDelivery | undefined): Promise<VerifiedDelivery | undefined> {
  return d && deliveryWithCertificate(store, d);
}

/** The event given with the item, if any (an empty field or none: the due step only). */
function givenDelivery(value: unknown, signRef: string): VerifiedDelivery | undefined {
  if (value === undefined || value === null || value === '' || (typeof value === 'object' && !Object.keys(value).length)) return undefined;
  const delivery = readDelivery(value);
  if (delivery.event.signRef !== signRef) throw invalidInput('Webhook Event', `is an event of session ${delivery.event.signRef}, not of ${signRef}`);
  return delivery;
}

/**
 * Apply an event (live from the trigger, or kept and replayed) to the stored record as the webhook would have (a
 * certificate only claimed: no PDF, no outbound call), saved with compare-and-set — the PostgreSQL store's save marks
 * a kept event applied. One the session does not take (ended meanwhile, another session's token) is marked applied
 * too: replaying it again would change nothing.
 */
async function applyGivenEvent(engine: Awaited<ReturnType<typeof signingEngine>>['engine'], store: DurableSessionStore, delivery: VerifiedDelivery): Promise<{ moved: boolean; record?: SessionRecord; refused?: IDataObject }> {
  const r = await step(store, delivery.event.signRef, { on: 'event', delivery }, { engine });
  if (r.refused === undefined) return { moved: r.moved, ...(r.record ? { record: r.record } : {}) };
  // a typed error is the session's verdict on the event (ended meanwhile, another session's token); others fail the run
  if (!(r.refused instanceof SingpassFlowsError)) throw r.refused as Error;
  await store.markDeliveryApplied?.(delivery.event.signRef, delivery.event.type);
  return { moved: false, record: r.record, refused: { code: r.refused.code, message: r.refused.message } };
}
