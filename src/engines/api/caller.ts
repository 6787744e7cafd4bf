import { AuthError } from '../../errors.js';
import type { ErrorCode } from '../../verdict.js';
import type { ValidatorStats } from '../validator.js';
import { backoffDelay, type BackoffOptions } from './backoff.js';
import { systemClock, type Clock } from '../../time/clock.js';
import { sleep } from '../../time/waits.js';
import type { ConcurrencySetting, LimitChange } from './concurrency-limit.js';
import { FirstAnswer } from './first-answer.js';
import { Governor } from './governor.js';
import type { ConcurrencyStats } from '../../summary.js';
import type { Failure } from '../failure.js';
import type { ApiHttp } from './http.js';

export interface CallerOptions {
  retries: number;
  /** a number pins the requests in flight, 1..64; 'auto' follows the server */
  concurrency: ConcurrencySetting;
  /** told each change of the in-flight limit, with its reason (--verbose) */
  onConcurrencyChange?: (change: LimitChange) => void;
  clock?: Clock;
  /** total rate-limit wait one request may spend before its rows end RATE_LIMITED */
  rateLimitMaxWaitMs?: number;
  backoff?: BackoffOptions;
  /** told when dispatch starts or stops waiting for a rate-limit reset: the epoch ms it waits until, or undefined */
  onRateLimitWait?: (until: number | undefined) => void;
  /**
   * aborted (Ctrl-C): put no new request on the wire — one waiting for its turn
   * or for a retry rejects with the reason — while those already sent may still
   * answer until their own `signal` aborts
   */
  stop?: AbortSignal;
  /** where the key came from, for the message when it is refused: "MAILSIFT_API_KEY", "--api-key-file keys.txt" */
  keySource?: string;
}

/** How one logical request ended after rate limits and retries were dealt with. */
export type CallResult<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'too-large' }
  | { kind: 'bad-address' }
  | { kind: 'failed'; code: ErrorCode; message: string; failure: Failure };

/**
 * The largest bulk request the server accepts, learnt by refusals: each refusal
 * halves the size for the rest of the run: a server that refused a size once will refuse it again.
 */
export class BatchLimit {
  constructor(public max: number) {}

  refused(size: number): void {
    // a batch sent before another refusal taught a smaller size teaches nothing new
    if (size <= this.max) this.max = Math.max(1, Math.floor(size / 2));
  }
}

const DEFAULT_RATE_LIMIT_MAX_WAIT_MS = 10 * 60_000;

/** answers that say the server (or a gateway before it) has more than it can take */
const OVERLOAD_STATUSES = new Set([408, 502, 503, 504]);

/**
 * Sends requests through the shared governor and retries what is worth retrying
 * (a lost batch is a lost part of the user's list): a 429 re-queues without spending an attempt; 408/425/5xx, timeouts,
 * network errors and unreadable bodies back off with full jitter up to `retries`;
 * a refused key halts every worker at once and throws AuthError.
 */
export class Caller {
  readonly stats: ValidatorStats = { requests: 0, retries: 0, rateLimited: 0 };
  private readonly governor: Governor;
  private readonly clock: Clock;
  private refused: AuthError | undefined;
  private readonly firstAnswer = new FirstAnswer();
  /** set when the API never answered and one request ran out of retries */
  private unreachable: { code: ErrorCode; message: string; failure: Failure } | undefined;

  constructor(
    private readonly http: ApiHttp,
    private readonly options: CallerOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.governor = new Governor({ concurrency: options.concurrency, clock: this.clock, onLimit: options.onConcurrencyChange });
  }

  /** `parse` turns a 2xx body into a value; undefined means unreadable (retried). */
  async call<T>(
    path: string,
    payload: unknown,
    parse: (body: unknown) => T | undefined,
    signal: AbortSignal,
    /** a bulk request's size, checked against what the server is known to accept */
    batch?: { size: number; limit: BatchLimit },
  ): Promise<CallResult<T>> {
    return this.firstAnswer.run(() => this.attempts(path, payload, parse, signal, batch));
  }

