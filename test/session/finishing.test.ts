/**
 * The finishing rules on their own: which failures keep the signed record for a retry (`isTemporaryFinishFailure`),
 * and what a session completed short of its level says (`finishShortfall`). The stages themselves run against the
 * sandbox in finish-retry.e2e.test.ts and engine-transitions.test.ts.
 */
import { SingpassFlowsError } from '../../src/errors';
import { finishShortfall, isTemporaryFinishFailure, type SessionRecord } from '../../src/session';

describe('isTemporaryFinishFailure', () => {
  it.each([
    ['a TSA rejection for its own passing reasons', true, new SingpassFlowsError('TSA_FAILED', 'm', { pkiStatus: 2, failInfo: ['addInfoNotAvailable'], retryable: true })],
    ['a TSA rejection of the request', false, new SingpassFlowsError('TSA_FAILED', 'm', { pkiStatus: 2, failInfo: ['badRequest'], retryable: false })],
    ['a TSA answering 429', true, new SingpassFlowsError('TSA_FAILED', 'm', { status: 429, retryable: false })],
    ['an OCSP responder answering 503', true, new SingpassFlowsError('OCSP_FAILED', 'm', { status: 503, retryable: true })],
    ['an issuing CA certificate that could not be downloaded', true, new SingpassFlowsError('CHAIN_INCOMPLETE', 'm', { retryable: true })],
    ['a chain that does not reach a trusted root', false, new SingpassFlowsError('CHAIN_INCOMPLETE', 'm', {})],
    ['a revoked certificate', false, new SingpassFlowsError('OCSP_REVOKED', 'm', { retryable: false })],
    ['a signature that does not verify', false, new SingpassFlowsError('SIGNATURE_INVALID', 'm', { retryable: true })],
    ['not ours', false, new Error('boom')],
  ])('%s → temporary: %s', (_what, temporary, e) => {
    expect(isTemporaryFinishFailure(e)).toBe(temporary);
  });
});

describe('finishShortfall', () => {
  const missing = { requested: 'B-LTA', stage: 'embed', code: 'TSA_FAILED', message: 'refused' } as const;
  const record = (status: string, result?: SessionRecord['result']): SessionRecord => ({ state: { status }, ...(result ? { result } : {}) }) as unknown as SessionRecord;

  it('says what a completed session lacks, and nothing for a complete or unfinished one', () => {
    expect(finishShortfall(record('completed', { level: 'B-B', valid: true, missing }))).toEqual(missing);
    expect(finishShortfall(record('completed', { level: 'B-LTA', valid: true }))).toBeUndefined();
    expect(finishShortfall(record('signed'))).toBeUndefined();
    expect(finishShortfall(record('failed', { level: null, valid: false }))).toBeUndefined();
  });
});
