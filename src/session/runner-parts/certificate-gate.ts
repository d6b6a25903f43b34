import { invalidInput } from '../../errors';
import type { ConcurrencyLimit } from './loop-delay-limit';

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
  /** Certificate events being worked on now. */
  active(): number;
  /** Certificate events waiting for a slot. */
  queued(): number;
  /** Resolves once no certificate is pending (finishing calls it between its stages). */
  yieldTo(): Promise<void>;
}

/** A fixed number of slots, or a limit that moves (`loop-delay-limit.ts`: sized by the event loop's delay). */
export type GateLimit = number | Pick<ConcurrencyLimit, 'current' | 'onChange'>;

export function createCertificateGate(concurrency: GateLimit): CertificateGate {
  if (typeof concurrency === 'number' && !(concurrency >= 1)) throw invalidInput('certificateConcurrency', 'must be a number of at least 1 (or Infinity for no limit)');
  const limit = typeof concurrency === 'number' ? () => concurrency : () => concurrency.current();
  let waiting = 0;
  let idle: { promise: Promise<void>; resolve: () => void } | undefined;
  let active = 0;
  const queue: (() => void)[] = [];
  /** Hand free slots to the work waiting longest (after a piece of work ends, or the limit widened). */
  const admit = (): void => {
    while (active < limit() && queue.length > 0) {
      active++;
      queue.shift()!();
    }
  };
  if (typeof concurrency !== 'number') concurrency.onChange(admit);
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
    active: () => active,
    queued: () => queue.length,
    async withSlot(work) {
      if (active < limit() && queue.length === 0) active++;
      else await new Promise<void>((resolve) => queue.push(resolve)); // admit() counts it in
      try {
        await work();
      } finally {
        active--; // a narrowed limit takes effect here: no one is admitted until active is under it
        admit();
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
