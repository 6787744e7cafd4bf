/**
 * Retry delays: exponential with full jitter (the AWS architecture blog's
 * "Exponential Backoff And Jitter"), capped, and never sooner than the server's
 * Retry-After. Pure: randomness is injected so tests can pin it.
 */
export interface BackoffOptions {
  /** the first retry's ceiling */
  baseMs?: number;
  /** no single delay above this (a Retry-After may still ask for more) */
  capMs?: number;
  /** a Retry-After longer than this is not waited for: the attempt is given up */
  maxRetryAfterMs?: number;
  random?: () => number;
}

const DEFAULT_BACKOFF = { baseMs: 200, capMs: 15_000, maxRetryAfterMs: 120_000 } as const;

/**
 * Delay before retry number `retry` (1 for the first retry). `retryAfterMs` is the
 * server's own request, if it made one. Returns undefined when the server asks for
 * a wait longer than we are willing to spend on one retry.
 */
export function backoffDelay(retry: number, options: BackoffOptions = {}, retryAfterMs?: number): number | undefined {
  const base = options.baseMs ?? DEFAULT_BACKOFF.baseMs;
  const cap = options.capMs ?? DEFAULT_BACKOFF.capMs;
  const random = options.random ?? Math.random;
  const ceiling = Math.min(cap, base * 2 ** Math.max(0, retry - 1));
  const jittered = Math.floor(random() * ceiling);
  if (retryAfterMs === undefined) return jittered;
  if (retryAfterMs > (options.maxRetryAfterMs ?? DEFAULT_BACKOFF.maxRetryAfterMs)) return undefined;
  return Math.max(retryAfterMs, jittered);
}
