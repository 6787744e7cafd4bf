import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { jobBinding } from '../../src/stores/binding.js';
import { VerdictEncoder } from '../../src/codec/verdict-encoding.js';
import { CACHE_KEY_PREFIX } from '../../src/stores/redis-verdict-cache.js';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { freePort, NO_REDIS, noRedis, REDIS_SERVER, startRedis, type TestRedis } from '../support/redis-server.js';
import { runInProcess } from '../support/run-in-process.js';
import { API_KEY, apiEnv, cachedVerdict, sentEmails } from './helpers.js';

// `--cache redis://…`: cron jobs on several machines sharing verdicts through one
// real redis-server, against the fault-injecting test API.
let redis: TestRedis;
let client: Redis;
let server: FaultServer;
let dirs: string[] = [];

beforeAll(async () => {
  if (!REDIS_SERVER) return;
  redis = await startRedis();
  client = new Redis(`${redis.url}/3`);
});
afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});
beforeEach(async () => {
  server = await startFaultServer({ apiKey: API_KEY, shuffle: true });
  await client?.flushdb();
});
afterEach(async () => {
  await server.close();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  dirs = [];
});

const addresses = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `u${from + i}@example.com`);

/** One "machine": its own working directory, the shared Redis as its cache. */
async function validate(emails: string[], extra: string[] = [], api: FaultServer = server) {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-redis-cache-'));
  dirs.push(dir);
  await writeFile(join(dir, 'in.txt'), emails.join('\n') + '\n');
  const r = await runInProcess(['validate', 'in.txt', '-o', 'out.csv', '--summary', 'sum.json', '--cache', `${redis.url}/3`, ...extra], {
    cwd: dir,
    env: apiEnv(api),
  });
  const summary = r.code === 0 ? JSON.parse(await readFile(join(dir, 'sum.json'), 'utf8')) : undefined;
  return { ...r, dir, summary, csv: r.code === 0 ? await readFile(join(dir, 'out.csv'), 'utf8') : '' };
}

describe.skipIf(noRedis())(`--cache redis://${NO_REDIS}`, () => {
  it('a second machine sends nothing the first answered, writes what a fresh run writes, and Redis never holds the key', async () => {
    const a = await validate(addresses(0, 30));
    expect(a.code, a.stderr).toBe(0);
    expect(a.summary.fromCache).toBe(0);
    const before = server.requests.length;

    const b = await validate(addresses(20, 50));
    expect(b.code, b.stderr).toBe(0);
    expect(b.summary.fromCache).toBe(10);
    expect(sentEmails(server, before).sort()).toEqual(addresses(30, 50).sort());
    const fresh = await runInProcess(['validate', 'in.txt'], { cwd: b.dir, env: apiEnv(server) });
    expect(b.csv).toBe(fresh.stdout);

    const keys = await client.keys('*');
    expect(keys).toEqual([`${CACHE_KEY_PREFIX}${jobBinding({ engine: 'api', baseUrl: server.url }).fingerprint}`]);
    const all = JSON.stringify(await client.hgetall(keys[0]!));
    expect(all).toContain('u49@example.com');
    expect(all).not.toContain(API_KEY);
    expect(await client.ttl(keys[0]!)).toBeGreaterThan(29 * 86_400);
  });

  it('honours --cache-ttl: an older verdict is asked again (and dropped), a younger one reused', async () => {
    const day = 86_400;
    const now = Math.floor(Date.now() / 1000);
    const key = `${CACHE_KEY_PREFIX}${jobBinding({ engine: 'api', baseUrl: server.url }).fingerprint}`;
    // verdicts that differ from what the server would say, so reuse shows in the output
    const encoder = new VerdictEncoder('api');
    await client.hset(key, {
      'old@example.com': encoder.line(cachedVerdict('old@example.com'), now - 40 * day),
      'young@example.com': encoder.line(cachedVerdict('young@example.com'), now - 1 * day),
      // a value for another address under this field: never handed out
      'odd@example.com': encoder.line(cachedVerdict('even@example.com'), now),
      // a value of the first format: asked again, and replaced
      'first@example.com': `${now} ${JSON.stringify(['first@example.com', 'r11100-', 0.42, 'cached', 1])}`,
    });
    const r = await validate(['old@example.com', 'young@example.com', 'odd@example.com', 'first@example.com'], ['--cache-ttl', '30d']);
    expect(r.code, r.stderr).toBe(0);
    expect(sentEmails(server).sort()).toEqual(['first@example.com', 'odd@example.com', 'old@example.com']);
    expect(r.stderr).toMatch(/^mailsift: --cache redis:\/\/.*: 1 damaged record .* asked again$/m);
    expect(r.stderr).toMatch(/^mailsift: --cache redis:\/\/.*: 1 address recorded by an older mailsift, without a checksum, is asked again$/m);
    expect(r.summary.fromCache).toBe(1);
    expect(r.csv).toMatch(/^young@example\.com,risky,low_confidence,true,0\.42,cached,/m);
    expect(r.csv).toMatch(/^old@example\.com,valid,.*fault-server/m);
    // the stale value was replaced by this run's fresh one, not left behind
    expect(Number(/^\[(\d+),/.exec((await client.hget(key, 'old@example.com'))!)![1])).toBeGreaterThanOrEqual(now);
    expect(await client.hget(key, 'first@example.com')).toMatch(/^\[\d+,"first@example.com","v11100-a",/);

    const shorter = await validate(['young@example.com'], ['--cache-ttl', '12h']);
    expect(shorter.code, shorter.stderr).toBe(0);
    expect(shorter.summary.fromCache).toBe(0);
  });

  it('two API base URLs never share entries', async () => {
    const a = await validate(addresses(0, 5));
    expect(a.code, a.stderr).toBe(0);
    const other = await startFaultServer({ apiKey: API_KEY });
    try {
      const b = await validate(addresses(0, 5), [], other);
      expect(b.code, b.stderr).toBe(0);
      expect(b.summary.fromCache).toBe(0);
      expect(sentEmails(other).sort()).toEqual(addresses(0, 5).sort());
    } finally {
      await other.close();
    }
    expect(await client.keys('*')).toHaveLength(2);
  });

  it('a --cache URL nothing answers at is exit 2 in one line, before anything is sent', async () => {
    const port = await freePort();
    const dir = await mkdtemp(join(tmpdir(), 'mailsift-redis-cache-'));
    dirs.push(dir);
    await writeFile(join(dir, 'in.txt'), 'a@example.com\n');
    const r = await runInProcess(['validate', 'in.txt', '--cache', `redis://:pw-hidden@127.0.0.1:${port}`], { cwd: dir, env: apiEnv(server) });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([`mailsift: --cache: cannot use redis://:***@127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port})`]);
    expect(server.requests).toHaveLength(0);
  });
});
