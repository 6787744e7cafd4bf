import { setTimeout as wait } from 'node:timers/promises';

/** setTimeout fires at once past this (2^31 - 1 ms, about 24.8 days): longer waits are clamped. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Resolves after `ms`; rejects with the signal's own reason when it aborts (not
 * node's AbortError wrapper, so callers can tell their reasons apart). `ref:
 * false`: the wait does not keep the process alive, for waits a shutting-down
 * server must not be held up by.
 */
export async function delay(ms: number, signal?: AbortSignal, { ref = true }: { ref?: boolean } = {}): Promise<void> {
  try {
    await wait(Math.min(Math.max(0, ms), MAX_TIMER_MS), undefined, { signal, ref });
  } catch (err) {
    throw signal?.aborted ? signal.reason : err;
  }
}

/** `work`'s value, or undefined once `ms` have passed (the work itself goes on). */
export async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  const cancel = new AbortController();
  try {
    return await Promise.race([work, delay(ms, cancel.signal).then(() => undefined, () => undefined)]);
  } finally {
    cancel.abort();
  }
}

/** `work`, or a rejection with the signal's reason as soon as it aborts (the work itself goes on). */
export async function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  signal.throwIfAborted();
  const cancel = new AbortController();
  try {
    return await Promise.race([work, delay(MAX_TIMER_MS, AbortSignal.any([signal, cancel.signal])).then(() => work)]);
  } finally {
    cancel.abort();
  }
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
