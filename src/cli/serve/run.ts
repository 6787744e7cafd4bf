import { EXIT, UsageError } from '../../errors.js';
import { say as sayOn } from '../../terminal/say.js';
import type { Io } from '../io.js';
import { hideInArgv, hideRedisPassword } from '../argv-secrets.js';
import type { ServePlan } from './plan.js';

/** `mailsift serve`: loads the config, starts the server, and drains it on SIGINT/SIGTERM. */
export async function run(plan: ServePlan, io: Io): Promise<number> {
  const say = (line: string): void => sayOn(io.stderr, line, { as: 'mailsift serve' });
  // loaded when serving, not whenever the CLI starts
  const [
    { loadServeConfig },
    { startServer },
    { createLocalValidator },
    { ServeMetrics },
    { RedisLink },
    { RedisRateLimitStore },
    { RedisSharedCache },
    { RedisSmtpCache, RedisSessionBudget },
  ] = await Promise.all([
    import('./config.js'),
    import('../../serve/server.js'),
    import('../../engines/local/index.js'),
    import('../../serve/metrics.js'),
    import('../../redis/link.js'),
    import('../../serve/redis-rate-limit.js'),
    import('../../serve/redis-shared-cache.js'),
    import('../../serve/redis-smtp.js'),
  ]);
  const { settings } = plan;
  for (const line of plan.warnings) say(line);
  hideInArgv(io, plan.argvSecret);
  const config = await loadServeConfig(settings);
  if (hideRedisPassword(io, config.redis?.target)) {
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
    const what = plan.smtp ? 'rate-limit windows, DNS answers, SMTP findings and the per-host session budget' : 'rate-limit windows and DNS answers';
    say(`sharing ${what} through Redis at ${redis.target.shown} (keys ${redis.prefix}*)`);
  }
  // the plan's mailbox check, with what this instance shares through Redis and counts
  const smtp = plan.smtp && {
    ...plan.smtp,
    ...(redis
      ? {
          cache: new RedisSmtpCache(redis, io.clock),
          budget: new RedisSessionBudget(redis, plan.smtp.perHost, { leaseMs: settings.smtpLeaseMs, clock: io.clock }),
        }
      : {}),
    ...(metrics ? { onSession: metrics.smtpSessionOpened } : {}),
  };
  const engine = createLocalValidator({
    dns: config.dns,
    dnsServer: config.dnsServer,
    dnsTimeoutMs: config.dnsTimeoutMs,
    ...(smtp ? { smtp: { ...smtp, clock: io.clock } } : {}),
    clock: io.clock,
    onWarning: say,
    ...(redis ? { dnsShared: new RedisSharedCache(redis, 'dns', io.clock) } : {}),
    ...(metrics
      ? { onDnsCache: (from: 'memory' | 'shared' | 'dns') => metrics.dnsLookup(from), onDnsFailure: (code: string) => metrics.dnsFailure(code) }
      : {}),
  });
  const server = await startServer({
    ...config,
    engine,
    onLog: say,
    clock: io.clock,
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
  io.stderr.write(`export MAILSIFT_BASE_URL=${server.url.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:')}\n`);
  say(config.generatedKey ? 'and MAILSIFT_API_KEY=<the key above>' : `and MAILSIFT_API_KEY=<a key from ${settings.files.keysFile}>`);
  await untilSignalled(io, say, async () => {
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
 * drain; our listeners replace node's default exit, so we must exit ourselves
 * (io.exit: the drain may be what holds the event loop).
 */
function untilSignalled(io: Io, say: (line: string) => void, shutdown: () => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    let stopping = false;
    const onSignal = (signal: 'SIGINT' | 'SIGTERM'): void => {
      if (stopping) {
        say('second signal: exiting without waiting');
        io.exit(signal === 'SIGINT' ? EXIT.sigint : EXIT.sigterm);
        return;
      }
      stopping = true;
      shutdown().then(() => {
        io.signals.off('SIGINT', onInt);
        io.signals.off('SIGTERM', onTerm);
        resolve();
      }, reject);
    };
    const onInt = (): void => onSignal('SIGINT');
    const onTerm = (): void => onSignal('SIGTERM');
    io.signals.on('SIGINT', onInt);
    io.signals.on('SIGTERM', onTerm);
  });
}
