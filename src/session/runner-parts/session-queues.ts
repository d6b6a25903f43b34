/**
 * One chain of work per session: the events and steps of a session run one at a time, in arrival order, while
 * sessions run side by side. A failing piece of work is reported and does not stop the chain.
 */
export interface SessionQueues {
  enqueue(signRef: string, work: () => Promise<void>): Promise<void>;
  /** Work is queued or running for this session (a sweep leaves it alone). */
  busy(signRef: string): boolean;
  /** Resolves when the work queued now has run (closing). */
  drained(): Promise<void>;
}

export function createSessionQueues(onError: (signRef: string, e: unknown) => void): SessionQueues {
  const queues = new Map<string, Promise<void>>();
  return {
    enqueue(signRef, work) {
      const run = (queues.get(signRef) ?? Promise.resolve()).then(work).catch((e: unknown) => onError(signRef, e));
      queues.set(signRef, run);
      void run.then(() => {
        if (queues.get(signRef) === run) queues.delete(signRef);
      });
      return run;
    },
    busy: (signRef) => queues.has(signRef),
    async drained() {
      await Promise.allSettled([...queues.values()]);
    },
  };
}
