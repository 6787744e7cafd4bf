import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { NO_REDIS, noRedis, startRedis, type TestRedis } from '../support/redis-server.js';
import { parseCsv } from '../support/run-cli.js';
import { type InProcessResult, runInProcess } from '../support/run-in-process.js';
import { waitFor } from '../support/wait.js';

// `--cache redis://…` and a Redis that goes away mid-run (a real redis-server,
// killed): a cache is an optimisation, so the run goes on without it, says so
// once, and writes its whole output. The runs are in-process (what goes away is
// Redis, not mailsift); the file is -e2e for the redis-server it starts.
const KEY = 'sk_test_redis_gone';
const ROWS = 1500;
/** one case's world: a directory with the list, an API and a redis-server of its own, gone when the case ends */
async function world(onTestFinished: (fn: () => Promise<void>) => void): Promise<{ at: (name: string) => string; api: FaultServer; redis: TestRedis }> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-redis-gone-'));
  await writeFile(join(dir, 'in.txt'), Array.from({ length: ROWS }, (_, i) => `user${i}@example.com`).join('\n') + '\n');
  const api = await startFaultServer({ apiKey: KEY, delayMs: 40 });
  const redis = await startRedis();
  onTestFinished(async () => {
    await api.close();
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return { at: (name) => join(dir, name), api, redis };
}

/**
 * Runs mailsift in-process and calls `then` once `when` holds (polled, bounded): what goes
 * away is the Redis process, not mailsift's, so the run needs no process of its own. Paths
 * are absolute: an in-process run in this process's directory overlaps the other case's.
 */
async function runWhile(api: FaultServer, args: string[], when: () => boolean, then: () => Promise<void>): Promise<InProcessResult> {
  let closed = false;
  const run = runInProcess(args, { env: { MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: api.url } }).finally(() => (closed = true));
  const acted = waitFor(() => closed || when(), { what: 'the moment to act on the run', timeoutMs: 30_000, intervalMs: 5 }).then(
    () => (closed ? undefined : then()),
    () => undefined, // never came: the test's own expectations say what was missed
  );
  const r = await run;
  await acted;
  return r;
}

// Each case has a redis-server of its own, killed or stopped: they wait for Redis's timeouts side by side.
describe.skipIf(noRedis())(`Redis goes away mid-run${NO_REDIS}`, () => {
  it.concurrent('the run goes on without the cache: exit 0, whole output, one warning, the loss in the summary', async ({ expect, onTestFinished }) => {
    const { at, api, redis } = await world(onTestFinished);
    const args = [
      'validate',
      at('in.txt'),
      '-o',
      at('out.csv'),
      '--summary',
      at('sum.json'),
      '--journal',
      at('run.journal'),
      '--batch-size',
      '50',
      '--concurrency',
      '2',
      '--cache',
      redis.url,
    ];
    const r = await runWhile(
      api,
      args,
      () => api.requests.length >= 4,
      () => redis.kill(),
    );
    expect(r.code, r.stderr).toBe(0);
    const rows = parseCsv(await readFile(at('out.csv'), 'utf8'));
    expect(rows).toHaveLength(ROWS + 1);
    expect(rows.slice(1).every((row) => row[1] === 'valid')).toBe(true);
    const warnings = r.stderr.split('\n').filter((line) => line.includes('stopped answering'));
    expect(warnings, r.stderr).toHaveLength(1);
    expect(warnings[0]).toMatch(/^mailsift: warning: --cache: redis:\/\/127\.0\.0\.1:\d+ stopped answering \(.+\); the run goes on without the cache/);
    // a journal was given: no advice to use one
    expect(r.stderr).not.toContain('use --journal');
    expect(r.stderr).toMatch(/cache +redis:\/\/127\.0\.0\.1:\d+ went away mid-run: [\d,]+ verdicts? not stored there/);
    const summary = JSON.parse(await readFile(at('sum.json'), 'utf8'));
    expect(summary.total).toBe(ROWS);
    expect(summary.cacheLost.unstored).toBeGreaterThan(0);
    expect(summary.warnings).toEqual([expect.stringContaining('stopped answering')]);
    // the journal kept everything: a re-run (Redis still gone is no matter without --cache) sends nothing
    const before = api.requests.length;
    const again = await runWhile(
      api,
      ['validate', at('in.txt'), '-o', at('again.csv'), '--journal', at('run.journal')],
      () => false,
      async () => {},
    );
    expect(again.code, again.stderr).toBe(0);
    expect(api.requests.length).toBe(before);
  }, 90_000);

  it.concurrent('a Redis that hangs (stopped) is left after its timeout the same way', async ({ expect, onTestFinished }) => {
    const { at, api, redis } = await world(onTestFinished);
    const args = ['validate', at('in.txt'), '-o', at('hang.csv'), '--batch-size', '50', '--concurrency', '2', '--cache', redis.url];
    try {
      const r = await runWhile(
        api,
        args,
        () => api.requests.length >= 4,
        async () => redis.pause(),
      );
      expect(r.code, r.stderr).toBe(0);
      expect(parseCsv(await readFile(at('hang.csv'), 'utf8'))).toHaveLength(ROWS + 1);
      expect(r.stderr).toMatch(
        /^mailsift: warning: --cache: redis:\/\/127\.0\.0\.1:\d+ stopped answering \(Redis did not answer in time\); the run goes on without the cache/m,
      );
    } finally {
      redis.resume();
    }
  }, 90_000);
});
