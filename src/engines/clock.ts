/**
 * Time as both engines see it — the API client's governor and retry loop, the
 * mailbox check's hosts, budgets and waits — so that tests drive it with a fake
 * clock (test/support/fake-clock.ts) instead of sleeping.
 */
export interface Clock {
  now(): number;
  /** runs `fn` after `ms`; returns a cancel function */
  setTimer(fn: () => void, ms: number): () => void;
}

/** setTimeout fires at once past this (2^31 - 1 ms, about 24.8 days): longer waits are clamped. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    return () => clearTimeout(t);
  },
};

/** Resolves after `ms` on `clock`, or rejects when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      cancel();
      reject(signal!.reason);
    };
    const cancel = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
