import { invalidInput } from '../src/errors';
import { FileSessionStore, PgSessionStore, SESSION_POLICY, type SessionStore } from '../src/session';

/**
 * The session store a CLI option names: a folder (FileSessionStore: one host) or a postgres:// URL (PgSessionStore:
 * several processes and hosts). Give the password in PGPASSWORD rather than in the URL (a command line is visible to
 * every user of the host); the store never prints it.
 */
export async function openStore(where: string, options: { takeOverMs?: number } = {}): Promise<SessionStore & { close?(): Promise<void> }> {
  if (!where.trim()) throw invalidInput('--store', 'give a folder or a postgres:// URL');
  if (/^postgres(ql)?:\/\//i.test(where)) {
    // The store's "due" time for a session in the middle of a step is the runner's take-over time (one rule).
    const store = new PgSessionStore(where, { idleMs: options.takeOverMs ?? SESSION_POLICY.takeOverIdleMs });
    await store.migrate().catch(async (e: unknown) => {
      await store.close();
      throw e;
    });
    return store;
  }
  return new FileSessionStore(where);
}
