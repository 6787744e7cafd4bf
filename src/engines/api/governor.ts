import { systemClock, type Clock } from './clock.js';
import { concurrencyLimit, MAX_IN_FLIGHT, type ConcurrencyLimit, type ConcurrencySetting, type LimitChange } from './concurrency-limit.js';
import type { RateLimitInfo } from './rate-limit-headers.js';
import type { ConcurrencyStats } from '../../summary.js';

/**
 * One governor shared by every worker: it decides when a request may leave, from
 * what the server's rate-limit headers say. Pure apart from the injected clock.
 *
 * - Probe: one request in flight until the first answer, so an unknown limit (or a
 *   refused key) costs one request, not `concurrency` of them.
 * - Pace: never more dispatches than the window's Remaining allows; when it is
 *   spent, everyone waits for the reset, then the window reopens in full.
 * - A 429 pauses every worker until the reset / Retry-After, not just one.
 * - Waiting is bounded by each caller's deadline: past it, acquire says RATE_LIMITED.
 * - In flight: at most what the concurrency limit allows (concurrency-limit.ts),
 *   except that a plan that binds is spent as soon as the window allows: fixed
 *   windows count the requests *started* in them, so pacing at the window's
 *   average rate (Little's law: 20 per 10 s × 3 s latency = 6 in flight) would
 *   take twice as long as sending what the window allows at once. A plan binds
 *   when the most requests in flight could send more than a window allows; a
 *   server that pushes back or queues takes the limit back to its own.
 */
export interface GovernorOptions {
  /** a number pins the requests in flight; 'auto' lets them follow the server */
  concurrency: ConcurrencySetting;
  /** told each change of the in-flight limit, with its reason (--verbose) */
  onLimit?: (change: LimitChange) => void;
  clock?: Clock;
  /** dispatch this long after a reset, so a request never arrives a hair early */
  resetMarginMs?: number;
  /** when the server says "none left" without saying when that ends: first wait */
  unknownResetMs?: number;
}

export type AcquireResult =
  | { ok: true; permit: Permit }
  | { ok: false; reason: 'RATE_LIMITED' | 'HALTED' | 'ABORTED' };

export interface Outcome {
  /** what the response's headers said (errors included) */
  info?: RateLimitInfo;
  /** an HTTP response arrived (false for a network error or timeout) */
  answered?: boolean;
  /** the response was a 429 */
  rateLimited?: boolean;
  /** the slot was given back without sending anything */
  unused?: boolean;
  /** the server pushed back: 503, a timeout, a lost connection (a 429 counts too) */
  overloaded?: boolean;
}

export interface Permit {
  /** report how the request ended; exactly once (later calls are ignored) */
  done(outcome?: Outcome): void;
}

interface Waiter {
  deadline: number;
  resolve(result: AcquireResult): void;
  detach(): void;
}

const MAX_UNKNOWN_RESET_MS = 60_000;

export class Governor {
  private readonly clock: Clock;
  private readonly concurrency: ConcurrencyLimit;
  private readonly onLimit: GovernorOptions['onLimit'];
  /** the in-flight limit last told to onLimit */
  private shownLimit = 1;
  /** a window allows fewer requests than the most in flight could send in it: spend each at once */
  private planBinds = false;
  /** the longest time to a reset seen: the window's length, which no header tells */
  private longestWindowMs = 0;
  private peak = 0;
  private firstSentAt: number | undefined;
  private lastChangeAt = 0;
  /** in flight × ms, summed since the first request */
  private inFlightArea = 0;
  private readonly margin: number;
  private readonly unknownResetMs: number;

  private inFlight = 0;
  /** an answer has been seen: the probe phase is over */
  private probed = false;
  private limit: number | undefined;
  /** dispatches still allowed in this window; undefined while the server sets no limit */
  private allowance: number | undefined;
  /** end of the current window, local epoch ms */
  private resetAt: number | undefined;
  /** the lowest Remaining seen in this window: the server's latest count */
  private lowestRemaining = Infinity;
  /** dispatches before this sequence number were in flight when lowestRemaining was read */
  private lowestSeq = 0;
  private seq = 0;
  private consecutive429 = 0;
  /** after a 429 nobody leaves before this, whatever later answers say */
  private pausedUntil = 0;
  private halted = false;
  private readonly queue: Waiter[] = [];
  private cancelTimer: (() => void) | undefined;
  private timerAt: number | undefined;

  /** 429 responses seen */
  rateLimited = 0;
  /** times dispatch paused until a window's reset with requests waiting (the user sees each) */
  waits = 0;
  private waiting = false;

