import { Command, InvalidArgumentError, Option } from 'commander';
import { EXIT, UsageError } from '../errors.js';
import { addOptions, type FlagsOf, spec } from './option-table.js';
import { hideProxyPassword, SMTP_DEADLINE_OPTION, SMTP_OPTIONS, smtpSettings } from './smtp-flags.js';
import { planWith, processContext, type PlanContext, type Planned } from './plan.js';
import { checkServeFlags, type ServeSettings } from '../serve/config.js';
import type { SmtpSettings } from '../engines/local/index.js';
import { parseDnsServer } from '../engines/local/dns.js';
import { DEFAULT_LEASE_MS } from '../serve/redis-smtp.js';
import { DEFAULT_REDIS_PREFIX, DEFAULT_REDIS_TIMEOUT_MS } from '../serve/redis-url.js';

const say = (line: string): void => {
  process.stderr.write(`mailsift serve: ${line}\n`);
};

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

export function serveCommand(): Command {
  const cmd = new Command('serve')
    .description('serve the validation API (POST /api/validate, /api/validate/bulk) from the offline engine')
    .addHelpText(
      'before',
      '\nExamples:\n  $ mailsift serve --no-dns --port 8080\n  $ mailsift keys create --keys-file keys.txt && mailsift serve --keys-file keys.txt --rate-limit 600/60\n',
    );
  for (const table of [SERVE_OPTIONS, SMTP_OPTIONS, SMTP_DEADLINE_OPTION]) addOptions(cmd, table);
  return cmd.action(async (flags: ServeFlags) => {
      // loaded when serving, not whenever the CLI starts
      const [{ loadServeConfig }, { startServer }, { createLocalValidator }, { ServeMetrics }, { RedisLink, maskPasswordInArgv }, { RedisRateLimitStore }, { RedisSharedCache }, { RedisSmtpCache, RedisSessionBudget }] =
        await Promise.all([
          import('../serve/config.js'),
          import('../serve/server.js'),
          import('../engines/local/index.js'),
          import('../serve/metrics.js'),
          import('../serve/redis.js'),
          import('../serve/redis-rate-limit.js'),
          import('../serve/redis-cache.js'),
          import('../serve/redis-smtp.js'),
        ]);
      const plan = servePlan(flags, processContext());
      for (const line of plan.warnings) say(line);
      hideProxyPassword(flags, plan.smtp);
      const { smtp } = plan;
      const config = await loadServeConfig(flags, plan.settings);
      if (config.redis && maskPasswordInArgv(config.redis.target)) {
        say('the Redis password was on the command line, where other users of this machine can read it; pass the URL in MAILSIFT_REDIS_URL instead');
      }
      const metrics = config.metrics ? new ServeMetrics() : undefined;
      const redis = config.redis
        ? await RedisLink.connect(config.redis.target, {
            prefix: config.redis.prefix,
            commandTimeoutMs: config.redis.timeoutMs,
            onLog: say,
            onState: (state) => metrics?.redis(state),
          })
        : undefined;
      if (redis) {
        metrics?.redis('connected');
        const what = smtp ? 'rate-limit windows, DNS answers, SMTP findings and the per-host session budget' : 'rate-limit windows and DNS answers';
        say(`sharing ${what} through Redis at ${redis.target.shown} (keys ${redis.prefix}*)`);
      }
      if (smtp && redis) {
        smtp.cache = new RedisSmtpCache(redis);
        smtp.budget = new RedisSessionBudget(redis, smtp.perHost, { leaseMs: flags.smtpLease * 1000 });
      }
      if (smtp && metrics) smtp.onSession = metrics.smtpSessionOpened;
      const engine = createLocalValidator({
        dns: config.dns,
        dnsServer: config.dnsServer,
        dnsTimeoutMs: config.dnsTimeoutMs,
        ...(smtp ? { smtp } : {}),
        onWarning: say,
        ...(redis ? { dnsShared: new RedisSharedCache(redis, 'dns') } : {}),
        ...(metrics ? { onDnsCache: (from: 'memory' | 'shared' | 'dns') => metrics.dnsLookup(from) } : {}),
      });
      const server = await startServer({
        ...config,
        engine,
        onLog: say,
        metrics,
        ...(redis ? { rateLimitStore: new RedisRateLimitStore(redis), redisState: () => redis.state } : {}),
      }).catch(async (err: unknown) => {
        await engine.close();
        await redis?.close();
        throw listenError(err, config);
      });
      // The key line comes first: whoever waits for "listening on" then has both.
      if (config.generatedKey) say(`no --keys-file; API key for this run: ${config.generatedKey}`);
      say(`listening on ${server.url}`);
      const { requests, seconds } = config.rateLimit;
      say(`rate limit ${requests} ${requests === 1 ? 'request' : 'requests'} per ${seconds} s per key (--rate-limit); response shape ${config.shape}`);
      // Ready to paste into the shell that runs mailsift validate (a wildcard address is reached on loopback).
      process.stderr.write(`export MAILSIFT_BASE_URL=${server.url.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:')}\n`);
      say(config.generatedKey ? 'and MAILSIFT_API_KEY=<the key above>' : `and MAILSIFT_API_KEY=<a key from ${flags.keysFile}>`);
      await untilSignalled(async () => {
        say('shutting down: finishing requests in flight');
        await server.close();
        await engine.close();
        await redis?.close();
      });
    });
}

