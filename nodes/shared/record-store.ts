import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type { IExecuteFunctions, INode, INodeProperties, IWebhookFunctions } from 'n8n-workflow';
import { SingpassFlowsError, invalidInput, isSingpassFlowsError } from '../../src/errors';
import { createSessionStore, SESSION_POLICY, type DurableSessionStore, type PgStoreSettings, type SessionRecord, type StorePolicy } from '../../src/session';
import { nodeCredential } from './credentials';
import { checkedFolderStore, folderInput, recordStore as folderStore } from './file-store';
import { PG_STORE_TITLE, STORE_TITLE, credentialWhere, inStoreCredential, pgStoreSettings, storeSettings } from './pg-settings';

/** Credential type of the session store (version 2 nodes): a folder or PostgreSQL, chosen once for a workflow. */
export const STORE_CREDENTIAL = 'singpassSessionStoreApi';
/** Credential type of the PostgreSQL store of version-1 nodes (their Store parameter on PostgreSQL). */
export const PG_STORE_CREDENTIAL = 'singpassSessionStorePostgresApi';

/** Node versions whose store is the Store parameter (saved workflows keep behaving as before); later ones use the credential. */
export const STORE_PARAMETER_VERSIONS = [1];
/**
 * Node versions whose store is the {@link STORE_CREDENTIAL}: version 2 and every later one (version 3 only changed
 * defaults: the trigger's Certificate in Output, Create Session's Signature Level).
 */
export const STORE_CREDENTIAL_VERSIONS = [2, 3];

/** Whether this node keeps the store in its credential (version 2 on) rather than its Store parameter. */
export function usesStoreCredential(ctx: { getNode(): INode }): boolean {
  return ctx.getNode().typeVersion >= 2;
}

/** This process, as the owner of the leases it takes on due sessions and kept deliveries (another process skips them meanwhile). */
export const LEASE_OWNER = `n8n:${hostname()}:${process.pid}`;

export const storeInput: INodeProperties = {
  displayName: 'Store',
  name: 'store',
  type: 'options',
  options: [
    { name: 'Folder', value: 'folder', description: 'Files in a folder of this host: one n8n process, or several on one host' },
    { name: 'PostgreSQL', value: 'postgres', description: 'A PostgreSQL database (credential): for queue mode, where main, webhook and worker processes may run on several hosts' },
  ],
  default: 'folder',
  description: 'Where session records and the PDFs being signed are kept. Every Session Record node of a workflow must use the same store.',
  displayOptions: { show: { '@version': STORE_PARAMETER_VERSIONS } },
};

/** Version 1: the Store choice, then the Folder (folder store only): the first parameters of every Session Record operation. */
export const storeInputs: INodeProperties[] = [storeInput, { ...folderInput, displayOptions: { show: { store: ['folder'], '@version': STORE_PARAMETER_VERSIONS } } }];

/** The folder store's take-over time (List Due Sessions, Run Due Step); the PostgreSQL store's credential holds its own. */
export const idleSecondsInput: INodeProperties = {
  displayName: 'Leave a Step in Progress Alone For (Seconds)',
  name: 'idleSeconds',
  type: 'number',
  typeOptions: { minValue: 0 },
  // n8n wants a literal here; test/session/policy.test.ts holds it to SESSION_POLICY.takeOverIdleMs
  default: 45,
  // the PostgreSQL store computes due times at every save: its credential holds this setting; version 2: the store credential's
  displayOptions: { show: { store: ['folder'], '@version': STORE_PARAMETER_VERSIONS } },
  description: 'A record saved in the middle of a step — prepared but not recorded as submitted, or signed but not finished — is taken over once unchanged this long: the run working on it has died. Longer than your slowest live step (a Submit or a Finalize gives up within about 21 s).',
};

/** The node's {@link idleSecondsInput}, checked. */
export function idleSecondsOf(ctx: IExecuteFunctions, i: number): number {
  const s = Number(ctx.getNodeParameter('idleSeconds', i, SESSION_POLICY.takeOverIdleMs / 1000));
  if (!Number.isFinite(s) || s < 0) throw invalidInput('Leave a Step in Progress Alone For (Seconds)', 'must be a number of seconds ≥ 0');
  return s;
}

/**
 * The node's store, the core's: version 2 on, the store credential's (a folder checked against n8n's file-access
 * rules, or PostgreSQL) with its take-over time and retention; version 1, its Store parameter's (the folder, or the
 * PostgreSQL credential). `policy`: a version-1 node's own take-over time for its folder (List Due, Run Due Step).
 */
