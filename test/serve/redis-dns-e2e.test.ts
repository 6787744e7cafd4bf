import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { RedisSharedCache } from '../../src/serve/redis-shared-cache.js';
import { RedisLink } from '../../src/redis/link.js';
import { parseRedisUrl } from '../../src/redis/url.js';
import { ANSWER_TTL_MS } from '../../src/engines/local/dns.js';
import { createLocalValidator, type LocalValidator } from '../../src/engines/local/index.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { NO_REDIS, noRedis, REDIS_SERVER, startRedis, type TestRedis } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

// Two engines (as two serve instances have) sharing DNS answers through a real
// redis-server, against a real DNS server that counts the questions it gets.
let redis: TestRedis;
let dns: TestDnsServer;
const closers: (() => Promise<void> | void)[] = [];
const signal = new AbortController().signal;

beforeAll(async () => {
  if (!REDIS_SERVER) return;
  redis = await startRedis();
  dns = await startDnsServer();
});
afterAll(async () => {
  for (const close of closers.splice(0)) await close();
  await dns?.close();
  await redis?.stop();
});

async function instance(prefix: string, onCache?: (from: string) => void): Promise<LocalValidator> {
  const link = await RedisLink.connect(parseRedisUrl(redis.url), { prefix, onLog: () => {} });
  const engine = createLocalValidator({
    dnsServer: dns.address,
    dnsTimeoutMs: 300,
    dnsShared: new RedisSharedCache(link, 'dns'),
    ...(onCache ? { onDnsCache: onCache } : {}),
  });
  closers.push(
    () => engine.close(),
    () => link.close(),
  );
  return engine;
}

const asked = (name: string) => dns.queries.filter((q) => q.endsWith(` ${name}`)).length;

describe.skipIf(noRedis())(`DNS answers shared through Redis${NO_REDIS}`, () => {
  it('a domain one instance looked up is not asked again by another; "DNS did not answer" is not shared', async () => {
    const seen: string[] = [];
    const a = await instance('dnsa:');
    const b = await instance('dnsa:', (from) => seen.push(from));
    const [va] = await a.validate(['jane@mx.test', 'joe@nullmx.test', 'x@silent.test'], signal);
    expect(va!.details.mx).toBe(true);
    expect(asked('mx.test')).toBe(1);
    expect(asked('nullmx.test')).toBe(1);
    const silentBefore = asked('silent.test');
    // the answers are written to Redis after a's reply
    const watcher = new Redis(redis.url);
    closers.push(() => watcher.disconnect());
    await waitFor(async () => (await watcher.exists('dnsa:dns:mx.test', 'dnsa:dns:nullmx.test')) === 2, {
      what: "a's answers to reach Redis",
      timeoutMs: 2000,
    });

    const vb = await b.validate(['ann@mx.test', 'bob@nullmx.test', 'y@silent.test'], signal);
    expect(vb.map((v) => v.details.mx)).toEqual([true, false, undefined]);
    expect(asked('mx.test')).toBe(1);
    expect(asked('nullmx.test')).toBe(1);
    expect(asked('silent.test')).toBeGreaterThan(silentBefore);
    expect(seen.sort()).toEqual(['dns', 'shared', 'shared']);
    // and once in b's own memory, Redis is not asked either
    await b.validate(['cy@mx.test'], signal);
    expect(seen.filter((s) => s === 'memory')).toHaveLength(1);

    const client = new Redis(redis.url);
    try {
      const ttl = await client.pttl('dnsa:dns:mx.test');
      expect(ttl).toBeGreaterThan(ANSWER_TTL_MS - 10_000);
      expect(ttl).toBeLessThanOrEqual(ANSWER_TTL_MS);
      expect(await client.exists('dnsa:dns:silent.test')).toBe(0);
    } finally {
      client.disconnect();
    }
  });

  it('with Redis gone, each engine asks DNS itself and still answers', async () => {
    const a = await instance('dnsb:');
    const b = await instance('dnsb:');
    await redis.kill();
    try {
      const before = asked('gmail.com');
      const [va] = await a.validate(['jane@gmail.com'], signal);
      const [vb] = await b.validate(['joe@gmail.com'], signal);
      expect([va!.details.mx, vb!.details.mx]).toEqual([true, true]);
      expect(asked('gmail.com') - before).toBe(2);
    } finally {
      await redis.restart();
    }
  });
});
