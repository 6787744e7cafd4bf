import { addressKey } from '../codec/address-key.js';
import { UsageError } from '../errors.js';
import { connectRedis } from '../redis/client.js';
import { describeRedisError, maskPasswordInArgv, parseRedisUrl } from '../redis/url.js';
import type { Verdict } from '../verdict.js';
import type { JobBinding } from './binding.js';
import type { Cache } from './cache.js';
import { decodeVerdict, encodeVerdict } from '../codec/verdict-encoding.js';

/**
 * `--cache redis://host:port[/db]`: the cross-run cache shared by machines (cron
 * jobs on several hosts, one API key). Same contract as the file cache: verdicts
 * with the time they were obtained, reused while younger than --cache-ttl,
 * asked after the journal, loaded once when the run starts.
 *
 * One Redis hash per job binding, `mailsift:verdicts:<binding fingerprint>`:
 * the fingerprint covers the engine and the API base URL (never the key), so
 * two services never share entries. Field: the address key (exact local part,
 * lower-cased domain); value: `<epoch seconds> <the journal's JSON array>`.
 * Reading back, a value must decode and be for its own field, or it is ignored:
 * nothing invented. Stale fields are deleted only if unchanged since read (a
 * script), so a run never removes what another has just written; the hash
 * expires one TTL after the last write.
 */
export const CACHE_KEY_PREFIX = 'mailsift:verdicts:';
/** a command unanswered this long: Redis hangs (a 1000-field HSET takes it milliseconds) */
const COMMAND_TIMEOUT_MS = 5000;
const SCAN_COUNT = 1000;

const DELETE_IF_UNCHANGED = `
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then n = n + redis.call('HDEL', KEYS[1], ARGV[i]) end
end
return n
`;

export interface RedisCacheOptions {
  ttlMs: number;
  binding: JobBinding;
  now?: () => number;
  /**
   * told once, in one line, when Redis stops answering mid-run: the run goes on
   * without the cache (see record)
   */
  onLost?: (line: string) => void;
}

export async function openRedisCache(url: string, o: RedisCacheOptions): Promise<Cache> {
  const target = parseRedisUrl(url, '--cache');
  maskPasswordInArgv(target);
  const now = o.now ?? Date.now;
  const key = `${CACHE_KEY_PREFIX}${o.binding.fingerprint}`;
  // a blip mid-run is ridden out by ioredis's queue and retries; an outage, or a Redis that
  // hangs without closing (stopped, swapping), fails record(), and the run goes on without it
  const client = await connectRedis(target, '--cache', { maxRetriesPerRequest: 10, commandTimeout: COMMAND_TIMEOUT_MS });
  const index = new Map<string, { ts: number; value: string }>();
  try {
    const stale: string[] = [];
    let cursor = '0';
    do {
      const [next, flat] = await client.hscan(key, cursor, 'COUNT', SCAN_COUNT);
      cursor = next;
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const field = flat[i]!;
        const value = flat[i + 1]!;
        const ts = Number(value.slice(0, value.indexOf(' ')));
        if (!Number.isSafeInteger(ts) || ts < 0) continue;
        if (now() - ts * 1000 >= o.ttlMs) {
          stale.push(field, value);
          continue;
        }
        index.set(field, { ts, value });
      }
    } while (cursor !== '0');
    for (let i = 0; i < stale.length; i += 2 * SCAN_COUNT) {
      await client.eval(DELETE_IF_UNCHANGED, 1, key, ...stale.slice(i, i + 2 * SCAN_COUNT));
    }
  } catch (err) {
    client.disconnect();
    throw new UsageError(`--cache: cannot read ${target.shown} (${describeRedisError(err, target)})`, { cause: err });
  }

  const ttlSeconds = Math.max(1, Math.ceil(o.ttlMs / 1000));
  let closed = false;
  /** Redis stopped answering: nothing more is sent to it this run */
  let lost = false;
  let unstored = 0;
  return {
    path: target.shown,
    fresh: index.size,
    compacted: false,
    get unstored() {
      return unstored;
    },
    get(email) {
      if (index.size === 0) return undefined;
      const field = addressKey(email);
      const hit = index.get(field);
      if (!hit) return undefined;
      const verdict = decode(hit.value, field);
      if (!verdict) {
        index.delete(field);
        return undefined;
      }
      // the stored address may differ from this row's in the case of its domain
      return { verdict: { ...verdict, email }, source: 'cache' };
    },
    async record(verdicts: readonly Verdict[]) {
      const ts = Math.floor(now() / 1000);
      const fields: string[] = [];
      for (const v of verdicts) {
        if (v.error) continue; // no verdict: a later run must ask again
        fields.push(addressKey(v.email), `${ts} ${JSON.stringify(encodeVerdict(v))}`);
      }
      if (fields.length === 0) return;
      if (lost) {
        unstored += fields.length / 2;
        return;
      }
      try {
        await client.multi().hset(key, ...fields).expire(key, ttlSeconds).exec();
      } catch (err) {
        // A cache is an optimisation: a Redis that went away (ioredis gave up after its
        // retries) costs the next runs these verdicts, never this run its output.
        // Nothing more is sent to it: each try would wait out the retries again.
        unstored += fields.length / 2;
        if (lost) return; // another batch's write failed with it: said once
        lost = true;
        o.onLost?.(`--cache: ${target.shown} stopped answering (${describeRedisError(err, target)}); the run goes on without the cache, and what it pays for from now on is not stored there`);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      if (lost) {
        client.disconnect(); // a QUIT would wait out ioredis's retries once more
        return;
      }
      try {
        await client.quit();
      } catch {
        client.disconnect();
      }
    },
  };
}

/** The verdict of a stored value, if it is one and is for `field`. */
function decode(value: string, field: string): Verdict | undefined {
  try {
    const v = decodeVerdict(JSON.parse(value.slice(value.indexOf(' ') + 1)));
    return v && addressKey(v.email) === field ? v : undefined;
  } catch {
    return undefined;
  }
}
