/**
 * Reads what a response says about the rate limit, whatever dialect the server
 * speaks: the spec's X-RateLimit-* trio (Reset in any of five formats), Retry-After,
 * and the IETF draft headers (draft-ietf-httpapi-ratelimit-headers, both the
 * `RateLimit-Limit/-Remaining/-Reset` era and the `RateLimit`/`RateLimit-Policy`
 * structured-field era). Pure: the caller passes the local clock reading.
 */

/** Every time is a local epoch in ms, already corrected for the server's clock skew. */
export interface RateLimitInfo {
  limit?: number;
  remaining?: number;
  /** when the current window ends */
  resetAt?: number;
  /** when the server asked us to come back (Retry-After) */
  retryAt?: number;
}

export type HeaderSource =
  | { get(name: string): string | null | undefined }
  | Record<string, string | string[] | undefined>;

/** 10 digits are epoch seconds, 13 epoch ms; 1e11 s is the year 5138, 1e11 ms is 1973. */
const EPOCH_S_MIN = 1e9;
const EPOCH_MS_MIN = 1e11;
/** Allowance for the time a response takes to reach us, when judging the Date header. */
const LATENCY_SLACK_MS = 1000;

function headerGetter(source: HeaderSource): (name: string) => string | undefined {
  if (typeof (source as { get?: unknown }).get === 'function') {
    const h = source as { get(name: string): string | null | undefined };
    return (name) => h.get(name) ?? undefined;
  }
  const record = source as Record<string, string | string[] | undefined>;
  const lower = new Map<string, string | string[] | undefined>();
  for (const [k, v] of Object.entries(record)) lower.set(k.toLowerCase(), v);
  return (name) => {
    const v = lower.get(name.toLowerCase());
    return Array.isArray(v) ? v.join(', ') : v;
  };
}

/** Past this a number is not a time or a count any server means (epoch ms in the year 5138). */
const SANE_MAX = 1e14;

function nonNegativeNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const t = text.trim();
  if (!/^\d+(\.\d+)?$/.test(t)) return undefined;
  const n = Number(t);
  return n < SANE_MAX ? n : undefined;
}

/**
 * A count (limit, remaining) as a whole number, or undefined when the text is
 * no count at all: `1e400`, `1.5` and `abc` are no information, not 1 (issue
 * 29.9), and neither is a number past any plan. A negative count is kept: a
 * negative Remaining means the window is overdrawn ({@link remainingOf}).
 * Some servers send a list (`100, 100;w=60`): the first item counts.
 */
function countOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const first = /^\s*([+-]?\d+)\s*(?:[,;]|$)/.exec(text);
  if (!first) return undefined;
  const n = Number(first[1]);
  return Number.isSafeInteger(n) && Math.abs(n) < SANE_MAX ? n : undefined;
}

/** A limit below zero means nothing. */
function limitOf(text: string | undefined): number | undefined {
  const n = countOf(text);
  return n !== undefined && n >= 0 ? n : undefined;
}

/** A negative Remaining means none left, not plenty (issue 29.9). */
function remainingOf(text: string | undefined): number | undefined {
  const n = countOf(text);
  return n === undefined ? undefined : Math.max(0, n);
}

function parseHttpDate(text: string): number | undefined {
  // Date.parse would also take "5" or "2024" as a date; insist on something date-like.
  if (!/[a-z]{3}|\d{4}-\d\d-\d\d/i.test(text)) return undefined;
  const t = Date.parse(text.trim());
  return Number.isNaN(t) ? undefined : t;
}

/**
 * Server clock minus local clock, learnt from the responses' Date headers. A Date
 * has whole seconds, so one reading only brackets the skew within a second; the
 * bracket narrows with each response. The lower bound is used: it can only make
 * an absolute reset look later than it is, never early (an early dispatch draws a
 * 429). When 0 lies in the bracket the clocks agree and nothing is corrected.
 */
export class ClockSkew {
  private low = -Infinity;
  private high = Infinity;

  observe(dateHeader: string | undefined, now: number): number {
    const date = dateHeader === undefined ? undefined : parseHttpDate(dateHeader);
    if (date !== undefined) {
      // the server's clock read somewhere in [date, date + 1 s) before we got the answer
      let low = Math.max(this.low, date - now);
      let high = Math.min(this.high, date + 1000 + LATENCY_SLACK_MS - now);
      if (low > high) {
        // a clock was set in the meantime: start over from this reading
        low = date - now;
        high = date + 1000 + LATENCY_SLACK_MS - now;
      }
      this.low = low;
      this.high = high;
    }
    return this.value;
  }