  constructor(options: GovernorOptions) {
    this.clock = options.clock ?? systemClock;
    this.concurrency = concurrencyLimit(options.concurrency);
    this.onLimit = options.onLimit;
    this.margin = options.resetMarginMs ?? 20;
    this.unknownResetMs = options.unknownResetMs ?? 1000;
  }

  /**
   * Waits for a dispatch slot. `deadline` (epoch ms) bounds the time spent waiting
   * for rate limits: when the wait would end after it, resolves RATE_LIMITED.
   */
  acquire(deadline: number, signal?: AbortSignal): Promise<AcquireResult> {
    if (this.halted) return Promise.resolve({ ok: false, reason: 'HALTED' });
    if (signal?.aborted) return Promise.resolve({ ok: false, reason: 'ABORTED' });
    return new Promise((resolve) => {
      const onAbort = () => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        resolve({ ok: false, reason: 'ABORTED' });
        this.pump();
      };
      const waiter: Waiter = {
        deadline,
        resolve,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
      this.pump();
    });
  }

  /** Stops all dispatch for good (a refused key): every waiter gets HALTED. */
  halt(): void {
    this.halted = true;
    this.pump();
  }

  /** When dispatch resumes, while someone waits for a rate-limit reset. */
  get waitingUntil(): number | undefined {
    if (this.queue.length === 0) return undefined;
    const now = this.clock.now();
    if (this.pausedUntil > now) return this.pausedUntil;
    if (!this.exhausted() || this.resetAt === undefined) return undefined;
    const wake = this.resetAt + this.margin;
    return wake > now ? wake : undefined;
  }

  private exhausted(): boolean {
    return this.allowance !== undefined && this.allowance <= 0;
  }

  /** How many were in flight, at most and on average, so far. */
  get inFlightStats(): ConcurrencyStats {
    const span = this.lastChangeAt - (this.firstSentAt ?? this.lastChangeAt);
    const mean = span > 0 ? this.inFlightArea / span : this.peak;
    return { mode: this.concurrency.mode, peak: this.peak, mean: Math.round(mean * 10) / 10 };
  }

  /** Requests allowed in flight now. */
  private cap(): number {
    if (!this.probed) return 1; // until the first answer, one request probes
    const own = this.concurrency.limit;
    if (this.planBinds && this.concurrency.mode === 'auto' && this.concurrency.healthy && this.limit !== undefined) {
      return Math.max(own, Math.min(MAX_IN_FLIGHT, this.limit));
    }
    return own;
  }

  private countInFlight(now: number, change: number): void {
    this.firstSentAt ??= now;
    this.inFlightArea += this.inFlight * Math.max(0, now - this.lastChangeAt);
    this.lastChangeAt = now;
    this.inFlight += change;
    this.peak = Math.max(this.peak, this.inFlight);
  }

  private grant(waiter: Waiter): void {
    const sentAt = this.clock.now();
    this.countInFlight(sentAt, +1);
    if (this.allowance !== undefined) this.allowance--;
    const seq = this.seq++;
    const ticket = this.concurrency.dispatched(this.inFlight);
    let finished = false;
    waiter.detach();
    waiter.resolve({
      ok: true,
      permit: {
        done: (outcome = {}) => {
          if (finished) return;
          finished = true;
          this.observe(seq, outcome, ticket, sentAt);
        },
      },
    });
  }

  /** The window has passed: the server counts afresh. */
  private roll(): void {
    this.resetAt = undefined;
    this.lowestRemaining = Infinity;
    this.lowestSeq = this.seq;
    if (this.allowance === undefined) return;
    // requests still in flight may land in the new window: count them there
    const fresh = this.limit ?? 1;
    this.allowance = Math.max(0, fresh - this.inFlight);
  }

