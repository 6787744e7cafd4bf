import { describe, expect, it } from 'vitest';
import { AdaptiveLimit, FixedLimit, MAX_IN_FLIGHT, type ConcurrencySetting, type Sample } from '../../../src/engines/api/concurrency-limit.js';
import { Governor } from '../../../src/engines/api/governor.js';
import { sleep } from '../../../src/time/waits.js';
import { parseRateLimitHeaders } from '../../../src/engines/api/rate-limit-headers.js';
import { FakeClock } from '../../support/fake-clock.js';

/**
 * Sends batches through a limit: each dispatches `send` requests (default: the
 * limit), then answers them in order with `sample`. Returns the limit after
 * each batch. As in TCP, a round ends when the first request sent during it
 * comes back, so a batch's answers are judged when the next batch's first one
 * arrives: each figure reflects the batch before.
 */
function rounds(limit: AdaptiveLimit, plan: { sample: Sample | ((i: number) => Sample); send?: number }[]): number[] {
  const seen: number[] = [];
  for (const step of plan) {
    const n = step.send ?? limit.limit;
    const tickets = Array.from({ length: n }, (_, i) => limit.dispatched(i + 1));
    tickets.forEach((t, i) => limit.answered(t, typeof step.sample === 'function' ? step.sample(i) : step.sample));
    seen.push(limit.limit);
  }
  return seen;
}

const ok = (rttMs: number): Sample => ({ rttMs, overload: false });
const refused: Sample = { overload: true };
const times = <T>(n: number, x: T): T[] => Array.from({ length: n }, () => x);

describe('AdaptiveLimit, round by round', () => {
  it.each([
    ['doubles while answers come back as fast as the fastest', times(7, { sample: ok(400) }), [2, 4, 8, 16, 32, 64, 64]],
    ['does not grow while it is not what holds requests back', times(3, { sample: ok(400), send: 1 }), [2, 2, 2]],
    // HyStart++: the doubling to 16 waits for the 8 out; the last sent waited a whole service time at the server, so it never happens
    [
      'leaves slow start before doubling once the requests sent with the most in flight come back late, then holds near what the server sustains',
      [
        ...times(3, { sample: ok(200) }),
        { sample: (i: number) => ok(i < 6 ? 200 : 400) }, // the server serves 6; the 7th and 8th wait for a turn
        { sample: ok(260) },
        { sample: ok(260) },
      ],
      [2, 4, 8, 8, 10, 10],
    ],
    [
      'goes back to doubling when the rise was spurious (nothing late with the limit reached)',
      [...times(3, { sample: ok(200) }), { sample: (i: number) => ok(i < 6 ? 200 : 400) }, { sample: ok(200) }, { sample: ok(200) }],
      [2, 4, 8, 8, 10, 20],
    ],
    [
      "takes a busy client's late answers (a quarter late, the last ones read last) for no queue",
      [...times(3, { sample: ok(400) }), { sample: (i: number) => ok(i < 4 ? 400 : 500) }],
      [2, 4, 8, 16],
    ],
    [
      'takes no notice of a few late answers (a busy client, not a queue at the server)',
      [...times(3, { sample: ok(200) }), { sample: (i: number) => ok(i < 2 ? 600 : 200) }, { sample: ok(200) }],
      [2, 4, 8, 16, 32],
    ],
    [
      'backs off by 0.9 when some requests are refused',
      [...times(4, { sample: ok(200) }), { sample: (i: number) => (i < 2 ? refused : ok(200)) }],
      [2, 4, 8, 16, 14],
    ],
    ['halves when nothing in a round got through', [...times(4, { sample: ok(200) }), ...times(2, { sample: refused })], [2, 4, 8, 16, 14, 7]],
    [
      'falls to one against a server that refuses everything',
      [...times(3, { sample: ok(200) }), ...times(6, { sample: refused })],
      [2, 4, 8, 7, 3, 1, 1, 1, 1],
    ],
  ] as const)('%s', (_name, plan, expected) => {
    expect(rounds(new AdaptiveLimit(), [...plan])).toEqual(expected);
  });

  it("cuts a long queue down to what the server sustains without one (Little's law)", () => {
    const limit = new AdaptiveLimit();
    const seen = rounds(limit, [
      ...times(4, { sample: ok(200) }),
      { sample: (i) => ok(i < 12 ? 200 : 400) }, // the end of slow start: the server serves 12, the rest wait a turn
      ...times(2, { sample: ok(800) }), // then answers four times slower: about 3/4 of those in flight wait
    ]);
    // slow start ends at 16 (the 16 out when it would double include late ones: HyStart++), grows a little (19)
    expect(seen.slice(0, 6)).toEqual([2, 4, 8, 16, 16, 19]);
    // then back to 19 × 200/800 plus a few (alpha), not just one step of 0.9
    expect(seen[6]).toBeLessThanOrEqual(9);
    expect(limit.healthy).toBe(false);
  });

  it('remembers where the server began to refuse: holds below it, and tries one more only now and then', () => {
    const limit = new AdaptiveLimit();
    const capacity = (i: number) => (i < 12 ? ok(200) : refused); // the 13th in flight and beyond: 503
    const seen = rounds(limit, [...times(4, { sample: ok(200) }), { sample: capacity }, ...times(12, { sample: capacity })]);
    // a round's answers are judged when the next round's first comes back: the refusals at 32 show at the 6th
    expect(seen.slice(0, 6)).toEqual([2, 4, 8, 16, 32, 12]);
    // never past 12 again but for a probe of 13, at most one round in four
    const after = seen.slice(6);
    expect(Math.max(...after)).toBe(13);
    expect(after.filter((n) => n > 12).length).toBeLessThanOrEqual(after.length / 4);
    expect(Math.min(...after)).toBeGreaterThanOrEqual(11);
  });

  it('stays between 1 and 64', () => {
    const limit = new AdaptiveLimit();
    rounds(limit, times(20, { sample: ok(100) }));
    expect(limit.limit).toBe(MAX_IN_FLIGHT);
    rounds(limit, times(80, { sample: refused }));
    expect(limit.limit).toBe(1);
  });

  it('a pinned limit never moves', () => {
    const limit = new FixedLimit(8);
    for (let i = 0; i < 20; i++) limit.answered(limit.dispatched(), refused);
    expect([limit.limit, limit.mode, new FixedLimit(500).limit]).toEqual([8, 'fixed', 64]);
  });
});

