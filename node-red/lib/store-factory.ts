/**
 * The one place the Node-RED signing nodes get their session store from: the Sign API client config node's
 * "Session store" choice. "context" (default, one Node-RED): records in a global context store, PDFs as files.
 * "postgres" (several Node-RED instances behind one URL): everything in PostgreSQL (pg-session-store.ts).
 */
import { ContextSessionStore, type SignSessionStore } from './session-store';
import { PgNodeRedStore, pgStoreSettings, type PgStoreFields } from './pg-session-store';
import type { ContextStore } from './types';

export type SessionStoreKind = 'context' | 'postgres';

/** Ended session records stay this long (for a flow that looks one up), then leave the store. */
export const KEEP_ENDED_MS = 24 * 3600 * 1000;

export function sessionStoreKind(value: unknown): SessionStoreKind {
  return value === 'postgres' ? 'postgres' : 'context';
}

export interface StoreChoice extends PgStoreFields {
  sessionStore?: string;
  contextStore?: string;
}

/**
 * Build the store the settings choose. PostgreSQL settings are checked here (throws INVALID_INPUT naming the field);
 * nothing connects yet: the first use does (and a server that is down then only makes that use fail with STORE_BUSY).
 */
export function createSessionStore(o: { choice: StoreChoice; pgPassword?: string; clientName: string; globalContext: ContextStore; documentDir: string }): SignSessionStore {
  if (sessionStoreKind(o.choice.sessionStore) === 'postgres') {
    return new PgNodeRedStore(pgStoreSettings(o.choice, o.pgPassword, o.clientName), { retentionMs: KEEP_ENDED_MS });
  }
  return new ContextSessionStore(o.globalContext, o.choice.contextStore ?? '', o.documentDir);
}
