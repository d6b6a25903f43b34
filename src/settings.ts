import { invalidInput } from './errors';

/**
 * Numeric configuration settings (timeouts, windows, lifetimes), checked when a client or verifier is built so a
 * wrong value is reported with the setting's name — not later as a network error or a raw RangeError. `undefined`
 * means "use the default" and is passed through.
 */
export function checkNumberSetting(field: string, value: unknown, range: { min: number; max: number; integer?: boolean; unit: string }): number | undefined {
  if (value === undefined) return undefined;
  const { min, max, integer, unit } = range;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw invalidInput(field, `must be ${integer ? 'a whole number' : 'a number'} of ${unit} from ${min} to ${max}, got ${typeof value === 'number' ? value : typeof value}`);
  }
  return value;
}

/** A per-request HTTP timeout in milliseconds: 1 ms .. 10 min. */
export function checkTimeoutMs(field: string, value: unknown): number | undefined {
  return checkNumberSetting(field, value, { min: 1, max: 600_000, integer: true, unit: 'milliseconds' });
}
