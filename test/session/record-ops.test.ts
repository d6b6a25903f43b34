import { sessionFailure } from '../../src/session';
import { record } from './records';

/** Why a session failed, ours and the service's own code beside it, in every output (issue 37). */
describe('sessionFailure', () => {
  it('a refused call: our code with the service\'s from the refusal', () => {
    const r = record('failed', { error: { code: 'SIGN_REQUEST_REJECTED', message: 'rejected', serviceCode: 'INVALID_REQUEST' } }, { error: { code: 'SIGN_REQUEST_REJECTED', message: 'rejected', correlationId: '' } });
    expect(sessionFailure(r)).toEqual({ code: 'SIGN_REQUEST_REJECTED', message: 'rejected', serviceCode: 'INVALID_REQUEST' });
  });

  it('the service\'s error event: ours is SIGN_REQUEST_REJECTED, the event\'s code is the service\'s', () => {
    expect(sessionFailure(record('failed', {}, { error: { code: 'user_cancelled', message: 'declined', correlationId: 'c' } })))
      .toEqual({ code: 'SIGN_REQUEST_REJECTED', message: 'declined', serviceCode: 'user_cancelled' });
    expect(sessionFailure(record('failed', { error: { code: 'SIGN_REQUEST_REJECTED', message: 'x' } }, { error: { code: 'user_cancelled', message: 'no', correlationId: 'c' } })))
      .toEqual({ code: 'SIGN_REQUEST_REJECTED', message: 'x', serviceCode: 'user_cancelled' });
  });

  it('a failure of ours carries no service code; a session that did not fail has no failure', () => {
    expect(sessionFailure(record('failed', { error: { code: 'OCSP_REVOKED', message: 'revoked' } }, { error: { code: 'OCSP_REVOKED', message: 'revoked', correlationId: '' } })))
      .toEqual({ code: 'OCSP_REVOKED', message: 'revoked' });
    expect(sessionFailure(record('completed'))).toBeUndefined();
  });
});
