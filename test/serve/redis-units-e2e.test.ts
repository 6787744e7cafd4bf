import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { FixedWindowLimiter, type RateDecision } from '../../src/serve/rate-limit.js';
import { RedisRateLimitStore } from '../../src/serve/redis-rate-limit.js';
import { RedisLink } from '../../src/redis/link.js';
import { describeRedisError, parseRedisUrl } from '../../src/redis/url.js';
import { NO_REDIS, noRedis, REDIS_SERVER, startRedis, type TestRedis } from '../support/redis-server.js';
import { clockReading } from '../support/fake-clock.js';

describe('parseRedisUrl', () => {
  it('masks the password wherever the URL is shown', () => {
    const t = parseRedisUrl('redis://app:p%40ss-w0rd@cache.internal:6380/2');
    expect(t.shown).toBe('redis://app:***@cache.internal:6380/2');
    expect(t.tls).toBe(false);
    expect(parseRedisUrl('rediss://:only-pass@10.0.0.5').shown).toBe('rediss://:***@10.0.0.5');
    expect(parseRedisUrl('redis://127.0.0.1:6379').shown).toBe('redis://127.0.0.1:6379');
  });

  it.each([
    ['redis://:secret-pw@[bad', /not a URL/],
    ['https://:secret-pw@host', /scheme "https"/],
    ['redis://:secret-pw@host/db0', /database number/],
    ['secret-pw', /not a URL/],
  ])('%j is a UsageError that does not echo the password', (url, message) => {
    const err = (() => {
      try {
        parseRedisUrl(url);
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(UsageError);
    expect(err!.message).toMatch(message);
    expect(err!.message).not.toContain('secret-pw');
  });

  it('scrubs the password, raw or percent-encoded, out of any error text', () => {
    const t = parseRedisUrl('redis://:p%40ss@h');
    expect(describeRedisError(new Error('auth p@ss failed, p%40ss\nstack'), t)).toBe('auth *** failed, ***');
  });
});

// The same clock through both stores gives the same headers: one limiter, two stores.
let redis: TestRedis;
let link: RedisLink;
beforeAll(async () => {
  if (!REDIS_SERVER) return;
  redis = await startRedis();
  link = await RedisLink.connect(parseRedisUrl(redis.url), { prefix: 'units:', onLog: () => {} });
});
afterAll(async () => {
  await link?.close();
  await redis?.stop();
});

describe.skipIf(noRedis())(`FixedWindowLimiter over Redis${NO_REDIS}`, () => {
  it('decides exactly as over memory: same counts, same reset, same Retry-After, windows aligned to the epoch', async () => {
    const windowMs = 5000;
    // a real window start (Redis expires keys by the real clock), then steps inside it and into the next
    const start = (Math.floor(Date.now() / windowMs) + 1) * windowMs;
    const steps = [start + 100, start + 900, start + 2500, start + 4999, start + 5000, start + 5001];
    let now = 0;
    const memory = new FixedWindowLimiter(
      { requests: 3, seconds: 5 },
      clockReading(() => now),
    );
    const shared = new FixedWindowLimiter(
      { requests: 3, seconds: 5 },
      clockReading(() => now),
      new RedisRateLimitStore(link),
    );
    const a: RateDecision[] = [];
    const b: RateDecision[] = [];
    for (const t of steps) {
      now = t;
      for (const bucket of ['key:x', 'key:x', 'ip:1']) {
        a.push(await memory.take(bucket));
        b.push(await shared.take(bucket));
      }
    }
    expect(b).toEqual(a);
    expect(a.filter((d) => !d.allowed)).not.toHaveLength(0);
    expect(new Set(a.map((d) => d.resetEpochSeconds))).toEqual(new Set([start / 1000 + 5, start / 1000 + 10]));
  });
});

describe.skipIf(noRedis())(`an address and its network counted as one step, over several instances${NO_REDIS}`, () => {
  it('concurrent requests through four instances: exactly the limit gets through, each told its own Remaining', async () => {
    // Counted apart, two instances' requests could reach the two counts in different
    // orders: one refused by either count, fewer than the limit through, two told one Remaining.
    const links = await Promise.all(Array.from({ length: 4 }, () => RedisLink.connect(parseRedisUrl(redis.url), { prefix: 'net-once:', onLog: () => {} })));
    try {
      const now = Date.now();
      const limiters = links.map(
        (l) =>
          new FixedWindowLimiter(
            { requests: 4, seconds: 3600 },
            clockReading(() => now),
            new RedisRateLimitStore(l),
          ),
      );
      for (let round = 0; round < 10; round++) {
        const decisions = await Promise.all(Array.from({ length: 12 }, (_, i) => limiters[i % 4]!.take(`ip:10.0.0.${round}`, `net:10.0.${round}.0/24`)));
        const through = decisions.filter((d) => d.allowed);
        expect(through.map((d) => d.remaining).sort()).toEqual([0, 1, 2, 3]);
        expect(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0)).toBe(true);
      }
    } finally {
      await Promise.all(links.map((l) => l.close()));
    }
  });
});
