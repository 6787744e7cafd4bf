import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { RedisLink } from '../../src/redis/link.js';
import { parseRedisUrl } from '../../src/redis/url.js';
import { RedisSessionBudget, RedisSmtpCache } from '../../src/serve/redis-smtp.js';
import { budgetContract, cacheContract } from '../support/smtp-store-contract.js';
import { NO_REDIS, noRedis, REDIS_SERVER, startRedis, type TestRedis } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

// The SMTP check's shared stores against a real redis-server: the same
// contract as the in-memory ones, then what only sharing can show.
let redis: TestRedis;
const links: RedisLink[] = [];
let serial = 0;

beforeAll(async () => {
  if (REDIS_SERVER) redis = await startRedis();
});
afterAll(async () => {
  for (const l of links.splice(0)) await l.close();
  await redis?.stop();
});

/** how many Lua scripts Redis has run so far: each ask for a lease is one */
async function scriptsRun(watcher: Redis): Promise<number> {
  const stats = await watcher.info('commandstats');
  return [...stats.matchAll(/^cmdstat_(?:eval|evalsha):calls=(\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

/** a link of its own (as an instance has), under a prefix no other case uses unless told */
async function link(prefix = `smtp${++serial}:`, log: string[] = []): Promise<RedisLink> {
  const l = await RedisLink.connect(parseRedisUrl(redis.url), { prefix, onLog: (line) => log.push(line), commandTimeoutMs: 300 });
  links.push(l);
  return l;
}

describe.skipIf(noRedis())(`SMTP stores in Redis${NO_REDIS}`, () => {
  // The contract's factories are synchronous: one link, seen under a fresh prefix per
  // store (an object that inherits the link), so that no case sees another's leases.
  let shared: RedisLink;
  beforeAll(async () => {
    if (REDIS_SERVER) shared = await link('contract:');
  });
  const fresh = () => Object.assign(Object.create(shared) as RedisLink, { prefix: `contract${++serial}:` });
  cacheContract('in Redis', (clock) => new RedisSmtpCache(fresh(), clock));
  budgetContract('in Redis', (n) => new RedisSessionBudget(fresh(), n));

  it('a catch-all result and a finding written by one instance are read by another, with their TTL', async () => {
    const [a, b] = [await link('share1:'), await link('share1:')];
    await new RedisSmtpCache(a).setCatchAll('catchall.test', true, 60_000);
    await new RedisSmtpCache(a).setMailbox('ann@ok.test', 'refused', 60_000);
    const other = new RedisSmtpCache(b);
    expect(await other.getCatchAll('catchall.test')).toBe(true);
    expect(await other.getMailbox('ann@ok.test')).toBe('refused');
    expect(await other.getCatchAll('ok.test')).toBeUndefined();
    const watcher = new Redis(redis.url);
    try {
      const ttl = await watcher.pttl('share1:smtp-catchall:catchall.test');
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
      // the address is not written in clear
      const keys = await watcher.keys('share1:*');
      expect(keys).toHaveLength(2);
      expect(keys.join(' ')).not.toContain('ann');
    } finally {
      watcher.disconnect();
    }
  });

  it('perHost sessions to one host across instances; the next waits until one is released', async () => {
    const [a, b] = [new RedisSessionBudget(await link('budget1:'), 1), new RedisSessionBudget(await link('budget1:'), 1)];
    const held = await a.acquire('mx.ok.test');
    let got = false;
    const waiting = b.acquire('mx.ok.test').then((l) => ((got = true), l));
    // another host is not held back
    (await b.acquire('mx.other.test')).release();
    // b keeps asking and is refused: two more asks, and still no lease
    const watcher = new Redis(redis.url);
    try {
      const asked = await scriptsRun(watcher);
      await waitFor(async () => (await scriptsRun(watcher)) >= asked + 2, { what: 'b to ask Redis for the lease twice more' });
    } finally {
      watcher.disconnect();
    }
    expect(got).toBe(false);
    held.release();
    const t0 = Date.now();
    (await waiting).release();
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('a lease whose instance died frees itself after the lease time; a waiter gives up when aborted', async () => {
    const dying = await link('budget2:');
    const a = new RedisSessionBudget(dying, 1, { leaseMs: 400 });
    const b = new RedisSessionBudget(await link('budget2:'), 1, { leaseMs: 400 });
    await a.acquire('mx.ok.test');
    // held past its first lease time: renewed while its instance lives (by Redis's clock, as leases are)
    const watcher = new Redis(redis.url);
    try {
      const expiry = async (): Promise<number> => Number((await watcher.zrange('budget2:smtp-sessions:mx.ok.test', '0', '0', 'WITHSCORES'))[1]);
      const redisNow = async (): Promise<number> => ((t) => Number(t[0]) * 1000 + Math.floor(Number(t[1]) / 1000))(await watcher.time());
      const first = await expiry();
      await waitFor(async () => (await redisNow()) > first + 100 && (await expiry()) > first, { what: "a's lease to outlive its first lease time, renewed" });
    } finally {
      watcher.disconnect();
    }
    const ac = new AbortController();
    const gaveUp = b.acquire('mx.ok.test', ac.signal);
    setTimeout(() => ac.abort(new Error('deadline')), 100);
    await expect(gaveUp).rejects.toThrow('deadline');
    // the instance goes away without releasing (its connection closes, renewals stop)
    dying.client.disconnect();
    const t0 = Date.now();
    (await b.acquire('mx.ok.test')).release();
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThan(100);
    expect(waited).toBeLessThan(1500);
  });

  it('with Redis gone, findings and sessions fall back to memory, logged once; back with Redis', async () => {
    const log: string[] = [];
    const l = await link('down1:', log);
    const cache = new RedisSmtpCache(l);
    const budget = new RedisSessionBudget(l, 1);
    await cache.setCatchAll('before.test', false, 60_000);
    await redis.kill();
    try {
      // what this instance learnt itself stays known
      expect(await cache.getCatchAll('before.test')).toBe(false);
      await cache.setMailbox('ann@ok.test', 'accepted', 60_000);
      expect(await cache.getMailbox('ann@ok.test')).toBe('accepted');
      const t0 = Date.now();
      const lease = await budget.acquire('mx.ok.test');
      expect(Date.now() - t0).toBeLessThan(1000);
      // still one at a time within this instance
      let second = false;
      const next = budget.acquire('mx.ok.test').then((x) => ((second = true), x));
      // another host's lease, asked for later through the same steps: had the second been let through, it would be by now
      (await budget.acquire('mx.other.test')).release();
      expect(second).toBe(false);
      lease.release();
      (await next).release();
      expect(log.filter((line) => /unreachable/.test(line))).toHaveLength(1);
    } finally {
      await redis.restart();
    }
    await waitFor(() => l.state === 'connected', { what: 'the link to go back to Redis', timeoutMs: 3000, intervalMs: 50 });
    const lease = await budget.acquire('mx.back.test');
    const watcher = new Redis(redis.url);
    try {
      expect(await watcher.zcard('down1:smtp-sessions:mx.back.test')).toBe(1);
      lease.release();
      await waitFor(async () => (await watcher.zcard('down1:smtp-sessions:mx.back.test')) === 0, {
        what: 'the lease to be released in Redis',
        timeoutMs: 1000,
      });
    } finally {
      watcher.disconnect();
    }
  });
});