export async function sessionRecordStore(ctx: IExecuteFunctions, i: number, policy: Partial<StorePolicy> = {}): Promise<DurableSessionStore> {
  if (usesStoreCredential(ctx)) {
    const { settings, where } = await storeCredential(ctx, i);
    if (settings.kind === 'postgres') return pgRecordStore(settings.pg, where, settings.policy);
    // the trigger keeps each delivery in the folder too: an event whose execution died is replayed by List Due
    return checkedFolderStore(ctx, settings.folder, { where: `${where}, field "Folder"`, field: 'Folder' }, settings.policy);
  }
  const kind = ctx.getNodeParameter('store', i, 'folder') as string;
  if (kind === 'postgres') {
    const pg = pgStoreSettings(await nodeCredential(ctx, PG_STORE_CREDENTIAL, i));
    return pgRecordStore(pg.settings, credentialWhere(PG_STORE_TITLE, credentialName(ctx, PG_STORE_CREDENTIAL)), pg.policy);
  }
  if (kind !== 'folder') throw new SingpassFlowsError('INVALID_INPUT', `Store: "${kind}" is not a store this node version knows (Folder or PostgreSQL)`, { field: 'Store' });
  return folderStore(ctx, i, policy);
}

/** The name the user gave the node's credential of `type` (for messages), if any. */
function credentialName(ctx: { getNode(): INode }, type: string): string | undefined {
  return ctx.getNode().credentials?.[type]?.name ?? undefined;
}

/**
 * The node's store credential, checked; `where` names it for messages. A node without one (or whose credential n8n
 * cannot read) gets an error naming the credential to pick.
 */
export async function storeCredential(ctx: IExecuteFunctions | IWebhookFunctions, i?: number): Promise<{ settings: ReturnType<typeof storeSettings>; where: string }> {
  const where = credentialWhere(STORE_TITLE, credentialName(ctx, STORE_CREDENTIAL));
  const data = await nodeCredential(ctx, STORE_CREDENTIAL, i).catch((e: unknown) => Promise.reject(new SingpassFlowsError('INVALID_INPUT', `${where}: n8n could not give this node its session store credential (${(e as Error)?.message ?? String(e)}); pick the "${STORE_TITLE}" credential the workflow's other Singpass nodes use (Credential to connect with)`, { field: 'Credential to connect with' }, { cause: e })));
  return { settings: storeSettings(data, where), where };
}

/**
 * One store — one pg.Pool — per credential per process, shared by every execution the process runs (a pool per
 * execution would open connections by the hundred on a busy worker).
 */
const pgStores = new Map<string, DurableSessionStore>();

/** End every cached store's pool (a test's teardown; n8n itself never unloads a node's module). */
export async function closePgRecordStores(): Promise<void> {
  const stores = [...pgStores.values()];
  pgStores.clear();
  await Promise.all(stores.map((store) => store.close()));
}

/**
 * The core's PostgreSQL store of checked settings, cached; its failures name `credential` (the setting to fix) first,
 * and a table prefix it refuses is the credential's Table Prefix field.
 */
export function pgRecordStore(settings: PgStoreSettings & { where: string }, credential: string, policy: Partial<StorePolicy> = {}): DurableSessionStore {
  // One store per credential, settings and policy, never closed while the process runs: nodes of one workflow may
  // reach the same database through different credentials or take-over times, and a store another execution still
  // uses must not be closed under it. A changed credential makes a new one; the old pool's idle connections end.
  const key = createHash('sha256').update(JSON.stringify({ where: settings.where, prefix: settings.tablePrefix ?? '', settings, credential, policy })).digest('base64url');
  let store = pgStores.get(key);
  if (!store) {
    store = pgStore(settings, credential, policy);
    pgStores.set(key, store);
  }
  return store;
}

/** A new store; a table prefix it refuses is the credential's Table Prefix field. */
function pgStore(settings: PgStoreSettings, credential: string, policy: Partial<StorePolicy>): DurableSessionStore {
  let refused: unknown;
  try {
    return createSessionStore({ kind: 'postgres', ...settings, nameFailure: (e) => inStoreCredential(e, credential) }, policy);
  } catch (e) {
    refused = e;
  }
  if (!isSingpassFlowsError(refused, 'INVALID_INPUT') || refused.details.field !== 'tablePrefix') throw refused as Error;
  throw new SingpassFlowsError('INVALID_INPUT', `${credential}, field "Table Prefix": ${refused.message.replace(/^tablePrefix: /, '')}`, { field: 'Table Prefix' });
}

/**
 * A record that cannot be read (not JSON, not a record) is our fault, never the service's: for the trigger's front
 * door a retryable store failure, so the answer is 503 and the service delivers again once it is fixed. A sign_ref
 * the store cannot hold stays INVALID_INPUT (an unknown session).
 */
export function readableRecords(get: (signRef: string) => Promise<SessionRecord | undefined>): (signRef: string) => Promise<SessionRecord | undefined> {
  return (signRef) => get(signRef).catch((e: unknown) => Promise.reject(
    isSingpassFlowsError(e, 'INVALID_INPUT') || (isSingpassFlowsError(e) && e.details.retryable === true)
      ? e
      : new SingpassFlowsError('STORE_FAILED', `the session record of ${signRef} could not be read: ${(e as Error)?.message ?? String(e)}`, { retryable: true }, { cause: e }),
  ));
}
