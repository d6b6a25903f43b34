import type { PoolConfig } from 'pg';
import { SingpassFlowsError } from '../errors';
import { FileSessionStore, type FileSessionStoreOptions } from './file-store';
import { PgSessionStore } from './pg-store';
import { storePolicy, type DurableSessionStore, type StorePolicy } from './store';

/** Where a PostgreSQL store connects: what a front end reads from its credential or config node, checked there. */
export interface PgStoreSettings {
  /** A connection string or a `pg` pool config (the password inside; never in messages). */
  connection: string | PoolConfig;
  /** Prefix of the store's tables (default `singpass_sign_`). */
  tablePrefix?: string;
  /** How messages name the database (default: from the connection). */
  where?: string;
  /** How the front end words the store's failures (e.g. naming the credential field most likely wrong). */
  nameFailure?: (e: SingpassFlowsError) => Error;
}

/** The store a deployment chose: a folder on this host, or a PostgreSQL database several processes share. */
export type SessionStoreSettings =
  | ({ kind: 'folder'; folder: string } & Pick<FileSessionStoreOptions, 'signedDocuments' | 'beforeFirstUse'>)
  | ({ kind: 'postgres' } & PgStoreSettings);

/**
 * THE way a front end gets its session store: from settings, with the session policy (`SESSION_POLICY`, or the values
 * a deployment changed through the settings that name them, e.g. a credential's take-over time). Nothing connects
 * yet: the first call does (a server that is down then fails that call with STORE_BUSY).
 */
export function createSessionStore(settings: SessionStoreSettings, policy: Partial<StorePolicy> = {}): DurableSessionStore {
  const checked = storePolicy(policy);
  if (settings.kind === 'postgres') {
    return new PgSessionStore(settings.connection, { policy: checked, ...(settings.tablePrefix ? { tablePrefix: settings.tablePrefix } : {}), ...(settings.where ? { where: settings.where } : {}), ...(settings.nameFailure ? { nameFailure: settings.nameFailure } : {}) });
  }
  if (settings.kind === 'folder') {
    return new FileSessionStore(settings.folder, { policy: checked, signedDocuments: settings.signedDocuments, beforeFirstUse: settings.beforeFirstUse });
  }
  throw new SingpassFlowsError('INVALID_INPUT', `Session store: "${String((settings as { kind?: unknown }).kind)}" is not a store this package knows (folder or postgres)`, { field: 'kind' });
}

/**
 * The store of settings that are wrong (a PostgreSQL field missing): every call fails with STORE_FAILED naming the
 * cause, which a webhook answers 503 on (the service retries until the settings are fixed).
 */
export function unusableSessionStore(cause: Error, kind: DurableSessionStore['kind'] = 'folder'): DurableSessionStore {
  const error = new SingpassFlowsError('STORE_FAILED', `The session store is not configured: ${cause.message}`, { retryable: false });
  const fail = (): Promise<never> => Promise.reject(error);
  return {
    kind, shared: kind === 'postgres', where: 'an unconfigured session store', policy: storePolicy(),
    get: fail, save: fail, put: fail, delete: fail, list: fail, getDocument: fail, putDocument: fail, deleteDocument: fail, putSignedDocument: fail, getSignedDocument: fail,
    rememberDelivery: fail, getDelivery: fail, markDeliveryApplied: fail, pendingDeliveries: fail, forgetDeliveries: fail,
    claimDue: fail, releaseClaim: fail, claimDeliveriesToReplay: fail, cleanUp: fail, close: () => Promise.resolve(),
  };
}

/** A store that is down or refuses writes (STORE_BUSY / STORE_FAILED): report once, try again later. */
export function isStoreOutage(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return code === 'STORE_BUSY' || code === 'STORE_FAILED';
}
