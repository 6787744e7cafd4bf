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
): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  let onStop: () => void = () => {};
  const stopped = new Promise<'stop'>((resolve) => {
    onStop = () => resolve('stop');
    stop.addEventListener('abort', onStop, { once: true });
  });
  try {
    for (;;) {
      if (stop.aborted) return;
      const next = it.next();
      let timer: NodeJS.Timeout | undefined;
      const idle = new Promise<'idle'>((resolve) => {
        timer = setTimeout(() => resolve('idle'), idleMs);
      });
      let r = await Promise.race([next, idle, stopped]);
      clearTimeout(timer);
      if (r === 'idle') {
        await onIdle();
        r = await Promise.race([next, stopped]);
      }
      if (r === 'stop') {
        next.catch(() => {}); // the source is abandoned; a late error no longer matters
        return;
      }
      if (r.done) return;
      yield r.value;
    }
  } finally {
    stop.removeEventListener('abort', onStop);
  }
}
