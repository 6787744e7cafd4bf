import { EXIT, UsageError } from '../errors.js';
import { printable } from '../format.js';
import type { ServePlan } from './plan-serve.js';
import { hideInArgv } from './smtp-flags.js';
import { maskPasswordInArgv } from '../redis/url.js';

const say = (line: string): void => {
  process.stderr.write(`mailsift serve: ${printable(line)}\n`);
};

/**
 * Addresses whose mailbox check may be pending at once in `serve --smtp`.
 * Past it a request is answered from DNS and the lists (smtp empty), as at
 * the deadline. A pending check to a tarpit holds 66-97 KiB of RSS
 * (bench/smtp-serve.bench.mjs), so this bounds the check's memory to
 * about 100 MiB.
 */
export const SERVE_SMTP_MAX_PENDING = 1000;
/** the per-host time budget (--smtp-budget) is renewed this often in serve */
export const SERVE_SMTP_BUDGET_WINDOW_MS = 10 * 60_000;

/** `mailsift serve`: loads the config, starts the server, and drains it on SIGINT/SIGTERM. */
export async function runServe(plan: ServePlan): Promise<number> {
  // loaded when serving, not whenever the CLI starts
  const [{ loadServeConfig }, { startServer }, { createLocalValidator }, { ServeMetrics }, { RedisLink }, { RedisRateLimitStore }, { RedisSharedCache }, { RedisSmtpCache, RedisSessionBudget }] =
    await Promise.all([
      import('./serve-config.js'),
      import('../serve/server.js'),
      import('../engines/local/index.js'),
      import('../serve/metrics.js'),
      import('../redis/link.js'),
      import('../serve/redis-rate-limit.js'),
      import('../serve/redis-shared-cache.js'),
      import('../serve/redis-smtp.js'),
    ]);
  const { smtp, settings } = plan;
  for (const line of plan.warnings) say(line);
  hideInArgv(plan.argvSecret);
  const config = await loadServeConfig(settings);
  if (smtp) {
    // anyone with a key picks the domain, and so where we connect: public addresses only, unless told
    smtp.publicOnly = !settings.smtpAllowPrivate;
    smtp.maxPending = SERVE_SMTP_MAX_PENDING;
    // serve runs for months: a host's time budget is renewed, never spent for good
    smtp.hostBudgetWindowMs = SERVE_SMTP_BUDGET_WINDOW_MS;
  }
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
    smtp.budget = new RedisSessionBudget(redis, smtp.perHost, { leaseMs: settings.smtpLeaseMs });
  }
  if (smtp && metrics) smtp.onSession = metrics.smtpSessionOpened;
  const engine = createLocalValidator({
    dns: config.dns,
    dnsServer: config.dnsServer,
    dnsTimeoutMs: config.dnsTimeoutMs,
    ...(smtp ? { smtp } : {}),
    onWarning: say,
    ...(redis ? { dnsShared: new RedisSharedCache(redis, 'dns') } : {}),
    ...(metrics ? { onDnsCache: (from: 'memory' | 'shared' | 'dns') => metrics.dnsLookup(from), onDnsFailure: (code: string) => metrics.dnsFailure(code) } : {}),
  });
  const server = await startServer({
    ...config,
    engine,
    onLog: say,
    metrics,
    ...(redis ? { rateLimitStore: new RedisRateLimitStore(redis), redisState: () => redis.state } : {}),
    ...(smtp ? { smtpState: () => engine.smtpState() } : {}),
    ...(config.dns ? { dnsState: () => engine.dnsState() } : {}),
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
  say(config.generatedKey ? 'and MAILSIFT_API_KEY=<the key above>' : `and MAILSIFT_API_KEY=<a key from ${settings.files.keysFile}>`);
  await untilSignalled(async () => {
    say('shutting down: finishing requests in flight');
    await server.close();
    await engine.close();
    await redis?.close();
  });
  return EXIT.ok;
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
