import type { ICredentialDataDecryptedObject } from 'n8n-workflow';
import type { PoolConfig } from 'pg';
import { SingpassFlowsError } from '../../src/errors';
import { SESSION_POLICY, type PgSessionStoreOptions } from '../../src/session';

/** The "Singpass Session Store (PostgreSQL)" credential, checked: where to connect and the store's options. */
export interface PgStoreSettings {
  connection: PoolConfig;
  options: Pick<PgSessionStoreOptions, 'tablePrefix' | 'idleMs'>;
  /** For messages: never the password. */
  where: string;
}

const TITLE = 'Credential "Singpass Session Store (PostgreSQL)"';

function bad(field: string, why: string): SingpassFlowsError {
  return new SingpassFlowsError('INVALID_INPUT', `${TITLE}, field "${field}": ${why}`, { field });
}

export function pgStoreSettings(c: ICredentialDataDecryptedObject): PgStoreSettings {
  const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
  const host = text(c.host);
  const database = text(c.database);
  const user = text(c.user);
  const port = Number(c.port ?? 5432);
  const idleSeconds = Number(c.idleSeconds ?? SESSION_POLICY.takeOverIdleMs / 1000);
  if (!host) throw bad('Host', 'is required (the PostgreSQL server\'s host name or address)');
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw bad('Port', 'must be a port number (1–65535), usually 5432');
  if (!database) throw bad('Database', 'is required (an existing database)');
  if (!user) throw bad('User', 'is required');
  if (!Number.isFinite(idleSeconds) || idleSeconds < 0) throw bad('Leave a Step in Progress Alone For (Seconds)', 'must be a number of seconds ≥ 0');
  return {
    connection: {
      host, port, database, user,
      password: typeof c.password === 'string' ? c.password : '',
      ssl: c.ssl === true ? { rejectUnauthorized: true } : undefined,
      application_name: 'singpass-flows n8n',
    },
    // the store checks the prefix (its rule)
    options: { tablePrefix: text(c.tablePrefix) || undefined, idleMs: idleSeconds * 1000 },
    where: `PostgreSQL database ${database} on ${host}:${port}`,
  };
}
