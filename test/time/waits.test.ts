import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/time/clock.js';
import { abortable, sleep, waitInLine, withDeadline } from '../../src/time/waits.js';

const delay = (ms: number, signal?: AbortSignal) => sleep(systemClock, ms, signal);

describe('the waits on a clock', () => {
  it('rejects with the signal’s own reason, at once when already aborted', async () => {
    const stop = new AbortController();
    const waiting = delay(60_000, stop.signal);
    stop.abort(new Error('stopped by the user'));
    await expect(waiting).rejects.toThrow('stopped by the user');
    await expect(delay(10, AbortSignal.abort('gone'))).rejects.toBe('gone');
  });

  it('takes a wait past the 24.8-day timer limit as the longest wait, not as none', async () => {
    const stop = new AbortController();
    let settled = false;
    const waiting = delay(2 ** 40, stop.signal).then(
      () => (settled = true),
      () => 'aborted',
    );
    await delay(20);
    expect(settled).toBe(false);
    stop.abort();
    expect(await waiting).toBe('aborted');
  });

  it('withDeadline: the value when in time, undefined when late', async () => {
    expect(await withDeadline(systemClock, Promise.resolve(7), 1000)).toBe(7);
    expect(await withDeadline(systemClock, new Promise(() => {}), 5)).toBeUndefined();
    await expect(withDeadline(systemClock, Promise.reject(new Error('bad')), 1000)).rejects.toThrow('bad');
  });

  it('abortable: rejects on abort even when the work never settles', async () => {
    const stop = new AbortController();
    const never = abortable(systemClock, new Promise<number>(() => {}), stop.signal);
    setTimeout(() => stop.abort(new Error('ctrl-c')), 5);
    await expect(never).rejects.toThrow('ctrl-c');
    expect(await abortable(systemClock, Promise.resolve(3), new AbortController().signal)).toBe(3);
    expect(await abortable(systemClock, Promise.resolve(4), undefined)).toBe(4);
  });

  it('waitInLine: a place at once when there is one, else when a freed place is offered and taken; an abort leaves the line', async () => {
    let free = 1;
    const line: (() => void)[] = [];
    const take = (): true | undefined => (free > 0 ? ((free -= 1), true) : undefined);
    expect(await waitInLine(line, take)).toBe(true);
    const second = waitInLine(line, take);
    const stop = new AbortController();
    const third = waitInLine(line, take, stop.signal);
    expect(line).toHaveLength(2);
    stop.abort(new Error('gone'));
    await expect(third).rejects.toThrow('gone');
    expect(line).toHaveLength(1);
    line.shift()!(); // offered while nothing is free: it declines and queues again
    expect(line).toHaveLength(1);
    free = 1;
    line.shift()!();
    expect(await second).toBe(true);
    expect(line).toHaveLength(0);
  });
});
