/**
 * Time as the mailbox check sees it: what it has learnt of hosts and of the
 * network ages by `now`, and its own waits (greylisting's retry, a busy host's
 * pause, a session slot's budget) are `setTimer`s, so that tests drive them
 * with a fake clock (test/support/fake-clock.ts) instead of sleeping. The
 * shape is the API engine's Clock; the sockets' reply timeouts stay on the
 * real clock (they time real I/O).
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

/** Waits `ms` on `clock`; ends early (without an error) when any signal aborts. */
export function pause(clock: Clock, ms: number, ...signals: (AbortSignal | undefined)[]): Promise<void> {
  const signal = anySignal(...signals);
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      cancel();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const cancel = clock.setTimer(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * A signal that aborts `ms` from now on `clock` (AbortSignal.timeout on the
 * clock), and the function that cancels its timer once it is not needed.
 */
export function timeoutSignal(clock: Clock, ms: number): [AbortSignal, () => void] {
  const c = new AbortController();
  const cancel = clock.setTimer(() => c.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
  return [c.signal, cancel];
}

export function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal {
  return AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
}
