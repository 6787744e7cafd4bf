import { MAX_IN_FLIGHT } from './concurrency-limit.js';
import type { RateLimitInfo } from './rate-limit-headers.js';

/**
 * The rate-limit window as the server's headers describe it: how many requests
 * may still leave before the reset, and when that is. Pure: every call is told
 * the time and how many requests are in flight, so it is tested on a fake clock
 * (test/engines/api/rate-window.test.ts) apart from the queue that waits on it
 * (governor.ts).
 *
 * - Never more dispatches than Remaining allows: requests in flight count
 *   against it until an answer shows the server counted them. A negative
 *   Remaining arrives here as 0 (rate-limit-headers.ts).
 * - When Remaining is no number the server still gave a Limit and a reset:
 *   our own dispatches are counted against the Limit.
 * - A window ends at its reset (plus a margin, so a request never lands a hair
 *   early); the next one opens with the Limit, less what is still in flight.
 *   A Limit of 0 opens it to one request (issue 29.8): a probe, as the run's
 *   first request is one. Taken at its word, a Limit of 0 on answers that
 *   carry verdicts would stop the run until each batch's wait runs out.
 * - A 429 closes the window until Retry-After, else its reset, else a backoff
 *   that doubles per 429 in a row.
 */
export interface WindowOptions {
  /** dispatch this long after a reset, so a request never arrives a hair early */
  resetMarginMs: number;
  /** when the server says "none left" without saying when that ends: first wait */
  unknownResetMs: number;
}

/** How a request ended, as far as the window is concerned. */
export interface WindowOutcome {
  info?: RateLimitInfo;
  /** an HTTP response arrived */
  answered?: boolean;
  /** the response was a 429 */
  rateLimited?: boolean;
}

const MAX_UNKNOWN_RESET_MS = 60_000;

export class RateWindow {
  /** the server's Limit per window, once told */
  limit: number | undefined;
  /** dispatches still allowed in this window; undefined while the server sets no limit */
  private allowance: number | undefined;
  /** end of the current window, local epoch ms */
  private resetAt: number | undefined;
  /** the lowest Remaining seen in this window: the server's latest count */
  private lowestRemaining = Infinity;
  /** dispatches before this sequence number were in flight when lowestRemaining was read */
  private lowestSeq = 0;
  private seq = 0;
  /** dispatches since the window opened, for a server whose Remaining is no number */
  private sentInWindow = 0;
  private consecutive429 = 0;
  /** after a 429 nobody leaves before this, whatever later answers say */
  private pausedUntil = 0;
  /** the longest time to a reset seen: the window's length, which no header tells */
  private longestWindowMs = 0;

  constructor(private readonly options: WindowOptions) {}

  /** A request leaves: returns its sequence number, for `observe`. */
  sent(): number {
    if (this.allowance !== undefined) this.allowance--;
    this.sentInWindow++;
    return this.seq++;
  }

  /** A slot was given back without sending anything. */
  unsent(): void {
    if (this.allowance !== undefined) this.allowance++;
    this.sentInWindow--;
  }

