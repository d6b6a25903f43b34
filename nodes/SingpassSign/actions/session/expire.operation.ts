import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { signingEngine } from '../../../shared/engine';
import { forOperation } from '../../../shared/router';
import { readRecord, recordSummary } from '../../../shared/session-data';
import { recordInput } from '../fields';

export const description: INodeProperties[] = forOperation('session', 'expireSession', [recordInput]);

/** For a schedule: end the session as expired once no event can come any more (no-op before that). */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const { engine } = await signingEngine(this);
  const record = readRecord(this.getNodeParameter('record', i));
  const r = engine.expire(record);
  return { json: { ...recordSummary(r.record), deadline: new Date(engine.deadline(record)).toISOString() } };
}
