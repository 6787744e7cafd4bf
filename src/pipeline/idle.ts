import { systemClock, type Clock } from '../time/clock.js';

/**
 * Yields what `source` yields, with two exceptions for an input that is slow to
 * come (a pipe that trickles, `tail -f | mailsift validate`): after `idleMs`
 * without input it calls `onIdle` once, so that a partial batch is sent and its
 * rows written instead of waiting for input that may not come for hours; and it
 * ends at once when `stop` aborts (Ctrl-C must not wait for the next line).
 */
export async function* withIdle<T>(
  source: AsyncIterable<T>,
  idleMs: number,
  onIdle: () => Promise<void>,
  stop: AbortSignal,
  clock: Clock = systemClock,
): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  while (!stop.aborted) {
    const next = it.next();
    let r = await first(next, idleMs, stop, clock);
    if (r === 'idle') {
      await onIdle();
      r = await first(next, undefined, stop, clock);
    }
    if (r === 'stop') {
      next.catch(() => {}); // the source is abandoned; a late error no longer matters
      return;
    }
    if (r === 'idle' || r.done) return;
    yield r.value;
  }
}

/**
 * `next`, or 'idle' after `idleMs`, or 'stop' when `stop` aborts — whichever
 * comes first. The timer and the listener live for this one wait: racing a
 * long-lived promise would keep every result alive through its reactions.
 */
function first<R>(next: Promise<R>, idleMs: number | undefined, stop: AbortSignal, clock: Clock): Promise<R | 'idle' | 'stop'> {
  // An abort that came before (during onIdle) fires no event for a new listener.
  if (stop.aborted) return Promise.resolve('stop');
  return new Promise((resolve, reject) => {
    const cancel = idleMs === undefined ? undefined : clock.setTimer(() => settle('idle'), idleMs);
    const onStop = (): void => settle('stop');
    const cleanUp = (): void => {
      cancel?.();
      stop.removeEventListener('abort', onStop);
    };
    function settle(value: R | 'idle' | 'stop'): void {
      cleanUp();
      resolve(value);
    }
    stop.addEventListener('abort', onStop, { once: true });
    next.then(settle, (err: unknown) => {
      cleanUp();
      reject(err);
    });
  });
}
