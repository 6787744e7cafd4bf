// Two express-rate-limit limiters stacked with legacy headers, 8 per 2 s before
// 5 per second: both write X-RateLimit-*, so every answer that passes shows the
// per-second one's and only a 429 shows the other. Read as one policy whose
// Limit changes, the per-2-s limit was found again by a burst of 429s in each of
// its windows. Its first 429 tells its Limit and reset: from then on the run
// counts against it, and no window of it is overdrawn again. 20 rows: 8 in the
// first window, and 12 left, more than the second window lets through.
import { afterEach, expect, it } from 'vitest';
import { startLimiterServer, type LimiterServer } from '../../support/limiter-server.mjs';
import { runInProcess } from '../../support/run-in-process.js';

let server: LimiterServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

it('a limit only 429s show, behind the same header names: found once, not in each of its windows', async () => {
  server = await startLimiterServer({
    library: 'express',
    limiters: [
      { limit: 8, windowMs: 2000, headers: 'legacy' },
      { limit: 5, windowMs: 1000, headers: 'legacy' },
    ],
  });
  const r = await runInProcess(['validate', '--batch-size', '1', '--no-progress'], {
    env: { MAILSIFT_API_KEY: 'sk_test_HIDDEN', MAILSIFT_BASE_URL: server.url },
    stdin: Array.from({ length: 20 }, (_, i) => `u${i}@example${i % 3}.com`).join('\n') + '\n',
    timeoutMs: 60_000,
  });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout.trim().split('\n')).toHaveLength(21);
  const refused = server.requests.filter((q) => q.status === 429).map((q) => q.at);
  // the burst that found it, within one window of the per-second limiter, and none after
  expect(refused.length).toBeLessThanOrEqual(5);
  expect(Math.max(...refused) - Math.min(...refused)).toBeLessThan(1000);
}, 90_000);
