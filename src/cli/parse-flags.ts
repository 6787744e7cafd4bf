import { InvalidArgumentError } from 'commander';
import { parseDnsServer } from '../engines/local/dns-server.js';
import { parseRateLimit, type RateLimit } from '../serve/rate-limit.js';
import { parseRedisUrl, type RedisTarget } from '../redis/url.js';
import { parseTokens, type RowToken } from '../write/row-filter.js';
import { OUTPUT_FORMATS, type OutputFormat } from '../write/output-plan.js';
import type { TlsMode } from '../engines/local/smtp/dialogue.js';
import type { Eol } from '../dialect.js';
import type { CacheTarget } from '../stores/open-stores.js';

/**
 * commander argument parsers: each turns a flag's text into its typed value,
 * or throws naming the problem in one line (exit 2). Each option has one
 * parser, made once here and shared by every command that takes the option
 * (test/cli/option-table.test.ts checks that), so a flag means the same and
 * fails with the same words wherever it appears.
 */
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

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** A number of milliseconds as the shortest whole text with a unit: 2000 → "2s", 2_592_000_000 → "30d". */
function showMs(ms: number): string {
  if (ms === 0) return '0';
  for (const unit of ['w', 'd', 'h', 'm', 's']) if (ms !== 0 && ms % UNIT_MS[unit]! === 0) return `${ms / UNIT_MS[unit]!}${unit}`;
  return `${ms}ms`;
}

/**
 * A duration flag, parsed to milliseconds. `bare` is the unit a number alone
 * means — the unit the flag's name promises (`--timeout <seconds>`,
 * `--dns-timeout <ms>`); any value may also carry its own unit (`500ms`, `2m`,
 * `30d`). Without `bare` (`--cache-ttl <duration>`, whose default is `30d`) a
 * number alone is refused rather than guessed: `--cache-ttl 30` meaning 30
 * seconds surprised users who meant days.
 */
export function durationMs(o: { bare?: 's' | 'ms'; min: number; max: number }): (value: string) => number {
  const range = `from ${showMs(o.min)} to ${showMs(o.max)}`;
  return (value) => {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$/i.exec(value);
    if (!m) {
      throw new InvalidArgumentError(
        o.bare === undefined
          ? `expected a duration with a unit, e.g. 30d, 12h, 90m or 3600s`
          : `expected a number of ${o.bare === 's' ? 'seconds' : 'milliseconds'} ${range}, or a number with a unit (ms, s, m, h)`,
      );
    }
    const unit = m[2]?.toLowerCase() ?? o.bare;
    if (unit === undefined && Number(m[1]) !== 0) {
      throw new InvalidArgumentError(`a number alone is ambiguous: add a unit, e.g. ${m[1]}d for days, ${m[1]}h, ${m[1]}m or ${m[1]}s`);
    }
    const ms = Math.round(Number(m[1]) * UNIT_MS[unit ?? 'ms']!);
    if (!Number.isSafeInteger(ms) || ms < o.min || ms > o.max) throw new InvalidArgumentError(`expected a duration ${range}`);
    return ms;
  };
}

/** `--dns-server host[:port]` → the form the resolver takes. */
export function dnsServer(value: string): string {
  try {
    return parseDnsServer(value);
  } catch {
    throw new InvalidArgumentError('expected an IP address with an optional port (host[:port]), e.g. 127.0.0.1:5353');
  }
}

/** serve's `--rate-limit <requests>/<seconds>` */
export function rateLimit(value: string): RateLimit {
  const parsed = parseRateLimit(value);
  if (!parsed) throw new InvalidArgumentError('expected <requests>/<seconds>, e.g. 60/60');
  return parsed;
}

/** `--redis redis://…`: the target, its password masked for display; an empty value (MAILSIFT_REDIS_URL="") is none. */
export function redisTarget(value: string): RedisTarget | undefined {
  return value.trim() === '' ? undefined : parseRedisUrl(value);
}

/**
 * `--cache FILE` or `--cache redis://…`: told apart here, once, and a Redis
 * URL checked (its password never echoed) before anything is opened.
 */
export function cacheTarget(value: string): CacheTarget {
  return /^rediss?:\/\//i.test(value.trim()) ? { kind: 'redis', redis: parseRedisUrl(value, '--cache') } : { kind: 'file', path: value };
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

export const SMTP_TLS_MODES: readonly TlsMode[] = ['opportunistic', 'require'];

/** --smtp-tls: STARTTLS when offered, or required of every mail server */
export function smtpTls(value: string): TlsMode {
  const v = value.trim().toLowerCase();
  if ((SMTP_TLS_MODES as readonly string[]).includes(v)) return v as TlsMode;
  throw new InvalidArgumentError(`expected ${SMTP_TLS_MODES.join(' or ')}`);
}

/** `--output-delimiter`: one character (`;`, `|`), or `tab` (a tab is hard to type in a shell) */
export function csvDelimiter(value: string): string {
  if (/^(tab|\\t)$/i.test(value)) return '\t';
  if ([...value].length !== 1 || value === '"' || value === '\r' || value === '\n') {
    throw new InvalidArgumentError('expected one character other than a quote or a line break (e.g. ";" or "|"), or tab');
  }
  return value;
}

const EOLS: Record<string, Eol> = { lf: '\n', crlf: '\r\n', cr: '\r' };

/** `--output-eol lf|crlf|cr` */
export function lineEnding(value: string): Eol {
  const eol = EOLS[value.toLowerCase()];
  if (eol === undefined) throw new InvalidArgumentError('expected lf, crlf or cr');
  return eol;
}
