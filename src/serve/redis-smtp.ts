import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from '../redis/client.js';
import {
  MemorySessionBudget,
  MemorySmtpCache,
  type MailboxFinding,
  type SessionBudget,
  type SessionLease,
  type SmtpCache,
} from '../engines/local/smtp/stores.js';
import { RedisSharedCache } from './redis-shared-cache.js';
import type { RedisLink } from '../redis/link.js';
import { every, systemClock, type Clock } from '../time/clock.js';
import { sleep } from '../time/waits.js';

/**
 * The SMTP check's shared state for `serve --redis` (several instances behind one load balancer): catch-all
 * results and mailbox findings, and the session budget per server address, shared by
 * every instance. Each keeps an in-memory twin that answers while Redis does
 * not (RedisLink logs that once): a blink costs a repeated probe or a host
 * briefly getting perHost sessions from each instance, never a failed request.
 */

const FINDINGS: readonly MailboxFinding[] = ['accepted', 'refused', 'disabled', 'full'];

/**
 * Memory first, then Redis (`<prefix>smtp-catchall:<domain>`,
 * `<prefix>smtp-mailbox:<sha-256 of the address>`: no address is written to
 * Redis in clear); what Redis answers is kept in memory for the TTL it has
 * left. Writes go to both, so an instance still knows its own findings while
 * Redis is away.
 */
export class RedisSmtpCache implements SmtpCache {
  private readonly memory: MemorySmtpCache;
  private readonly catchAll: RedisSharedCache;
  private readonly mailbox: RedisSharedCache;

  constructor(link: RedisLink, clock: Clock = systemClock) {
    this.memory = new MemorySmtpCache({ clock });
    this.catchAll = new RedisSharedCache(link, 'smtp-catchall', clock);
    this.mailbox = new RedisSharedCache(link, 'smtp-mailbox', clock);
  }

  async getCatchAll(domain: string): Promise<boolean | undefined> {
    const mine = await this.memory.getCatchAll(domain);
    if (mine !== undefined) return mine;
    const shared = await this.catchAll.get(domain);
    if (shared?.value !== 'true' && shared?.value !== 'false') return undefined;
    const value = shared.value === 'true';
    await this.memory.setCatchAll(domain, value, shared.ttlMs);
    return value;
  }

  async setCatchAll(domain: string, catchAll: boolean, ttlMs: number): Promise<void> {
    await this.memory.setCatchAll(domain, catchAll, ttlMs);
    await this.catchAll.set(domain, String(catchAll), ttlMs);
  }

  async getMailbox(email: string): Promise<MailboxFinding | undefined> {
    const mine = await this.memory.getMailbox(email);
    if (mine !== undefined) return mine;
    const shared = await this.mailbox.get(addressKey(email));
    const finding = FINDINGS.find((f) => f === shared?.value);
    if (!finding) return undefined;
    await this.memory.setMailbox(email, finding, shared!.ttlMs);
    return finding;
  }

  async setMailbox(email: string, finding: MailboxFinding, ttlMs: number): Promise<void> {
    await this.memory.setMailbox(email, finding, ttlMs);
    await this.mailbox.set(addressKey(email), finding, ttlMs);
  }
}

function addressKey(email: string): string {
  return createHash('sha256').update(email).digest('hex');
}

/**
 * Takes a lease when fewer than ARGV[3] unexpired ones are held.
 * KEYS[1] a sorted set of lease ids scored by their expiry (Redis's clock, ms);
 * ARGV: lease id, lease ms, limit. Redis's own clock, so that instances whose
 * clocks disagree still agree on when a lease has run out. 1 taken, 0 full.
 */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ms = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], now + ms, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ms)
return 1`;

/** Pushes a held lease's expiry on; 0 when it has already run out (and may have been taken). */
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ms = tonumber(ARGV[2])
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + ms, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ms)
return 1`;

/** A session's lease outlives the instance that died holding it by at most this long (`--smtp-lease`). */
export const DEFAULT_LEASE_MS = 10_000;
/** a waiter asks Redis again after this long, growing to POLL_MAX_MS */
const POLL_MIN_MS = 20;
const POLL_MAX_MS = 250;

type Scripted = Redis & {
  mailsiftLeaseAcquire(key: string, id: string, ms: number, limit: number): Promise<number>;
  mailsiftLeaseRenew(key: string, id: string, ms: number): Promise<number>;
};

/**
 * The session limit per server address across instances: a sorted set per
 * address (`<prefix>smtp-sessions:<address>`; an MX, a CNAME and a `mail.` name
 * of one machine share it) of leases that expire unless renewed, so a
 * lease held by an instance that crashed frees itself within `leaseMs`. A live
 * session renews its lease every third of that. Waiting is polling with a
 * short, capped backoff (Redis has no blocking wait on a sorted set's size);
 * an in-process budget in front keeps the waiters of one instance in line and
 * is all there is while Redis is unreachable.
 */
export class RedisSessionBudget implements SessionBudget {
  private readonly local: MemorySessionBudget;
  private readonly instance = randomBytes(6).toString('hex');
  private serial = 0;
  private readonly leaseMs: number;
  private readonly clock: Clock;

  constructor(
    private readonly link: RedisLink,
    readonly perHost: number,
    options: { leaseMs?: number; clock?: Clock } = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.local = new MemorySessionBudget(perHost);
    this.leaseMs = Math.max(100, Math.round(options.leaseMs ?? DEFAULT_LEASE_MS));
    const client = link.client as Scripted;
    if (typeof client.mailsiftLeaseAcquire !== 'function') {
      client.defineCommand('mailsiftLeaseAcquire', { numberOfKeys: 1, lua: ACQUIRE });
      client.defineCommand('mailsiftLeaseRenew', { numberOfKeys: 1, lua: RENEW });
    }
  }

  async acquire(host: string, signal?: AbortSignal): Promise<SessionLease> {
    const mine = await this.local.acquire(host, signal);
    const key = `${this.link.prefix}smtp-sessions:${host.toLowerCase()}`;
    const id = `${this.instance}:${++this.serial}`;
    try {
      for (let wait = POLL_MIN_MS; ; wait = Math.min(POLL_MAX_MS, wait * 1.5)) {
        signal?.throwIfAborted();
        const got = await this.link.run(
          async (redis) => ((await (redis as Scripted).mailsiftLeaseAcquire(key, id, this.leaseMs, this.perHost)) === 1 ? 'taken' : 'full'),
          () => 'unshared' as const,
        );
        if (got === 'unshared') return mine;
        if (got === 'taken') return this.held(key, id, mine);
        // a little jitter, so that instances polling one host do not ask in step
        // a waiter does not keep a server that is shutting down alive
        await sleep(this.clock, wait * (0.75 + Math.random() / 2), signal, { ref: false });
      }
    } catch (err) {
      mine.release();
      throw err;
    }
  }

  private held(key: string, id: string, mine: SessionLease): SessionLease {
    const stopRenewing = every(
      this.clock,
      this.leaseMs / 3,
      () =>
        void this.link.run(
          (redis) => (redis as Scripted).mailsiftLeaseRenew(key, id, this.leaseMs),
          () => 0,
        ),
      { ref: false },
    );
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        stopRenewing();
        // while Redis is away the lease runs out by itself
        void this.link.run(
          (redis) => redis.zrem(key, id),
          () => 0,
        );
        mine.release();
      },
    };
  }
}
