import type { Redis } from '../redis/client.js';
import { MemoryRateLimitStore, type RateLimitStore } from './rate-limit.js';
import type { RedisLink } from '../redis/link.js';

/**
 * One round trip, atomic: the first request of a window creates its key with
 * an expiry at the window's end (plus a second, so a lagging clock on another
 * instance still finds it), so no instance ever counts in a window another has
 * reset. The window number is in the key, so instances never need to agree on
 * when to clear anything.
 */
const WINDOW_SCRIPT = `
local counts = {}
for i, key in ipairs(KEYS) do
  local n = redis.call('INCR', key)
  if n == 1 then redis.call('PEXPIREAT', key, ARGV[1]) end
  counts[i] = n
end
return counts
`;

type WithWindow = Redis & { mailsiftWindows(keys: number, ...keysAndExpiry: (string | number)[]): Promise<number[]> };

/**
 * The per-key and per-IP windows in Redis, shared by every instance. Keys:
 * `<prefix>rl:<window seconds>:<window number>:<bucket>`, the bucket being
 * `key:<sha-256 of the API key>` or `ip:<address>`. When Redis does not
 * answer, this instance counts in its own memory (the insurance) until it does.
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly insurance = new MemoryRateLimitStore();
  private readonly redis: WithWindow;

  constructor(private readonly link: RedisLink) {
    // the number of keys is given at each call: an address alone, or with its network
    link.client.defineCommand('mailsiftWindows', { lua: WINDOW_SCRIPT });
    this.redis = link.client as WithWindow;
  }

  increment(buckets: readonly string[], window: number, windowMs: number): Promise<number[]> {
    const keys = buckets.map((bucket) => `${this.link.prefix}rl:${windowMs / 1000}:${window}:${bucket}`);
    return this.link.run(
      () => this.redis.mailsiftWindows(keys.length, ...keys, (window + 1) * windowMs + 1000),
      () => this.insurance.incrementNow(buckets, window),
    );
  }
}
