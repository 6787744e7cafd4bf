// validate (in-process) behind the de facto Node rate limiters (express-rate-limit 8,
// @fastify/rate-limit 11: test/support/limiter-server.mjs) and behind the fault
// server's lying headers: however the headers are stacked, disagree, change or
// cannot be placed in time, no run sends more in a window than the strictest
// allows. A 429 counted by the server is a request sent past it. (Speed against
// the ideal is `npm run bench pacing`'s, not a test's.) The cases wait for real
// windows to pass, and each has its own server: they wait side by side
// (concurrent: the tests of both groups at once), not one after the other.
import { describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServerOptions } from '../../support/fault-server.js';
import { startLimiterServer, type LimiterServerOptions } from '../../support/limiter-server.mjs';
import { runInProcess } from '../../support/run-in-process.js';

interface Server {
  url: string;
  count429(): number;
  close(): Promise<void>;
}

const KEY = 'sk_test_PACING_41';
const addresses = (n: number) => Array.from({ length: n }, (_, i) => `u${i}@example${i % 3}.com`).join('\n') + '\n';

/** `n` addresses, one request each, through `started` (closed after); the server's 429s and the run. */
async function run(started: Server, n: number, flags: string[]) {
  try {
    const r = await runInProcess(['validate', '--batch-size', '1', '--no-progress', ...flags], {
      env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: started.url },
      stdin: addresses(n),
      timeoutMs: 90_000,
    });
    return { ...r, count429: started.count429() };
  } finally {
    await started.close();
  }
}

const limiters = (options: LimiterServerOptions) => startLimiterServer(options);
const fault = (options: FaultServerOptions) => startFaultServer({ apiKey: KEY, ...options });

// A day's quota listed first, as express-rate-limit's docs stack them: the limit is the
// q of the policy whose remaining and reset count (5), not the first q= (it was 100,000:
// every window opened with 100,000 allowed, 12 429s at --concurrency 8 and 50 at 32 here).
describe('stacked draft-8 policies (express-rate-limit, a quota before 5 per second)', { concurrent: true }, () => {
  const stacked: LimiterServerOptions = {
    library: 'express',
    limiters: [
      { limit: 100_000, windowMs: 86_400_000, headers: 'draft-8' },
      { limit: 5, windowMs: 1000, headers: 'draft-8' },
    ],
  };
  it.each(['8', '32'])(
    '--concurrency %s: no 429',
    async (concurrency) => {
      const r = await run(await limiters(stacked), 16, ['--concurrency', concurrency]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.count429).toBe(0);
    },
    90_000,
  );

  // --verbose used to show only x-ratelimit-* and retry-after: nothing at all with IETF headers
  it('--verbose shows the RateLimit and RateLimit-Policy headers of each answer', async () => {
    const r = await run(await limiters(stacked), 2, ['--verbose']);
    expect(r.code, r.stderr).toBe(0);
    const answer = r.stderr.split('\n').find((l) => l.includes('< HTTP 200'));
    expect(answer).toMatch(/ · ratelimit: "100000-in-1day"; r=\d+; t=\d+, "5-in-1sec"; r=\d; t=1/);
    expect(answer).toMatch(/ · ratelimit-policy: "100000-in-1day"; q=100000; w=86400; pk=:[A-Za-z0-9+/=]+:, "5-in-1sec"; q=5; w=1; pk=/);
    expect(r.stderr).not.toContain(KEY);
  }, 90_000);
});

describe('the stricter header wins, whatever its format', { concurrent: true }, () => {
  // X-RateLimit-Remaining: 999 beside RateLimit: remaining=4 — the X- header won: 62 429s here
  it('a generous X-RateLimit-* beside a strict draft-7 RateLimit: no 429', async () => {
    const server = await limiters({
      library: 'express',
      limiters: [
        { limit: 1000, windowMs: 60_000, headers: 'legacy' },
        { limit: 5, windowMs: 1000, headers: 'draft-7' },
      ],
    });
    const r = await run(server, 16, ['--concurrency', '16']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.count429).toBe(0);
  }, 90_000);

  // each window opened at the last Limit seen (25): 15 429s here
  it('a Limit that changes on every answer: the smaller holds, no 429', async () => {
    const server = await fault({ rateLimit: { limit: 5, windowMs: 2000, resetFormat: 'epoch-ms', advertisedLimits: [5, 25, 10] } });
    const r = await run(server, 16, ['--concurrency', '16']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.count429).toBe(0);
  }, 90_000);

  // the epoch reset, corrected by a Date an hour ahead, fell in the past: Remaining was
  // dropped as stale and the run sent as if there were no limit (31 429s here)
  it("a Date header an hour ahead of the limiter's clock: Remaining still counts, no 429", async () => {
    const server = await limiters({
      library: 'express',
      limiters: [{ limit: 5, windowMs: 2000, headers: ['legacy', 'draft-6'] }],
      dateOffsetMs: 3_600_000,
    });
    const r = await run(server, 16, ['--concurrency', '16']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.count429).toBe(0);
  }, 90_000);

  // Remaining was dropped as stale (26 429s here). A window whose end the server never
  // tells is found by asking: one request when Remaining runs out, and the first 429's
  // Retry-After teaches the window's length; no more 429s after it.
  it('a Reset an hour in the past: Remaining still counts, at most one 429 to find the window', async () => {
    const server = await fault({ rateLimit: { limit: 5, windowMs: 2000, resetFormat: 'epoch-s', resetOffsetMs: -3_600_000 } });
    const r = await run(server, 21, ['--concurrency', '16']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.count429).toBeLessThanOrEqual(1);
  }, 90_000);
});

// Issue 41.5: slow start doubled 8 → 16 into a server that refuses past 12 (4 refused each run)
it.concurrent('a server that queues past 6 and refuses past 12: slow start stops at the queue (HyStart++), at most one 503', async () => {
  const server = await startFaultServer({ apiKey: KEY, capacity: 6, queue: 6, delayMs: 200 });
  const r = await run({ ...server, count429: () => server.count429() }, 48, []);
  expect(r.code, r.stderr).toBe(0);
  expect(server.stats().byStatus['503'] ?? 0).toBeLessThanOrEqual(1);
}, 90_000);
