import { Redis } from 'ioredis';
import { UsageError } from '../errors.js';

/**
 * The one connection an instance of `serve --redis` keeps to Redis, and what it
 * does when Redis fails: like rate-limiter-flexible's insuranceLimiter, every
 * call names its in-memory insurance, which answers instead whenever Redis does
 * not (refused, gone, or slower than the command timeout). The first failure is
 * logged once; from then on Redis is not asked (requests pay no timeout) and a
 * PING every second finds out when it answers again.
 */

/** Every key this instance writes starts with this (`--redis-prefix`). */
export const DEFAULT_REDIS_PREFIX = 'mailsift:';
/** A command slower than this counts as Redis being down (`--redis-timeout`). */
export const DEFAULT_REDIS_TIMEOUT_MS = 1000;
const PROBE_EVERY_MS = 1000;
const STARTUP_TIMEOUT_MS = 3000;

export interface RedisTarget {
  /** as given; holds the password, if any: never print it */
  url: string;
  /** the URL with its password replaced by `***`: fit for logs and errors */
  shown: string;
  tls: boolean;
}

const USAGE = 'expected redis://[user:password@]host[:port][/db] or rediss://…';

/**
 * Checks a `--redis` URL without ever echoing it whole: an unparseable one may
 * hold a password we cannot find to mask.
 */
export function parseRedisUrl(text: string, flag = '--redis'): RedisTarget {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new UsageError(`${flag}: not a URL (${USAGE})`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new UsageError(`${flag}: scheme "${url.protocol.replace(/:$/, '')}" is not redis or rediss (${USAGE})`);
  }
  if (!url.hostname) throw new UsageError(`${flag}: no host (${USAGE})`);
  if (!/^\/?(\d{1,2})?$/.test(url.pathname)) throw new UsageError(`${flag}: the path must be a database number (${USAGE})`);
  return { url: text.trim(), shown: redactUrl(url), tls: url.protocol === 'rediss:' };
}

function redactUrl(url: URL): string {
  const copy = new URL(url.href);
  if (copy.password) copy.password = '***';
  return copy.href.replace(/\/$/, '');
}

/** The password of `target`, percent-decoded, for scrubbing messages; undefined when none. */
function passwordOf(target: RedisTarget): string | undefined {
  const raw = new URL(target.url).password;
  return raw ? decodeURIComponent(raw) : undefined;
}

/** An error's message fit for a log line: one line, the password (raw or encoded) masked. */
export function describeRedisError(err: unknown, target: RedisTarget): string {
  let text = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
  if (/^NOAUTH\b/.test(text)) text = 'NOAUTH: Redis wants a password; give it in the URL, redis://:PASSWORD@host';
  else if (/^WRONGPASS\b/.test(text)) text = 'WRONGPASS: Redis refused the user name or password';
  const secret = passwordOf(target);
  if (secret) {
    for (const form of new Set([secret, encodeURIComponent(secret), new URL(target.url).password])) {
      text = text.split(form).join('***');
    }
  }
  return text;
}

/**
 * A Redis password given on the command line is visible to every user of the
 * machine (ps, /proc): like curl with -u, overwrite it in our argv at once.
 * True when it was there (the caller may say that the environment is safer).
 */
export function maskPasswordInArgv(target: RedisTarget): boolean {
  if (!new URL(target.url).password) return false;
  const args = process.argv.slice(2);
  if (!args.some((a) => a.includes(target.url))) return false;
  process.title = ['mailsift', ...args.map((a) => a.split(target.url).join(target.shown))].join(' ');
  return true;
}

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
