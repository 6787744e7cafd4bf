import { describe, expect, it } from 'vitest';
import { withIdle } from '../../src/pipeline/idle.js';
import { waitFor } from '../support/wait.js';

/** A source whose items the test releases by hand. */
function manualSource<T>() {
  const waiting: ((r: IteratorResult<T>) => void)[] = [];
  return {
    push: (value: T) => waiting.shift()?.({ value, done: false }),
    end: () => waiting.shift()?.({ value: undefined, done: true }),
    pending: () => waiting.length,
    iterable: {
      [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<T>>((r) => waiting.push(r)) }),
    } as AsyncIterable<T>,
  };
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** until withIdle is waiting for the source's next item (looked at every turn: the idle time is 5 ms) */
const asking = (src: { pending(): number }) => waitFor(() => src.pending() === 1, { what: 'withIdle to ask for the next item', intervalMs: 0 });

describe('withIdle', () => {
  it('passes items through, calls onIdle once per pause, and ends with the source', async () => {
    const src = manualSource<number>();
    let idles = 0;
    const got: number[] = [];
    const done = (async () => {
      for await (const v of withIdle(src.iterable, 5, async () => void idles++, new AbortController().signal)) got.push(v);
    })();
    await asking(src);
    src.push(1);
    await tick(40); // one pause, however long (the idle time is 5 ms)
    src.push(2);
    await asking(src);
    src.end();
    await done;
    expect(got).toEqual([1, 2]);
    expect(idles).toBe(1);
  });

  it('ends at once when stopped while waiting for input', async () => {
    const src = manualSource<number>();
    const stop = new AbortController();
    const done = (async () => {
      const got: number[] = [];
      for await (const v of withIdle(src.iterable, 1000, async () => {}, stop.signal)) got.push(v);
      return got;
    })();
    await asking(src);
    src.push(7);
    await asking(src);
    stop.abort();
    expect(await done).toEqual([7]);
    expect(src.pending()).toBe(1); // the read in progress was abandoned, not awaited
  });

  it('ends at once when stopped during onIdle (the abort event has then already fired)', async () => {
    const src = manualSource<number>();
    const stop = new AbortController();
    const done = (async () => {
      for await (const _ of withIdle(src.iterable, 5, async () => stop.abort(), stop.signal));
      return 'ended';
    })();
    const waited = await Promise.race([done, tick(200).then(() => 'still waiting for input')]);
    src.end();
    expect(waited).toBe('ended');
  });
});
