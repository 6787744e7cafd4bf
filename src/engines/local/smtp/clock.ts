/*
 * The mailbox check's waits on the engines' Clock (../../clock.ts): what it has
 * learnt of hosts and of the network ages by `now`, and its own waits
 * (greylisting's retry, a busy host's pause, a session slot's budget) are
 * timers on it. The sockets' reply timeouts stay on the real clock (they time
 * real I/O).
 */
import type { Clock } from '../../clock.js';

export { systemClock, type Clock } from '../../clock.js';

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
