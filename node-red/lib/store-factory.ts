/**
 * The one place the Node-RED signing nodes get their session store from: the Sign API client config node's
 * "Session store" choice. "folder" (default, one Node-RED): the core's durable folder store in the user directory
 * (folder-session-store.ts). "postgres" (several Node-RED instances behind one URL): everything in PostgreSQL
 * (pg-session-store.ts). Neither needs anything in settings.js.
 */
import { FolderNodeRedStore } from './folder-session-store';
import { importContextSessions, type ContextImport } from './context-import';
import { PgNodeRedStore, pgStoreSettings, type PgStoreFields } from './pg-session-store';
import type { SignSessionStore } from './session-store';
import { SESSION_POLICY } from '../../src/session';

export type SessionStoreKind = 'folder' | 'postgres';

/** Ended session records stay this long (for a flow that looks one up), then leave the store. */
export const KEEP_ENDED_MS = SESSION_POLICY.retentionMs;

/** "postgres", else the folder ("context", what clients saved by older versions say, means the folder now). */
export function sessionStoreKind(value: unknown): SessionStoreKind {
  return value === 'postgres' ? 'postgres' : 'folder';
}

export interface StoreChoice extends PgStoreFields {
  sessionStore?: string;
}

/**
 * Build the store the settings choose. PostgreSQL settings are checked here (throws INVALID_INPUT naming the field);
 * nothing connects yet: the first use does (and a server that is down then only makes that use fail with STORE_BUSY).
 * With `legacy`, sessions an older version kept in the context store move to the folder before its first use.
 */
export function createSessionStore(o: {
  choice: StoreChoice; pgPassword?: string; clientName: string; sessionDir: string;
  legacy?: ContextImport; onImported?: (signRefs: string[]) => void; onImportFailed?: (e: unknown) => void;
}): SignSessionStore {
  if (sessionStoreKind(o.choice.sessionStore) === 'postgres') {
    return new PgNodeRedStore(pgStoreSettings(o.choice, o.pgPassword, o.clientName), { retentionMs: KEEP_ENDED_MS });
  }
  const legacy = o.legacy;
  return new FolderNodeRedStore(o.sessionDir, {
    retentionMs: KEEP_ENDED_MS,
    prepare: legacy && ((files) => importContextSessions(legacy, files).then((moved) => o.onImported?.(moved), (e: unknown) => o.onImportFailed?.(e))),
  });
}
