/**
 * The Sign API client config node's "Session store" choice, read into the core's store settings: "folder" (default,
 * one Node-RED: the core's durable folder store in the user directory) or "postgres" (several Node-RED instances
 * behind one URL: everything in PostgreSQL). The store itself is the core's (`createSessionStore`); neither needs
 * anything in settings.js. Never Node-RED's context store: its default cache is flushed every 30 s, and a crash inside
 * that window would lose sessions silently.
 */
import { importContextSessions, type ContextImport } from './context-import';
import { SingpassFlowsError } from '../../src/errors';
import { createSessionStore, SESSION_POLICY, type DurableSessionStore, type PgStoreSettings, type StorePolicy } from '../../src/session';

export type SessionStoreKind = 'folder' | 'postgres';

/** "postgres", else the folder ("context", what clients saved by older versions say, means the folder now). */
export function sessionStoreKind(value: unknown): SessionStoreKind {
  return value === 'postgres' ? 'postgres' : 'folder';
}

/** What the Sign API client config node holds for its store (the PostgreSQL password is a Node-RED credential). */
export interface StoreChoice {
  sessionStore?: string;
  pgHost?: string;
  pgPort?: string | number;
  pgDatabase?: string;
  pgUser?: string;
  pgTablePrefix?: string;
  pgSsl?: boolean | string;
  /** Seconds a session in the middle of a step is left to the instance working on it (default: the session policy's). */
  pgTakeOverSeconds?: string | number;
}

/**
 * The config node's PostgreSQL fields, checked, with messages naming the field as the editor shows it (`clientName`:
 * the config node's name, so a user with several clients knows which one); the take-over time as a policy change.
 */
export function pgStoreSettings(fields: StoreChoice, password: string | undefined, clientName: string): { settings: PgStoreSettings & { where: string }; policy: Partial<StorePolicy> } {
  const text = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');
  const bad = (field: string, why: string) => new SingpassFlowsError('INVALID_INPUT', `Singpass Sign API client "${clientName}", PostgreSQL ${field}: ${why}`, { field: `PostgreSQL ${field}` });
  const host = text(fields.pgHost);
  const database = text(fields.pgDatabase);
  const user = text(fields.pgUser);
  const portText = text(fields.pgPort) || '5432';
  const port = Number(portText);
  const defaultTakeOver = String(SESSION_POLICY.takeOverIdleMs / 1000);
  const takeOverText = text(fields.pgTakeOverSeconds) || defaultTakeOver;
  const takeOver = Number(takeOverText);
  if (!host) throw bad('host', 'is required (the PostgreSQL server\'s host name or address, e.g. db.internal or 127.0.0.1)');
  if (!/^\d+$/.test(portText) || port < 1 || port > 65535) throw bad('port', `"${portText}" is not a port number (1–65535); PostgreSQL's usual port is 5432`);
  if (!database) throw bad('database', 'is required (an existing database; the nodes create their tables in it on first use)');
  if (!user) throw bad('user', 'is required (a user that may create tables in the database, or use tables an admin created)');
  if (!Number.isFinite(takeOver) || takeOver < 1 || takeOver > 3600) throw bad('take over after', `"${takeOverText}" is not a number of seconds between 1 and 3600 (default ${defaultTakeOver})`);
  const prefix = text(fields.pgTablePrefix);
  return {
    settings: {
      connection: {
        host, port, database, user, password: password ?? '',
        ssl: fields.pgSsl === true || fields.pgSsl === 'true' ? { rejectUnauthorized: true } : undefined,
        application_name: 'singpass-flows node-red',
      },
      ...(prefix ? { tablePrefix: prefix } : {}),
      where: `PostgreSQL database ${database} on ${host}:${port} as ${user}`,
    },
    // every instance on the tables should use the same take-over time (they share the flow, so the same config node)
    policy: { takeOverIdleMs: Math.round(takeOver * 1000) },
  };
}

/**
 * The store the settings choose. PostgreSQL settings are checked here (throws INVALID_INPUT naming the field);
 * nothing connects yet. With `legacy`, sessions an older version kept in the context store move to the folder before
 * its first use. The folder's signed PDFs are copies for the signer page (the flow stores the product): they leave
 * with their session.
 */
export function nodeRedSessionStore(o: {
  choice: StoreChoice; pgPassword?: string; clientName: string; sessionDir: string;
  legacy?: ContextImport; onImported?: (signRefs: string[]) => void; onImportFailed?: (e: unknown) => void;
}): DurableSessionStore {
  if (sessionStoreKind(o.choice.sessionStore) === 'postgres') {
    const { settings, policy } = pgStoreSettings(o.choice, o.pgPassword, o.clientName);
    return createSessionStore({ kind: 'postgres', ...settings }, policy);
  }
  const legacy = o.legacy;
  return createSessionStore({
    kind: 'folder', folder: o.sessionDir, signedDocuments: 'forget',
    ...(legacy ? { beforeFirstUse: (files) => importContextSessions(legacy, files).then((moved) => o.onImported?.(moved), (e: unknown) => o.onImportFailed?.(e)) } : {}),
  });
}
