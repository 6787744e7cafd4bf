import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { newProgress } from '../../src/terminal/progress.js';
import { ProgressDisplay } from '../../src/terminal/progress-display.js';
import { progressLine, RateMeter } from '../../src/terminal/progress-line.js';
import { FakeTty } from './fake-tty.js';
import { clockReading } from '../support/fake-clock.js';

const T0 = 1_700_000_000_000;

describe('progressLine', () => {
  it('shows rows and addresses while the input is still being read, without an ETA', () => {
    const p = { ...newProgress(T0), rowsRead: 1200, addressesQueued: 1100, addressesDone: 980 };
    expect(progressLine(p, T0 + 10_000, 85)).toBe('1,200 rows read · 980 addresses validated · 85/s');
  });

  it('adds the total and an ETA once the input is done', () => {
    const p = { ...newProgress(T0), rowsRead: 1200, addressesQueued: 1150, addressesDone: 980, inputDone: true };
    expect(progressLine(p, T0, 85)).toBe('1,200 rows read · 980/1,150 addresses validated · 85/s · ETA 2 s');
  });

  it('with a file of known size: a percentage and an ETA before the input is read to its end', () => {
    // a quarter of 200 kB read gave 2,000 rows: about 8,000 in all, 1,000 written
    const p = { ...newProgress(T0), rowsRead: 2000, rowsWritten: 1000, addressesDone: 1000, inputBytes: { read: 50_000, total: 200_000 } };
    expect(progressLine(p, T0, 100, 100)).toBe('12% · 2,000 rows read · 1,000 addresses validated · 100/s · ETA 1 min 10 s');
    // stdin has no size: no percentage, no ETA until its end
    expect(progressLine({ ...p, inputBytes: { read: 50_000 } }, T0, 100, 100)).toBe('2,000 rows read · 1,000 addresses validated · 100/s');
    // never 100% before the last row is out
    expect(progressLine({ ...p, rowsWritten: 7999, rowsRead: 8000, inputDone: true, inputBytes: { read: 200_000, total: 200_000 } }, T0, 1, 1)).toMatch(
      /^99% /,
    );
  });

  it('tells how long the rate-limit wait still lasts', () => {
    const p = { ...newProgress(T0), rowsRead: 10, addressesDone: 5, rateLimitWaitUntil: T0 + 41_200 };
    expect(progressLine(p, T0, 3)).toBe('10 rows read · 5 addresses validated · waiting 42 s for the rate limit to reset');
  });

  it('moves while a batch waits on DNS or SMTP: checked addresses count before their verdicts land', () => {
    const base = { ...newProgress(T0), rowsRead: 100, addressesQueued: 100, inputDone: true, inputBytes: { read: 5000, total: 5000 } };
    expect(progressLine(base, T0, undefined)).toMatch(/^0% /);
    // 40 addresses have their DNS answer, none of the batch is written yet
    expect(progressLine({ ...base, addressesChecked: 40 }, T0, undefined)).toMatch(/^40% /);
    // checks reported never count for more than the addresses still in flight
    expect(progressLine({ ...base, addressesChecked: 500, addressesDone: 90, rowsWritten: 90 }, T0, undefined)).toMatch(/^99% /);
    // answers from the journal are not the engine's: they do not cancel its checks
    const reused = { ...base, addressesDone: 50, addressesReused: 50, rowsWritten: 50, addressesChecked: 20 };
    expect(progressLine(reused, T0, undefined)).toMatch(/^70% /);
  });

  it('counts a rate-limit wait in the ETA', () => {
    const p = {
      ...newProgress(T0),
      rowsRead: 100,
      rowsWritten: 50,
      addressesQueued: 100,
      addressesDone: 50,
      inputDone: true,
      inputBytes: { read: 5000, total: 5000 },
      rateLimitWaitUntil: T0 + 30_000,
    };
    expect(progressLine(p, T0, 10, 10)).toBe('50% · 100 rows read · 50/100 addresses validated · waiting 30 s for the rate limit to reset · ETA 35 s');
  });

  it('forgets a rate-limit wait that is over', () => {
    const p = { ...newProgress(T0), rateLimitWaitUntil: T0 - 1 };
    expect(progressLine(p, T0, undefined)).toBe('0 rows read · 0 addresses validated');
  });
});