  private observe(seq: number, outcome: Outcome, ticket: number, sentAt: number): void {
    const now = this.clock.now();
    this.countInFlight(now, -1);
    if (outcome.unused) {
      if (this.allowance !== undefined) this.allowance++;
      return this.pump();
    }
    const overload = outcome.overloaded === true || outcome.rateLimited === true;
    const change = this.concurrency.answered(ticket, {
      overload,
      rttMs: outcome.answered && !overload ? now - sentAt : undefined,
    });
    if (this.resetAt !== undefined && now >= this.resetAt + this.margin) this.roll();
    const info = outcome.info ?? {};
    if (outcome.answered) this.probed = true;
    if (info.limit !== undefined) this.limit = info.limit;

    // an answer written before the reset we already passed says nothing of this window
    const stale = info.resetAt !== undefined && info.resetAt <= now;
    if (info.resetAt !== undefined && !stale) {
      if (this.resetAt === undefined || info.resetAt > this.resetAt + 1000) {
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
        this.allowance = info.remaining - this.inFlight;
        this.lowestSeq = this.seq;
      } else if (seq < this.lowestSeq && this.allowance !== undefined) {
        // it was counted before that reading after all: release its reservation
        this.allowance++;
      }
    } else if (outcome.answered && !outcome.rateLimited && info.remaining === undefined && this.limit === undefined) {
      this.allowance = undefined; // the server sets no visible limit
    }

    this.judgePlan(info, now);

    if (outcome.rateLimited) {
      this.rateLimited++;
      this.consecutive429++;
      this.allowance = Math.min(this.allowance ?? 0, 0);
      this.lowestRemaining = 0;
      this.lowestSeq = this.seq;
      // Retry-After is the server's own word for this refusal; else the window's end
      let until = info.retryAt ?? this.resetAt ?? 0;
      if (until <= now) {
        const backoff = this.unknownResetMs * 2 ** Math.min(10, this.consecutive429 - 1);
        until = now + Math.min(MAX_UNKNOWN_RESET_MS, backoff);
      }
      this.resetAt = until;
      this.pausedUntil = Math.max(this.pausedUntil, until + this.margin);
    } else if (outcome.answered) {
      this.consecutive429 = 0;
    }
    this.showLimit(change?.reason);
    this.pump();
  }

  /**
   * Does the plan bind? When a window allows fewer requests than the most in
   * flight could send in one, the window and not the server is what holds the
   * run back. The window's length is not in the headers: the longest time to
   * a reset seen so far stands for it.
   */
  private judgePlan(info: RateLimitInfo, now: number): void {
    if (info.resetAt === undefined || this.limit === undefined || info.resetAt <= now) return;
    this.longestWindowMs = Math.max(this.longestWindowMs, info.resetAt - now);
    const rtt = Math.max(1, this.concurrency.rttMs ?? 1);
    this.planBinds = this.limit < MAX_IN_FLIGHT * Math.max(1, this.longestWindowMs / rtt);
  }

  /** Tells onLimit when the limit in force has changed. */
  private showLimit(reason: string | undefined): void {
    const to = this.cap();
    // a pinned limit has no changes to tell: the probe opening to it is the governor's, not the limit's
    if (to === this.shownLimit || !this.probed || this.concurrency.mode === 'fixed') return;
    const from = this.shownLimit;
    this.shownLimit = to;
    const planned = this.planBinds && to > this.concurrency.limit;
    const why = planned ? `the plan binds: ${this.limit} requests per window, sent as soon as the window allows` : reason ?? 'the server is healthy again';
    this.onLimit?.({ from, to, reason: why });
  }

  private pump(): void {
    if (this.halted) {
      this.clearTimer();
      for (const w of this.queue.splice(0)) {
        w.detach();
        w.resolve({ ok: false, reason: 'HALTED' });
      }
      return;
    }
    const now = this.clock.now();
    if (this.exhausted() && this.resetAt !== undefined && now >= this.resetAt + this.margin) this.roll();
    const paused = this.pausedUntil > now;
    const cap = this.cap();
    while (!paused && this.queue.length > 0 && this.inFlight < cap && !this.exhausted()) this.grant(this.queue.shift()!);
    if (this.queue.length === 0 || (!paused && !this.exhausted())) {
      this.waiting = false;
      return this.clearTimer();
    }

    if (paused) return this.wakeAt(this.pausedUntil, now);
    if (this.resetAt === undefined) {
      // answers in flight will tell us more; with none, probe again after a while
      if (this.inFlight > 0) return this.clearTimer();
      this.resetAt = now + this.unknownResetMs;
    }
    this.wakeAt(this.resetAt + this.margin, now);
  }

  /** Fails the waiters whose deadline comes first, and sleeps until `wake` for the rest. */
  private wakeAt(wake: number, now: number): void {
    for (const w of this.queue.filter((q) => q.deadline < wake)) {
      this.queue.splice(this.queue.indexOf(w), 1);
      w.detach();
      w.resolve({ ok: false, reason: 'RATE_LIMITED' });
    }
    if (this.queue.length > 0) {
      if (!this.waiting) this.waits++;
      this.waiting = true;
      this.setTimer(wake, now);
    } else this.clearTimer();
  }

  private setTimer(at: number, now: number): void {
    if (this.timerAt === at) return;
    this.clearTimer();
    this.timerAt = at;
    this.cancelTimer = this.clock.setTimer(() => {
      this.timerAt = undefined;
      this.cancelTimer = undefined;
      this.pump();
    }, at - now);
  }

  private clearTimer(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.timerAt = undefined;
  }
}
