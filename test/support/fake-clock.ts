import { systemClock, type Clock } from '../../src/time/clock.js';

/** Lets pending promise callbacks run (they are queued behind I/O-less macrotasks). */
export const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A controlled clock: time moves only when the test says so. */
export class FakeClock implements Clock {
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private nextId = 0;
  constructor(public t = 1_700_000_000_000) {}

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): () => void {
    const id = this.nextId++;
    this.timers.push({ at: this.t + Math.max(0, ms), fn, id });
    return () => {
      this.timers = this.timers.filter((x) => x.id !== id);
    };
  }

  get pending(): number {
    return this.timers.length;
  }

  /** how far ahead each pending timer is, in ms (for a test's failure message) */
  get dueTimes(): number[] {
    return this.timers.map((x) => x.at - this.t).sort((a, b) => a - b);
  }

  /** Whether a timer is set to fire exactly `ms` from now (what a test waits for before it moves time). */
  dueIn(ms: number): boolean {
    return this.timers.some((x) => x.at - this.t === ms);
  }

  /** Moves time forward by `ms`, firing due timers in order. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    await flush();
    for (let guard = 0; guard < 100_000; guard++) {
      const next = this.nextTimer();
      if (!next || next.at > end) break;
      this.fire(next);
      await flush();
    }
    this.t = end;
    await flush();
  }

  /** Fires timers one after another until none is left or `done()` holds; bounded. */
  async runUntil(done: () => boolean, maxSteps = 100_000): Promise<void> {
    await flush();
    for (let step = 0; step < maxSteps && !done(); step++) {
      const next = this.nextTimer();
      if (!next) break;
      this.fire(next);
      await flush();
    }
  }

  private nextTimer() {
    return this.timers.reduce<(typeof this.timers)[number] | undefined>((a, b) => (!a || b.at < a.at ? b : a), undefined);
  }

  private fire(timer: { at: number; fn: () => void; id: number }): void {
    this.timers = this.timers.filter((x) => x.id !== timer.id);
    this.t = Math.max(this.t, timer.at);
    timer.fn();
  }
}

/**
 * A clock that reads the time from `now` (a variable the test moves), for the
 * parts whose time is read, not waited on; its timers (a server's drain
 * timeout) are the real clock's.
 */
export function clockReading(now: () => number): Clock {
  return { now, setTimer: (fn, ms, options) => systemClock.setTimer(fn, ms, options) };
}
