/**
 * The one clock: every wait, timer and reading of the time in src/ goes
 * through a Clock, so that a test hands the parts a fake one
 * (test/support/fake-clock.ts) and drives time instead of sleeping. The real
 * one is `systemClock`; `main(argv, io)` passes `io.clock` down to the parts
 * that keep time.
 */
export interface Clock {
  /** milliseconds since the epoch, as Date.now() */
  now(): number;
  /**
   * Runs `fn` after `ms`; returns a cancel function. `ref: false`: the timer
   * does not keep the process alive (a sync, a probe, a display, a grace
   * period a finished run must not wait for).
   */
  setTimer(fn: () => void, ms: number, options?: { ref?: boolean }): () => void;
}

/** setTimeout fires at once past this (2^31 - 1 ms, about 24.8 days): longer waits are clamped. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms, options) {
    const t = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    if (options?.ref === false) t.unref();
    return () => clearTimeout(t);
  },
};

/** Runs `fn` every `ms` on `clock` until the returned function is called. */
export function every(clock: Clock, ms: number, fn: () => void, options?: { ref?: boolean }): () => void {
  let cancel = (): void => {};
  let stopped = false;
  const arm = (): void => {
    cancel = clock.setTimer(
      () => {
        if (stopped) return;
        arm();
        fn();
      },
      ms,
      options,
    );
  };
  arm();
  return () => {
    stopped = true;
    cancel();
  };
}

/**
 * Measures a real duration from now, on the monotonic clock (performance.now):
 * how long a reply or a request took is a fact of the I/O, never jumps with
 * the wall clock, and is not the Clock's to drive.
 */
export function stopwatch(): () => number {
  const started = performance.now();
  return () => performance.now() - started;
}
