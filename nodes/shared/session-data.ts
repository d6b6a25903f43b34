import type { IDataObject } from 'n8n-workflow';
import { SingpassFlowsError, invalidInput } from '../../src/errors';
import { deliveryFromJson, deliveryToJson as coreDeliveryToJson, isSubmitDeferred, sessionFailure, type SessionRecord, type VerifiedDelivery } from '../../src/session';

/**
 * The session record and verified deliveries as they travel through n8n: plain JSON in items, in a Data Table or a
 * file. Buffers do not survive that trip, so the delivery's certificate travels as base64 and is revived here.
 */

function parseJson(field: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    throw invalidInput(field, 'is text but not valid JSON');
  }
}

/** The record handed to a step: the JSON Create Session output (from wherever the workflow stored it). */
export function readRecord(value: unknown): SessionRecord {
  const r = parseJson('Session Record', value) as Partial<SessionRecord> | undefined;
  if (!r || typeof r !== 'object' || r.format !== 'singpass-flows/signing-session@1' || !r.state || typeof r.state.signRef !== 'string') {
    throw new SingpassFlowsError('STATE_INVALID', 'Session Record: pass the "record" a Singpass Sign step output (stored by your workflow, e.g. in a Data Table or file, under its signRef)', { field: 'Session Record' });
  }
  return r as SessionRecord;
}

/** JSON form of a verified delivery (what the trigger outputs): the core's codec. */
export function deliveryToJson(d: VerifiedDelivery): IDataObject {
  return coreDeliveryToJson(d) as IDataObject;
}

/**
 * A delivery as a workflow item — what the Singpass Sign Trigger outputs, and List Due Sessions for a kept delivery
 * to replay: `type`, `signRef`, `delivery` (for Prepare PDF Signature / Apply Webhook Event), and for an error event
 * the service's `error`.
 */
export function eventItem(d: VerifiedDelivery): IDataObject {
  const { event } = d;
  const json: IDataObject = { type: event.type, signRef: event.signRef, delivery: deliveryToJson(d) };
  if (event.type === 'error') json.error = { code: event.errorCode, message: event.message, correlationId: event.correlationId };
  return json;
}

/** Back from JSON (text or object): the certificate's DER is rebuilt from its base64. */
export function readDelivery(value: unknown): VerifiedDelivery {
  const d = parseJson('Webhook Delivery', value) as { event?: unknown } | undefined;
  if (!d?.event) throw invalidInput('Webhook Delivery', 'pass the "delivery" output of the Singpass Sign Trigger (e.g. {{ $json.delivery }})');
  return deliveryFromJson(d, 'Webhook Delivery');
}

/**
 * After a hash call: `retryLater` (and `readyToSubmit`) when the engine kept the save point because the service could
 * not take the hash just now, with that failure as `error`; run Submit Document Hash on the stored record again.
 */
export function submissionSummary(record: SessionRecord): IDataObject {
  const retryLater = isSubmitDeferred(record);
  const failure = record.lastSubmitFailure;
  return { readyToSubmit: retryLater, retryLater, ...(failure ? { error: { code: failure.code, message: failure.message, ...(failure.serviceCode ? { serviceCode: failure.serviceCode } : {}) } } : {}) };
}

/** What every session step outputs: the record to store (under signRef) and where the session stands. */
export function recordSummary(record: SessionRecord): IDataObject {
  return {
    signRef: record.state.signRef,
    status: record.state.status,
    // ours and, when the service said one, its own code beside it (`serviceCode`)
    ...(sessionFailure(record) ? { error: sessionFailure(record) } : {}),
    ...(record.result ? { result: record.result } : {}),
    record: JSON.parse(JSON.stringify(record)) as IDataObject,
  };
}
