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

  it.each([
    ['SIGHUP', 129],
    ['SIGQUIT', 131],
    ['SIGUSR2', 140],
    ['SIGALRM', 142],
  ] as const)("%s: SIGTERM's clean-up (its shorter wait), exit %d", (sig, code) => {
    const { target, notices, exits, w } = setup();
    target.emit(sig);
    expect([w.stop.aborted, w.exitCode()]).toEqual([true, code]);
    expect(notices).toEqual([`terminated (${sig}): sending nothing more; waiting up to 2s for requests in flight`]);
    vi.advanceTimersByTime(1500);
    expect(w.abandon.aborted).toBe(true);
    vi.advanceTimersByTime(3000);
    expect(exits).toEqual([code]);
    w.dispose();
    expect(target.listenerCount(sig)).toBe(0);
  });

  it('the reader of the output gone: stops quietly, no exit code of its own, abandons after the grace period', () => {
    const { notices, exits, w } = setup();
    w.sending();
    w.readerGone();
    expect(w.stop.aborted).toBe(true);
    expect(w.exitCode()).toBeUndefined();
    expect(notices).toEqual([]);
    vi.advanceTimersByTime(5000);
    expect(w.abandon.aborted).toBe(true);
    expect(exits).toEqual([]);
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

describe('watchInterrupts while the input is read (nothing sent yet)', () => {
  function reading() {
    const target = new EventEmitter();
    const notices: string[] = [];
    const exits: number[] = [];
    const w = watchInterrupts({ graceMs: 5000, flushMs: 3000, target, reading: true, notice: (l) => notices.push(l), forceExit: (c) => exits.push(c) });
    return { target, notices, exits, w };
  }

  it('a signal stops the reader at once (its error says so); a read stuck on a silent pipe is not waited for long', () => {
    const { target, notices, exits, w } = reading();
    target.emit('SIGTERM');
    expect([w.stop.aborted, w.abandon.aborted, w.exitCode()]).toEqual([true, true, 143]);
    expect((w.stop.reason as { exitCode: number }).exitCode).toBe(143);
    expect(notices).toEqual([]);
    vi.advanceTimersByTime(2000);
    expect(notices).toEqual(['terminated while reading the input; nothing was sent']);
    expect(exits).toEqual([143]);
    w.dispose();
  });

  it('once sending, a signal lets requests in flight answer as usual; a signal that came as the input opened only bounds the clean-up', () => {
    const a = reading();
    a.w.sending();
    a.target.emit('SIGINT');
    expect([a.w.stop.aborted, a.w.abandon.aborted]).toEqual([true, false]);
    a.w.dispose();

    const b = reading();
    b.target.emit('SIGINT');
    b.w.sending();
    vi.advanceTimersByTime(2999);
    expect(b.exits).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(b.exits).toEqual([130]);
    b.w.dispose();
  });
});

describe('SIGTERM: its sender kills a few seconds later', () => {
  it('waits 1.5 s for requests in flight, and exits 3 s after that whatever the clean-up is blocked on', () => {
    const target = new EventEmitter();
    const notices: string[] = [];
    const exits: number[] = [];
    const w = watchInterrupts({ graceMs: 5000, target, notice: (l) => notices.push(l), forceExit: (c) => exits.push(c) });
    target.emit('SIGTERM');
    expect(notices).toEqual([expect.stringMatching(/^terminated: sending nothing more; waiting up to 2s for requests in flight$/)]);
    vi.advanceTimersByTime(1500);
    expect(w.abandon.aborted).toBe(true);
    vi.advanceTimersByTime(2999);
    expect(exits).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(exits).toEqual([143]);
    w.dispose();
  });
});
