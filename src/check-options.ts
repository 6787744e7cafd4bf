/**
 * Checks of a library caller's numeric options, at the call: a concurrency of
 * 0 would wait forever for a free slot, a NaN timeout would never fire. Each
 * bad value is a RangeError naming the option, what it must be, and what it
 * was. An absent option is left to its default.
 */

/** An integer in [min, max] (max: no bound when absent). */
export function checkInteger(name: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `an integer of at least ${min}` : `an integer from ${min} to ${max}`;
    throw new RangeError(`mailsift: ${name} must be ${range}, not ${show(value)}`);
  }
}

/** A finite number of milliseconds, at least `min`. */
export function checkMs(name: string, value: unknown, min: number): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new RangeError(`mailsift: ${name} must be a finite number of milliseconds of at least ${min}, not ${show(value)}`);
  }
}

const show = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : String(value));
