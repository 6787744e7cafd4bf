/**
 * Reads what a response says about the rate limit, whatever dialect the server
 * speaks: the spec's X-RateLimit-* trio (Reset in any of five formats), Retry-After,
 * and the IETF draft headers (draft-ietf-httpapi-ratelimit-headers: the
 * `RateLimit-Limit/-Remaining/-Reset` era, draft-7's `RateLimit: limit=…`, and
 * draft-8's structured fields, one item per policy). Pure: the caller passes the
 * local clock readings.
 *
 * Every dialect present is a policy of its own, and so is each named policy of
 * draft-8: a server may stack a quota behind a per-second limit, or send a
 * generous X- header beside a strict IETF one. The window (rate-window.ts)
 * honours all of them at once, so the strictest wins whatever its format.
 */

/** One limit the server applies, as one answer tells it. Every time is a local epoch in ms. */
export interface RateLimitPolicy {
  /** which header (and, for draft-8, which named policy) told it: the same id in every answer */
  id: string;
  limit?: number;
  remaining?: number;
  /** when this policy's window ends; absent when the header gave none, or one that cannot be placed in time */
  resetAt?: number;
  /**
   * A reset told in seconds counted from the answer rather than from the
   * latest moment the server can have counted the request: where it ends if
   * the server counts the seconds from when it answers (after its own work)
   */
  resetLatestAt?: number;
  /** the window's length, when the server names it (`RateLimit-Policy: …;w=60`) */
  windowMs?: number;
}

export interface RateLimitInfo {
  policies: RateLimitPolicy[];
  /** when the server asked us to come back (Retry-After) */
  retryAt?: number;
}

export type HeaderSource = { get(name: string): string | null | undefined } | Record<string, string | string[] | undefined>;

/** 10 digits are epoch seconds, 13 epoch ms; 1e11 s is the year 5138, 1e11 ms is 1973. */
const EPOCH_S_MIN = 1e9;
const EPOCH_MS_MIN = 1e11;
/** Allowance for the time a response takes to reach us, when judging a Date header without the send time. */
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
 * no count at all: `1e400`, `1.5` and `abc` are no information, not 1, and
 * neither is a number past any plan. A negative count is kept: a negative
 * Remaining means the window is overdrawn ({@link remainingOf}).
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

/** A negative Remaining means none left, not plenty. */
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
 * has whole seconds and was written somewhere between the send and the answer, so
 * one reading only brackets the skew; the bracket narrows with each response. The
 * lower bound is used: it can only make an absolute reset look later than it is,
 * never early (an early dispatch draws a 429). When 0 lies in the bracket the
 * clocks agree and nothing is corrected.
 */
export class ClockSkew {
  private low = -Infinity;
  private high = Infinity;

  /** `sentAt`: when the request left; without it, a second before `now` stands for it. */
  observe(dateHeader: string | undefined, now: number, sentAt = now - LATENCY_SLACK_MS): number {
    const date = dateHeader === undefined ? undefined : parseHttpDate(dateHeader);
    if (date !== undefined) {
      // the server's clock read somewhere in [date, date + 1 s), at a moment between sentAt and now
      const readingLow = date - now;
      const readingHigh = date + 1000 - Math.min(sentAt, now);
      let low = Math.max(this.low, readingLow);
      let high = Math.min(this.high, readingHigh);
      if (low > high) {
        // a clock was set in the meantime: start over from this reading
        low = readingLow;
        high = readingHigh;
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
 * An absolute time the server wrote on its own clock, placed on ours. Corrected
 * for the skew its Date headers show, unless that puts it before the request
 * left: then the Date header is what is wrong (a proxy's, or a clock set an hour
 * off while the limiter's is right), and the time is taken as written, which is
 * the later of the two. Before `notBefore` either way, it cannot be placed.
 */
function placeAbsolute(at: number, skew: number, notBefore: number): number | undefined {
  if (at - skew > notBefore) return at - skew;
  return at > notBefore ? at : undefined;
}

/**
 * A reset value in any format, told apart by shape and magnitude: epoch seconds,
 * epoch ms, seconds until reset (possibly fractional), or an HTTP/ISO date.
 * A delay is counted from `countedAt`: the server counted the request when it
 * arrived, which cannot be before it left, and timed the window from there.
 */
export function parseReset(value: string | undefined, now: number, skew = 0, sentAt = now, countedAt = sentAt): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = nonNegativeNumber(value);
  if (n !== undefined) {
    if (n >= EPOCH_MS_MIN) return placeAbsolute(Math.round(n), skew, sentAt);
    if (n >= EPOCH_S_MIN) return placeAbsolute(Math.round(n * 1000), skew, sentAt);
    return countedAt + Math.round(n * 1000);
  }
  const date = parseHttpDate(value);
  return date === undefined ? undefined : placeAbsolute(date, skew, sentAt);
}

/**
 * Retry-After is delay-seconds or an HTTP date (RFC 9110 §10.2.3). The delay is
 * counted from when the answer was received, as the RFC says.
 */
export function parseRetryAfter(value: string | undefined, now: number, skew = 0): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = nonNegativeNumber(value);
  if (n !== undefined) return now + Math.round(n * 1000);
  const date = parseHttpDate(value);
  return date === undefined ? undefined : (placeAbsolute(date, skew, now) ?? now);
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

/** One item of a structured-field list: `"name";a=1;b=2` or `name;a=1`. */
interface Item {
  name: string;
  params: Map<string, string>;
}

/**
 * The items of a draft-8 `RateLimit` or `RateLimit-Policy` header. A quoted
 * name may hold a comma, so the list is split outside quotes; byte sequences
 * (`pk=:…:`) hold none.
 */
function items(value: string): Item[] {
  const out: Item[] = [];
  for (const raw of value.match(/(?:"(?:[^"\\]|\\.)*"|[^,"])+/g) ?? []) {
    const m = /^\s*("(?:[^"\\]|\\.)*"|[^;\s]+)\s*(.*)$/s.exec(raw);
    if (!m) continue;
    const name = m[1]!.startsWith('"') ? m[1]!.slice(1, -1).replace(/\\(.)/g, '$1') : m[1]!;
    out.push({ name, params: params(m[2]!) });
  }
  return out;
}

