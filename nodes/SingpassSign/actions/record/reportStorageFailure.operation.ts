import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { SESSION_POLICY, step, type SessionRecord } from '../../../../src/session';
import { sessionRecordStore, storeInputs } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';
import { handOverStanding, signRefOf, signRefOfStoredPdf } from './acknowledgeStored.operation';

export const description: INodeProperties[] = forOperation('sessionRecord', 'reportStorageFailure', [
  ...storeInputs,
  signRefOfStoredPdf,
  {
    displayName: 'Error',
    name: 'storageError',
    type: 'json',
    default: '={{ $json.error }}',
    description: 'What the storage node said: its error output\'s "error" (text, or an object with "message")',
  },
]);

/**
 * On the error output of the workflow's storage node: its failure kept in the session record (handOver.lastFailure),
 * and the PDF handed over again by the resume schedule after a backoff (1, 2, 4 … s), never later than the lease Run
 * Due Step gave that hand-over would have. A session acknowledged meanwhile is left as it is.
 */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const signRef = signRefOf(this, i);
  const store = await sessionRecordStore(this, i);
  const handOverLeaseMs = leaseOf(await store.get(signRef));
  const r = await step(store, signRef, { on: 'handOverFailed', failure: storageError(this.getNodeParameter('storageError', i, '')) }, { policy: { handOverLeaseMs } });
  return { json: { signRef, reported: r.moved, ...handOverStanding(r.record) } };
}

/** The storage node's error as n8n hands it on: text, an object with a message (and maybe a code), or JSON of either. */
function storageError(value: unknown): { code?: string; message: string } {
  let v = value;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      // plain text
    }
  }
  if (v && typeof v === 'object') {
    const o = v as { message?: unknown; code?: unknown };
    const message = typeof o.message === 'string' && o.message ? o.message : JSON.stringify(v);
    return { ...(typeof o.code === 'string' && o.code ? { code: o.code.slice(0, 64) } : {}), message };
  }
  return { message: String(v ?? '') || 'the storage node failed (no message)' };
}

/** The lease Run Due Step gave the last hand-over (its Hand Over Again After setting), so no second setting is needed. */
function leaseOf(record: SessionRecord | undefined): number {
  const h = record?.handOver;
  return h?.lastAt !== undefined && h.nextAt > h.lastAt ? h.nextAt - h.lastAt : SESSION_POLICY.handOverLeaseMs;
}
