import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
import { invalidInput } from '../../errors';

/**
 * How many certificate events may be worked on at once, sized by what keeps this process's event loop responsive:
 * the webhook answers wait on it (the service gives up on a delivery after 2 s). While the loop's delay stays low
 * and work is waiting, the limit widens by half; when it climbs past `highDelayMs`, it halves (never below `min`). The
 * delay read is the 90th percentile of a sample period: one stall (a collection, another process on the core) is
 * not a trend.
 */
export interface ConcurrencyLimit {
  current(): number;
  /** Called with the new limit whenever it changes (the gate admits waiting work on a widening). */
  onChange(listener: (limit: number) => void): void;
  stop(): void;
}

export interface LoopDelayLimitOptions {
  /** The narrowest the limit gets. */
  min: number;
  /** Where it starts (default `min`). */
  initial?: number;
  /** The widest it gets. */
  max: number;
  /** Widen while the delay (90th percentile of a sample period) stays at or under this (ms). */
  lowDelayMs: number;
  /** Halve when the delay (90th percentile of a sample period) is over this (ms). */
  highDelayMs: number;
  /** How often the delay is read and the limit adjusted (ms). */
  sampleMs: number;
  /** Whether work is waiting for a slot: an idle gate has nothing to learn from a quiet loop, so it does not widen. */
  saturated(): boolean;
}

/**
 * Defaults for the runner: a webhook answer takes a handful of loop turns, so a loop late by up to ~150 ms keeps it
 * far under the service's 2 s; the floor is the fixed limit the runner had before.
 */
export const LOOP_DELAY_LIMIT_DEFAULTS: Omit<LoopDelayLimitOptions, 'saturated'> = {
  min: 4, max: 64, lowDelayMs: 60, highDelayMs: 150, sampleMs: 500,
};

export function createLoopDelayLimit(options: LoopDelayLimitOptions): ConcurrencyLimit {
  const { min, max, lowDelayMs, highDelayMs, sampleMs } = options;
  const saturated = (): boolean => options.saturated();
  if (!(Number.isInteger(min) && min >= 1 && Number.isInteger(max) && max >= min)) throw invalidInput('certificateConcurrency', 'the adaptive limit needs whole numbers 1 ≤ min ≤ max');
  if (!(lowDelayMs >= 0 && highDelayMs > lowDelayMs && sampleMs >= 10)) throw invalidInput('certificateConcurrency', 'the adaptive limit needs 0 ≤ lowDelayMs < highDelayMs and sampleMs ≥ 10');
  let limit = options.initial ?? min;
  if (!(Number.isInteger(limit) && limit >= min && limit <= max)) throw invalidInput('certificateConcurrency', 'the adaptive limit starts between min and max');
  const listeners: ((limit: number) => void)[] = [];
  // 10 ms resolution: fine enough against delays of tens of ms, cheap enough to leave running.
  const histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const set = (next: number): void => {
    if (next === limit) return;
    limit = next;
    for (const l of listeners) l(limit);
  };
  let lastTick = performance.now();
  const timer = setInterval(() => {
    // The histogram skips the first tick after a reset, so one long block can leave a period without a sample; how
    // late this tick itself came catches it.
    const now = performance.now();
    const lateMs = now - lastTick - sampleMs;
    lastTick = now;
    const delayMs = Math.max(lateMs, histogram.count > 0 ? histogram.percentile(90) / 1e6 : 0);
    histogram.reset();
    if (delayMs > highDelayMs) set(Math.max(min, Math.floor(limit / 2)));
    else if (delayMs <= lowDelayMs && saturated()) set(Math.min(max, limit + Math.max(1, Math.floor(limit / 2))));
  }, sampleMs);
  timer.unref?.();
  return {
    current: () => limit,
    onChange: (listener) => void listeners.push(listener),
    stop() {
      clearInterval(timer);
      histogram.disable();
    },
  };
}
