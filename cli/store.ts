import { invalidInput } from '../src/errors';
import { createSessionStore, PgSessionStore, type DurableSessionStore } from '../src/session';

/**
 * The session store a CLI option names: a folder (one host) or a postgres:// URL (several processes and hosts), the
 * core's stores. Give the password in PGPASSWORD rather than in the URL (a command line is visible to every user of
 * the host); the store never prints it. The store's take-over time is the runner's (one rule for "due").
 */
export async function openStore(where: string, options: { takeOverMs?: number } = {}): Promise<DurableSessionStore> {
  if (!where.trim()) throw invalidInput('--store', 'give a folder or a postgres:// URL');
  const policy = options.takeOverMs === undefined ? {} : { takeOverIdleMs: options.takeOverMs };
  if (/^postgres(ql)?:\/\//i.test(where)) {
    const store = createSessionStore({ kind: 'postgres', connection: where }, policy);
    // checked at start: a wrong URL or login fails the command, not the first webhook
    if (store instanceof PgSessionStore) await store.migrate().catch(async (e: unknown) => {
      await store.close();
      throw e;
    });
    return store;
  }
  return createSessionStore({ kind: 'folder', folder: where }, policy);
}
