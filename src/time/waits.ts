import { MAX_TIMER_MS, type Clock } from './clock.js';

/**
 * Resolves after `ms` on `clock`; rejects with the signal's own reason when it
 * aborts (not node's AbortError wrapper, so callers can tell their reasons
 * apart). `ref: false`: the wait does not keep the process alive, for waits a
 * shutting-down server must not be held up by.
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal, options?: { ref?: boolean }): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      cancel();
      reject(signal!.reason);
    };
    const cancel = clock.setTimer(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      ms,
      options,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Waits `ms` on `clock`; ends early (without an error) when any signal aborts. */
export function pause(clock: Clock, ms: number, ...signals: (AbortSignal | undefined)[]): Promise<void> {
  const signal = anySignal(...signals);
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
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
export function timeoutSignal(clock: Clock, ms: number, options?: { ref?: boolean }): [AbortSignal, () => void] {
  const c = new AbortController();
  const cancel = clock.setTimer(() => c.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms, options);
  return [c.signal, cancel];
}

export function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal {
  return AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
}

/** `work`'s value, or undefined once `ms` have passed on `clock` (the work itself goes on). */
export async function withDeadline<T>(clock: Clock, work: Promise<T>, ms: number): Promise<T | undefined> {
  let cancel = (): void => {};
  const over = new Promise<undefined>((resolve) => {
    cancel = clock.setTimer(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work, over]);
  } finally {
    cancel();
  }
}

/**
 * `work`, or a rejection with the signal's reason as soon as it aborts (the
 * work itself goes on). While it waits, a timer on `clock` holds the process
 * alive as the work's own I/O would (a wait on a promise alone would not).
 */
export async function abortable<T>(clock: Clock, work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  signal.throwIfAborted();
  const cancel = new AbortController();
  try {
    return await Promise.race([work, sleep(clock, MAX_TIMER_MS, AbortSignal.any([signal, cancel.signal])).then(() => work)]);
  } finally {
    cancel.abort();
  }
}

/**
 * `work`, or a rejection with an ETIMEDOUT error ("no answer within `ms` ms")
 * once `ms` have passed on `clock`.
 */
export function withTimeout<T>(clock: Clock, work: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancel = clock.setTimer(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: 'ETIMEDOUT' })), ms);
    work.then(
      (v) => (cancel(), resolve(v)),
      (e: unknown) => (cancel(), reject(e)),
    );
  });
}

/**
 * Waits in `line` until `take()` gives a value: a waiter is a function in the
 * line that whoever frees a place calls; `take` may decline (undefined), and
 * the waiter goes back in line. Rejects with the signal's reason when it aborts,
 * leaving the line. For the SMTP session slots, where waiting is per host.
 */
export function waitInLine<T>(line: (() => void)[], take: () => T | undefined, signal?: AbortSignal): Promise<T> {
  const now = take();
  if (now !== undefined) return Promise.resolve(now);
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const go = (): void => {
      const got = take();
      if (got === undefined) return void line.push(go);
      signal?.removeEventListener('abort', onAbort);
      resolve(got);
    };
    const onAbort = (): void => {
      const i = line.indexOf(go);
      if (i >= 0) line.splice(i, 1);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    line.push(go);
  });
}
