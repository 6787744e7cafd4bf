import { describe, expect, it } from 'vitest';
import { FirstAnswer } from '../../../src/engines/api/first-answer.js';
import { Governor, type AcquireResult } from '../../../src/engines/api/governor.js';
import { parseRateLimitHeaders, type RateLimitInfo } from '../../../src/engines/api/rate-limit-headers.js';
import { sleep } from '../../../src/time/waits.js';
import { FakeClock, flush } from '../../support/fake-clock.js';
import { formatReset, type ResetFormat } from '../../support/fault-server.js';

const FAR = Number.MAX_SAFE_INTEGER;

function setup(concurrency = 4) {
  const clock = new FakeClock();
  const gov = new Governor({ concurrency, clock, resetMarginMs: 20 });
  const granted: AcquireResult[] = [];
  const ask = (n: number, deadline = FAR) => {
    for (let i = 0; i < n; i++) void gov.acquire(deadline).then((r) => granted.push(r));
  };
  const permits = () => granted.flatMap((g) => (g.ok ? [g.permit] : []));
  return { clock, gov, granted, ask, permits };
}

const info = (clock: FakeClock, remaining: number, resetInMs: number, limit = 5): RateLimitInfo => ({
  policies: [{ id: 'x-ratelimit', limit, remaining, resetAt: clock.now() + resetInMs }],
});

describe('Governor', () => {
  it('counts a pause for the window once however many wait, and a 429 pause as a wait too', async () => {
    const { clock, gov, ask, granted, permits } = setup(4);
    ask(1); // the probe: the caller sends it alone
    await flush();
    permits()[0]!.done({ answered: true, info: info(clock, 0, 1_000) }); // nothing left in this window
    ask(5);
    await flush();
    expect([granted.length, gov.waits]).toEqual([1, 1]);
    await clock.advance(1_100);
    expect(granted.length).toBeGreaterThan(1);
    expect(gov.waits).toBe(1);
    permits()[1]!.done({ answered: true, rateLimited: true, info: { policies: [], retryAt: clock.now() + 500 } });
    await flush();
    expect(gov.waits).toBe(2);
  });

  it("opens to the concurrency at once: one request until the first answer is the caller's rule (first-answer.test.ts)", async () => {
    const { ask, granted } = setup(4);
    ask(6);
    await flush();
    expect(granted).toHaveLength(4);
  });

  it('opens up when the server sends no rate-limit headers', async () => {
    const { ask, granted, permits } = setup(3);
    ask(1); // the probe: the caller sends it alone
    await flush();
    permits()[0]!.done({ answered: true, info: { policies: [] } });
    ask(4);
    await flush();
    expect(granted).toHaveLength(4);
  });

  it('never dispatches more than Remaining, waits for the reset, then reopens in full', async () => {
    const { clock, gov, ask, granted, permits } = setup(8);
    ask(1); // the probe: the caller sends it alone
    await flush();
    permits()[0]!.done({ answered: true, info: info(clock, 2, 2_000) });
    ask(11);
    await flush();
    expect(granted).toHaveLength(3); // the probe + 2 remaining
    for (const p of permits().slice(1)) p.done({ answered: true, info: info(clock, 0, 2_000) });
    await flush();
    expect(granted).toHaveLength(3);
    expect(gov.waitingUntil).toBe(clock.now() + 2_020);
    await clock.advance(2_019);
    expect(granted).toHaveLength(3);
    await clock.advance(1);
    expect(granted).toHaveLength(8); // limit 5, a full window
    expect(gov.waitingUntil).toBeUndefined();
  });

  it('lets requests in flight count against the window until their answers show otherwise', async () => {
    const { clock, ask, granted, permits } = setup(8);
    ask(1); // the probe: the caller sends it alone
    await flush();
    permits()[0]!.done({ answered: true, info: info(clock, 9, 10_000, 10) });
    ask(19);
    await flush();
    expect(granted).toHaveLength(9); // 8 in flight
    // answers come back out of order: the lowest Remaining is the server's latest count
    permits()[5]!.done({ answered: true, info: info(clock, 1, 10_000, 10) });
    await flush();
    expect(granted).toHaveLength(9); // 1 left minus 7 still in flight
    for (const i of [1, 2, 3, 4, 6, 7]) permits()[i]!.done({ answered: true, info: info(clock, 2 + i, 10_000, 10) });
    await flush();
    expect(granted).toHaveLength(9);
    permits()[8]!.done({ answered: true, info: info(clock, 3, 10_000, 10) });
    await flush();
    // all 7 others were counted before the reading of 1: exactly one dispatch left
    expect(granted).toHaveLength(10);
  });

  it('a 429 pauses every worker until Retry-After', async () => {
    const { clock, ask, granted, permits } = setup(4);
    ask(1); // the probe: the caller sends it alone
    await flush();
    permits()[0]!.done({ answered: true, info: info(clock, 50, 60_000, 60) });
    ask(5);
    await flush();
    expect(granted).toHaveLength(5);
    permits()[1]!.done({ answered: true, rateLimited: true, info: { policies: [], retryAt: clock.now() + 5_000 } });
    permits()[2]!.done({ answered: true, info: info(clock, 40, 60_000, 60) });
    await flush();
    expect(granted).toHaveLength(5);
    await clock.advance(5_020);
    expect(granted).toHaveLength(6);
  });

  it('a 429 with no hint backs off, doubling', async () => {
    const { clock, ask, granted, permits } = setup(1);
    ask(1); // the probe: the caller sends it alone
    await flush();
    permits()[0]!.done({ answered: true, rateLimited: true });
    ask(2);
    await clock.advance(1_019);
    expect(granted).toHaveLength(1);
    await clock.advance(1);
    expect(granted).toHaveLength(2);
    permits()[1]!.done({ answered: true, rateLimited: true });
    await clock.advance(1_500);
    expect(granted).toHaveLength(2);
    await clock.advance(520);
    expect(granted).toHaveLength(3);
  });

  it('gives up with RATE_LIMITED when the reset lies past the deadline', async () => {
    const { clock, ask, granted, permits } = setup(2);
    ask(1);
    await flush();
    permits()[0]!.done({ answered: true, info: info(clock, 0, 3_600_000) });
    ask(2, clock.now() + 10 * 60_000);
    await flush();
    expect(granted.slice(1)).toEqual([
      { ok: false, reason: 'RATE_LIMITED' },
      { ok: false, reason: 'RATE_LIMITED' },
    ]);
    expect(clock.pending).toBe(0);
  });

  it('a server that refuses every request with Limit 0: the wait ends at its deadline, not later (issue 29.8)', async () => {
    const { clock, gov } = setup(4);
    const start = clock.now();
    const deadline = start + 10 * 60_000;
    let result: AcquireResult | undefined;
    const refusing = { id: 'x-ratelimit', limit: 0, remaining: 0 };
    void (async () => {
      for (;;) {
        const r = await gov.acquire(deadline);
        if (!r.ok) return (result = r);
        await sleep(clock, 50);
        const now = clock.now();
        r.permit.done({ answered: true, rateLimited: true, info: { policies: [{ ...refusing, resetAt: now + 1000 }], retryAt: now + 1000 } });
      }
    })();
    await clock.runUntil(() => result !== undefined, 10_000);
    expect(result).toEqual({ ok: false, reason: 'RATE_LIMITED' });
    expect(clock.now()).toBeLessThanOrEqual(deadline);
  });

  it('halt refuses every waiter and every later acquire', async () => {
    const { gov, ask, granted } = setup(1);
    ask(3);
    await flush();
    gov.halt();
    await flush();
    expect(granted.slice(1)).toEqual([
      { ok: false, reason: 'HALTED' },
      { ok: false, reason: 'HALTED' },
    ]);
    expect(await gov.acquire(FAR)).toEqual({ ok: false, reason: 'HALTED' });
  });

  it('an aborted waiter leaves the queue', async () => {
    const { gov, ask } = setup(1);
    ask(1);
    const ac = new AbortController();
    const pending = gov.acquire(FAR, ac.signal);
    ac.abort();
    expect(await pending).toEqual({ ok: false, reason: 'ABORTED' });
  });
});

