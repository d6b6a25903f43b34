import { invalidInput, isSingpassFlowsError } from '../../errors';
import type { SessionStore } from '../store';

/**
 * The session policy's retention applied by a long-running runner: every `intervalMs` (and once at start) the store
 * deletes the sessions that ended longer ago than `retentionMs` (its `cleanUp`: the `forget` step of `nextStep`), so
 * a service left running does not keep every ended session and its PDF for ever. Several processes on one store may
 * all run it: each store deletes under its own compare-and-set or lock. Stores without `cleanUp` are left alone.
 */
export interface RetentionOptions {
  intervalMs: number;
  retentionMs: number;
  /** What was deleted (only called when something was). */
  onCleaned?: (info: { deleted: number }) => void;
  /** The store could not be cleaned (tried again at the next interval). */
  onFailed?: (info: { code: string; message: string }) => void;
}

export function startRetention(store: SessionStore, options: RetentionOptions): { stop(): void } {
  if (!(options.intervalMs >= 1000)) throw invalidInput('cleanUpIntervalMs', 'must be at least 1000 (milliseconds), or left out');
  if (!(options.retentionMs >= 0)) throw invalidInput('retentionMs', 'must be 0 or more milliseconds');
  const cleanUp = store.cleanUp?.bind(store);
  if (!cleanUp) return { stop: () => undefined };
  let running = false;
  const run = (): void => {
    if (running) return;
    running = true;
    Promise.resolve()
      .then(() => cleanUp({ retentionSeconds: options.retentionMs / 1000 }))
      .then((r) => { if (r.deleted.length > 0) hook(() => options.onCleaned?.({ deleted: r.deleted.length })); })
      .catch((e: unknown) => hook(() => options.onFailed?.({ code: isSingpassFlowsError(e) ? e.code : 'STORE_FAILED', message: (e as Error)?.message ?? String(e) })))
      .finally(() => { running = false; });
  };
  const first = setTimeout(run, 0);
  const timer = setInterval(run, options.intervalMs);
  first.unref?.();
  timer.unref?.();
  return { stop: () => { clearTimeout(first); clearInterval(timer); } };
}

/** A logging hook must not stop the next clean-up. */
function hook(f: () => void): void {
  try {
    f();
  } catch {
    // ignored
  }
}
