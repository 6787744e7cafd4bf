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
    w.observe(
      late,
      {
        answered: true,
        info: parseRateLimitHeaders({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': String((NOW + 2000) / 1000) }, at),
      },
      at,
      2,
    );
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

describe('RateWindow: every policy at once, the strictest wins', () => {
  const policy = (id: string, limit: number, remaining: number, resetInMs: number | undefined, at = NOW) => ({
    id,
    limit,
    remaining,
    ...(resetInMs === undefined ? {} : { resetAt: at + resetInMs }),
  });
  const answer = (w: RateWindow, seq: number, at: number, inFlight: number, ...policies: ReturnType<typeof policy>[]) =>
    w.observe(seq, { answered: true, info: { policies } }, at, inFlight, at);

  it("a day's quota beside 5 per second: each second opens to 5, not to the quota", () => {
    const w = windowWith();
    answer(w, w.sent(NOW), NOW, 0, policy('day', 100_000, 99_999, 86_400_000), policy('second', 5, 4, 1000));
    expect(drain(w, NOW, 0)).toBe(4);
    const reopens = w.opensAt(NOW, 0)!;
    expect(reopens).toBe(NOW + 1000 + MARGIN);
    expect(drain(w, reopens, 0)).toBe(5);
  });

  it("the quota binds once it has less left than the second: it waits for the quota's reset", () => {
    const w = windowWith();
    answer(w, w.sent(NOW), NOW, 0, policy('day', 100_000, 2, 3_600_000), policy('second', 5, 4, 1000));
    expect(drain(w, NOW, 0)).toBe(2);
    expect(w.opensAt(NOW + 1000 + MARGIN, 0)).toBe(NOW + 3_600_000 + MARGIN);
  });

  it('a generous header beside a strict one, whichever comes first: the strict one holds', () => {
    for (const order of [0, 1]) {
      const w = windowWith();
      const both = [policy('x-ratelimit', 1000, 500, 60_000), policy('ratelimit', 5, 4, 1000)];
      answer(w, w.sent(NOW), NOW, 0, ...(order ? both.reverse() : both));
      expect(drain(w, NOW, 0)).toBe(4);
    }
  });

  it('a Limit that changes on every answer: the next window opens at the smallest, and a Remaining past it is held to it', () => {
    const w = windowWith();
    [5, 25, 10, 25].forEach((limit, i) => answer(w, w.sent(NOW), NOW, 0, policy('x', limit, 4 - i, 2000)));
    expect(drain(w, NOW, 0)).toBe(1);
    expect(w.opensAt(NOW, 0)).toBe(NOW + 2000 + MARGIN);
    expect(drain(w, NOW + 2000 + MARGIN, 0)).toBe(5); // not 25, the last one told
    // the new window's first answer says 24 left of 25, with 4 of the 5 sent still out: none left
    answer(w, 99, NOW + 2100, 4, policy('x', 25, 24, 1900, NOW + 2100));
    expect(drain(w, NOW + 2100, 4)).toBe(0);
  });

  it('a reset that cannot be placed: Remaining counts; then one request asks, and its answer opens the rest', () => {
    const w = windowWith();
    answer(w, w.sent(NOW), NOW, 0, policy('x', 5, 4, undefined));
    expect(drain(w, NOW, 0)).toBe(4);
    for (let i = 0; i < 4; i++) answer(w, i + 1, NOW + 10, 3 - i, policy('x', 5, 3 - i, undefined));
    const asks = w.opensAt(NOW + 10, 0)!;
    expect(asks).toBe(NOW + 10 + 1000 + MARGIN);
    expect(drain(w, asks, 0)).toBe(1);
    answer(w, 5, asks + 5, 0, policy('x', 5, 4, undefined, asks));
    expect(drain(w, asks + 5, 0)).toBe(4);
  });

  // A policy merged away, or a header the server stopped sending: the request that asked went
  // through all the same. Its window had turned; kept shut, each wait doubled, one request each.
  it('the request that asks again is answered without a word of that policy: it went through, the window opens', () => {
    const w = windowWith();
    answer(w, w.sent(NOW), NOW, 0, policy('x', 5, 4, undefined));
    expect(drain(w, NOW, 0)).toBe(4);
    for (let i = 0; i < 4; i++) answer(w, i + 1, NOW + 10, 3 - i, policy('x', 5, 3 - i, undefined));
    const asks = w.opensAt(NOW + 10, 0)!;
    expect(drain(w, asks, 0)).toBe(1);
    answer(w, 5, asks + 5, 0, policy('y', 100, 90, undefined));
    expect(drain(w, asks + 5, 0)).toBe(4);
  });

  it('a 429 for a request sent when a reset in seconds opened the window: later resets count from the answer', () => {
    const w = windowWith();
    // answers 300 ms after the count; the server counts its seconds from when it answers
    const told = (at: number, remaining: number) => ({ ...policy('x', 5, remaining, 1000, at), resetLatestAt: at + 300 + 1000 });
    let seq = w.sent(NOW);
    w.observe(seq, { answered: true, info: { policies: [told(NOW, 0)] } }, NOW + 300, 0, NOW);
    const opens = w.opensAt(NOW + 300, 0)!;
    expect(opens).toBe(NOW + 1000 + MARGIN);
    expect(w.opensAt(opens, 0)).toBe(opens);
    seq = w.sent(opens);
    w.observe(seq, { answered: true, rateLimited: true, info: { policies: [told(opens, 0)], retryAt: opens + 600 } }, opens + 300, 0, opens);
    const again = w.opensAt(opens + 300, 0)!;
    expect(w.opensAt(again, 0)).toBe(again);
    seq = w.sent(again);
    w.observe(seq, { answered: true, info: { policies: [told(again, 0)] } }, again + 300, 0, again);
    expect(w.opensAt(again + 300, 0)).toBe(again + 300 + 1000 + MARGIN);
  });
});