/**
 * Workers against a model of a fixed-window server, all on the fake clock: the
 * pacing goal of issue 3 checked for each reset format without sleeping.
 */
async function simulate(format: ResetFormat, opts: { limit: number; windowMs: number; requests: number; concurrency: number }) {
  const clock = new FakeClock(1_700_000_000_137);
  const gov = new Governor({ concurrency: opts.concurrency, clock });
  let windowStart: number | undefined;
  let count = 0;
  let tooMany = 0;
  const serve = (now: number) => {
    windowStart ??= Math.floor(now / 1000) * 1000;
    if (now >= windowStart + opts.windowMs) {
      windowStart += Math.floor((now - windowStart) / opts.windowMs) * opts.windowMs;
      count = 0;
    }
    const resetAt = windowStart + opts.windowMs;
    const limited = count >= opts.limit;
    if (!limited) count++;
    if (limited) tooMany++;
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(opts.limit),
      'x-ratelimit-remaining': String(opts.limit - count),
      'x-ratelimit-reset': formatReset(format, resetAt, now),
      date: new Date(now).toUTCString(),
    };
    if (limited) headers['retry-after'] = String(Math.ceil((resetAt - now) / 1000));
    return { limited, headers };
  };
  let next = 0;
  let finished = 0;
  const start = clock.now();
  // the caller's rule: one call alone until the first answer
  const first = new FirstAnswer();
  const worker = async () => {
    while (next < opts.requests) {
      const id = next++;
      await first.run(() => call(id));
      finished++;
    }
  };
  const call = async (id: number) => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const grant = await gov.acquire(FAR);
      if (!grant.ok) throw new Error(grant.reason);
      const latency = 15 + ((id * 37 + attempt * 11) % 60); // answers return out of order
      await sleep(clock, latency / 2);
      const answer = serve(clock.now());
      await sleep(clock, latency / 2);
      first.reached = true;
      grant.permit.done({ answered: true, rateLimited: answer.limited, info: parseRateLimitHeaders(answer.headers, clock.now()) });
      if (!answer.limited) break;
    }
  };
  const all = Promise.all(Array.from({ length: opts.concurrency }, worker));
  await clock.runUntil(() => finished === opts.requests);
  await all;
  const ideal = (Math.ceil(opts.requests / opts.limit) - 1) * opts.windowMs;
  return { ratio: (clock.now() - start) / ideal, tooMany, finished };
}

describe('Governor pacing against a fixed-window server (fake clock)', () => {
  it.each(['epoch-s', 'epoch-ms', 'delta-s', 'http-date', 'iso'] as const)(
    '%s: 40 requests at 5 per 2 s, concurrency 8 → within 1.1× ideal, no 429',
    async (format) => {
      const r = await simulate(format, { limit: 5, windowMs: 2_000, requests: 40, concurrency: 8 });
      expect(r.finished).toBe(40);
      expect(r.tooMany).toBe(0);
      expect(r.ratio).toBeLessThanOrEqual(1.1);
    },
  );

  it('a roomy limit (100 per 10 s) with concurrency 8 uses the whole window', async () => {
    const r = await simulate('epoch-s', { limit: 100, windowMs: 10_000, requests: 250, concurrency: 8 });
    expect(r.tooMany).toBe(0);
    expect(r.ratio).toBeLessThanOrEqual(1.1);
  });
});
