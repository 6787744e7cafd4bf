// Issue 29.8 and 29.9: rate-limit headers that lie. No run waits forever, and no
// run sends more requests in a window than the headers allow, whatever they say.
import { describe, expect, it } from 'vitest';
import { startFaultServer } from '../../support/fault-server.js';
import { parseCsv } from '../../support/run-cli.js';
import { runInProcess } from '../../support/run-in-process.js';

const addresses = (n: number) => Array.from({ length: n }, (_, i) => `u${i}@example.com`).join('\n') + '\n';

/** one run against a server of its own, closed once the run has ended (what it recorded stays readable) */
async function run(headers: Record<string, string>, n: number, flags: string[] = [], delayMs = 0) {
  const server = await startFaultServer({ apiKey: 'k', headers, delayMs });
  const r = await runInProcess(['validate', '--batch-size', '1', ...flags], {
    env: { MAILSIFT_API_KEY: 'k', MAILSIFT_BASE_URL: server.url },
    stdin: addresses(n),
    timeoutMs: 60_000,
  }).finally(() => server.close());
  return { r, at: server.requests.map((q) => q.at), server };
}

/** The most requests that arrived within any `spanMs`. */
function busiest(at: number[], spanMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < at.length; i++) {
    while (at[i]! - at[j]! >= spanMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

// Each case waits for real windows against a server of its own: side by side.
describe.concurrent('lying rate-limit headers', () => {
  it('Limit 0, Remaining 0, Reset 1 on every answer: the run goes on, one request a window, instead of hanging', async () => {
    const { r, at } = await run({ 'X-RateLimit-Limit': '0', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '1' }, 3);
    expect(r.signal, 'the run hung').toBeNull(); // a hung run fails at timeoutMs
    expect(r.code, r.stderr).toBe(0);
    expect(
      parseCsv(r.stdout)
        .slice(1)
        .map((row) => row[1]),
    ).toEqual(['valid', 'valid', 'valid']);
    expect(at).toHaveLength(3);
    // a window of a second each: never two within one
    expect(busiest(at, 900)).toBe(1);
  }, 60_000);

  it('a negative Remaining is none left: at most the Limit per window (it sent 100 in 0.8 s)', async () => {
    const { r, at } = await run({ 'X-RateLimit-Limit': '10', 'X-RateLimit-Remaining': '-5', 'X-RateLimit-Reset': '2' }, 25, ['--concurrency', '16']);
    expect(r.code, r.stderr).toBe(0);
    expect(at).toHaveLength(25);
    // the probe, then 10 after each reset of 2 s: never more than 10 within a second (on a loaded
    // machine one burst's requests reach the server spread over a few hundred ms)
    expect(busiest(at, 1000)).toBeLessThanOrEqual(10);
  }, 60_000);

  it('a Remaining that is no number (1e400) is no information, not 1: the Limit paces the run', async () => {
    const { r, at, server } = await run(
      { 'X-RateLimit-Limit': '100', 'X-RateLimit-Remaining': '1e400', 'X-RateLimit-Reset': '60' },
      12,
      ['--concurrency', '16'],
      200,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(at).toHaveLength(12);
    // read as 1, it sent one request at a time for the whole minute: here the 11 after the probe go together
    expect(server.stats().peakInFlight).toBeGreaterThanOrEqual(5);
  }, 60_000);
});