describe('RateMeter', () => {
  it('measures over the recent window, not since the start', () => {
    const m = new RateMeter(10_000);
    m.sample(0, 0);
    expect(m.perSecond()).toBeUndefined();
    m.sample(10_000, 1000); // 100/s at first
    for (let t = 11_000; t <= 30_000; t += 1000) m.sample(t, 1000 + (t - 10_000) / 100); // then 10/s
    expect(m.perSecond()).toBeCloseTo(10, 5);
  });
});

/**
 * A stopped display draws nothing more however long the run goes on: its
 * interval and ora's spinner are gone. (Not by vi.getTimerCount(): the suite
 * shares workers between files, and another file's keep-alive timer re-armed
 * under these fake timers counts there too.)
 */
function expectNothingMore(tty: FakeTty): void {
  const drawn = tty.output.length;
  vi.advanceTimersByTime(60_000);
  expect(tty.output.length).toBe(drawn);
}

describe('ProgressDisplay', () => {
  let now = T0;
  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
    now = T0;
  });
  afterEach(() => vi.useRealTimers());

  it('animates on a terminal, follows the Progress object, and clears its line on stop', async () => {
    const tty = new FakeTty();
    const progress = newProgress(T0);
    const display = new ProgressDisplay(progress, { stream: tty, policy: { animate: true, color: false }, clock: clockReading(() => now) });
    await display.start();
    expect(tty.text).toContain('0 rows read · 0 addresses validated');

    progress.rowsRead = 500;
    progress.addressesQueued = 400;
    progress.addressesDone = 200;
    progress.inputDone = true;
    now += 2000;
    vi.advanceTimersByTime(2000);
    expect(tty.text).toContain('500 rows read · 200/400 addresses validated · 100/s · ETA 2 s');

    progress.rateLimitWaitUntil = now + 42_000;
    now += 200;
    vi.advanceTimersByTime(200);
    expect(tty.text).toContain('waiting 42 s for the rate limit to reset');

    const before = tty.output.length;
    display.stop();
    const tail = tty.output.slice(before);
    expect(tail).toContain('\x1b[0K'); // the line is erased
    expect(tail).toContain('\x1b[?25h'); // and the cursor shown again
    expectNothingMore(tty);
  });

  it('draws nothing when stopped before it could start (ora loads on demand)', async () => {
    const tty = new FakeTty();
    const display = new ProgressDisplay(newProgress(T0), { stream: tty, policy: { animate: true, color: false }, clock: clockReading(() => now) });
    const started = display.start();
    display.stop();
    await started;
    expect(tty.output).toBe('');
    expectNothingMore(tty);
  });

  it('never runs the percentage backwards, and a finished run shows 100% before the line is cleared', async () => {
    const tty = new FakeTty();
    const progress = { ...newProgress(T0), rowsRead: 100, rowsWritten: 93, addressesQueued: 100, addressesDone: 93, inputBytes: { read: 1000, total: 1000 } };
    const display = new ProgressDisplay(progress, { stream: tty, policy: { animate: true, color: false }, clock: clockReading(() => now) });
    await display.start();
    expect(tty.text).toContain('93% · ');
    // more rows turn up than the bytes suggested: the estimate grows, the share shrinks
    progress.rowsRead = 106;
    progress.addressesQueued = 106;
    now += 200;
    vi.advanceTimersByTime(200);
    expect(tty.text).toContain('93% · 106 rows read');
    progress.rowsWritten = progress.addressesDone = 106;
    progress.inputDone = true;
    const before = tty.output.length;
    display.stop(); // before the next tick
    expect(tty.output.slice(before).replace(/\[[0-9;?]*[A-Za-z]/g, '')).toContain('100% · 106 rows read');
  });

  it('gives a first ETA near the truth: the wait for the first answers is not counted as slowness', async () => {
    // 10,210 rows; a second of start-up and first round trips, then 500 rows a second (done at 21.4 s)
    const tty = new FakeTty();
    const rows = 10_210;
    const progress = { ...newProgress(T0), rowsRead: rows, addressesQueued: rows, inputDone: true, inputBytes: { read: 200_000, total: 200_000 } };
    const display = new ProgressDisplay(progress, { stream: tty, policy: { animate: true, color: false }, clock: clockReading(() => now) });
    await display.start();
    const etas: number[] = [];
    for (let t = 150; t <= 3600; t += 150) {
      now = T0 + t;
      progress.rowsWritten = progress.addressesDone = Math.max(0, Math.floor(((t - 1000) * 500) / 1000));
      vi.advanceTimersByTime(150);
      const eta = [...tty.text.matchAll(/ETA (\d+) s/g)].at(-1);
      if (eta) etas.push(Number(eta[1]));
    }
    display.stop();
    // at 3.5 s, 17.9 s are left; counting the first second as work gave 25 s
    expect(etas.at(-1)).toBeGreaterThanOrEqual(16);
    expect(etas.at(-1)).toBeLessThanOrEqual(20);
    // and none is shown before two seconds of work could say how fast it goes
    expect(etas.length).toBeLessThanOrEqual(1000 / 150 + 1);
    expect(Math.max(...etas)).toBeLessThanOrEqual(21);
  });

  it('one slow batch: the line moves with the answers, and the ETA follows their recent rate', async () => {
    // 400,000 rows in batches of 1,000, one answered a second; batch 52 takes 55 s more,
    // so no row after it can be written meanwhile (13%) while 54,000 answers come in.
    // The last row is written at 400 s. Reading is held 66 batches ahead of the writing.
    const tty = new FakeTty();
    const rows = 400_000;
    const answeredAt = (b: number): number => (b === 52 ? 107 : 1 + b);
    const progress = { ...newProgress(T0), inputBytes: { read: 0, total: rows * 20 } };
    const display = new ProgressDisplay(progress, { stream: tty, policy: { animate: true, color: false }, clock: clockReading(() => now) });
    await display.start();
    const seen: { t: number; percent: number; eta?: number }[] = [];
    for (let ms = 150; ms <= 399_000; ms += 150) {
      now = T0 + ms;
      const t = ms / 1000;
      let written = 0;
      while (written < rows && answeredAt(written / 1000) <= t) written += 1000;
      const read = Math.min(rows, written + 66_000);
      let answered = 0;
      for (let b = 0; b < read / 1000; b++) if (answeredAt(b) <= t) answered += 1000;
      Object.assign(progress, {
        rowsRead: read,
        addressesQueued: read,
        addressesDone: answered,
        rowsAnswered: answered,
        rowsWritten: written,
        inputDone: read === rows,
      });
      progress.inputBytes.read = read * 20;
      vi.advanceTimersByTime(150);
      if (ms % 3000 !== 0) continue;
      const line = tty.text.slice(tty.text.lastIndexOf('% · ') - 3);
      const eta = /ETA (?:(\d+) min ?)?(?:(\d+) s)?/.exec(line);
      seen.push({ t, percent: Number(/(\d+)% · /.exec(line)![1]), ...(eta ? { eta: Number(eta[1] ?? 0) * 60 + Number(eta[2] ?? 0) } : {}) });
    }
    display.stop();
    // while batch 52 is out (53 s to 107 s), the percentage follows the answers
    const during = seen.filter((s) => s.t > 60 && s.t < 105);
    expect(during.at(0)!.percent).toBeLessThan(during.at(-1)!.percent);
    expect(during.at(-1)!.percent).toBeGreaterThanOrEqual(25);
    // and from 10 s on, the ETA is never far from the truth (400 s - t): not "40 min" with seconds to go
    const wrong = seen.filter((s) => s.t >= 10).filter((s) => s.eta === undefined || Math.abs(s.eta - (400 - s.t)) > Math.max(5, 0.15 * (400 - s.t)));
    expect(wrong).toEqual([]);
  });

  it('never draws a line wider than the terminal: a wrapped line would be left behind when the line is erased', async () => {
    const tty = new FakeTty(true, 80);
    const progress = { ...newProgress(T0), rowsRead: 57_337, addressesQueued: 1000, addressesDone: 1000, rateLimitWaitUntil: T0 + 7_000 };
    const display = new ProgressDisplay(progress, { stream: tty, policy: { animate: true, color: false }, clock: clockReading(() => now) });
    await display.start();
    vi.advanceTimersByTime(300);
    const frames = tty.text.split(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /).filter(Boolean);
    expect(frames.length).toBeGreaterThan(0);
    for (const frame of frames) expect([...frame].length).toBeLessThanOrEqual(77);
    expect(frames.at(-1)).toMatch(/^57,337 rows read · 1,000 addresses validated · waiting 7 s for the .*…$/);
    display.stop();
  });

  it('writes nothing at all when animation is not allowed', async () => {
    const stream = new FakeTty(false);
    const progress = newProgress(T0);
    const display = new ProgressDisplay(progress, { stream, policy: { animate: false, color: false } });
    await display.start();
    progress.rowsRead = 10;
    vi.advanceTimersByTime(1000);
    display.stop();
    expect(stream.output).toBe('');
    expectNothingMore(stream);
  });
});
