import { Redis } from 'ioredis';
import { UsageError } from '../errors.js';
import { DEFAULT_REDIS_PREFIX, DEFAULT_REDIS_TIMEOUT_MS, describeRedisError, type RedisTarget } from '../stores/redis-url.js';

export { DEFAULT_REDIS_PREFIX, DEFAULT_REDIS_TIMEOUT_MS, describeRedisError, maskPasswordInArgv, parseRedisUrl, type RedisTarget } from '../stores/redis-url.js';

/**
 * The one connection an instance of `serve --redis` keeps to Redis, and what it
 * does when Redis fails: like rate-limiter-flexible's insuranceLimiter, every
 * call names its in-memory insurance, which answers instead whenever Redis does
 * not (refused, gone, or slower than the command timeout). The first failure is
 * logged once; from then on Redis is not asked (requests pay no timeout) and a
 * PING every second finds out when it answers again.
 */

const PROBE_EVERY_MS = 1000;
const STARTUP_TIMEOUT_MS = 3000;

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
  private probe: NodeJS.Timeout | undefined;
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
    let started = false;
    const client = new Redis(target.url, {
      lazyConnect: true,
      // fail at once instead of queueing while disconnected: the insurance answers
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS,
      connectTimeout: STARTUP_TIMEOUT_MS,
      disconnectTimeout: 500,
      // at start-up one try; afterwards keep reconnecting, at most a second apart
      retryStrategy: (times) => (started ? Math.min(times * 100, 1000) : null),
      ...(target.tls ? { tls: {} } : {}),
    });
    // connect() itself rejects with just "Connection is closed."; the cause comes as an event
    let cause: unknown;
    const remember = (err: unknown): void => void (cause ??= err);
    client.on('error', remember);
    try {
      await withTimeout(client.connect().then(() => client.ping()), STARTUP_TIMEOUT_MS);
    } catch (err) {
      // on a stream already closed ioredis would arm a 2 s timer that keeps us from exiting
      if (client.status !== 'end') client.disconnect();
      const why = cause ?? err;
      throw new UsageError(`--redis: cannot use ${target.shown} (${describeRedisError(why, target)})`, { cause: why });
    }
    client.off('error', remember);
    started = true;
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
    this.probe = setInterval(() => {
      this.client.ping().then(
        () => this.back(),
        () => {},
      );
    }, PROBE_EVERY_MS);
    this.probe.unref();
  }

  private back(): void {
    if (this.up || this.closed) return;
    this.up = true;
    clearInterval(this.probe);
    this.options.onLog(`Redis at ${this.target.shown} answers again: rate limits and caches are shared again`);
    this.options.onState?.('connected');
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.probe);
    try {
      if (this.up) await withTimeout(this.client.quit(), 1000);
    } catch {
      // going away anyway
    }
    if (this.client.status !== 'end') this.client.disconnect();
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: 'ETIMEDOUT' })), ms);
    work.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e: unknown) => (clearTimeout(timer), reject(e)),
    );
  });
}
