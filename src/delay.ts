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
