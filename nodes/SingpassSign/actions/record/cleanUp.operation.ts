import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { invalidInput } from '../../../../src/errors';
import { SESSION_POLICY } from '../../../../src/session';
import { sessionRecordStore, storeInputs } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';

export const description: INodeProperties[] = forOperation('sessionRecord', 'cleanUp', [
  ...storeInputs,
  {
    displayName: 'Keep Ended Sessions For (Days)',
    name: 'retentionDays',
    type: 'number',
    typeOptions: { minValue: 0, numberPrecision: 4 },
    // n8n wants a literal here; test/session/policy.test.ts holds it to SESSION_POLICY.retentionMs
    default: 7,
    description: 'Completed, failed and expired sessions are deleted (record and saved PDF) once unchanged this long. Live sessions are never deleted.',
  },
]);

/**
 * For a daily schedule: delete ended sessions' records (`<signRef>.json`) and saved PDFs (`<signRef>.pdf`) past the
 * retention, PDFs whose record was never saved, and temporary files a crash left. Signed PDFs and other files stay.
 */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const days = Number(this.getNodeParameter('retentionDays', i, SESSION_POLICY.retentionMs / 86_400_000));
  if (!Number.isFinite(days) || days < 0) throw invalidInput('Keep Ended Sessions For (Days)', 'must be a number of days ≥ 0');
  const store = await sessionRecordStore(this, i);
  const r = await store.cleanUp({ retentionSeconds: days * 86_400 });
  return { json: { deletedSessions: r.deleted.length, deleted: r.deleted, deletedPdfs: r.documents + r.orphanDocuments, tempFiles: r.tempFiles, kept: r.kept, unreadable: r.unreadable } };
}
