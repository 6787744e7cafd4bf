import { UsageError } from '../errors.js';

/*
 * A Redis URL and the secret it may hold, apart from the Redis client: the CLI
 * checks `--redis` and `--cache redis://` without loading ioredis, which costs
 * every run start-up time and about 15 MB it does not need.
 */

/** Every key this instance writes starts with this (`--redis-prefix`). */
export const DEFAULT_REDIS_PREFIX = 'mailsift:';
/** A command slower than this counts as Redis being down (`--redis-timeout`). */
export const DEFAULT_REDIS_TIMEOUT_MS = 1000;

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
export function passwordOf(target: RedisTarget): string | undefined {
  const raw = new URL(target.url).password;
  return raw ? decodeURIComponent(raw) : undefined;
}

/** An error's message fit for a log line: one line, the password (raw or encoded) masked. */
export function describeRedisError(err: unknown, target: RedisTarget): string {
  let text = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
  if (/^NOAUTH\b/.test(text)) text = 'NOAUTH: Redis wants a password; give it in the URL, redis://:PASSWORD@host';
  else if (/^WRONGPASS\b/.test(text)) text = 'WRONGPASS: Redis refused the user name or password';
  // ioredis's words for a connection lost and not back after its retries
  else if (/max retries per request/i.test(text)) text = 'the connection was lost and did not come back';
  else if (/^Command timed out/i.test(text)) text = 'Redis did not answer in time';
  const secret = passwordOf(target);
  if (secret) {
    for (const form of new Set([secret, encodeURIComponent(secret), new URL(target.url).password])) {
      text = text.split(form).join('***');
    }
  }
  return text;
}
