import { connectRedis, type Redis } from './client.js';
import { every, systemClock } from '../time/clock.js';
import { withTimeout } from '../time/waits.js';
import { DEFAULT_REDIS_PREFIX, DEFAULT_REDIS_TIMEOUT_MS, describeRedisError, type RedisTarget } from './url.js';

/**
 * The one connection an instance of `serve --redis` keeps to Redis, and what it
 * does when Redis fails: like rate-limiter-flexible's insuranceLimiter, every
 * call names its in-memory insurance, which answers instead whenever Redis does
 * not (refused, gone, or slower than the command timeout). The first failure is
 * logged once; from then on Redis is not asked (requests pay no timeout) and a
 * PING every second finds out when it answers again.
 */

const PROBE_EVERY_MS = 1000;

export type RedisState = 'connected' | 'unreachable';

export interface RedisLinkOptions {
  /** the key prefix, `mailsift:` by default */
  prefix?: string;
  commandTimeoutMs?: number;
  /** one line per change of state */
  onLog: (line: string) => void;
  /** told of every change of state (metrics) */
  onState?: (state: RedisState) => void;
}

export class RedisLink {
  readonly prefix: string;
  private up = true;
  /** stops the probe of an unreachable Redis */
  private stopProbing: (() => void) | undefined;
  private closed = false;

  private constructor(
    readonly client: Redis,
    readonly target: RedisTarget,
    private readonly options: RedisLinkOptions,
  ) {
    this.prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
    // without a listener ioredis prints every reconnect failure itself
    client.on('error', (err: unknown) => this.down(err));
    client.on('close', () => this.down(new Error('connection closed')));
  }

  /**
   * Connects and asks PING, within a few seconds; a URL nothing answers at (or
   * that Redis refuses) is the user's to fix: a one-line UsageError.
   */
  static async connect(target: RedisTarget, options: RedisLinkOptions): Promise<RedisLink> {
    const client = await connectRedis(target, '--redis', {
      // fail at once instead of queueing while disconnected: the insurance answers
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS,
    });
    return new RedisLink(client, target, options);
  }

  get state(): RedisState {
    return this.up ? 'connected' : 'unreachable';
  }

  /** `command` against Redis; `insurance` (memory) when Redis is down or fails now. Never rejects for Redis's sake. */
  async run<T>(command: (redis: Redis) => Promise<T>, insurance: () => T | Promise<T>): Promise<T> {
    if (!this.up) return insurance();
    try {
      return await command(this.client);
    } catch (err) {
      this.down(err);
      return insurance();
    }
  }

  private down(err: unknown): void {
    if (!this.up || this.closed) return;
    this.up = false;
    this.options.onLog(
      `Redis at ${this.target.shown} is unreachable (${describeRedisError(err, this.target)}): rate limits and caches are per instance until it answers again`,
    );
    this.options.onState?.('unreachable');
    this.stopProbing = every(
      systemClock,
      PROBE_EVERY_MS,
      () =>
        void this.client.ping().then(
          () => this.back(),
          () => {},
        ),
      { ref: false },
    );
  }

  private back(): void {
    if (this.up || this.closed) return;
    this.up = true;
    this.stopProbing?.();
    this.options.onLog(`Redis at ${this.target.shown} answers again: rate limits and caches are shared again`);
    this.options.onState?.('connected');
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopProbing?.();
    try {
      if (this.up) await withTimeout(systemClock, this.client.quit(), 1000);
    } catch {
      // going away anyway
    }
    if (this.client.status !== 'end') this.client.disconnect();
  }
}
