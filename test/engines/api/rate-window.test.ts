import { describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../../src/engines/api/rate-limit-headers.js';
import { RateWindow } from '../../../src/engines/api/rate-window.js';

const NOW = 1_700_000_000_000;
const MARGIN = 20;

function windowWith() {
  return new RateWindow({ resetMarginMs: MARGIN, unknownResetMs: 1000 });
}

/** Sends while the window is open at `now`, one at a time with nothing answered: how many left. */
function drain(w: RateWindow, now: number, inFlight: number, most = 100): number {
  let n = 0;
  while (n < most && w.opensAt(now, inFlight + n) === now) {
    w.sent(now);
    n++;
  }
  return n;
}

/** The probe went out and came back with these headers, at NOW. */
function probed(headers: Record<string, string>): RateWindow {
  const w = windowWith();
  const seq = w.sent(NOW);
  w.observe(seq, { answered: true, info: parseRateLimitHeaders(headers, NOW) }, NOW, 0);
  return w;
}

describe('RateWindow: what lying headers are allowed to do (issue 29.8, 29.9)', () => {
  it('Limit 0, Remaining 0, Reset 1 on every answer: one request per window, never a window that stays shut', () => {
    const headers = { 'x-ratelimit-limit': '0', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' };
    const w = probed(headers);
    expect(w.opensAt(NOW, 0)).toBe(NOW + 1000 + MARGIN);
    let now = NOW;
    for (let k = 0; k < 5; k++) {
      now = w.opensAt(now, 0)!;
      expect(drain(w, now, 0)).toBe(1);
      const seq = 0;
      w.observe(seq, { answered: true, info: parseRateLimitHeaders(headers, now + 50) }, now + 50, 0);
    }
    // five windows of a second, not a hang
    expect(now - NOW).toBeLessThanOrEqual(5 * (1000 + MARGIN + 50));
  });

  it('a negative Remaining is none left: shut until the reset, then the Limit and no more', () => {
    const w = probed({ 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '-5', 'x-ratelimit-reset': '2' });
    expect(drain(w, NOW, 0)).toBe(0);
    const reopens = w.opensAt(NOW, 0)!;
    expect(reopens).toBe(NOW + 2000 + MARGIN);
    expect(drain(w, reopens, 0)).toBe(10);
  });

  it.each(['1e400', 'abc', '1.5'])('Remaining %s is no count: our own dispatches are counted against the Limit', (remaining) => {
    const w = probed({ 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': remaining, 'x-ratelimit-reset': '2' });
    // the probe counted: 9 more in this window, 10 in the next (it was read as 1: one at a time)
    expect(drain(w, NOW, 0)).toBe(9);
    const reopens = w.opensAt(NOW, 9)!;
    expect(reopens).toBe(NOW + 2000 + MARGIN);
    expect(drain(w, reopens, 0)).toBe(10);
  });

  it('an answer from the next window, read before the reset is due here, counts for that window', () => {
    // 3 per whole second; the window ends at NOW + 1000
    const w = probed({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': String((NOW + 1000) / 1000) });
    expect(drain(w, NOW, 0)).toBe(2);
    const late = w.sent(NOW + 990); // left before the reset, reached the server just after it
    // its answer tells the next window: 2 left there, reset a second later
    const at = NOW + 1005;
    w.observe(late, { answered: true, info: parseRateLimitHeaders({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': String((NOW + 2000) / 1000) }, at) }, at, 2);
    // two in flight from before may land there too: none left, not a full window of 3
    expect(drain(w, NOW + 1000 + MARGIN, 2)).toBe(0);
  });

  it('with no rate-limit headers at all, nothing holds requests back', () => {
    const w = probed({});
    expect(drain(w, NOW, 0, 500)).toBe(500);
  });

  it('a 429 shuts it until Retry-After whatever Remaining says', () => {
    const w = windowWith();
    const seq = w.sent(NOW);
    w.observe(seq, { answered: true, rateLimited: true, info: parseRateLimitHeaders({ 'x-ratelimit-remaining': '50', 'retry-after': '3' }, NOW) }, NOW, 0);
    expect(w.opensAt(NOW, 0)).toBe(NOW + 3000 + MARGIN);
    expect(w.shutUntil(NOW)).toBe(NOW + 3000 + MARGIN);
  });

  it('none left and no reset known: answers in flight will tell; with none in flight it sets a time to wake', () => {
    const w = probed({ 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '0' });
    expect(w.opensAt(NOW, 2)).toBeUndefined();
    expect(w.opensAt(NOW, 0)).toBe(NOW + 1000 + MARGIN);
  });
});
