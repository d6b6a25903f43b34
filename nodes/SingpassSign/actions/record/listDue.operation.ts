import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { sessionRecordStore, storeInputs } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';
import { recordSummary } from '../../../shared/session-data';

export const description: INodeProperties[] = forOperation('sessionRecord', 'listDue', [
  ...storeInputs,
  {
    displayName: 'Idle at the Save Point For (Seconds)',
    name: 'idleSeconds',
    type: 'number',
    typeOptions: { minValue: 0 },
    default: 45,
    displayOptions: { show: { store: ['folder'] } },
    description: 'A record prepared and stored (Prepare PDF Signature) but not recorded as submitted is due once unchanged this long (a live run submits within seconds)',
  },
]);

/**
 * For a schedule: one item per session that needs a step now — `due: "savePoint"` (resubmit the saved hash: Submit
 * Document Hash) or `due: "pastDeadline"` (no event can come any more: Expire Session). Each carries the record and
 * its `revision` for a compare-and-set Save Session Record. Ended sessions are never listed; no item when none is due.
 */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
  const store = await sessionRecordStore(this, i);
  const { due } = await store.listDue({ idleSeconds: Number(this.getNodeParameter('idleSeconds', i, 45)) });
  return due.map((d) => ({ json: { due: d.reason, revision: d.record.revision, ...recordSummary(d.record) } }));
}
