import { Command, InvalidArgumentError, Option } from 'commander';
import { addOptions, type FlagsOf, spec } from './option-table.js';
import { SMTP_DEADLINE_OPTION, SMTP_OPTIONS } from './smtp-flags.js';
import { DEFAULT_LEASE_MS } from '../serve/redis-smtp.js';
import { DEFAULT_REDIS_PREFIX, DEFAULT_REDIS_TIMEOUT_MS } from '../redis/url.js';

/** serve's own options, in --help order (the --smtp ones follow, then --smtp-deadline). */
export const SERVE_OPTIONS = {
  host: spec<string>(() => new Option('--host <host>', 'address to bind').default('127.0.0.1')),
  // Numbers stay strings here: loadServeConfig checks them with one-line errors that name the flag.
  port: spec<string>(() => new Option('--port <n>', 'port to listen on; 0 picks a free one').default('8080')),
  keysFile: spec<string | undefined>(() =>
    new Option('--keys-file <file>', 'accepted API keys, one per line (default: one random key, printed once on stderr)')),
  rateLimit: spec<string>(() => new Option('--rate-limit <requests/seconds>', 'per-key fixed window').default('60/60')),
  shape: spec<string>(() => new Option('--shape <a|b>', 'response shape of the spec: a (flat) or b (wrapped in data)').default('a')),
  tlsCert: spec<string | undefined>(() => new Option('--tls-cert <file>', 'PEM certificate: serve HTTPS')),
  tlsKey: spec<string | undefined>(() => new Option('--tls-key <file>', 'PEM private key for --tls-cert')),
  allowInsecureHttp: spec<boolean | undefined>(() => new Option('--allow-insecure-http', 'allow plain HTTP on a non-loopback host')),
  dns: spec<boolean>(() => new Option('--no-dns', 'skip DNS lookups (mx left unknown): sandboxes and benchmarks')),
  dnsServer: spec<string | undefined>(() => new Option('--dns-server <host[:port]>', 'resolver for the engine (default: system resolver)')),
  dnsTimeout: spec<string>(() => new Option('--dns-timeout <ms>', 'per DNS query').default('2000')),
  redis: spec<string | undefined>(() =>
    new Option('--redis <url>', 'share rate-limit windows, DNS answers and SMTP state with other instances: redis://[user:password@]host[:port][/db]')
      .env('MAILSIFT_REDIS_URL')),
  redisPrefix: spec<string>(() => new Option('--redis-prefix <prefix>', 'prefix of every key written to Redis').default(DEFAULT_REDIS_PREFIX)),
  redisTimeout: spec<string>(() =>
    new Option('--redis-timeout <ms>', 'a Redis command slower than this counts as Redis down').default(String(DEFAULT_REDIS_TIMEOUT_MS))),
  smtpLease: spec<number>(() =>
    new Option('--smtp-lease <seconds>', 'with --redis and --smtp: how long an SMTP session slot stays taken after the instance holding it dies (renewed while the session lasts)')
      .argParser(leaseSeconds)
      .default(DEFAULT_LEASE_MS / 1000)),
  metrics: spec<boolean | undefined>(() => new Option('--metrics', 'serve GET /metrics in the Prometheus text format')),
  drainTimeout: spec<string>(() => new Option('--drain-timeout <seconds>', 'on SIGTERM, how long requests in flight may still take').default('10')),
};

/** Everything `serve` takes, typed from the tables that declare it. */
export type ServeFlags = FlagsOf<typeof SERVE_OPTIONS> & FlagsOf<typeof SMTP_OPTIONS> & FlagsOf<typeof SMTP_DEADLINE_OPTION>;

export function serveCommand(run: (flags: ServeFlags) => Promise<void>): Command {
  const cmd = new Command('serve')
    .description('serve the validation API (POST /api/validate, /api/validate/bulk) from the offline engine')
    .addHelpText(
      'before',
      '\nExamples:\n  $ mailsift serve --no-dns --port 8080\n  $ mailsift keys create --keys-file keys.txt && mailsift serve --keys-file keys.txt --rate-limit 600/60\n',
    );
  for (const table of [SERVE_OPTIONS, SMTP_OPTIONS, SMTP_DEADLINE_OPTION]) addOptions(cmd, table);
  // the server is loaded when it runs, not for --help or --version (main.ts wires `run`)
  return cmd.action(run);
}

/** --smtp-lease: long enough to be renewed in time, short enough to free a dead instance's hosts */
function leaseSeconds(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0.5 || n > 3600) throw new InvalidArgumentError('expected seconds from 0.5 to 3600');
  return n;
}
