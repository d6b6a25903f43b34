import { SingpassFlowsError, invalidInput } from '../src/errors';
import { FileSessionStore, type SessionStore } from '../src/session';

/**
 * The session store a CLI option names: a folder (FileSessionStore: one host) or a postgres:// URL (PgSessionStore:
 * several processes and hosts).
 */
export function openStore(where: string): Promise<SessionStore & { close?(): Promise<void> }> {
  if (/^postgres(ql)?:\/\//i.test(where)) return Promise.reject(new SingpassFlowsError('INVALID_INPUT', 'the PostgreSQL store is not in this build yet'));
  if (!where.trim()) throw invalidInput('--store', 'give a folder or a postgres:// URL');
  return Promise.resolve(new FileSessionStore(where));
}
