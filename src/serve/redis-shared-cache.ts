import { systemClock, type Clock } from '../time/clock.js';
import type { SharedCache } from '../engines/local/shared-cache.js';
import type { RedisLink } from '../redis/link.js';

/**
 * The engine's shared cache in Redis (`<prefix><namespace>:<key>`). One GET
 * per lookup: the value is stored with its own expiry time so the reader
 * learns what TTL is left without a second command. While Redis is down every
 * get is a miss and every set is dropped: each instance then has its own
 * in-memory cache only.
 */
export class RedisSharedCache implements SharedCache {
  constructor(
    private readonly link: RedisLink,
    private readonly namespace: string,
    private readonly clock: Clock = systemClock,
  ) {}

  private key(key: string): string {
    return `${this.link.prefix}${this.namespace}:${key}`;
  }

  get(key: string): Promise<{ value: string; ttlMs: number } | undefined> {
    return this.link.run(
      async (redis) => {
        const raw = await redis.get(this.key(key));
        if (raw === null) return undefined;
        const cut = raw.indexOf(' ');
        const expires = Number(raw.slice(0, cut));
        const ttlMs = expires - this.clock.now();
        // something else's value, or one Redis has not yet expired: a miss
        if (cut < 0 || !Number.isFinite(expires) || ttlMs <= 0) return undefined;
        return { value: raw.slice(cut + 1), ttlMs };
      },
      () => undefined,
    );
  }

  set(key: string, value: string, ttlMs: number): Promise<void> {
    const expires = this.clock.now() + ttlMs;
    return this.link.run(
      async (redis) => {
        await redis.set(this.key(key), `${expires} ${value}`, 'PX', Math.max(1, Math.round(ttlMs)));
      },
      () => undefined,
    );
  }
}
