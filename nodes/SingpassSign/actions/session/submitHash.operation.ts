import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError } from '../../../../src/errors';
import { isAtSavePoint } from '../../../../src/session';
import { signingEngine } from '../../../shared/engine';
import { forOperation } from '../../../shared/router';
import { readRecord, recordSummary, submissionSummary } from '../../../shared/session-data';
import { recordInput } from '../fields';

export const description: INodeProperties[] = forOperation('session', 'submitDocumentHash', [
  { ...recordInput, hint: 'The record Prepare PDF Signature output, as your workflow stored it' },
]);

/**
 * The certificate event's second half: send the hash Prepare PDF Signature saved in the record (never a new one).
 * Only a record Prepare PDF Signature output is accepted, so no hash leaves without the certificate check. Run again
 * on the same stored record (n8n died after the call), the service's "already submitted" means the first call got
 * through: the session waits for the signature. When the service cannot take the hash just now (the engine's rule:
 * unreachable, timed out, 5xx, rate-limited), the record stays at the save point (`readyToSubmit`, `retryLater`,
 * `error`): store it, a schedule runs Submit Document Hash on it again before the session expires.
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const record = readRecord(this.getNodeParameter('record', i));
  if (!isAtSavePoint(record)) {
    throw new SingpassFlowsError('STATE_INVALID', `Submit Document Hash takes the record Prepare PDF Signature output (certificate checked, PDF prepared); this session is ${record.state.status}`, { retryable: false, field: 'Session Record' });
  }
  const { engine } = await signingEngine(this);
  const r = await engine.resumeSubmission(record);
  return { json: { ...recordSummary(r.record), ...submissionSummary(r.record) }, binary: item.binary };
}
