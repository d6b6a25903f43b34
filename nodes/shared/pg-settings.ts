import type { ICredentialDataDecryptedObject } from 'n8n-workflow';
import { SingpassFlowsError } from '../../src/errors';
import { SESSION_POLICY, type PgStoreSettings, type StorePolicy } from '../../src/session';

/** A store credential's PostgreSQL fields, checked: the core's settings (`where` for messages) and the take-over time. */
export interface CredentialPgStore {
  settings: PgStoreSettings & { where: string };
  policy: Pick<StorePolicy, 'takeOverIdleMs'>;
}

/** The "Singpass Session Store" credential, checked: a folder or a PostgreSQL database, and its policy changes. */
export type StoreSettings =
  | { kind: 'folder'; folder: string; policy: Pick<StorePolicy, 'takeOverIdleMs' | 'retentionMs'> }
  | { kind: 'postgres'; pg: CredentialPgStore['settings']; policy: Pick<StorePolicy, 'takeOverIdleMs' | 'retentionMs'> };

/** How messages name the two store credentials (their titles in n8n's credential list). */
export const STORE_TITLE = 'Singpass Session Store';
export const PG_STORE_TITLE = 'Singpass Session Store (PostgreSQL)';

/** `Credential "<title>"` and, when known, the name the user gave it: the box to open. */
export function credentialWhere(title: string, name?: string): string {
  return `Credential "${title}"${name ? ` ("${name}")` : ''}`;
}

function bad(where: string, field: string, why: string): SingpassFlowsError {
  return new SingpassFlowsError('INVALID_INPUT', `${where}, field "${field}": ${why}`, { field });
}

function idleMsOf(c: ICredentialDataDecryptedObject, where: string): number {
  const idleSeconds = Number(c.idleSeconds ?? SESSION_POLICY.takeOverIdleMs / 1000);
  if (!Number.isFinite(idleSeconds) || idleSeconds < 0) throw bad(where, 'Leave a Step in Progress Alone For (Seconds)', 'must be a number of seconds ≥ 0');
  return idleSeconds * 1000;
}

function retentionMsOf(c: ICredentialDataDecryptedObject, where: string): number {
  const days = Number(c.retentionDays ?? SESSION_POLICY.retentionMs / 86_400_000);
  if (!Number.isFinite(days) || days < 0) throw bad(where, 'Keep Ended Sessions (Days)', 'must be a number of days ≥ 0');
  return days * 86_400_000;
}

/** The old "Singpass Session Store (PostgreSQL)" credential (version-1 nodes), or the PostgreSQL fields of the new one. */
export function pgStoreSettings(c: ICredentialDataDecryptedObject, where = credentialWhere(PG_STORE_TITLE)): CredentialPgStore {
  const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
  const host = text(c.host);
  const database = text(c.database);
  const user = text(c.user);
  const port = Number(c.port ?? 5432);
  if (!host) throw bad(where, 'Host', 'is required (the PostgreSQL server\'s host name or address)');
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw bad(where, 'Port', 'must be a port number (1–65535), usually 5432');
  if (!database) throw bad(where, 'Database', 'is required (an existing database)');
  if (!user) throw bad(where, 'User', 'is required');
  const idleMs = idleMsOf(c, where);
  const tablePrefix = text(c.tablePrefix);
  return {
    settings: {
      connection: {
        host, port, database, user,
        password: typeof c.password === 'string' ? c.password : '',
        ssl: c.ssl === true ? { rejectUnauthorized: true } : undefined,
        application_name: 'singpass-flows n8n',
      },
      // the store checks the prefix (its rule)
      ...(tablePrefix ? { tablePrefix } : {}),
      where: `PostgreSQL database ${database} on ${host}:${port}`,
    },
    policy: { takeOverIdleMs: idleMs },
  };
}

/** The "Singpass Session Store" credential: its Kind, then that kind's fields. */
export function storeSettings(c: ICredentialDataDecryptedObject, where = credentialWhere(STORE_TITLE)): StoreSettings {
  const kind = c.kind ?? 'folder';
  if (kind === 'postgres') {
    const pg = pgStoreSettings(c, where);
    return { kind, pg: pg.settings, policy: { ...pg.policy, retentionMs: retentionMsOf(c, where) } };
  }
  if (kind !== 'folder') throw bad(where, 'Kind', `"${String(kind)}" is not a kind this package knows (Folder or PostgreSQL)`);
  return { kind, folder: typeof c.folder === 'string' ? c.folder.trim() : '', policy: { takeOverIdleMs: idleMsOf(c, where), retentionMs: retentionMsOf(c, where) } };
}

/**
 * A store failure with the credential field most likely wrong named first, so a low-code user knows which box to
 * fix; the store's code and details are kept (a retryable failure stays retryable).
 */
export function inStoreCredential(e: unknown, where: string): Error {
  // only the store's own failures are the credential's; a record it refuses (STATE_INVALID, a bad sign_ref) is not
  if (!(e instanceof SingpassFlowsError) || !['STORE_BUSY', 'STORE_FAILED'].includes(e.code) || e.message.startsWith('Credential "')) return e instanceof Error ? e : new Error(String(e));
  const d = e.details;
  const errno = typeof d.errno === 'string' ? d.errno : '';
  const sqlState = typeof d.sqlState === 'string' ? d.sqlState : '';
  const field = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT'].includes(errno) ? 'Host / Port'
    : sqlState.startsWith('28') ? 'User / Password'
      : sqlState === '3D000' ? 'Database'
        : sqlState === '42501' ? 'User (its rights on the database)'
          : /SSL|TLS|certificate/i.test(e.message) ? 'SSL'
            : undefined;
  const label = field ? `${where}, field "${field}"` : where;
  return new SingpassFlowsError(e.code, `${label}: ${e.message}`, { ...d, ...(field ? { field } : {}) }, { cause: e });
}
