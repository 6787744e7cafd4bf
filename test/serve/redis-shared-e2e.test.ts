import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { post, type Reply } from './helpers.js';
import { BIN, startServe, type Served } from './spawn.js';
import { freePort, NO_REDIS, noRedis, REDIS_SERVER, startRedis, type TestRedis } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

// Several `mailsift serve` processes sharing one real redis-server (PRODUCT.md §7).
const KEY = 'msk_shared_test_key';
const EMAIL = { email: 'jane.doe@example.com' };
const envWithout = (): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  delete env.MAILSIFT_REDIS_URL;
  return env;
};

let dir: string;
let keys: string;
let redis: TestRedis;
const running: Served[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-redis-serve-'));
  keys = join(dir, 'keys.txt');
  await writeFile(keys, `${KEY}\n`);
  if (REDIS_SERVER) redis = await startRedis();
});

afterAll(async () => {
  await Promise.all(running.map(stop));
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function serveMany(n: number, args: string[], env = envWithout()): Promise<Served[]> {
  const started = await Promise.all(Array.from({ length: n }, () => startServe(['--keys-file', keys, ...args], { env })));
  running.push(...started);
  return started;
}

async function stop(s: Served): Promise<number | null> {
  if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
  return s.exit;
}

const header = (r: Reply, name: string): number => Number(r.headers.get(name));

/**
 * What a shared fixed window must show, checked per window (a run may straddle a
 * window's end, so replies are grouped by X-RateLimit-Reset): exactly
 * min(limit, requests) got through, each with a distinct Remaining (one atomic
 * count, whatever instance served it), and every refusal is a 429 with
 * Remaining 0 and a Retry-After that ends at the window's end.
 */
function expectSharedWindow(replies: Reply[], limit: number, windowSeconds: number, okStatus: number, sentAt: number): void {
  const byWindow = new Map<number, Reply[]>();
  for (const r of replies) {
    expect(header(r, 'x-ratelimit-limit')).toBe(limit);
    const reset = header(r, 'x-ratelimit-reset');
    expect(reset % windowSeconds, 'windows aligned to the epoch').toBe(0);
    byWindow.set(reset, [...(byWindow.get(reset) ?? []), r]);
  }
  expect(byWindow.size).toBeLessThanOrEqual(2);
  for (const [reset, group] of byWindow) {
    const passed = group.filter((r) => r.status === okStatus);
    const refused = group.filter((r) => r.status !== okStatus);
    expect(passed.length).toBe(Math.min(limit, group.length));
    expect(passed.map((r) => header(r, 'x-ratelimit-remaining')).sort((a, b) => a - b)).toEqual(
      Array.from({ length: passed.length }, (_, i) => limit - passed.length + i),
    );
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.json.error.code).toBe('RATE_LIMITED');
      expect(header(r, 'x-ratelimit-remaining')).toBe(0);
      const retry = header(r, 'retry-after');
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(windowSeconds);
      // Retry-After points at this window's end, give or take the test's own second
      expect(Math.abs(sentAt / 1000 + retry - reset)).toBeLessThanOrEqual(2);
    }
  }
}