  private async attempts<T>(
    path: string,
    payload: unknown,
    parse: (body: unknown) => T | undefined,
    signal: AbortSignal,
    batch?: { size: number; limit: BatchLimit },
  ): Promise<CallResult<T>> {
    const deadline = this.clock.now() + (this.options.rateLimitMaxWaitMs ?? DEFAULT_RATE_LIMIT_MAX_WAIT_MS);
    let failures = 0;
    const waiting = this.options.stop ? AbortSignal.any([signal, this.options.stop]) : signal;
    for (;;) {
      // A server that never answered one request is not there (wrong URL, down):
      // the other batches end the same way at once rather than each spending
      // its retries — every row still comes out, with the error.
      if (this.unreachable) return { kind: 'failed', ...this.unreachable };
      const pending = this.governor.acquire(deadline, waiting);
      this.showWait();
      const grant = await pending;
      this.showWait();
      if (!grant.ok) {
        if (grant.reason === 'HALTED') throw this.refused ?? new AuthError('the API refused the key');
        if (grant.reason === 'ABORTED') throw waiting.reason;
        const message = 'rate limited for longer than the wait allowed';
        return { kind: 'failed', code: 'RATE_LIMITED', message, failure: { kind: 'rate-limit', text: message } };
      }
      if (batch && batch.size > batch.limit.max) {
        // learnt while this one queued: give the slot back rather than draw another refusal
        grant.permit.done({ unused: true });
        return { kind: 'too-large' };
      }
      if (waiting.aborted) {
        grant.permit.done({ unused: true });
        throw waiting.reason;
      }
      this.stats.requests++;
      let exchange;
      try {
        exchange = await this.http.post(path, payload, signal);
      } catch (err) {
        grant.permit.done();
        throw err;
      }
      const { attempt, info, answered, status, firstByteMs } = exchange;
      if (answered) this.firstAnswer.reached = true;
      // before the permit is returned, or the waiters would be let through unaware
      if (attempt.kind === 'auth') this.governor.halt();
      if (attempt.kind === 'too-large' && batch) batch.limit.refused(batch.size);
      // a lost request or an overloaded server's answer tells the concurrency limit to back off; a 500 is a bug, not load
      const overloaded = attempt.kind === 'retryable' && (status === undefined || OVERLOAD_STATUSES.has(status));
      grant.permit.done({ info, answered, rateLimited: attempt.kind === 'rate-limited', overloaded, rttMs: firstByteMs });

      let retryable: { code: ErrorCode; detail: string; failure?: Failure } | undefined;
      switch (attempt.kind) {
        case 'auth':
          this.refused ??= new AuthError(
            `the API refused the key (HTTP ${attempt.status}); check ${this.options.keySource ?? 'MAILSIFT_API_KEY or --api-key-file'}`,
          );
          throw this.refused;
        case 'rate-limited':
          // the governor now holds every worker until the reset; this is no failed attempt
          this.stats.rateLimited++;
          continue;
        case 'ok': {
          const value = parse(attempt.body);
          if (value !== undefined) return { kind: 'ok', value };
          retryable = {
            code: 'SERVER_ERROR',
            detail: 'unexpected response body',
            failure: { kind: 'server', text: `an answer of an unexpected shape from POST ${path}` },
          };
          break;
        }
        case 'too-large':
        case 'bad-address':
          return { kind: attempt.kind };
        case 'request-error': {
          const failure = attempt.failure ?? { kind: 'http', status: attempt.status, text: `HTTP ${attempt.status}${attempt.code ? ` ${attempt.code}` : ''}` };
          return { kind: 'failed', code: 'REQUEST_ERROR', message: `the server rejected the request: ${failure.text}`, failure };
        }
        case 'retryable':
          retryable = attempt;
      }
      failures++;
      if (failures > this.options.retries) {
        const failure = retryable.failure ?? { kind: 'server', text: retryable.detail };
        const failed = {
          code: retryable.code,
          message: `${failure.text}; gave up after ${this.options.retries} ${this.options.retries === 1 ? 'retry' : 'retries'}`,
          failure,
        };
        if (!this.firstAnswer.reached) this.unreachable ??= { code: failed.code, message: `the API could not be reached: ${failure.text}`, failure };
        return { kind: 'failed', ...failed };
      }
      const retryAfterMs = info.retryAt === undefined ? undefined : Math.max(0, info.retryAt - this.clock.now());
      const delay = backoffDelay(failures, this.options.backoff, retryAfterMs);
      if (delay === undefined) {
        const failure = retryable.failure ?? { kind: 'server', text: retryable.detail };
        return { kind: 'failed', code: retryable.code, message: `${failure.text}; the server asked to wait too long`, failure };
      }
      this.stats.retries++;
      await sleep(this.clock, delay, waiting);
    }
  }

  /** how many requests were in flight, at most and on average */
  get inFlight(): ConcurrencyStats {
    return this.governor.inFlightStats;
  }

  /** requests allowed in flight now (the governor's limit) */
  get inFlightLimit(): number {
    return this.governor.limit;
  }

  /** pauses for a rate-limit window so far (429 answers are counted apart, in stats.rateLimited) */
  get rateLimitWaits(): number {
    return this.governor.waits;
  }

  private showWait(): void {
    this.options.onRateLimitWait?.(this.governor.waitingUntil);
  }
}