interface ServerModel {
  latencyMs: number;
  /** requests per window, counted when they arrive; past it, 429 at once */
  plan?: { limit: number; windowMs: number; headers: boolean };
  /** served at once; `queue` more wait their turn (as many again by default); beyond, 503 with Retry-After: 1 */
  capacity?: number;
  queue?: number;
  /** every answer is a 503 */
  down?: boolean;
}

/**
 * 64 workers (the pipeline keeps that many batches ready) send `requests`
 * requests through one Governor to a model of the server, on a fake clock:
 * what the bench measures for real, here without waiting.
 */
async function simulate(concurrency: ConcurrencySetting, server: ServerModel, requests: number) {
  const clock = new FakeClock(1_700_000_000_000);
  const changes: string[] = [];
  const gov = new Governor({ concurrency, clock, onLimit: (c) => changes.push(`${c.from}→${c.to}`) });
  const stats = { status429: 0, status503: 0, sent: 0, peakInServer: 0 };
  let windowStart = clock.now();
  let count = 0;
  let serving = 0;
  const queue: (() => void)[] = [];
  const inServer = () => serving + queue.length;

  const rateHeaders = (now: number): Record<string, string> => {
    const p = server.plan!;
    if (now >= windowStart + p.windowMs) {
      windowStart += Math.floor((now - windowStart) / p.windowMs) * p.windowMs;
      count = 0;
    }
    if (!p.headers) return {};
    return { 'x-ratelimit-limit': String(p.limit), 'x-ratelimit-remaining': String(p.limit - count), 'x-ratelimit-reset': String(windowStart + p.windowMs) };
  };

  /** one request through the model: its status and headers */
  const exchange = async (): Promise<{ status: number; headers: Record<string, string> }> => {
    stats.sent++;
    if (server.plan) {
      rateHeaders(clock.now());
      if (count >= server.plan.limit) {
        stats.status429++;
        const headers = rateHeaders(clock.now());
        return { status: 429, headers: { ...headers, 'retry-after': String(Math.ceil((windowStart + server.plan.windowMs - clock.now()) / 1000)) } };
      }
      count++;
    }
    if (server.capacity) {
      if (serving >= server.capacity) {
        if (inServer() >= server.capacity + (server.queue ?? server.capacity)) {
          stats.status503++;
          return { status: 503, headers: { 'retry-after': '1' } };
        }
        await new Promise<void>((resolve) => queue.push(resolve));
      } else serving++;
      stats.peakInServer = Math.max(stats.peakInServer, inServer());
    }
    await sleep(clock, server.latencyMs);
    if (server.capacity) {
      const next = queue.shift();
      if (next) next();
      else serving--;
    }
    if (server.down) {
      stats.status503++;
      return { status: 503, headers: { 'retry-after': '1' } };
    }
    return { status: 200, headers: server.plan ? rateHeaders(clock.now()) : {} };
  };

  let next = 0;
  let finished = 0;
  let failed = 0;
  const worker = async () => {
    while (next < requests) {
      next++;
      for (let attempt = 0; ; attempt++) {
        const grant = await gov.acquire(Number.MAX_SAFE_INTEGER);
        if (!grant.ok) throw new Error(grant.reason);
        const answer = await exchange();
        const info = parseRateLimitHeaders(answer.headers, clock.now());
        grant.permit.done({ answered: true, info, rateLimited: answer.status === 429, overloaded: answer.status === 503 });
        if (answer.status === 200) break;
        if (answer.status === 503) {
          if (attempt >= 5) {
            failed++;
            break;
          }
          await sleep(clock, 1000); // Retry-After: 1
        }
      }
      finished++;
    }
  };
  const start = clock.now();
  const all = Promise.all(Array.from({ length: 64 }, worker));
  await clock.runUntil(() => finished === requests, 1_000_000);
  await all;
  return { ms: clock.now() - start, ...stats, failed, changes, inFlight: gov.inFlightStats };
}

