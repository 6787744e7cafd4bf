import { systemClock, type Clock } from '../time/clock.js';

/** `--rate-limit <requests>/<seconds>`: a fixed window of `seconds` allowing `requests`. */
export interface RateLimit {
  requests: number;
  seconds: number;
}

/** What one request learns about its window; becomes the X-RateLimit-* headers. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** end of the current window, epoch seconds */
  resetEpochSeconds: number;
  /** whole seconds until the window ends, at least 1 (for Retry-After) */
  retryAfterSeconds: number;
}

/**
 * Where the counts live: this process's memory, or Redis shared by every
 * instance (redis-rate-limit.ts). A store only counts; the limiter below turns
 * the count into a decision, so the headers are the same whichever store.
 */
export interface RateLimitStore {
  /**
   * Counts one request in each of `buckets` in window number `window` (windows
   * of `windowMs`, aligned to the epoch: window n covers [n*windowMs,
   * (n+1)*windowMs)) and gives each count so far, this request included — in
   * one atomic step, so that concurrent requests counted in several buckets
   * (an address and its network) come in the same order in each.
   */
  increment(buckets: readonly string[], window: number, windowMs: number): Promise<number[]>;
}

/**
 * Every bucket's window ends at the same instant: when the window rolls over,
 * all the counts are dropped at once and memory never outgrows one window's callers.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private window = -1;
  private readonly counts = new Map<string, number>();

  increment(buckets: readonly string[], window: number): Promise<number[]> {
    return Promise.resolve(this.incrementNow(buckets, window));
  }

  incrementNow(buckets: readonly string[], window: number): number[] {
    if (window !== this.window) {
      this.window = window;
      this.counts.clear();
    }
    return buckets.map((bucket) => {
      const used = (this.counts.get(bucket) ?? 0) + 1;
      this.counts.set(bucket, used);
      return used;
    });
  }
}

/** Fixed windows aligned to the epoch (a `60/60` window ends on the minute), counted in a store. */
export class FixedWindowLimiter {
  private readonly windowMs: number;

  constructor(
    private readonly rate: RateLimit,
    private readonly clock: Clock = systemClock,
    private readonly store: RateLimitStore = new MemoryRateLimitStore(),
  ) {
    this.windowMs = rate.seconds * 1000;
  }

  /**
   * Counts one request against each of `buckets` (at once: see increment) and
   * says whether it may proceed: only when no bucket is over the limit; the
   * headers tell the fullest.
   */
  async take(...buckets: [string, ...string[]]): Promise<RateDecision> {
    const now = this.clock.now();
    const window = Math.floor(now / this.windowMs);
    const used = Math.max(...(await this.store.increment(buckets, window, this.windowMs)));
    const resetMs = (window + 1) * this.windowMs;
    return {
      allowed: used <= this.rate.requests,
      limit: this.rate.requests,
      remaining: Math.max(0, this.rate.requests - used),
      resetEpochSeconds: Math.ceil(resetMs / 1000),
      retryAfterSeconds: Math.max(1, Math.ceil((resetMs - now) / 1000)),
    };
  }
}

const RATE_RE = /^\s*(\d{1,9})\s*\/\s*(\d{1,9})\s*$/;

/** Parses `60/60`; returns undefined for anything else (the CLI reports it). */
export function parseRateLimit(text: string): RateLimit | undefined {
  const m = RATE_RE.exec(text);
  if (!m) return undefined;
  const requests = Number(m[1]);
  const seconds = Number(m[2]);
  if (requests < 1 || seconds < 1) return undefined;
  return { requests, seconds };
}
