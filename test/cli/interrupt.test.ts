import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { interruptedAdvice, watchInterrupts } from '../../src/cli/interrupt.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

function setup() {
  const target = new EventEmitter();
  const notices: string[] = [];
  const exits: number[] = [];
  const w = watchInterrupts({ graceMs: 5000, flushMs: 3000, target, notice: (l) => notices.push(l), forceExit: (c) => exits.push(c) });
  return { target, notices, exits, w };
}

describe('watchInterrupts', () => {
  it('SIGINT: stops dispatch at once, says so, abandons in-flight requests after the grace period, exit 130', () => {
    const { target, notices, exits, w } = setup();
    expect(w.exitCode()).toBeUndefined();
    target.emit('SIGINT');
    expect(w.stop.aborted).toBe(true);
    expect(w.abandon.aborted).toBe(false);
    expect(notices).toEqual([expect.stringMatching(/^interrupted: sending nothing more; waiting up to 5s .*Ctrl-C again/)]);
    expect(w.exitCode()).toBe(130);
    vi.advanceTimersByTime(4999);
    expect(w.abandon.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(w.abandon.aborted).toBe(true);
    expect(exits).toEqual([]);
    w.dispose();
  });

  it('SIGTERM exits 143', () => {
    const { target, w } = setup();
    target.emit('SIGTERM');
    expect([w.stop.aborted, w.exitCode()]).toEqual([true, 143]);
    w.dispose();
  });

  it('a second Ctrl-C skips the wait; a third exits on the spot', () => {
    const { target, notices, exits, w } = setup();
    target.emit('SIGINT');
    target.emit('SIGINT');
    expect(w.abandon.aborted).toBe(true);
    expect(notices).toHaveLength(2);
    expect(exits).toEqual([]);
    target.emit('SIGINT');
    expect(exits).toEqual([130]);
    w.dispose();
  });

  it('forces the exit only if clean-up hangs past grace + flush time', () => {
    const { target, exits, w } = setup();
    target.emit('SIGINT');
    vi.advanceTimersByTime(7999);
    expect(exits).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(exits).toEqual([130]);
    w.dispose();
  });

  it('dispose stops listening and cancels the timers', () => {
    const { target, exits, w } = setup();
    target.emit('SIGINT');
    w.dispose();
    vi.advanceTimersByTime(60_000);
    expect(exits).toEqual([]);
    expect(target.listenerCount('SIGINT')).toBe(0);
    expect(target.listenerCount('SIGTERM')).toBe(0);
  });
});

describe('interruptedAdvice', () => {
  it.each<[string | undefined, 'api' | 'local', RegExp, RegExp | undefined]>([
    [undefined, 'api', /paid for again.*add --journal FILE/, undefined],
    ['run.journal', 'api', /--journal run.journal keeps every address answered so far from being sent again/, undefined],
    // the offline engine costs nothing: no talk of paying
    [undefined, 'local', /a re-run starts over: add --journal FILE/, /paid|paying/],
    ['run.journal', 'local', /--journal run.journal keeps what was checked so far/, /paid|paying|sent/],
  ])('journal %s, engine %s', (journal, engine, says, never) => {
    const line = interruptedAdvice(journal, engine);
    expect(line).toMatch(says);
    if (never) expect(line).not.toMatch(never);
  });
});
