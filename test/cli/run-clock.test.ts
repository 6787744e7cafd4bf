// A command run in-process keeps its time on io.clock, all of it: what a test
// gives as the clock is what the run's records are dated by, what ages them,
// and what its summary's elapsed time is read on.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { clockReading } from '../support/fake-clock.js';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { runInProcess } from '../support/run-in-process.js';

const KEY = 'sk_test_CLOCK_8e1f';
const HOUR = 3_600_000;

let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('io.clock', () => {
  it('dates the cache and ages it: a verdict is reused until --cache-ttl has passed on the run’s clock, then asked again', async () => {
    server = await startFaultServer({ apiKey: KEY });
    const cwd = mkdtempSync(join(tmpdir(), 'mailsift-run-clock-'));
    writeFileSync(join(cwd, 'list.txt'), 'ann@example.com\nbob@example.com\n');
    const env = { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: server.url };
    const asked = (): number => server!.requests.filter((r) => r.path === '/api/validate/bulk').flatMap((r) => r.emails).length;
    let t = Date.UTC(2031, 0, 1);
    const run = () =>
      runInProcess(['validate', 'list.txt', '--cache', 'verdicts.cache', '--cache-ttl', '12h', '-q'], { env, cwd, clock: clockReading(() => t) });
    expect((await run()).code).toBe(0);
    expect(asked()).toBe(2);
    t += 12 * HOUR - 60_000;
    expect((await run()).code).toBe(0);
    expect(asked()).toBe(2);
    t += 120_000;
    expect((await run()).code).toBe(0);
    expect(asked()).toBe(4);
  });

  it('is what the summary’s elapsed time is read on', async () => {
    server = await startFaultServer({ apiKey: KEY, delayMs: 20 });
    const cwd = mkdtempSync(join(tmpdir(), 'mailsift-run-clock-'));
    writeFileSync(join(cwd, 'list.txt'), 'ann@example.com\nbob@example.com\n');
    const env = { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: server.url };
    // a clock that stands still: however long the run really took, none of it passed on its clock
    const r = await runInProcess(['validate', 'list.txt', '--summary', 'summary.json', '-q'], { env, cwd, clock: clockReading(() => Date.UTC(2031, 0, 1)) });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.file('summary.json'))).toMatchObject({ total: 2, elapsedMs: 0 });
  });
});
