import { InvalidArgumentError } from 'commander';
import { declare } from '../command.js';
import { type FlagsOf, option } from '../option-record.js';
import { durationMs, intIn, rateLimit, redisTarget } from '../parse-flags.js';
import { DNS_OPTIONS } from '../engine-options.js';
import { SMTP_DEADLINE_OPTION, SMTP_OPTIONS } from '../smtp-options.js';
import { DEFAULT_LEASE_MS } from '../../serve/redis-smtp.js';
import type { RateLimit } from '../../serve/rate-limit.js';
import type { Shape } from '../../serve/render.js';
import { DEFAULT_REDIS_PREFIX, DEFAULT_REDIS_TIMEOUT_MS, type RedisTarget } from '../../redis/url.js';

// One parser per option, made once (the DNS ones are shared with validate and check).
const parsePort = intIn(0, 65535);
const parseRedisTimeout = durationMs({ bare: 'ms', min: 1, max: 60_000 });
const parseLease = durationMs({ bare: 's', min: 500, max: 3_600_000 });
const parseDrainTimeout = durationMs({ bare: 's', min: 0, max: 3_600_000 });

/** --shape a|b, in either case */
function shape(value: string): Shape {
  const v = value.trim().toLowerCase();
  if (v !== 'a' && v !== 'b') throw new InvalidArgumentError('expected a or b');
  return v;
}

/** serve's own options, in --help order (the --smtp ones follow, then --smtp-deadline). */
export const SERVE_OPTIONS = {
  host: option<string>({ flags: '--host <host>', help: 'address to bind', brief: 'address to bind (default: 127.0.0.1)', default: '127.0.0.1' }),
  port: option<number>({
    flags: '--port <n>',
    help: 'port to listen on; 0 picks a free one',
    brief: 'port to listen on; 0 picks a free one (default: 8080)',
    parse: parsePort,
    default: 8080,
  }),
  keysFile: option<string | undefined>({
    flags: '--keys-file <file>',
    help: 'accepted API keys, one per line (default: one random key, printed once on stderr)',
    brief: 'accepted API keys (default: one random key)',
  }),
  rateLimit: option<RateLimit>({
    flags: '--rate-limit <requests/seconds>',
    help: 'per-key fixed window',
    brief: 'per-key fixed window (default: 60/60)',
    briefTerm: '--rate-limit <n/s>',
    parse: rateLimit,
    default: { requests: 60, seconds: 60 },
    defaultShown: '60/60',
  }),
  shape: option<Shape>({
    flags: '--shape <a|b>',
    help: 'response shape of the spec: a (flat) or b (wrapped in data)',
    brief: 'response shape of the spec (default: a)',
    parse: shape,
    default: 'a',
  }),
  tlsCert: option<string | undefined>({
    flags: '--tls-cert <file>',
    help: 'PEM certificate: serve HTTPS',
    brief: 'PEM certificate (with --tls-key): serve HTTPS',
  }),
  tlsKey: option<string | undefined>({ flags: '--tls-key <file>', help: 'PEM private key for --tls-cert' }),
  allowInsecureHttp: option<boolean | undefined>({ flags: '--allow-insecure-http', help: 'allow plain HTTP on a non-loopback host' }),
  ...DNS_OPTIONS,
  redis: option<RedisTarget | undefined>({
    flags: '--redis <url>',
    help: 'share rate-limit windows, DNS answers and SMTP state with other instances: redis://[user:password@]host[:port][/db]',
    brief: 'share limits and answers with other instances',
    parse: redisTarget,
    env: 'MAILSIFT_REDIS_URL',
  }),
  redisPrefix: option<string>({ flags: '--redis-prefix <prefix>', help: 'prefix of every key written to Redis', default: DEFAULT_REDIS_PREFIX }),
  /** milliseconds */
  redisTimeout: option<number>({
    flags: '--redis-timeout <ms>',
    help: 'a Redis command slower than this counts as Redis down',
    parse: parseRedisTimeout,
    default: DEFAULT_REDIS_TIMEOUT_MS,
    defaultShown: String(DEFAULT_REDIS_TIMEOUT_MS),
  }),
  /** milliseconds */
  smtpLease: option<number>({
    flags: '--smtp-lease <seconds>',
    help: 'with --redis and --smtp: how long an SMTP session slot stays taken after the instance holding it dies (renewed while the session lasts)',
    parse: parseLease,
    default: DEFAULT_LEASE_MS,
    defaultShown: String(DEFAULT_LEASE_MS / 1000),
  }),
  metrics: option<boolean | undefined>({
    flags: '--metrics',
    help: 'serve GET /metrics in the Prometheus text format',
    brief: 'serve GET /metrics (Prometheus)',
  }),
  /** milliseconds */
  drainTimeout: option<number>({
    flags: '--drain-timeout <seconds>',
    help: 'on SIGTERM, how long requests in flight may still take',
    parse: parseDrainTimeout,
    default: 10_000,
    defaultShown: '10',
  }),
};

/** Everything `serve` takes, in --help order. */
const OPTIONS = { ...SERVE_OPTIONS, ...SMTP_OPTIONS, ...SMTP_DEADLINE_OPTION };

/** Everything `serve` takes, typed from the tables that declare it. */
export type ServeFlags = FlagsOf<typeof OPTIONS>;

/** `mailsift serve`: planned by ./plan.ts, run by ./run.ts. */
export const SERVE = declare({
  name: 'serve',
  description: 'serve the validation API from the offline engine',
  options: OPTIONS,
  help: {
    brief: ['host', 'port', 'keysFile', 'rateLimit', 'shape', 'tlsCert', 'dns', 'smtp', 'redis', 'metrics'],
    examples: `
Examples:
  $ mailsift serve --no-dns --port 8080
  $ mailsift keys create --keys-file keys.txt
  $ mailsift serve --keys-file keys.txt --rate-limit 600/60`,
  },
});
