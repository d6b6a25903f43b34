/** Injectable time source, so tests and adapters can freeze or shift time. Milliseconds since the epoch. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/** Whole UNIX seconds, as JWT claims use. */
export function epochSeconds(clock: Clock = systemClock): number {
  return Math.floor(clock() / 1000);
}
