import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { NO_REDIS, noRedis, REDIS_SERVER, startRedis, type TestRedis } from '../support/redis-server.js';
import { BIN, parseCsv, type CliResult } from '../support/run-cli.js';
import { waitFor } from '../support/wait.js';

// `--cache redis://…` and a Redis that goes away mid-run (a real redis-server,
// killed): a cache is an optimisation, so the run goes on without it, says so
// once, and writes its whole output.
const KEY = 'sk_test_redis_gone';
const ROWS = 1500;
let dir: string;
let api: FaultServer;
let redis: TestRedis;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-redis-gone-'));
  await writeFile(join(dir, 'in.txt'), Array.from({ length: ROWS }, (_, i) => `user${i}@example.com`).join('\n') + '\n');
  api = await startFaultServer({ apiKey: KEY, delayMs: 40 });
  if (REDIS_SERVER) redis = await startRedis();
});
afterAll(async () => {
  await api.close();
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Runs the binary and calls `then` once `when` holds (polled, bounded). */
function runWhile(args: string[], when: () => boolean, then: () => Promise<void>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH ?? '', MAILSIFT_API_KEY: KEY, MAILSIFT_BASE_URL: api.url };
    const child = spawn(process.execPath, [BIN, ...args], { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
    let closed = false;
    void waitFor(() => closed || when(), { what: 'the moment to act on the run', timeoutMs: 30_000, intervalMs: 5 }).then(
      () => (closed ? undefined : then()),
      () => undefined, // never came: the test's own expectations say what was missed
    );
    child.on('error', reject);
    child.on('close', (code, signal) => {
      closed = true;
      clearTimeout(deadline);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

describe.skipIf(noRedis())(`Redis goes away mid-run${NO_REDIS}`, () => {
  it('the run goes on without the cache: exit 0, whole output, one warning, the loss in the summary', async () => {
    const from = api.requests.length;
    const args = ['validate', 'in.txt', '-o', 'out.csv', '--summary', 'sum.json', '--journal', 'run.journal', '--batch-size', '50', '--concurrency', '2', '--cache', redis.url];
    const r = await runWhile(args, () => api.requests.length >= from + 4, () => redis.kill());
    expect(r.code, r.stderr).toBe(0);
    const rows = parseCsv(await readFile(join(dir, 'out.csv'), 'utf8'));
    expect(rows).toHaveLength(ROWS + 1);
    expect(rows.slice(1).every((row) => row[1] === 'valid')).toBe(true);
    const warnings = r.stderr.split('\n').filter((line) => line.includes('stopped answering'));
    expect(warnings, r.stderr).toHaveLength(1);
    expect(warnings[0]).toMatch(/^mailsift: warning: --cache: redis:\/\/127\.0\.0\.1:\d+ stopped answering \(.+\); the run goes on without the cache/);
    // a journal was given: no advice to use one
    expect(r.stderr).not.toContain('use --journal');
    expect(r.stderr).toMatch(/cache +redis:\/\/127\.0\.0\.1:\d+ went away mid-run: [\d,]+ verdicts? not stored there/);
    const summary = JSON.parse(await readFile(join(dir, 'sum.json'), 'utf8'));
    expect(summary.total).toBe(ROWS);
    expect(summary.cacheLost.unstored).toBeGreaterThan(0);
    expect(summary.warnings).toEqual([expect.stringContaining('stopped answering')]);
    // the journal kept everything: a re-run (Redis still gone is no matter without --cache) sends nothing
    const before = api.requests.length;
    const again = await runWhile(['validate', 'in.txt', '-o', 'again.csv', '--journal', 'run.journal'], () => false, async () => {});
    expect(again.code, again.stderr).toBe(0);
    expect(api.requests.length).toBe(before);
  }, 90_000);

  it('a Redis that hangs (stopped) is left after its timeout the same way', async () => {
    await redis.restart(); // killed by the test before
    const args = ['validate', 'in.txt', '-o', 'hang.csv', '--batch-size', '50', '--concurrency', '2', '--cache', redis.url];
    const from = api.requests.length;
    try {
      const r = await runWhile(args, () => api.requests.length >= from + 4, async () => redis.pause());
      expect(r.code, r.stderr).toBe(0);
      expect(parseCsv(await readFile(join(dir, 'hang.csv'), 'utf8'))).toHaveLength(ROWS + 1);
      expect(r.stderr).toMatch(/^mailsift: warning: --cache: redis:\/\/127\.0\.0\.1:\d+ stopped answering \(Redis did not answer in time\); the run goes on without the cache/m);
    } finally {
      redis.resume();
    }
  }, 90_000);
});
