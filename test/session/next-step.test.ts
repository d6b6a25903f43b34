/** The one rule every scheduler uses for "what does this stored session need next, and from when". */
import { DEFAULT_RETENTION_MS, isDue, nextStep, sessionPhase } from '../../src/session';
import { T, prepared, record } from './records';

const failure = { code: 'TSA_FAILED', message: 'down', at: T * 1000, attempts: 2, retryAt: T * 1000 + 2000 };

describe('nextStep', () => {
  it('waiting for the scan: expire at expires_at', () => {
    expect(nextStep(record('waiting_for_scan'))).toEqual({ action: 'expire', at: (T + 120) * 1000 });
  });

  it('hash submitted: expire at the later of expires_at and the scan + the scan extension', () => {
    const r = record('hash_submitted', {}, { scannedAt: T + 100 });
    expect(nextStep(r)).toEqual({ action: 'expire', at: (T + 220) * 1000 });
    expect(nextStep(r, { scanExtensionSeconds: 10 })).toEqual({ action: 'expire', at: (T + 120) * 1000 });
  });

  it('claimed: continue the certificate once idle, never later than the deadline', () => {
    const r = record('certificate_received', {}, { certificate: 'AAAA', nonce: 'n', scannedAt: T });
    expect(nextStep(r)).toEqual({ action: 'continueCertificate', at: T * 1000 });
    expect(nextStep(r, { idleMs: 30_000 })).toEqual({ action: 'continueCertificate', at: T * 1000 + 30_000 });
    expect(nextStep(r, { idleMs: 10 ** 9 }).at).toBe((T + 120) * 1000);
  });

  it('at the save point: resubmit once idle, or at retryAt after a temporary failure', () => {
    const r = record('certificate_received', { prepared, submitting: { documentHash: 'ab', attempts: 1 } }, { nonce: 'n', scannedAt: T });
    expect(nextStep(r, { idleMs: 5000 })).toEqual({ action: 'submitHash', at: T * 1000 + 5000 });
    const deferred = { ...r, lastSubmitFailure: failure };
    expect(nextStep(deferred, { idleMs: 5000 })).toEqual({ action: 'submitHash', at: failure.retryAt });
  });

  it('signed: finish once idle, or at retryAt after a temporary failure — the service deadline does not apply', () => {
    const r = record('signed', { prepared }, { signature: 'ab', scannedAt: T - 1000 });
    expect(nextStep(r, { idleMs: 60_000 })).toEqual({ action: 'finish', at: T * 1000 + 60_000 });
    const deferred = { ...r, lastFinishFailure: { ...failure, stage: 'embed' as const, finishBy: T * 1000 + 86_400_000 } };
    expect(nextStep(deferred, { idleMs: 60_000 })).toEqual({ action: 'finish', at: failure.retryAt });
  });

  it('ended: forget after the retention', () => {
    for (const status of ['completed', 'failed', 'expired'] as const) {
      expect(nextStep(record(status))).toEqual({ action: 'forget', at: T * 1000 + DEFAULT_RETENTION_MS });
      expect(nextStep(record(status), { retentionMs: 1000 })).toEqual({ action: 'forget', at: T * 1000 + 1000 });
    }
  });

  it('isDue compares with now', () => {
    const r = record('waiting_for_scan');
    expect(isDue(r, (T + 120) * 1000 - 1)).toBe(false);
    expect(isDue(r, (T + 120) * 1000)).toBe(true);
  });
});

describe('sessionPhase', () => {
  it('names every phase from the record\'s fields', () => {
    expect(sessionPhase(record('waiting_for_scan'))).toBe('waitingForScan');
    expect(sessionPhase(record('certificate_received', {}, { certificate: 'AAAA', nonce: 'n' }))).toBe('certificateClaimed');
    expect(sessionPhase(record('certificate_received', { prepared, submitting: { documentHash: 'ab', attempts: 0 } }, { nonce: 'n' }))).toBe('atSavePoint');
    expect(sessionPhase(record('hash_submitted'))).toBe('hashSubmitted');
    expect(sessionPhase(record('signed', { prepared }, { signature: 'ab' }))).toBe('signed');
    expect(sessionPhase(record('completed'))).toBe('completed');
    expect(sessionPhase(record('failed'))).toBe('failed');
    expect(sessionPhase(record('expired'))).toBe('expired');
  });
});
