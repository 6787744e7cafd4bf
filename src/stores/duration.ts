import { UsageError } from '../errors.js';

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * Parses a `--cache-ttl` value: a whole number with a unit (`30d`, `12h`, `90m`,
 * `3600s`, `500ms`, `2w`). A bare number means seconds, as `sleep` and cron users
 * expect. Throws UsageError (exit 2) naming the flag.
 */
export function parseDuration(text: string, flag = '--cache-ttl'): number {
  const m = /^\s*(\d+)\s*(ms|s|m|h|d|w)?\s*$/i.exec(text);
  if (!m) {
    throw new UsageError(`${flag}: "${text}" is not a duration; use a number and a unit, e.g. 30d, 12h, 90m or 3600s`);
  }
  const ms = Number(m[1]) * UNIT_MS[(m[2] ?? 's').toLowerCase()]!;
  if (!Number.isSafeInteger(ms)) throw new UsageError(`${flag}: "${text}" is too long`);
  return ms;
}
