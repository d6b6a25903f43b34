import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError, type ErrorCode } from '../../../../src/errors';
import { isAtSavePoint } from '../../../../src/session';
import { signingEngine } from '../../../shared/engine';
import { forOperation } from '../../../shared/router';
import { readRecord, recordSummary } from '../../../shared/session-data';
import { recordInput } from '../fields';

export const description: INodeProperties[] = forOperation('session', 'submitDocumentHash', [
  { ...recordInput, hint: 'The record Prepare PDF Signature output, as your workflow stored it' },
  {
    displayName: 'Keep Record on Temporary Failure',
    name: 'keepOnTemporaryFailure',
    type: 'boolean',
    default: false,
    description: 'Whether a hash call the service could not take just now (unreachable, timed out, 5xx, rate-limited) outputs the record unchanged, still ready to submit (retryLater: true), for a schedule to run Submit Document Hash on again before the session expires. Off: the session ends as failed.',
  },
]);

/** Faults of the hash call that say nothing about the session: the same call later can succeed. */
const TEMPORARY: ReadonlySet<ErrorCode | string> = new Set<ErrorCode>(['HTTP_TIMEOUT', 'HTTP_NETWORK', 'SIGN_SERVICE_ERROR', 'SIGN_RATE_LIMITED']);

/**
 * The certificate event's second half: send the hash Prepare PDF Signature saved in the record (never a new one).
 * Only a record Prepare PDF Signature output is accepted, so no hash leaves without the certificate check. Run again
 * on the same stored record (n8n died after the call), the service's "already submitted" means the first call got
 * through: the session waits for the signature.
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const record = readRecord(this.getNodeParameter('record', i));
  if (!isAtSavePoint(record)) {
    throw new SingpassFlowsError('STATE_INVALID', `Submit Document Hash takes the record Prepare PDF Signature output (certificate checked, PDF prepared); this session is ${record.state.status}`, { retryable: false, field: 'Session Record' });
  }
  const { engine } = await signingEngine(this);
  const r = await engine.resumeSubmission(record);
  const error = r.record.error;
  if (error && TEMPORARY.has(error.code) && this.getNodeParameter('keepOnTemporaryFailure', i, false) === true) {
    // The saved record is still the truth: the same hash, maybe already with the service; the next run resubmits it.
    return { json: { ...recordSummary(record), readyToSubmit: true, retryLater: true, error }, binary: item.binary };
  }
  return { json: { ...recordSummary(r.record), readyToSubmit: false, retryLater: false }, binary: item.binary };
}
