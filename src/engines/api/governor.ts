import { systemClock, type Clock } from '../../time/clock.js';
import { concurrencyLimit, MAX_IN_FLIGHT, type ConcurrencyLimit, type ConcurrencySetting, type LimitChange } from './concurrency-limit.js';
import { InFlightMeter } from './in-flight-meter.js';
import type { RateLimitInfo } from './rate-limit-headers.js';
import { RateWindow } from './rate-window.js';
import type { ConcurrencyStats } from '../../summary.js';

/**
 * One governor shared by every worker: the queue of requests waiting to leave,
 * and the one timer that wakes it. What may leave is decided by two pure parts:
 * the rate-limit window (rate-window.ts: Remaining, resets, 429 pauses) and the
 * concurrency limit (concurrency-limit.ts: how many in flight).
 *
 * - Waiting is bounded by each caller's deadline: past it, acquire says RATE_LIMITED.
 * - In flight: at most what the concurrency limit allows, except that a plan that
 *   binds is spent as soon as the window allows: fixed windows count the requests
 *   *started* in them, so pacing at the window's average rate (Little's law:
 *   20 per 10 s × 3 s latency = 6 in flight) would take twice as long as sending
 *   what the window allows at once. A server that pushes back or queues takes the
 *   limit back to its own.
 * - One request until the first answer is the caller's rule (first-answer.ts): it
 *   holds a call's retries too, which the governor does not see.
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

export type AcquireResult = { ok: true; permit: Permit } | { ok: false; reason: 'RATE_LIMITED' | 'HALTED' | 'ABORTED' };

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
  /**
   * sent to the first byte of the answer (its headers); without it, to the
   * report. Reading and parsing the body is the client's own time: a busy
   * event loop is not a queue at the server.
   */
  rttMs?: number;
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

export class Governor {
  private readonly clock: Clock;
  private readonly concurrency: ConcurrencyLimit;
  private readonly window: RateWindow;
  private readonly meter = new InFlightMeter();
  private readonly onLimit: GovernorOptions['onLimit'];
  /** the in-flight limit last told to onLimit */
  private shownLimit = 1;
  private halted = false;
  private readonly queue: Waiter[] = [];
  private cancelTimer: (() => void) | undefined;
  private timerAt: number | undefined;

  /** times dispatch paused until a window's reset with requests waiting (the user sees each) */
  waits = 0;
  private waiting = false;

  constructor(options: GovernorOptions) {
    this.clock = options.clock ?? systemClock;
    this.concurrency = concurrencyLimit(options.concurrency);
    this.onLimit = options.onLimit;
    this.window = new RateWindow({ resetMarginMs: options.resetMarginMs ?? 20, unknownResetMs: options.unknownResetMs ?? 1000 });
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
    return this.queue.length === 0 ? undefined : this.window.shutUntil(this.clock.now());
  }

  /** How many were in flight, at most and on average, so far. */
  get inFlightStats(): ConcurrencyStats {
    return this.meter.stats(this.concurrency.mode);
  }

  /** Requests allowed in flight now, read by whoever feeds the queue (the pipeline, through Validator.requestsAllowed). */
  get limit(): number {
    return this.cap();
  }

  /** Requests allowed in flight now. */
  private cap(): number {
    const own = this.concurrency.limit;
    const planned = this.planned();
    return planned === undefined ? own : Math.max(own, Math.min(MAX_IN_FLIGHT, planned));
  }

  /** The Limit of a plan that binds, while the adaptive limit lets the plan set the pace. */
  private planned(): number | undefined {
    if (this.concurrency.mode !== 'auto' || !this.concurrency.healthy) return undefined;
    return this.window.bindingLimit(this.concurrency.rttMs);
  }

  private grant(waiter: Waiter): void {
    const sentAt = this.clock.now();
    this.meter.change(sentAt, +1);
    const seq = this.window.sent(sentAt);
    const ticket = this.concurrency.dispatched(this.meter.count);
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

  private observe(seq: number, outcome: Outcome, ticket: number, sentAt: number): void {
    const now = this.clock.now();
    this.meter.change(now, -1);
    if (outcome.unused) {
      this.window.unsent(seq);
      return this.pump();
    }
    const overload = outcome.overloaded === true || outcome.rateLimited === true;
    const change = this.concurrency.answered(ticket, {
      overload,
      rttMs: outcome.answered && !overload ? (outcome.rttMs ?? now - sentAt) : undefined,
    });
    this.window.observe(seq, outcome, now, this.meter.count, sentAt);
    this.showLimit(change?.reason);
    this.pump();
  }

  /** Tells onLimit when the limit in force has changed. */
  private showLimit(reason: string | undefined): void {
    const to = this.cap();
    // a pinned limit has no changes to tell
    if (to === this.shownLimit || this.concurrency.mode === 'fixed') return;
    const from = this.shownLimit;
    this.shownLimit = to;
    const planned = this.planned();
    const why =
      planned !== undefined && to > this.concurrency.limit
        ? `the plan binds: ${planned} requests per window, sent as soon as the window allows`
        : (reason ?? 'the server is healthy again');
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
    let opens = this.window.opensAt(now, this.meter.count);
    while (opens === now && this.queue.length > 0 && this.meter.count < this.cap()) {
      this.grant(this.queue.shift()!);
      opens = this.window.opensAt(now, this.meter.count);
    }
    if (this.queue.length === 0 || opens === now) {
      // nobody waits, or they wait for answers in flight (the concurrency limit), not for the window
      this.waiting = false;
      return this.clearTimer();
    }
    if (opens === undefined) return this.clearTimer(); // answers in flight will tell
    this.wakeAt(opens, now);
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