  /** What the answer to request `seq` said; `inFlight` no longer counts it. */
  observe(seq: number, outcome: WindowOutcome, now: number, inFlight: number): void {
    if (this.resetAt !== undefined && now >= this.resetAt + this.options.resetMarginMs) this.roll(inFlight);
    const info = outcome.info ?? {};
    if (info.limit !== undefined) this.limit = info.limit;

    // an answer written before the reset we already passed says nothing of this window
    const stale = info.resetAt !== undefined && info.resetAt <= now;
    if (info.resetAt !== undefined && !stale) {
      this.longestWindowMs = Math.max(this.longestWindowMs, info.resetAt - now);
      // Estimates of one window's reset differ by less than a second (delta-seconds are
      // rounded up); a second or more later is the next window, even when its answer comes
      // before our own roll: a request that reached the server after the reset (a loaded
      // machine) tells the next window's Remaining, and it was read as this one's (a 429).
      if (this.resetAt === undefined || info.resetAt >= this.resetAt + 1000) {
        this.resetAt = info.resetAt;
        this.lowestRemaining = Infinity;
      } else {
        // delta-seconds resets are rounded up: the earliest estimate is the closest
        this.resetAt = Math.min(this.resetAt, info.resetAt);
      }
    }
    if (info.remaining !== undefined && !stale) {
      if (info.remaining < this.lowestRemaining) {
        // the server's latest count; assume everything else in flight is not in it yet
        this.lowestRemaining = info.remaining;
        this.allowance = info.remaining - inFlight;
        this.lowestSeq = this.seq;
      } else if (seq < this.lowestSeq && this.allowance !== undefined) {
        // it was counted before that reading after all: release its reservation
        this.allowance++;
      }
    } else if (outcome.answered && !outcome.rateLimited && info.remaining === undefined) {
      if (this.limit === undefined) this.allowance = undefined; // the server sets no visible limit
      else if (this.allowance === undefined && this.resetAt !== undefined) this.allowance = this.limit - this.sentInWindow;
    }

    if (outcome.rateLimited) {
      this.consecutive429++;
      this.allowance = Math.min(this.allowance ?? 0, 0);
      this.lowestRemaining = 0;
      this.lowestSeq = this.seq;
      // Retry-After is the server's own word for this refusal; else the window's end
      let until = info.retryAt ?? this.resetAt ?? 0;
      if (until <= now) {
        const backoff = this.options.unknownResetMs * 2 ** Math.min(10, this.consecutive429 - 1);
        until = now + Math.min(MAX_UNKNOWN_RESET_MS, backoff);
      }
      this.resetAt = until;
      this.pausedUntil = Math.max(this.pausedUntil, until + this.options.resetMarginMs);
    } else if (outcome.answered) {
      this.consecutive429 = 0;
    }
  }

  /**
   * When the next request may leave: `now`, a later time to wake at, or
   * undefined when only the answers in flight can tell (none left, no reset
   * known). With nothing in flight and no reset known, it sets one itself: no
   * state of the window waits without a time to wake.
   */
  opensAt(now: number, inFlight: number): number | undefined {
    if (this.pausedUntil > now) return this.pausedUntil;
    if (!this.exhausted()) return now;
    if (this.resetAt !== undefined && now >= this.resetAt + this.options.resetMarginMs) {
      this.roll(inFlight);
      if (!this.exhausted()) return now;
    }
    if (this.resetAt === undefined) {
      // answers in flight will tell us more; with none, probe again after a while
      if (inFlight > 0) return undefined;
      this.resetAt = now + this.options.unknownResetMs;
    }
    return this.resetAt + this.options.resetMarginMs;
  }

  /** When dispatch resumes, while the window is shut; undefined while it is open. */
  shutUntil(now: number): number | undefined {
    if (this.pausedUntil > now) return this.pausedUntil;
    if (!this.exhausted() || this.resetAt === undefined) return undefined;
    const wake = this.resetAt + this.options.resetMarginMs;
    return wake > now ? wake : undefined;
  }

  /**
   * Does the plan bind? When a window allows fewer requests than the most in
   * flight could send in one (answers taking `rttMs`), the window and not the
   * server is what holds the run back. The window's length is not in the
   * headers: the longest time to a reset seen so far stands for it.
   */
  binds(rttMs: number | undefined): boolean {
    if (this.limit === undefined || this.longestWindowMs === 0) return false;
    const rtt = Math.max(1, rttMs ?? 1);
    return this.limit < MAX_IN_FLIGHT * Math.max(1, this.longestWindowMs / rtt);
  }

  private exhausted(): boolean {
    return this.allowance !== undefined && this.allowance <= 0;
  }

  /** The window has passed: the server counts afresh. */
  private roll(inFlight: number): void {
    this.resetAt = undefined;
    this.lowestRemaining = Infinity;
    this.lowestSeq = this.seq;
    this.sentInWindow = inFlight;
    if (this.allowance === undefined) return;
    // requests still in flight may land in the new window: count them there
    const fresh = Math.max(1, this.limit ?? 1);
    this.allowance = Math.max(0, fresh - inFlight);
  }
}
