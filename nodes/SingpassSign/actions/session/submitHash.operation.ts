import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError } from '../../../../src/errors';
import { isAtSavePoint } from '../../../../src/session';
import { signingEngine } from '../../../shared/engine';
import { forOperation } from '../../../shared/router';
import { readRecord, recordSummary, submissionSummary } from '../../../shared/session-data';
import { recordInput } from '../fields';

export const description: INodeProperties[] = forOperation('session', 'submitDocumentHash', [
  { ...recordInput, hint: 'The record Prepare PDF Signature output, as your workflow stored it' },
  {
    displayName: 'After an Interruption',
    name: 'afterInterruption',
    type: 'boolean',
    default: false,
    description: 'Whether this node runs on a record found stored later (e.g. by a schedule resuming sessions) rather than right after saving the record Prepare PDF Signature output. Turn on for a resume schedule: an earlier run may have sent the hash before n8n stopped, so the service\'s "already submitted" means it got through and the session waits for the signature. Leave off right after Save Session Record: the hash has not been sent yet, so a refusal is the service\'s verdict and the session ends with its reason.',
  },
]);

/**
 * The certificate event's second half: send the hash Prepare PDF Signature saved in the record (never a new one).
 * Only a record Prepare PDF Signature output is accepted, so no hash leaves without the certificate check. The record
 * counts the hash calls made (`submitting.attempts`): on the first call (0 made, After an Interruption off) a refusal
 * is the service's verdict and the session fails with its code and message. A resend — an earlier call counted, or
 * After an Interruption on (a schedule resuming a stored record: n8n may have died after a call the record does not
 * count) — takes the service's "already submitted" as the earlier call having got through: the session waits for
 * the signature. When the service cannot take the hash just now (the engine's rule: unreachable, timed out, 5xx,
 * rate-limited), the record stays at the save point (`readyToSubmit`, `retryLater`, `error`): store it, a schedule
 * runs Submit Document Hash on it again before the session expires.
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const record = readRecord(this.getNodeParameter('record', i));
  if (!isAtSavePoint(record)) {
    throw new SingpassFlowsError('STATE_INVALID', `Submit Document Hash takes the record Prepare PDF Signature output (certificate checked, PDF prepared); this session is ${record.state.status}`, { retryable: false, field: 'Session Record' });
  }
  const { engine } = await signingEngine(this);
  // a stored record picked up by a schedule may have had a call the record does not count (n8n stopped mid-call)
  const afterInterruption = this.getNodeParameter('afterInterruption', i, false) === true;
  const r = await (afterInterruption ? engine.resubmitHash(record) : engine.resumeSubmission(record));
  return { json: { ...recordSummary(r.record), ...submissionSummary(r.record) }, binary: item.binary };
}
