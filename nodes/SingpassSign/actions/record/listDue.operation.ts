import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { idleSecondsInput, idleSecondsOf, sessionRecordStore, storeInputs } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';
import { eventItem, recordSummary } from '../../../shared/session-data';

export const description: INodeProperties[] = forOperation('sessionRecord', 'listDue', [
  ...storeInputs,
  idleSecondsInput,
]);

/**
 * For a schedule: one item per session whose next step is due now, by the engine's one rule (`nextStep`, the same
 * for every front end), with `action` to route on: `submitHash` (at the save point: Submit Document Hash with After
 * an Interruption), `finish` (signed, not finished: Finalize Signature on the stored record and PDF; after a
 * temporary failure, from its `retryAt`), `expire` (past its deadline, no event can come: Expire Session),
 * `continueCertificate` (claimed, nothing prepared: Run Due Step continues it). Run Due Step runs any of them. Each carries the record and its `revision` for a compare-and-set
 * Save Session Record. Ended sessions are never listed; no item when none is due.
 *
 * PostgreSQL store: also one item per webhook event the Singpass Sign Trigger kept and answered but no step applied
 * within the credential's idle time (n8n lost the execution it started after the answer), that the session still
 * needs — `replayCertificate`, `replaySignature`, `replayError`, shaped like the trigger's output (`type`, `signRef`,
 * `delivery`): route each to the steps the trigger's output of that type feeds. Each is leased to this run for a
 * minute (another process's schedule skips it meanwhile). Kept events a session went past are marked done by the
 * save that moved it on (any left, e.g. of an ended session, here).
 */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
  const idleSeconds = idleSecondsOf(this, i);
  const store = await sessionRecordStore(this, i);
  const { due } = await store.listDue({ idleSeconds });
  // the folder store's idle time goes with each item: Run Due Step judges "due" by the same one
  const listedIdle = store.idleMs === undefined ? { idleSeconds } : {};
  const items: INodeExecutionData[] = due.map((d) => ({ json: { action: d.action, dueSince: new Date(d.at).toISOString(), revision: d.record.revision, ...listedIdle, ...recordSummary(d.record) } }));
  for (const { kept } of (await store.claimDeliveriesToReplay?.()) ?? []) {
    const receivedAt = kept.receivedAt === undefined ? {} : { dueSince: new Date(kept.receivedAt).toISOString() };
    items.push({ json: { action: REPLAY_ACTION[kept.type], ...receivedAt, ...eventItem(kept.delivery) } });
  }
  return items;
}

/** The action of a kept event to replay, per event type. */
const REPLAY_ACTION = { certificate: 'replayCertificate', signature: 'replaySignature', error: 'replayError' } as const;
