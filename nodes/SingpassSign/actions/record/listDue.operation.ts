import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { idleSecondsInput, idleSecondsOf, LEASE_OWNER, sessionRecordStore, STORE_CREDENTIAL_VERSIONS, storeInputs, usesStoreCredential } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';
import { eventItem, storedRecordSummary } from '../../../shared/session-data';

export const description: INodeProperties[] = forOperation('sessionRecord', 'listDue', [
  ...storeInputs,
  idleSecondsInput,
  {
    displayName: 'Delete Ended Sessions',
    name: 'deleteEnded',
    type: 'boolean',
    // off: a workflow saved before this option deletes nothing it did not ask for (its Clean Up node, if any, does)
    default: false,
    displayOptions: { show: { '@version': STORE_CREDENTIAL_VERSIONS } },
    description: 'Whether each run also deletes the completed, failed and expired sessions unchanged for the store credential\'s "Keep Ended Sessions (Days)" (record, PDF being signed, kept events; PostgreSQL also its copy of the signed PDF), so personal data does not outlive the session without a separate clean-up schedule. Live sessions are never deleted; nothing is output for them.',
  },
]);

/**
 * For a schedule: one item per session whose next step is due now, by the engine's one rule (`nextStep`, the same
 * for every front end), with `action` to route on: `submitHash` (at the save point: Submit Document Hash with After
 * an Interruption), `finish` (signed, not finished: Finalize Signature on the stored record and PDF; after a
 * temporary failure, from its `retryAt`), `handOver` (finished, its signed PDF not acknowledged within the lease, or
 * its storage failed: Run Due Step hands it over again), `expire` (past its deadline, no event can come: Expire Session),
 * `continueCertificate` (claimed, nothing prepared: Run Due Step continues it). Run Due Step runs any of them. Each carries the record and its `revision` for a compare-and-set
 * Save Session Record. Ended sessions are never listed; no item when none is due. With Delete Ended Sessions (version
 * 2), ended sessions past the store credential's retention are deleted on the way (cleanUp's rule, in the same walk).
 *
 * PostgreSQL store: also one item per webhook event the Singpass Sign Trigger kept and answered but no step applied
 * within the credential's idle time (n8n lost the execution it started after the answer), that the session still
 * needs — `replayCertificate`, `replaySignature`, `replayError`, shaped like the trigger's output (`type`, `signRef`,
 * `delivery`): route each to the steps the trigger's output of that type feeds. Each is leased to this run for a
 * minute (another process's schedule skips it meanwhile). Kept events a session went past are marked done by the
 * save that moved it on (any left, e.g. of an ended session, here).
 */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
  // version 1: the node's own take-over time for its folder, passed on in each item for Run Due Step
  const ownIdle = usesStoreCredential(this) ? undefined : idleSecondsOf(this, i);
  const store = await sessionRecordStore(this, i, ownIdle === undefined ? {} : { takeOverIdleMs: ownIdle * 1000 });
  if (usesStoreCredential(this) && this.getNodeParameter('deleteEnded', i, false) === true) {
    const { deleted } = await store.cleanUp();
    if (deleted.length) this.logger.info(`List Due Sessions deleted ${deleted.length} ended session(s) past the retention from ${store.where}`);
  }
  // a PostgreSQL store leases each to this process (another process's schedule skips it until a save or the lease's end)
  const { due } = await store.claimDue({ owner: LEASE_OWNER });
  const listedIdle = ownIdle !== undefined && store.kind === 'folder' ? { idleSeconds: ownIdle } : {};
  const items: INodeExecutionData[] = due.map((d) => ({ json: { action: d.action, dueSince: new Date(d.at).toISOString(), revision: d.record.revision, ...listedIdle, ...storedRecordSummary(d.record) } }));
  for (const { kept } of await store.claimDeliveriesToReplay({ owner: LEASE_OWNER })) {
    const receivedAt = kept.receivedAt === undefined ? {} : { dueSince: new Date(kept.receivedAt).toISOString() };
    items.push({ json: { action: REPLAY_ACTION[kept.type], ...receivedAt, ...eventItem(kept.delivery, { withholdCertificate: true }) } });
  }
  return items;
}

/** The action of a kept event to replay, per event type. */
const REPLAY_ACTION = { certificate: 'replayCertificate', signature: 'replaySignature', error: 'replayError' } as const;
