import { Command, InvalidArgumentError, Option } from 'commander';
import { addOptions, type FlagsOf, spec } from './option-table.js';
import { durationMs, intIn, rateLimit, redisTarget } from './parse-flags.js';
import { DNS_OPTIONS } from './shared-options.js';
import { withHelp, type HelpDepth } from './help.js';
import { SMTP_DEADLINE_OPTION, SMTP_OPTIONS } from './smtp-flags.js';
import { DEFAULT_LEASE_MS } from '../serve/redis-smtp.js';
import type { RateLimit } from '../serve/rate-limit.js';
import type { Shape } from '../serve/render.js';
import { DEFAULT_REDIS_PREFIX, DEFAULT_REDIS_TIMEOUT_MS, type RedisTarget } from '../redis/url.js';

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
  host: spec<string>(() => new Option('--host <host>', 'address to bind').default('127.0.0.1')),
  port: spec<number>(() => new Option('--port <n>', 'port to listen on; 0 picks a free one').argParser(parsePort).default(8080)),
  keysFile: spec<string | undefined>(() =>
    new Option('--keys-file <file>', 'accepted API keys, one per line (default: one random key, printed once on stderr)')),
  rateLimit: spec<RateLimit>(() =>
    new Option('--rate-limit <requests/seconds>', 'per-key fixed window').argParser(rateLimit).default({ requests: 60, seconds: 60 }, '60/60')),
  shape: spec<Shape>(() => new Option('--shape <a|b>', 'response shape of the spec: a (flat) or b (wrapped in data)').argParser(shape).default('a')),
  tlsCert: spec<string | undefined>(() => new Option('--tls-cert <file>', 'PEM certificate: serve HTTPS')),
  tlsKey: spec<string | undefined>(() => new Option('--tls-key <file>', 'PEM private key for --tls-cert')),
  allowInsecureHttp: spec<boolean | undefined>(() => new Option('--allow-insecure-http', 'allow plain HTTP on a non-loopback host')),
  ...DNS_OPTIONS,
  redis: spec<RedisTarget | undefined>(() =>
    new Option('--redis <url>', 'share rate-limit windows, DNS answers and SMTP state with other instances: redis://[user:password@]host[:port][/db]')
      .argParser(redisTarget)
      .env('MAILSIFT_REDIS_URL')),
  redisPrefix: spec<string>(() => new Option('--redis-prefix <prefix>', 'prefix of every key written to Redis').default(DEFAULT_REDIS_PREFIX)),
  /** milliseconds */
  redisTimeout: spec<number>(() =>
    new Option('--redis-timeout <ms>', 'a Redis command slower than this counts as Redis down')
      .argParser(parseRedisTimeout)
      .default(DEFAULT_REDIS_TIMEOUT_MS, String(DEFAULT_REDIS_TIMEOUT_MS))),
  /** milliseconds */
  smtpLease: spec<number>(() =>
    new Option('--smtp-lease <seconds>', 'with --redis and --smtp: how long an SMTP session slot stays taken after the instance holding it dies (renewed while the session lasts)')
      .argParser(parseLease)
      .default(DEFAULT_LEASE_MS, String(DEFAULT_LEASE_MS / 1000))),
  metrics: spec<boolean | undefined>(() => new Option('--metrics', 'serve GET /metrics in the Prometheus text format')),
  /** milliseconds */
  drainTimeout: spec<number>(() =>
    new Option('--drain-timeout <seconds>', 'on SIGTERM, how long requests in flight may still take').argParser(parseDrainTimeout).default(10_000, '10')),
};

/** Everything `serve` takes, typed from the tables that declare it. */
export type ServeFlags = FlagsOf<typeof SERVE_OPTIONS> & FlagsOf<typeof SMTP_OPTIONS> & FlagsOf<typeof SMTP_DEADLINE_OPTION>;

const EXAMPLES = `
Examples:
  $ mailsift serve --no-dns --port 8080
  $ mailsift keys create --keys-file keys.txt
  $ mailsift serve --keys-file keys.txt --rate-limit 600/60`;

/** The flags the short --help lists, in few words. */
const COMMON = {
  '--host': ['--host <host>', 'address to bind (default: 127.0.0.1)'],
  '--port': ['--port <n>', 'port to listen on; 0 picks a free one (default: 8080)'],
  '--keys-file': ['--keys-file <file>', 'accepted API keys (default: one random key)'],
  '--rate-limit': ['--rate-limit <n/s>', 'per-key fixed window (default: 60/60)'],
  '--shape': ['--shape <a|b>', 'response shape of the spec (default: a)'],
  '--tls-cert': ['--tls-cert <file>', 'PEM certificate (with --tls-key): serve HTTPS'],
  '--no-dns': ['--no-dns', 'no DNS lookups: a sandbox'],
  '--smtp': ['--smtp', "ask the domain's mail server (RCPT TO)"],
  '--redis': ['--redis <url>', 'share limits and answers with other instances'],
  '--metrics': ['--metrics', 'serve GET /metrics (Prometheus)'],
} as const;

export function serveCommand(run: (flags: ServeFlags) => Promise<void>, help: HelpDepth = 'short'): Command {
  const cmd = new Command('serve').description('serve the validation API from the offline engine');
  for (const table of [SERVE_OPTIONS, SMTP_OPTIONS, SMTP_DEADLINE_OPTION]) addOptions(cmd, table);
  withHelp(cmd, help, { common: COMMON, examples: EXAMPLES });
  // the server is loaded when it runs, not for --help or --version (main.ts wires `run`)
  return cmd.action(run);
}
