import { InvalidArgumentError } from 'commander';
import { parseTokens, type RowToken } from '../write/row-filter.js';
import { OUTPUT_FORMATS, type OutputFormat } from '../write/output-plan.js';

/** commander argument parsers: each names the problem in one line. */
export function intIn(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    return n;
  };
}

/** --concurrency: auto (the limit follows the server) or a whole number that pins it */
export function concurrencySetting(max: number): (value: string) => number | 'auto' {
  const pinned = intIn(1, max);
  return (value) => {
    if (value.trim().toLowerCase() === 'auto') return 'auto';
    try {
      return pinned(value);
    } catch {
      throw new InvalidArgumentError(`expected auto or a whole number from 1 to ${max}`);
    }
  };
}

export function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number');
  return n;
}

export function nonNegativeSeconds(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected a number of seconds, 0 or more');
  return n;
}

/** `--only`/`--except`: statuses and reasons, comma-separated. */
export function tokenList(value: string): Set<RowToken> {
  const parsed = parseTokens(value);
  if (typeof parsed === 'string') throw new InvalidArgumentError(parsed);
  return parsed;
}

export function outputFormat(value: string): OutputFormat {
  const v = value.toLowerCase();
  if ((OUTPUT_FORMATS as readonly string[]).includes(v)) return v as OutputFormat;
  throw new InvalidArgumentError(`expected ${OUTPUT_FORMATS.join(', ')}`);
}