/** What `mailsift serve` will do, decided before any file is read or port taken. */
export interface ServePlan {
  /** what the flags alone decide; the keys and TLS files are read when serving starts */
  settings: ServeSettings;
  /** the mailbox check's settings, when --smtp is on */
  smtp?: SmtpSettings;
  /** lines for stderr before serving */
  warnings: string[];
  /** every flag as the command's option table parsed it */
  flags: ServeFlags;
}

/** serve's flags as a plan; a flag that does not fit is a UsageError. Reads nothing of `process`. */
export function servePlan(flags: ServeFlags, context: PlanContext): ServePlan {
  const settings = checkServeFlags(flags);
  if (flags.smtp && !settings.dns) throw new UsageError('--smtp needs DNS to find mail servers: drop --no-dns');
  const warnings: string[] = [];
  const smtp = smtpSettings(flags, context.env, (line) => warnings.push(`warning: ${line}`));
  if (flags.dnsServer !== undefined) parseDnsServer(flags.dnsServer);
  return { settings, ...(smtp ? { smtp } : {}), warnings, flags };
}

/** `mailsift serve ARGV…` planned in-process, as the CLI plans it: nothing read, no port taken. */
export function planServe(argv: readonly string[], context: PlanContext): Promise<Planned<ServePlan>> {
  return planWith(serveCommand(), argv, context, (_args, flags: ServeFlags) => servePlan(flags, context));
}

/** --smtp-lease: long enough to be renewed in time, short enough to free a dead instance's hosts */
function leaseSeconds(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0.5 || n > 3600) throw new InvalidArgumentError('expected seconds from 0.5 to 3600');
  return n;
}

/** Bad TLS material or a port we cannot have is the user's to fix: a one-line usage error. */
function listenError(err: unknown, config: { host: string; port: number; tls?: unknown }): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new UsageError(`cannot listen on ${config.host}:${config.port} (${code})`, { cause: err });
  }
  if (config.tls && /PEM|certificate|key|asn1|ssl/i.test(`${code ?? ''} ${(err as Error).message}`)) {
    return new UsageError(`--tls-cert/--tls-key: not a usable PEM certificate and key (${(err as Error).message})`, { cause: err });
  }
  return err;
}

/**
 * Resolves once a SIGINT/SIGTERM has run `shutdown`. A second signal skips the
 * drain; our listeners replace node's default exit, so we must exit ourselves.
 */
function untilSignalled(shutdown: () => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        say('second signal: exiting without waiting');
        process.exit(signal === 'SIGINT' ? EXIT.sigint : EXIT.sigterm);
      }
      stopping = true;
      shutdown().then(() => {
        process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
        resolve();
      }, reject);
    };
    process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  });
}
