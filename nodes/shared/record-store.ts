import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type { ICredentialDataDecryptedObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError, invalidInput, isSingpassFlowsError } from '../../src/errors';
import { PgSessionStore, SESSION_POLICY, type FileSessionStore, type KeptDelivery, type SessionRecord, type VerifiedDelivery } from '../../src/session';
import { nodeCredential } from './credentials';
import { folderInput, recordStore as folderStore } from './file-store';
import { pgStoreSettings } from './pg-settings';

/** Credential type of the PostgreSQL store (n8n requires the `Api` suffix). */
export const PG_STORE_CREDENTIAL = 'singpassSessionStorePostgresApi';

type DueList = Awaited<ReturnType<FileSessionStore['listDue']>>;

/**
 * What the Session Record operations need of a store, whichever it is: compare-and-set saves (with the PDF), loads,
 * the due list for the resume schedule (by the engine's one rule, `nextStep`) and the clean-up.
 */
export interface SessionRecordStore extends Pick<FileSessionStore, 'get' | 'getDocument' | 'putDocument' | 'save' | 'put' | 'putSignedDocument' | 'getSignedDocument' | 'cleanUp'> {
  /** Where the records are, for messages ("folder /x", "PostgreSQL database d on h:p"); never a password. */
  readonly where: string;
  /** PostgreSQL only — the credential's "leave a step in progress alone" time (the folder store's is a node parameter). */
  readonly idleMs?: number;
  /** Sessions due now. `idleSeconds`: the folder store's parameter; the PostgreSQL store uses its credential's. */
  listDue(options: { idleSeconds: number }): Promise<DueList>;
  /**
   * PostgreSQL only — the trigger keeps each delivery before it answers 200: false when this event was kept already
   * (a copy: start nothing). A kept event n8n never ran (its execution lost after the answer) comes back from
   * {@link claimDeliveriesToReplay}.
   */
  rememberDelivery?: (delivery: VerifiedDelivery) => Promise<boolean>;
  /** PostgreSQL only — a kept event is done with (applied, or one its session will never take). */
  markDeliveryApplied?: (signRef: string, type: KeptDelivery['type']) => Promise<void>;
  /** PostgreSQL only — kept deliveries unapplied past the credential's idle time that their session still needs, each leased to this process. */
  claimDeliveriesToReplay?: () => Promise<Array<{ kept: KeptDelivery; record: SessionRecord }>>;
}

/** This process, as the owner of the leases it takes on kept deliveries (another process skips them meanwhile). */
const LEASE_OWNER = `n8n:${hostname()}:${process.pid}`;

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
};

/** The Store choice, then the Folder (folder store only): the first parameters of every Session Record operation. */
export const storeInputs: INodeProperties[] = [storeInput, { ...folderInput, displayOptions: { show: { store: ['folder'] } } }];

/** The folder store's take-over time (List Due Sessions, Run Due Step); the PostgreSQL store's credential holds its own. */
export const idleSecondsInput: INodeProperties = {
  displayName: 'Leave a Step in Progress Alone For (Seconds)',
  name: 'idleSeconds',
  type: 'number',
  typeOptions: { minValue: 0 },
  // n8n wants a literal here; test/session/policy.test.ts holds it to SESSION_POLICY.takeOverIdleMs
  default: 45,
  // the PostgreSQL store computes due times at every save: its credential holds this setting
  displayOptions: { show: { store: ['folder'] } },
  description: 'A record saved in the middle of a step — prepared but not recorded as submitted, or signed but not finished — is taken over once unchanged this long: the run working on it has died. Longer than your slowest live step (a Submit or a Finalize gives up within about 21 s).',
};

/** The node's {@link idleSecondsInput}, checked. */
export function idleSecondsOf(ctx: IExecuteFunctions, i: number): number {
  const s = Number(ctx.getNodeParameter('idleSeconds', i, SESSION_POLICY.takeOverIdleMs / 1000));
  if (!Number.isFinite(s) || s < 0) throw invalidInput('Leave a Step in Progress Alone For (Seconds)', 'must be a number of seconds ≥ 0');
  return s;
}

/** The store chosen on the node: the folder (checked against n8n's file-access rules) or the PostgreSQL credential's. */
export async function sessionRecordStore(ctx: IExecuteFunctions, i: number): Promise<SessionRecordStore> {
  const kind = ctx.getNodeParameter('store', i, 'folder') as string;
  if (kind === 'postgres') return pgRecordStore(await nodeCredential(ctx, PG_STORE_CREDENTIAL, i));
  if (kind !== 'folder') throw new SingpassFlowsError('INVALID_INPUT', `Store: "${kind}" is not a store this node version knows (Folder or PostgreSQL)`, { field: 'Store' });
  const store = await folderStore(ctx, i);
  return Object.assign(store, { where: `folder ${store.dir}` });
}

/**
 * One PgSessionStore — one pg.Pool — per credential per process, shared by every execution the process runs (a pool
 * per execution would open connections by the hundred on a busy worker). A changed credential gets a new store; the
 * old one's pool is ended.
 */
const pgStores = new Map<string, { key: string; store: PgSessionStore }>();

/** End every cached store's pool (a test's teardown; n8n itself never unloads a node's module). */
export async function closePgRecordStores(): Promise<void> {
  const entries = [...pgStores.values()];
  pgStores.clear();
  await Promise.all(entries.map((e) => e.store.close()));
}

export function pgRecordStore(credential: ICredentialDataDecryptedObject): SessionRecordStore {
  const settings = pgStoreSettings(credential);
  const id = `${settings.where}/${settings.options.tablePrefix ?? ''}`;
  const key = createHash('sha256').update(JSON.stringify(settings)).digest('base64url');
  let entry = pgStores.get(id);
  if (entry?.key !== key) {
    if (entry) void entry.store.close().catch(() => undefined);
    entry = { key, store: new PgSessionStore(settings.connection, settings.options) };
    pgStores.set(id, entry);
  }
  const store = entry.store;
  return {
    where: settings.where,
    idleMs: settings.options.idleMs,
    get: (signRef) => store.get(signRef),
    getDocument: (signRef) => store.getDocument(signRef),
    putDocument: (signRef, pdf) => store.putDocument(signRef, pdf),
    save: (record, expected, options) => store.save(record, expected, options),
    // a save marks applied the kept deliveries the record has gone past (the store's rule, in the same statement)
    put: (record, expected) => store.put(record, expected),
    putSignedDocument: (signRef, pdf) => store.putSignedDocument(signRef, pdf),
    getSignedDocument: (signRef) => store.getSignedDocument(signRef),
    cleanUp: (options) => store.cleanUp(options),
    rememberDelivery: (delivery) => store.rememberDelivery(delivery),
    markDeliveryApplied: (signRef, type) => store.markDeliveryApplied(signRef, type),
    claimDeliveriesToReplay: () => store.claimDeliveriesToReplay({ owner: LEASE_OWNER }),
    // the store's own idle time (its credential's) is part of every record's due time (`due_at`, indexed)
    listDue: () => store.listDue(),
  };
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