/** `w=60` of a policy, in ms. */
function windowOf(p: Map<string, string>): number | undefined {
  const w = nonNegativeNumber(p.get('w'));
  return w !== undefined && w > 0 ? Math.round(w * 1000) : undefined;
}

interface Times {
  now: number;
  sentAt: number;
  countedAt: number;
  skew: number;
}

/** A reset in seconds, from the count and from the answer. */
function inSeconds(seconds: number | undefined, t: Times): Pick<RateLimitPolicy, 'resetAt' | 'resetLatestAt'> {
  if (seconds === undefined) return {};
  return { resetAt: t.countedAt + Math.round(seconds * 1000), resetLatestAt: t.now + Math.round(seconds * 1000) };
}

/** A reset in any format (parseReset); a delay is placed from the count and from the answer. */
function anyReset(value: string | undefined, t: Times): Pick<RateLimitPolicy, 'resetAt' | 'resetLatestAt'> {
  return { resetAt: parseReset(value, t.now, t.skew, t.sentAt, t.countedAt), resetLatestAt: parseReset(value, t.now, t.skew, t.sentAt, t.now) };
}

function policy(id: string, fields: Omit<RateLimitPolicy, 'id'>): RateLimitPolicy | undefined {
  const p: RateLimitPolicy = { id };
  if (fields.limit !== undefined) p.limit = fields.limit;
  if (fields.remaining !== undefined) p.remaining = fields.remaining;
  if (fields.resetAt !== undefined) p.resetAt = fields.resetAt;
  if (fields.resetLatestAt !== undefined && fields.resetLatestAt !== fields.resetAt) p.resetLatestAt = fields.resetLatestAt;
  if (fields.windowMs !== undefined) p.windowMs = fields.windowMs;
  return Object.keys(p).length > 1 ? p : undefined;
}

/** The draft-6 era's `RateLimit-Policy: 100;w=60`, or draft-7's: one unnamed policy. */
function unnamedWindow(value: string | undefined): number | undefined {
  return value === undefined ? undefined : windowOf(params(value));
}

/**
 * The draft's combined header. Draft-7 and before: one policy,
 * `limit=10, remaining=5, reset=30`. Draft-8 on: one item per policy,
 * `"minute";r=5;t=30, "day";r=900;t=40000`, each with its quota and window
 * in the `RateLimit-Policy` item of the same name (`"day";q=1000;w=86400`):
 * the limit of a policy is its own `q`, never another's.
 */
function draftPolicies(get: (name: string) => string | undefined, t: Times): RateLimitPolicy[] {
  const value = get('ratelimit');
  const policyHeader = get('ratelimit-policy');
  if (value !== undefined && /\b(limit|remaining|reset)\s*=/i.test(value)) {
    const p = params(value);
    const limit = limitOf(p.get('limit'));
    const reset = nonNegativeNumber(p.get('reset'));
    const one = policy('ratelimit', {
      limit: limit ?? limitOf(policyHeader),
      remaining: remainingOf(p.get('remaining')),
      ...inSeconds(reset, t),
      windowMs: unnamedWindow(policyHeader),
    });
    return one ? [one] : [];
  }
  const quotas = new Map<string, { limit?: number; windowMs?: number }>();
  const separate = get('ratelimit-limit') !== undefined || get('ratelimit-remaining') !== undefined || get('ratelimit-reset') !== undefined;
  if (policyHeader !== undefined && !separate) {
    for (const item of items(policyHeader)) {
      if (!item.params.has('q')) continue;
      quotas.set(item.name, { limit: limitOf(item.params.get('q')), windowMs: windowOf(item.params) });
    }
  }
  const out: RateLimitPolicy[] = [];
  const seen = new Set<string>();
  for (const item of value === undefined ? [] : items(value)) {
    if (!item.params.has('r') && !item.params.has('t')) continue;
    seen.add(item.name);
    const quota = quotas.get(item.name) ?? {};
    const reset = nonNegativeNumber(item.params.get('t'));
    const one = policy(`ratelimit "${item.name}"`, {
      limit: quota.limit,
      remaining: remainingOf(item.params.get('r')),
      ...inSeconds(reset, t),
      windowMs: quota.windowMs,
    });
    if (one) out.push(one);
  }
  // a policy announced without its current state still names its quota
  for (const [name, quota] of quotas) {
    if (seen.has(name)) continue;
    const one = policy(`ratelimit "${name}"`, quota);
    if (one) out.push(one);
  }
  return out;
}

