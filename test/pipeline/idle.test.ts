import { describe, expect, it } from 'vitest';
import { withIdle } from '../../src/pipeline/idle.js';

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

describe('withIdle', () => {
  it('passes items through, calls onIdle once per pause, and ends with the source', async () => {
    const src = manualSource<number>();
    let idles = 0;
    const got: number[] = [];
    const done = (async () => {
      for await (const v of withIdle(src.iterable, 5, async () => void idles++, new AbortController().signal)) got.push(v);
    })();
    await tick(1);
    src.push(1);
    await tick(40); // one pause, however long
    src.push(2);
    await tick(1);
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
    await tick(1);
    src.push(7);
    await tick(1);
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
