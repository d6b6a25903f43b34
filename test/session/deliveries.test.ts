/** The one rule for replaying a kept delivery no process applied: does its session still need it? */
import { isDeliveryStillNeeded, type SessionRecord } from '../../src/session';
import { prepared, record } from './records';

describe('isDeliveryStillNeeded', () => {
  const phases: Array<[string, SessionRecord | undefined]> = [
    ['waiting for the scan', record('waiting_for_scan')],
    ['certificate claimed', record('certificate_received', {}, { certificate: 'AAAA', nonce: 'n' })],
    ['at the save point', record('certificate_received', { prepared, submitting: { documentHash: 'ab', attempts: 1 } }, { nonce: 'n' })],
    ['hash submitted', record('hash_submitted', { prepared }, { nonce: 'n' })],
    ['signed', record('signed', { prepared }, { signature: 'ab' })],
    ['completed', record('completed')],
    ['failed', record('failed')],
    ['expired', record('expired')],
    ['gone', undefined],
  ];
  // per phase: certificate, signature, error
  const expected: Record<string, [boolean, boolean, boolean]> = {
    'waiting for the scan': [true, false, true],
    'certificate claimed': [false, false, true], // the record's own next step (continueCertificate) carries it on
    'at the save point': [false, true, true], // the hash is resent by the record's next step; a signature proves it got through
    'hash submitted': [false, true, true],
    signed: [false, false, false], // finishing is the record's own step; the service's part ended with the signature
    completed: [false, false, false],
    failed: [false, false, false],
    expired: [false, false, false],
    gone: [false, false, false],
  };
  it.each(phases)('%s', (name, r) => {
    expect((['certificate', 'signature', 'error'] as const).map((type) => isDeliveryStillNeeded(r, type))).toEqual(expected[name]);
  });
});
