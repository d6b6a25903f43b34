import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { invalidInput } from '../../../../src/errors';
import { SESSION_POLICY } from '../../../../src/session';
import { sessionRecordStore, storeInputs } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';
import { eventItem, recordSummary } from '../../../shared/session-data';

export const description: INodeProperties[] = forOperation('sessionRecord', 'listDue', [
  ...storeInputs,
  {
    displayName: 'Leave a Step in Progress Alone For (Seconds)',
    name: 'idleSeconds',
    type: 'number',
    typeOptions: { minValue: 0 },
    // n8n wants a literal here; test/session/policy.test.ts holds it to SESSION_POLICY.takeOverIdleMs
    default: 45,
    // the PostgreSQL store computes due times at every save: its credential holds this setting
    displayOptions: { show: { store: ['folder'] } },
    description: 'A record saved in the middle of a step — prepared but not recorded as submitted, or signed but not finished — is taken over once unchanged this long: the run working on it has died. Longer than your slowest live step (a Submit or a Finalize gives up within about 21 s).',
  },
]);

/**
 * For a schedule: one item per session whose next step is due now, by the engine's one rule (`nextStep`, the same
 * for every front end), with `action` to route on: `submitHash` (at the save point: Submit Document Hash with After
 * an Interruption), `finish` (signed, not finished: Finalize Signature on the stored record and PDF; after a
 * temporary failure, from its `retryAt`), `expire` (past its deadline, no event can come: Expire Session),
 * `continueCertificate` (claimed by another front end sharing the folder, nothing prepared: Expire Session ends it
 * at its deadline; n8n has no step to continue it). Each carries the record and its `revision` for a compare-and-set
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
  const idleSeconds = Number(this.getNodeParameter('idleSeconds', i, SESSION_POLICY.takeOverIdleMs / 1000));
  if (!Number.isFinite(idleSeconds) || idleSeconds < 0) throw invalidInput('Leave a Step in Progress Alone For (Seconds)', 'must be a number of seconds ≥ 0');
  const store = await sessionRecordStore(this, i);
  const { due } = await store.listDue({ idleSeconds });
  // the folder store's idle time goes with each item: Run Due Step judges "due" by the same one
  const listedIdle = store.idleMs === undefined ? { idleSeconds } : {};
  const items: INodeExecutionData[] = due.map((d) => ({ json: { action: d.action, dueSince: new Date(d.dueSince).toISOString(), revision: d.record.revision, ...listedIdle, ...recordSummary(d.record) } }));
  for (const { kept } of (await store.claimReplays?.()) ?? []) {
    const receivedAt = kept.receivedAt === undefined ? {} : { dueSince: new Date(kept.receivedAt).toISOString() };
    items.push({ json: { action: REPLAY_ACTION[kept.type], ...receivedAt, ...eventItem(kept.delivery) } });
  }
  return items;
}

/** The action of a kept event to replay, per event type. */
const REPLAY_ACTION = { certificate: 'replayCertificate', signature: 'replaySignature', error: 'replayError' } as const;
