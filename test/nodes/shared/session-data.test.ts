/** The trigger's certificate item without the certificate, and the certificate found again in the store by sign_ref. */
import { deliveryWithCertificate, eventItem, readDelivery, readFullDelivery, storedRecordSummary } from '../../../nodes/shared/session-data';
import type { KeptDelivery, SessionRecord, VerifiedDelivery } from '../../../src/session';

const der = Buffer.from('3082010a0201', 'hex');
const delivery: VerifiedDelivery = {
  notificationToken: 'sfn1_token',
  event: {
    type: 'certificate', signRef: 'ref-1', nonce: 'n', issuedAt: 1,
    certificate: { der, base64: der.toString('base64'), subject: 'C=SG, CN=TAN AH KOW, serialNumber=S1234567D', issuer: 'CA', serialNumber: '01', notBefore: '', notAfter: '', publicKeyAlgorithm: 'EC' },
  } as VerifiedDelivery['event'],
};

it('withheld: the item names the session and the event, not the certificate or the NRIC', () => {
  const item = eventItem(delivery, { withholdCertificate: true });
  expect(JSON.stringify(item)).not.toMatch(new RegExp(`${der.toString('base64')}|S1234567D`));
  expect(item).toMatchObject({ type: 'certificate', signRef: 'ref-1' });
  expect(JSON.stringify(eventItem(delivery))).toContain(der.toString('base64')); // a trigger keeping nothing passes it on
});

it('found again: the kept delivery first, else the active record\'s certificate, else a typed error', async () => {
  const withheld = readDelivery(eventItem(delivery, { withholdCertificate: true }).delivery);
  const kept: KeptDelivery = { type: 'certificate', applied: false, delivery };
  const fromKept = await deliveryWithCertificate({ get: async () => undefined, getDelivery: async () => kept }, withheld);
  expect(fromKept.event.type === 'certificate' && fromKept.event.certificate.der).toEqual(der);
  const record = { state: { signRef: 'ref-1', certificate: der.toString('base64') } } as unknown as SessionRecord;
  const fromRecord = await deliveryWithCertificate({ get: async () => record, getDelivery: async () => undefined }, withheld);
  expect(fromRecord.event.type === 'certificate' && fromRecord.event.certificate.der).toEqual(der);
  await expect(deliveryWithCertificate({ get: async () => undefined }, withheld)).rejects.toMatchObject({ code: 'STATE_INVALID' });
  expect(() => readFullDelivery(eventItem(delivery, { withholdCertificate: true }).delivery)).toThrow(expect.objectContaining({ code: 'STATE_INVALID' }));
});

it('a stored session\'s record in an item: without the certificate', () => {
  const record = { format: 'singpass-flows/signing-session@1', state: { signRef: 'ref-1', status: 'hash_submitted', certificate: 'CERT' }, prepared: { certificate: 'CERT', chain: [] }, revision: 3 } as unknown as SessionRecord;
  expect(JSON.stringify(storedRecordSummary(record))).not.toContain('CERT');
  expect(record.state.certificate).toBe('CERT'); // the record itself is left alone
});
