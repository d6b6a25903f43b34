import { invalidInput } from '../../errors';

/**
 * The runner's priority for the user at the phone: certificate events (chain, OCSP, prepare, hash call) are worked
 * on a few at a time, the rest wait in arrival order, and finishing other sessions (the heavy part) pauses between its
 * stages while any certificate is pending. In a burst of scans the event loop then stays free to answer the service's
 * webhooks at once (it gives up on a delivery after 2 s), and the first users get their hash first.
 */
export interface CertificateGate {
  /** A certificate event is waiting or being worked on (pair with {@link done}). */
  pending(): void;
  done(): void;
  /** Run `work` in one of the slots (waiting for one in arrival order). */
  withSlot(work: () => Promise<void>): Promise<void>;
  /** Resolves once no certificate is pending (finishing calls it between its stages). */
  yieldTo(): Promise<void>;
}

export function createCertificateGate(concurrency: number): CertificateGate {
  if (!(concurrency >= 1)) throw invalidInput('certificateConcurrency', 'must be a number of at least 1 (or Infinity for no limit)');
  let waiting = 0;
  let idle: { promise: Promise<void>; resolve: () => void } | undefined;
  let active = 0;
  const queue: (() => void)[] = [];
  return {
    pending() {
      waiting++;
    },
    done() {
      if (--waiting === 0 && idle) {
        idle.resolve();
        idle = undefined;
      }
    },
    async withSlot(work) {
      if (active < concurrency) active++;
      else await new Promise<void>((resolve) => queue.push(resolve));
      try {
        await work();
      } finally {
        const nextInLine = queue.shift();
        if (nextInLine) nextInLine(); // the slot passes on: `active` is unchanged
        else active--;
      }
    },
    async yieldTo() {
      while (waiting > 0) {
        if (!idle) {
          let resolve!: () => void;
          idle = { promise: new Promise<void>((r) => (resolve = r)), resolve };
        }
        await idle.promise;
      }
    },
  };
}