/** The draft-6 era's separate `RateLimit-Limit`, `-Remaining`, `-Reset` (and fastify's `enableDraftSpec`). */
function separateDraftPolicy(get: (name: string) => string | undefined, t: Times): RateLimitPolicy | undefined {
  if (get('ratelimit-limit') === undefined && get('ratelimit-remaining') === undefined && get('ratelimit-reset') === undefined) return undefined;
  const policyHeader = get('ratelimit-policy');
  return policy('ratelimit-*', {
    limit: limitOf(get('ratelimit-limit')),
    remaining: remainingOf(get('ratelimit-remaining')),
    ...anyReset(get('ratelimit-reset'), t),
    windowMs: unnamedWindow(policyHeader),
  });
}

function legacyPolicy(get: (name: string) => string | undefined, t: Times): RateLimitPolicy | undefined {
  return policy('x-ratelimit', {
    limit: limitOf(get('x-ratelimit-limit')),
    remaining: remainingOf(get('x-ratelimit-remaining')),
    ...anyReset(get('x-ratelimit-reset'), t),
  });
}

export interface ParseTimes {
  /** when the request left (local epoch ms); default `now` */
  sentAt?: number;
  /** the latest the server can have counted it, between sentAt and now: delay-seconds resets count from here; default sentAt */
  countedAt?: number;
  /** what earlier responses taught about the server's clock */
  skew?: ClockSkew;
}

/** `now`: when the answer's headers were read. */
export function parseRateLimitHeaders(source: HeaderSource, now: number, times: ParseTimes = {}): RateLimitInfo {
  const get = headerGetter(source);
  const sentAt = Math.min(times.sentAt ?? now, now);
  const countedAt = Math.min(Math.max(times.countedAt ?? sentAt, sentAt), now);
  const skew = (times.skew ?? new ClockSkew()).observe(get('date'), now, times.sentAt);
  const t: Times = { now, sentAt, countedAt, skew };

  const policies: RateLimitPolicy[] = [];
  const legacy = legacyPolicy(get, t);
  if (legacy) policies.push(legacy);
  const separate = separateDraftPolicy(get, t);
  if (separate) policies.push(separate);
  policies.push(...draftPolicies(get, t));

  const info: RateLimitInfo = { policies: toldOnce(policies) };
  const retryAt = parseRetryAfter(get('retry-after'), now, skew);
  if (retryAt !== undefined) info.retryAt = retryAt;
  return info;
}

/**
 * One limit told in two dialects: express-rate-limit's legacy X-RateLimit-*
 * beside its draft headers (both on by default in many set-ups) give the same
 * Limit and Remaining, and resets less than a second apart, as each rounds its
 * own way up. Both resets are late, if anything: the earlier is the closer,
 * and both are told it, or the later would hold every window shut up to a
 * second longer. Both stay, each under its own id: whether two resets fall
 * within a second of each other can change from one answer to the next (the
 * first answer's clock skew is still a second wide), and a policy merged away
 * from the answers would keep the window of its first answer with nothing to
 * tell it when that window turned. Limits that differ in anything else keep
 * their own resets.
 */
function toldOnce(policies: RateLimitPolicy[]): RateLimitPolicy[] {
  const out = policies.map((p) => ({ ...p }));
  for (const p of out) {
    for (const q of policies) {
      if (q.limit === undefined || q.limit !== p.limit || q.remaining === undefined || q.remaining !== p.remaining) continue;
      if (q.resetAt === undefined || p.resetAt === undefined || Math.abs(q.resetAt - p.resetAt) >= 1000) continue;
      const latest = Math.min(p.resetLatestAt ?? p.resetAt, q.resetLatestAt ?? q.resetAt);
      p.resetAt = Math.min(p.resetAt, q.resetAt);
      if (latest !== p.resetAt) p.resetLatestAt = latest;
      else delete p.resetLatestAt;
    }
  }
  return out;
}

/** The policy an answer says is closest to its end: the fewest requests left (for messages and tests). */
export function tightest(info: RateLimitInfo | undefined): RateLimitPolicy | undefined {
  let best: RateLimitPolicy | undefined;
  for (const p of info?.policies ?? []) {
    if (best === undefined || (p.remaining ?? Infinity) < (best.remaining ?? Infinity)) best = p;
  }
  return best;
}
