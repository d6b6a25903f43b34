import type { IDataObject } from 'n8n-workflow';
import { SingpassFlowsError, invalidInput } from '../../src/errors';
import {
  deliveryFromJson, deliveryToJson as coreDeliveryToJson, isSubmitDeferred, REDACTED_CERTIFICATE_JSON, serviceEventFailure, sessionFailure, signerOf,
  type KeptDelivery, type SessionRecord, type SignerIdInOutput, type VerifiedDelivery,
} from '../../src/session';

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
 * to replay: `type`, `signRef`, `delivery` (for Prepare PDF Signature / Apply Webhook Event); for a certificate event
 * the `signer` (name; the NRIC masked only with `signerId: 'masked'`), for an error event the service's `error`
 * (`code` and `serviceCode` the service's own) and `sessionError`, what the record gets once the event is applied (our
 * stable `code` and the service's `serviceCode`). `withholdCertificate`: a certificate event's item carries no
 * certificate (personal data: n8n keeps items in its executions); the steps that need it load it from the store by
 * sign_ref ({@link deliveryWithCertificate}).
 */
export function eventItem(d: VerifiedDelivery, options: { withholdCertificate?: boolean; signerId?: SignerIdInOutput } = {}): IDataObject {
  const { event } = d;
  const delivery = deliveryToJson(d);
  if (event.type === 'certificate' && options.withholdCertificate) {
    (delivery.event as IDataObject).certificate = { ...REDACTED_CERTIFICATE_JSON };
  }
  const json: IDataObject = { type: event.type, signRef: event.signRef, delivery };
  // a kept event replayed from the store has no certificate left to name anyone by
  if (event.type === 'certificate' && event.certificate.subject) json.signer = signerOf(event.certificate, options.signerId);
  if (event.type === 'error') {
    json.error = { code: event.errorCode, serviceCode: event.errorCode, message: event.message, correlationId: event.correlationId };
    json.sessionError = serviceEventFailure(event);
  }
  return json;
}

/**
 * A delivery for a step that takes the session record from the item (Signing Session resource): a certificate event
 * the trigger kept in the session store carries no certificate, and is never applied as one.
 */
export function readFullDelivery(value: unknown): VerifiedDelivery {
  const d = readDelivery(value);
  if (isCertificateWithheld(d)) {
    throw new SingpassFlowsError('STATE_INVALID', 'Webhook Delivery: this certificate event carries no certificate, the Singpass Sign Trigger kept it in the session store: use Prepare PDF Signature (Session Record), which loads it from there', { retryable: false, field: 'Webhook Delivery' });
  }
  return d;
}

/** A certificate event whose item carries no certificate (the trigger kept it in the session store). */
export function isCertificateWithheld(d: VerifiedDelivery): boolean {
  return d.event.type === 'certificate' && d.event.certificate.der.length === 0;
}

/**
 * The delivery with its certificate: as given, or, when the item carries none ({@link eventItem}), from the session
 * store by sign_ref — the delivery the trigger kept, else the certificate the session record holds while the session
 * is active. STATE_INVALID when the store has it no more (the session ended: it is not kept past that).
 */
export async function deliveryWithCertificate(
  store: { get(signRef: string): Promise<SessionRecord | undefined>; getDelivery?: (signRef: string, type: 'certificate') => Promise<KeptDelivery | undefined> },
  d: VerifiedDelivery,
): Promise<VerifiedDelivery> {
  if (!isCertificateWithheld(d)) return d;
  const { signRef } = d.event;
  const kept = await store.getDelivery?.(signRef, 'certificate');
  if (kept && kept.delivery.event.type === 'certificate' && kept.delivery.event.certificate.der.length > 0) return kept.delivery;
  const certificate = (await store.get(signRef))?.state.certificate;
  if (certificate) return deliveryFromJson({ ...deliveryToJson(d), event: { ...deliveryToJson(d).event as IDataObject, certificate: { base64: certificate } } }, 'Webhook Delivery');
  throw new SingpassFlowsError('STATE_INVALID', `The certificate of session ${signRef} is no longer in the session store (the session ended, or the event was kept in another store): nothing to check or prepare`, { retryable: false, field: 'Input' });
}

/**
 * A stored session's record as a workflow item carries it (the Session Record operations: the store holds the
 * record itself): without the user's certificate, which n8n would otherwise keep in its executions.
 */
export function storedRecordSummary(record: SessionRecord): IDataObject {
  const summary = recordSummary(record);
  const copy = summary.record as IDataObject & { state: IDataObject; prepared?: IDataObject };
  delete copy.state.certificate;
  if (copy.prepared) delete copy.prepared.certificate;
  return summary;
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
