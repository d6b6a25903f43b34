import { invalidInput } from '../errors';
import type { VerifiedDelivery } from './types';

/**
 * A verified webhook delivery as plain JSON and back, for front ends that keep or pass it where Buffers do not
 * survive (n8n items, a file, a database): the certificate travels as base64 only and its DER is
 * rebuilt on the way back. `field` names the setting or input in the caller's words for the error message.
 */
export function deliveryToJson(d: VerifiedDelivery): Record<string, unknown> {
  const event = d.event.type === 'certificate' ? { ...d.event, certificate: { ...d.event.certificate, der: undefined } } : d.event;
  return JSON.parse(JSON.stringify({ event, notificationToken: d.notificationToken })) as Record<string, unknown>;
}

export function deliveryFromJson(value: unknown, field = 'delivery'): VerifiedDelivery {
  const d = value as { event?: Record<string, unknown>; notificationToken?: unknown } | undefined;
  const e = d?.event;
  if (!e || typeof e.type !== 'string' || typeof e.signRef !== 'string' || typeof d?.notificationToken !== 'string') {
    throw invalidInput(field, 'pass the verified delivery a webhook step output (an object with "event" and "notificationToken")');
  }
  if (e.type === 'certificate') {
    const cert = e.certificate as Record<string, unknown> | undefined;
    if (!cert || typeof cert.base64 !== 'string') throw invalidInput(field, 'the certificate event has no certificate');
    return { notificationToken: d.notificationToken, event: { ...e, certificate: { ...cert, der: Buffer.from(cert.base64, 'base64') } } as unknown as VerifiedDelivery['event'] };
  }
  return { notificationToken: d.notificationToken, event: e as unknown as VerifiedDelivery['event'] };
}