describe('the adaptive limit against a simulated server (fake clock)', () => {
  it('a plan that binds (3 s latency, 20 per 10 s): each window spent at once, within 1.2× the ideal, no 429', async () => {
    const r = await simulate('auto', { latencyMs: 3000, plan: { limit: 20, windowMs: 10_000, headers: true } }, 40);
    // the best the window edges allow: the probe, 19 more when it answers, 20 at the next window
    const ideal = 10_000 + 3000;
    expect(r.status429).toBe(0);
    expect(r.ms / ideal).toBeLessThanOrEqual(1.2);
    expect(r.inFlight.peak).toBeGreaterThanOrEqual(19);
    expect(r.changes).toEqual(['1→20']); // the plan, once the probe told it
  });

  it('a plan that does not bind (400 ms, 1000 per s): at least as fast as 16 pinned, no 429', async () => {
    const server = { latencyMs: 400, plan: { limit: 1000, windowMs: 1000, headers: true } };
    const auto = await simulate('auto', server, 200);
    const fixed = await simulate(16, server, 200);
    expect(auto.status429 + fixed.status429).toBe(0);
    expect(fixed.ms / auto.ms).toBeGreaterThanOrEqual(1);
    // the plan allows more than 64 in flight could send: the limit is the server's, found by slow start
    expect(auto.changes.slice(0, 3)).toEqual(['1→2', '2→4', '4→8']);
  });

  it('a server that queues past 6 and refuses past 12 (200 ms): ≤ 5% refused, within 1.3× its capacity', async () => {
    const r = await simulate('auto', { latencyMs: 200, capacity: 6 }, 200);
    const ideal = Math.ceil(200 / 6) * 200;
    expect(r.status503 / r.sent).toBeLessThanOrEqual(0.05);
    expect(r.ms / ideal).toBeLessThanOrEqual(1.3);
  });

  // HyStart++: slow start doubled 8 → 16 into it, and the 4 past 12 were refused (2.4% here, 2.9-5.7% in the bench);
  // now the doubling waits for the 8 out, the last two come back late (queued), and slow start ends at 8
  it.each([
    [6, 6, 200, 200, 0],
    [20, 20, 400, 400, 0.01], // it was 5.7%: 16 → 32 → 64 before the refusals said anything
  ])(
    'a server that serves %i and queues %i more (%i ms): slow start ends at the queue, before the refusals',
    async (capacity, queue, latencyMs, requests, most) => {
      const r = await simulate('auto', { latencyMs, capacity, queue }, requests);
      expect(r.status503 / r.sent).toBeLessThanOrEqual(most);
      expect(r.ms / (Math.ceil(requests / capacity) * latencyMs)).toBeLessThanOrEqual(1.3);
    },
  );

  // issue 33: a second shape, with little room to queue: latency gives almost no warning before
  // the refusals (the controller before it: 4.8% refused, 1.45× its capacity)
  it('a server that queues past 10 and refuses past 12 (200 ms): ≤ 5% refused, within 1.3× its capacity', async () => {
    const r = await simulate('auto', { latencyMs: 200, capacity: 10, queue: 2 }, 200);
    const ideal = Math.ceil(200 / 10) * 200;
    expect(r.status503 / r.sent).toBeLessThanOrEqual(0.05);
    expect(r.ms / ideal).toBeLessThanOrEqual(1.3);
  });

  it('an unknown plan (429s without rate-limit headers) draws no burst of 429s', async () => {
    const r = await simulate('auto', { latencyMs: 200, plan: { limit: 20, windowMs: 10_000, headers: false } }, 60);
    expect(r.failed).toBe(0);
    // each window: at most the requests in flight when its first 429 came back
    expect(r.status429).toBeLessThanOrEqual(3 * 8);
  });

  it('a server that answers only 503 from the start: one request at a time', async () => {
    const r = await simulate('auto', { latencyMs: 50, down: true }, 20);
    expect(r.failed).toBe(20);
    // the probe was refused: the limit never left one
    expect(r.inFlight.peak).toBe(1);
    expect(r.changes).toEqual([]);
  });
});