  get value(): number {
    if (this.low === -Infinity || (this.low <= 0 && this.high >= 0)) return 0;
    return this.low;
  }
}

/**
 * A reset value in any format, told apart by shape and magnitude: epoch seconds,
 * epoch ms, seconds until reset (possibly fractional), or an HTTP/ISO date.
 */
export function parseReset(value: string | undefined, now: number, skew = 0): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = nonNegativeNumber(value);
  if (n !== undefined) {
    if (n >= EPOCH_MS_MIN) return Math.round(n) - skew;
    if (n >= EPOCH_S_MIN) return Math.round(n * 1000) - skew;
    return now + Math.round(n * 1000);
  }
  const date = parseHttpDate(value);
  return date === undefined ? undefined : date - skew;
}

/** Retry-After is delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | undefined, now: number, skew = 0): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = nonNegativeNumber(value);
  if (n !== undefined) return now + Math.round(n * 1000);
  const date = parseHttpDate(value);
  return date === undefined ? undefined : Math.max(now, date - skew);
}

/** Parameters of one structured-field item or a `key=value, key=value` list. */
function params(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of text.split(/[;,]/)) {
    const m = /^\s*([a-z][a-z0-9_-]*)\s*=\s*"?([^";,]*)"?\s*$/i.exec(part);
    if (m && !out.has(m[1]!.toLowerCase())) out.set(m[1]!.toLowerCase(), m[2]!);
  }
  return out;
}

interface DraftPolicy {
  limit?: number;
  remaining?: number;
  resetSeconds?: number;
}

/**
 * The draft's combined header: older drafts `limit=10, remaining=5, reset=30`,
 * newer ones one item per policy `"default";r=5;t=30`. With several policies the
 * most constrained (lowest remaining) one counts.
 */
function parseDraftRateLimit(value: string | undefined): DraftPolicy {
  if (!value) return {};
  if (/\b(limit|remaining|reset)\s*=/i.test(value)) {
    const p = params(value);
    return {
      limit: limitOf(p.get('limit')),
      remaining: remainingOf(p.get('remaining')),
      resetSeconds: nonNegativeNumber(p.get('reset')),
    };
  }
  let best: DraftPolicy = {};
  for (const item of value.split(',')) {
    const p = params(item);
    const remaining = remainingOf(p.get('r'));
    if (remaining === undefined) continue;
    if (best.remaining === undefined || remaining < best.remaining) {
      best = { remaining, resetSeconds: nonNegativeNumber(p.get('t')) };
    }
  }
  return best;
}

/** `RateLimit-Policy`: `100;w=60` (older drafts) or `"default";q=100;w=60`. */
function parseDraftPolicyLimit(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const q = params(value).get('q');
  return limitOf(q ?? value);
}

/** `skew` carries what earlier responses taught about the server's clock. */
export function parseRateLimitHeaders(source: HeaderSource, now: number, skew = new ClockSkew()): RateLimitInfo {
  const get = headerGetter(source);
  const offset = skew.observe(get('date'), now);
  const draft = parseDraftRateLimit(get('ratelimit'));

  const info: RateLimitInfo = {};
  const limit =
    limitOf(get('x-ratelimit-limit')) ??
    limitOf(get('ratelimit-limit')) ??
    draft.limit ??
    parseDraftPolicyLimit(get('ratelimit-policy'));
  if (limit !== undefined) info.limit = limit;

  const remaining =
    remainingOf(get('x-ratelimit-remaining')) ?? remainingOf(get('ratelimit-remaining')) ?? draft.remaining;
  if (remaining !== undefined) info.remaining = remaining;

  const resetAt =
    parseReset(get('x-ratelimit-reset'), now, offset) ??
    parseReset(get('ratelimit-reset'), now, offset) ??
    (draft.resetSeconds !== undefined ? now + Math.round(draft.resetSeconds * 1000) : undefined);
  if (resetAt !== undefined) info.resetAt = resetAt;

  const retryAt = parseRetryAfter(get('retry-after'), now, offset);
  if (retryAt !== undefined) info.retryAt = retryAt;
  return info;
}