describe.skipIf(noRedis())(`serve instances sharing one Redis${NO_REDIS}`, () => {
  it.each([2, 3])('%i instances allow a key and a keyless IP the limit in all, not per instance; the rest get 429', async (n) => {
    const LIMIT = 4;
    // a generous command timeout: on a loaded machine a stalled event loop must not count as Redis down
    const servers = await serveMany(n, ['--rate-limit', `${LIMIT}/60`, '--redis', redis.url, '--redis-prefix', `shared${n}:`, '--redis-timeout', '10000']);
    for (const s of servers)
      expect(s.stderr()).toMatch(/sharing rate-limit windows and DNS answers through Redis at redis:\/\/127\.0\.0\.1:\d+ \(keys shared\d:\*\)/);
    const total = LIMIT * n + 2;
    const sentAt = Date.now();
    const [withKey, keyless] = await Promise.all([
      Promise.all(Array.from({ length: total }, (_, i) => post(servers[i % n]!.url, '/api/validate', EMAIL, { key: KEY }))),
      Promise.all(Array.from({ length: total }, (_, i) => post(servers[i % n]!.url, '/api/validate', EMAIL, { key: null }))),
    ]);
    for (const s of servers) expect(s.stderr()).not.toMatch(/unreachable/);
    expectSharedWindow(withKey, LIMIT, 60, 200, sentAt);
    expectSharedWindow(keyless, LIMIT, 60, 401, sentAt);
    await Promise.all(servers.map(async (s) => expect(await stop(s)).toBe(0)));
  });

  it('Redis killed: instances keep serving from their own memory, /readyz says degraded, logged once; restarted: they share again', async () => {
    // a killed Redis fails at once: the timeout only has to outlast a loaded machine (300 ms did not)
    const servers = await serveMany(2, ['--rate-limit', '1000/60', '--redis', redis.url, '--redis-prefix', 'kill:', '--redis-timeout', '5000']);
    const [a, b] = servers as [Served, Served];
    expect((await post(a.url, '/api/validate', EMAIL, { key: KEY })).status).toBe(200);

    await redis.kill();
    for (let i = 0; i < 4; i++) {
      for (const s of servers) {
        const r = await post(s.url, '/api/validate', EMAIL, { key: KEY });
        expect(r.status).toBe(200);
        expect(r.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      }
    }
    for (const s of servers) {
      const ready = await post(s.url, '/readyz', undefined, { method: 'GET', key: null, contentType: null });
      expect(ready.status).toBe(200);
      expect(ready.json).toEqual({ status: 'degraded', redis: 'unreachable' });
      const strict = await post(s.url, '/readyz?strict', undefined, { method: 'GET', key: null, contentType: null });
      expect(strict.status).toBe(503);
      expect(s.stderr().match(/Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable \(.+\): rate limits and caches are per instance/g)).toHaveLength(1);
    }

    await redis.restart();
    for (const s of servers) await untilReady(s);
    for (const s of servers) expect(s.stderr()).toMatch(/answers again: rate limits and caches are shared again/);
    // counted in Redis again: three requests over both instances make one count of 3
    await post(a.url, '/api/validate', EMAIL, { key: KEY });
    await post(b.url, '/api/validate', EMAIL, { key: KEY });
    const third = await post(a.url, '/api/validate', EMAIL, { key: KEY });
    expect(header(third, 'x-ratelimit-remaining')).toBe(1000 - 3);
    const client = new Redis(redis.url, { lazyConnect: true });
    try {
      await client.connect();
      const found = await client.keys('kill:rl:60:*:key:*');
      expect(found).toHaveLength(1);
      expect(await client.get(found[0]!)).toBe('3');
      const ttl = await client.pttl(found[0]!);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(61_000);
    } finally {
      client.disconnect();
    }
    await Promise.all(servers.map(async (s) => expect(await stop(s)).toBe(0)));
  });

  it('a hung Redis costs a request at most the command timeout, then none; it is used again once it answers', async () => {
    const [s] = (await serveMany(1, ['--rate-limit', '1000/60', '--redis', redis.url, '--redis-prefix', 'hang:', '--redis-timeout', '1500'])) as [Served];
    redis.pause();
    try {
      const t0 = Date.now();
      expect((await post(s.url, '/api/validate', EMAIL, { key: KEY })).status).toBe(200);
      const first = Date.now() - t0;
      expect(first).toBeGreaterThanOrEqual(1400); // it waited for Redis, up to the timeout...
      expect(first).toBeLessThan(4000); // ...and no longer
      const t1 = Date.now();
      expect((await post(s.url, '/api/validate', EMAIL, { key: KEY })).status).toBe(200);
      expect(Date.now() - t1).toBeLessThan(1000); // Redis is no longer asked: no second timeout
      const ready = await post(s.url, '/readyz', undefined, { method: 'GET', key: null, contentType: null });
      expect(ready.json.status).toBe('degraded');
    } finally {
      redis.resume();
    }
    await untilReady(s);
    expect(await stop(s)).toBe(0);
  });

  it('a Redis password is never shown: not in logs, not in errors, not left in argv', async () => {
    const secret = 'pw-s3cret-9f2c';
    const locked = await startRedis({ password: secret });
    try {
      // from the environment: the way docs/serve.md recommends
      const [viaEnv] = (await serveMany(1, ['--rate-limit', '5/60'], { ...envWithout(), MAILSIFT_REDIS_URL: locked.url })) as [Served];
      expect((await post(viaEnv.url, '/api/validate', EMAIL, { key: KEY })).status).toBe(200);
      expect(viaEnv.stderr()).toMatch(/through Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+/);
      // on the command line: taken out of argv at once, with a warning
      const [viaArgv] = (await serveMany(1, ['--redis', locked.url])) as [Served];
      expect(viaArgv.stderr()).toMatch(/pass the URL in MAILSIFT_REDIS_URL instead/);
      expect(readFileSync(`/proc/${viaArgv.child.pid}/cmdline`, 'utf8')).not.toContain(secret);
      await locked.kill();
      await post(viaEnv.url, '/api/validate', EMAIL, { key: KEY });
      expect(viaEnv.stderr()).toMatch(/is unreachable/);
      for (const s of [viaEnv, viaArgv]) {
        expect(await stop(s)).toBe(0);
        expect(s.stderr()).not.toContain(secret);
      }
      // a wrong password is a start-up error that does not echo either password
      await locked.restart();
      const wrong = spawnSync(process.execPath, [BIN, 'serve', '--port', '0', '--no-dns'], {
        encoding: 'utf8',
        timeout: 10_000,
        env: { ...envWithout(), MAILSIFT_REDIS_URL: `redis://:not-${secret}@127.0.0.1:${locked.port}` },
      });
      expect(wrong.status).toBe(2);
      expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
      expect(wrong.stderr).toMatch(/--redis: cannot use redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ \(WRONGPASS: Redis refused the user name or password\)/);
      expect(wrong.stderr).not.toContain(secret);
    } finally {
      await locked.stop();
    }
  });
});

describe('a wrong --redis URL at start-up', () => {
  // a --redis URL that is wrong in itself: test/cli/plan.test.ts
  it('nothing answering: exit 2, one line, before listening', async () => {
    const port = await freePort();
    const r = spawnSync(process.execPath, [BIN, 'serve', '--port', '0', '--no-dns'], {
      encoding: 'utf8',
      timeout: 10_000,
      env: { ...envWithout(), MAILSIFT_REDIS_URL: `redis://127.0.0.1:${port}` },
    });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([`mailsift: --redis: cannot use redis://127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port})`]);
  });
});

/** Until /readyz says ready again, at most 6 s. */
async function untilReady(s: Served): Promise<void> {
  let last: Reply | undefined;
  const ready = async (): Promise<boolean> =>
    (last = await post(s.url, '/readyz', undefined, { method: 'GET', key: null, contentType: null })).json?.status === 'ready';
  await waitFor(ready, { what: 'serve to be ready again', timeoutMs: 6000, intervalMs: 100 }).catch((err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(last?.json)}\n${s.stderr()}`);
  });
}
