import type { Redis, RedisOptions } from 'ioredis';
import { UsageError } from '../errors.js';
import { describeRedisError, type RedisTarget } from './url.js';
import { systemClock } from '../time/clock.js';
import { withTimeout } from '../time/waits.js';

export type { Redis };

/** how long the first connection and its PING may take before the URL is judged unusable */
export const CONNECT_TIMEOUT_MS = 3000;

/**
 * The one way mailsift opens a Redis connection, for `--cache redis://` and
 * `serve --redis` alike. ioredis is loaded here, when a run asks for Redis:
 * every other run is spared its start-up time and memory.
 *
 * One try at start-up (a URL nothing answers at, or that Redis refuses, is the
 * user's to fix: a one-line UsageError naming `flag`); once connected, ioredis
 * reconnects, at most a second apart. `options` are the caller's own (queueing,
 * retries, command timeout).
 */
export async function connectRedis(target: RedisTarget, flag: string, options: RedisOptions = {}): Promise<Redis> {
  // the default export, module.exports: all that node and the bundle (a CommonJS package in a
  // chunk of its own) both give; here it is the Redis class
  const Redis = (await import('ioredis')).default as unknown as typeof import('ioredis').Redis;
  let started = false;
  const client = new Redis(target.url, {
    lazyConnect: true,
    retryStrategy: (times) => (started ? Math.min(times * 100, 1000) : null),
    connectTimeout: CONNECT_TIMEOUT_MS,
    disconnectTimeout: 500,
    ...options,
    ...(target.tls ? { tls: {} } : {}),
  });
  // connect() itself rejects with just "Connection is closed."; the cause comes as an event.
  // The listener stays: without one ioredis prints every later reconnect failure itself.
  let cause: unknown;
  client.on('error', (err: unknown) => void (started || (cause ??= err)));
  try {
    await withTimeout(
      systemClock,
      client.connect().then(() => client.ping()),
      CONNECT_TIMEOUT_MS,
    );
  } catch (err) {
    // on a stream already closed ioredis would arm a 2 s timer that keeps us from exiting
    if (client.status !== 'end') client.disconnect();
    const why = cause ?? err;
    throw new UsageError(`${flag}: cannot use ${target.shown} (${describeRedisError(why, target)})`, { cause: why });
  }
  started = true;
  return client;
}
