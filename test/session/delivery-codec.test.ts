/**
 * The verified delivery ⇄ JSON codec every front end uses where Buffers do not survive (n8n items, Node-RED context,
 * a database): a JSON round trip gives back the same delivery with the certificate's DER rebuilt; bad input is refused
 * with INVALID_INPUT naming the caller's field.
 */
import { deliveryFromJson, deliveryToJson, type VerifiedDelivery } from '../../src/session';
import { isSingpassFlowsError } from '../../src/errors';

const der = Buffer.from('3082010a0282010100c0ffee', 'hex');
const certificate: VerifiedDelivery = {
  notificationToken: 'sfn1_abc_def',
  event: {
    type: 'certificate', signRef: 'ref-1', nonce: 'n-1',
    certificate: { der, base64: der.toString('base64'), subject: 'CN=Tan', issuer: 'CN=CA', serialNumber: '01', notBefore: '2026-01-01T00:00:00Z', notAfter: '2027-01-01T00:00:00Z', publicKeyAlgorithm: 'EC P-256' },
  } as unknown as VerifiedDelivery['event'],
};
const signature: VerifiedDelivery = { notificationToken: 'sfn1_abc_def', event: { type: 'signature', signRef: 'ref-1', signature: 'ab'.repeat(32) } as unknown as VerifiedDelivery['event'] };

describe('delivery codec', () => {
  it('a certificate delivery survives JSON text: no Buffer in the JSON, the DER rebuilt from base64 on the way back', () => {
    const json = deliveryToJson(certificate);
    const text = JSON.stringify(json);
    expect(text).not.toContain('"der"');
    const back = deliveryFromJson(JSON.parse(text));
    expect(back).toEqual(certificate);
    expect(Buffer.isBuffer((back.event as { certificate: { der: Buffer } }).certificate.der)).toBe(true);
  });

  it('signature deliveries round-trip unchanged', () => {
    expect(deliveryFromJson(JSON.parse(JSON.stringify(deliveryToJson(signature))))).toEqual(signature);
  });

  it.each([
    ['nothing', undefined],
    ['no token', { event: { type: 'signature', signRef: 'r' } }],
    ['no signRef', { event: { type: 'signature' }, notificationToken: 't' }],
    ['a certificate event without its certificate', { event: { type: 'certificate', signRef: 'r' }, notificationToken: 't' }],
  ])('refuses %s with INVALID_INPUT naming the field', (_what, value) => {
    let error: unknown;
    try {
      deliveryFromJson(value, 'Webhook Delivery');
    } catch (e) {
      error = e;
    }
    expect(isSingpassFlowsError(error, 'INVALID_INPUT')).toBe(true);
    expect((error as Error).message).toContain('Webhook Delivery');
  });
});
