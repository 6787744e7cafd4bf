import { addressKey } from '../codec/address-key.js';
import { UsageError } from '../errors.js';
import { connectRedis } from '../redis/client.js';
import { describeRedisError, type RedisTarget } from '../redis/url.js';
import type { Verdict } from '../verdict.js';
import type { JobBinding } from './binding.js';
import type { Cache } from './cache.js';
import { suffices, TailPool, VerdictEncoder, type Evidence } from '../codec/verdict-encoding.js';
import { keptBy } from '../reason.js';
import { UnusedRecords } from './unused.js';
import { systemClock, type Clock } from '../time/clock.js';

/**
 * `--cache redis://host:port[/db]`: the cross-run cache shared by machines (cron
 * jobs on several hosts, one API key). Same contract as the file cache: verdicts
 * with the time they were obtained, reused while younger than --cache-ttl,
 * asked after the journal, loaded once when the run starts.
 *
 * One Redis hash per job binding, `mailsift:verdicts:<binding fingerprint>`:
 * the fingerprint covers the engine and the API base URL (never the key), so
 * two services never share entries. Field: the address key (see addressKey);
 * value: the file cache's line, `[<epoch seconds>,"address",…,"<checksum>"]`.
 * Reading back, a value must hold its checksum, decode and be for its own
 * field, or it is damage: nothing invented. Stale fields, damaged ones and
 * those of the first format (`<epoch seconds> [<array>]`, no checksum) are
 * deleted only if unchanged since read (a script), so a run never removes what
 * another has just written; the hash expires one TTL after the last write.
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
  /** what this run's verdicts rest on: a record resting on less is asked again */
  evidence: Evidence;
  /** what records are dated and aged by (a fixed one in tests) */
  clock?: Clock;
  /**
   * told once, in one line, when Redis stops answering mid-run: the run goes on
   * without the cache (see record)
   */
  onLost?: (line: string) => void;
}

/** A value of the first format: `<epoch seconds> <array>`. */
const OLDER_VALUE = /^\d+ \[/;

export async function openRedisCache(target: RedisTarget, o: RedisCacheOptions): Promise<Cache> {
  const clock = o.clock ?? systemClock;
  const now = (): number => clock.now();
  const key = `${CACHE_KEY_PREFIX}${o.binding.fingerprint}`;
  // a blip mid-run is ridden out by ioredis's queue and retries; an outage, or a Redis that
  // hangs without closing (stopped, swapping), fails record(), and the run goes on without it
  const client = await connectRedis(target, '--cache', { maxRetriesPerRequest: 10, commandTimeout: COMMAND_TIMEOUT_MS });
  const tails = new TailPool(true);
  const unused = new UnusedRecords();
  /** by field: the verdict's spelling and tail, and whether this run reuses it */
  const index = new Map<string, { email: string; tail: string; reuse: boolean }>();
  try {
    const stale: string[] = [];
    let cursor = '0';
    do {
      const [next, flat] = await client.hscan(key, cursor, 'COUNT', SCAN_COUNT);
      cursor = next;
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const field = flat[i]!;
        const value = flat[i + 1]!;
        const read = OLDER_VALUE.test(value) ? undefined : tails.read(value);
        if (read === undefined || read.kind === 'older') {
          unused.olderFor(field);
          stale.push(field, value);
          continue;
        }
        // damage, or a value filed under another address's field
        if (read.kind === 'damaged' || addressKey(read.email) !== field || read.prefix! > now() / 1000 + 86_400) {
          unused.damaged++;
          stale.push(field, value);
          continue;
        }
        if (now() - read.prefix! * 1000 >= o.ttlMs) {
          stale.push(field, value);
          continue;
        }
        const enough = suffices(tails.evidence(read.tail), o.evidence);
        if (!enough) unused.weakerFor(field);
        index.set(field, { email: read.email, tail: read.tail, reuse: enough && keptBy('cache', tails.verdict(read.email, read.tail)) });
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
  let fresh = 0;
  for (const e of index.values()) if (e.reuse) fresh++;
  const encoder = new VerdictEncoder(o.evidence);
  /** Redis stopped answering: nothing more is sent to it this run */
  let lost = false;
  let unstored = 0;
  return {
    path: target.shown,
    fresh,
    compacted: false,
    unused: unused.result((field) => index.get(field)?.reuse === true),
    get unstored() {
      return unstored;
    },
    get(email) {
      if (fresh === 0) return undefined;
      const hit = index.get(addressKey(email));
      // under this row's spelling: the stored one may differ in case, or in the form of its domain
      return hit?.reuse ? { verdict: tails.verdict(email, hit.tail), source: 'cache' } : undefined;
    },
    async record(verdicts: readonly Verdict[]) {
      const ts = Math.floor(now() / 1000);
      const fields: string[] = [];
      for (const v of verdicts) {
        // what a cache keeps (keptBy): never a row without a verdict, nor an unknown
        if (keptBy('cache', v)) fields.push(addressKey(v.email), encoder.line(v, ts));
      }
      if (fields.length === 0) return;
      if (lost) {
        unstored += fields.length / 2;
        return;
      }
      try {
        await client
          .multi()
          .hset(key, ...fields)
          .expire(key, ttlSeconds)
          .exec();
      } catch (err) {
        // A cache is an optimisation: a Redis that went away (ioredis gave up after its
        // retries) costs the next runs these verdicts, never this run its output.
        // Nothing more is sent to it: each try would wait out the retries again.
        unstored += fields.length / 2;
        if (lost) return; // another batch's write failed with it: said once
        lost = true;
        o.onLost?.(
          `--cache: ${target.shown} stopped answering (${describeRedisError(err, target)}); the run goes on without the cache, and what it pays for from now on is not stored there`,
        );
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
