import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { UsageError } from '../errors.js';
import { generateKey, parseKeysFile } from '../serve/keys.js';
import { parseRateLimit, type RateLimit } from '../serve/rate-limit.js';
import { DEFAULT_REDIS_PREFIX, DEFAULT_REDIS_TIMEOUT_MS, parseRedisUrl, type RedisTarget } from '../redis/url.js';
import type { Shape } from '../serve/render.js';
// the CLI layer declares the flags; only their type comes here (no commander in src/serve)
import type { ServeFlags } from './serve-command.js';

export interface ServeConfig {
  host: string;
  port: number;
  keys: string[];
  /** set when no keys file was given: the one key of this run, to show the user once */
  generatedKey?: string;
  rateLimit: RateLimit;
  shape: Shape;
  tls?: { cert: Buffer; key: Buffer };
  dns: boolean;
  dnsServer?: string;
  dnsTimeoutMs: number;
  redis?: { target: RedisTarget; prefix: string; timeoutMs: number };
  metrics: boolean;
  drainTimeoutMs: number;
}

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h.startsWith('::ffff:127.');
}

function integer(text: string, flag: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || n < min || n > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, got "${text}"`);
  }
  return n;
}

async function readUserFile(path: string, flag: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new UsageError(`${flag}: cannot read ${path} (${code})`, { cause: err });
  }
}

/** The serve settings the flags alone decide: everything but what the named files hold. */
export type ServeSettings = Omit<ServeConfig, 'keys' | 'generatedKey' | 'tls'>;

/** Checks the flags, alone and together, reading no file; every problem is a UsageError. */
export function checkServeFlags(flags: ServeFlags): ServeSettings {
  const port = integer(flags.port, '--port', 0, 65535);
  const rateLimit = parseRateLimit(flags.rateLimit);
  if (!rateLimit) throw new UsageError(`--rate-limit must look like <requests>/<seconds>, e.g. 60/60; got "${flags.rateLimit}"`);
  const shape = flags.shape.toLowerCase();
  if (shape !== 'a' && shape !== 'b') throw new UsageError(`--shape must be a or b, got "${flags.shape}"`);
  const dnsTimeoutMs = integer(flags.dnsTimeout, '--dns-timeout', 1, 600_000);
  const drainTimeoutMs = integer(flags.drainTimeout ?? '10', '--drain-timeout', 0, 3600) * 1000;
  let redis: ServeConfig['redis'];
  if (flags.redis !== undefined && flags.redis.trim() !== '') {
    const prefix = flags.redisPrefix ?? DEFAULT_REDIS_PREFIX;
    if (/[\s\x00-\x1f]/.test(prefix)) throw new UsageError('--redis-prefix must not hold spaces or control characters');
    redis = {
      target: parseRedisUrl(flags.redis),
      prefix,
      timeoutMs: integer(flags.redisTimeout ?? String(DEFAULT_REDIS_TIMEOUT_MS), '--redis-timeout', 1, 60_000),
    };
  }

  if (Boolean(flags.tlsCert) !== Boolean(flags.tlsKey)) {
    throw new UsageError('--tls-cert and --tls-key go together: give both or neither');
  }
  // The spec says HTTPS only; plain HTTP is for a sandbox on this machine.
  if (!flags.tlsCert && !isLoopback(flags.host) && !flags.allowInsecureHttp) {
    throw new UsageError(
      `refusing plain HTTP on ${flags.host}: give --tls-cert/--tls-key, bind a loopback host, or pass --allow-insecure-http`,
    );
  }
  return {
    host: flags.host,
    port,
    rateLimit,
    shape,
    dns: flags.dns,
    dnsServer: flags.dnsServer,
    dnsTimeoutMs,
    redis,
    metrics: Boolean(flags.metrics),
    drainTimeoutMs,
  };
}

/** Checks the flags and reads the files they name; every problem is a UsageError. */
export async function loadServeConfig(flags: ServeFlags, settings: ServeSettings = checkServeFlags(flags)): Promise<ServeConfig> {
  const tls =
    flags.tlsCert && flags.tlsKey
      ? { cert: await readUserFile(flags.tlsCert, '--tls-cert'), key: await readUserFile(flags.tlsKey, '--tls-key') }
      : undefined;

  let keys: string[];
  let generatedKey: string | undefined;
  if (flags.keysFile) {
    keys = parseKeysFile((await readUserFile(flags.keysFile, '--keys-file')).toString('utf8'));
    if (keys.length === 0) throw new UsageError(`--keys-file: ${flags.keysFile} holds no keys (create one with: mailsift keys create --keys-file ${flags.keysFile})`);
  } else {
    generatedKey = generateKey();
    keys = [generatedKey];
  }
  return { ...settings, keys, generatedKey, tls };
}
