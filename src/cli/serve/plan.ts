import type { SmtpSettings } from '../../engines/local/index.js';
import { UsageError } from '../../errors.js';
import { helpDepth } from '../help.js';
import { planWith, type PlanContext, type PlanInput, type Planned } from '../command.js';
import { isLoopback } from '../loopback.js';
import type { ArgvSecret } from '../argv-secrets.js';
import { smtpSettings } from '../smtp-options.js';
import type { ServeSettings } from './config.js';
import { SERVE, type ServeFlags } from './options.js';

/**
 * Addresses whose mailbox check may be pending at once in `serve --smtp`.
 * Past it a request is answered without the check (smtp empty, unknown with
 * smtp_timeout: not determined, ask again later), as at the deadline. A pending check to a tarpit holds 66-97 KiB of RSS
 * (bench/smtp-serve.bench.mjs), so this bounds the check's memory to
 * about 100 MiB.
 */
export const SERVE_SMTP_MAX_PENDING = 1000;
/** the per-host time budget (--smtp-budget) is renewed this often in serve */
export const SERVE_SMTP_BUDGET_WINDOW_MS = 10 * 60_000;

/** What `mailsift serve` will do, decided before any file is read or port taken: typed settings, no raw flags. */
export interface ServePlan {
  /** what the flags alone decide; the keys and TLS files are read when serving starts */
  settings: ServeSettings;
  /** the mailbox check's settings, serve's policy included, when --smtp is on */
  smtp?: SmtpSettings;
  /** a proxy password given in argv, masked in `ps` when serving starts */
  argvSecret?: ArgvSecret;
  /** lines for stderr before serving */
  warnings: string[];
}

/** serve's flags as a plan; a flag that does not fit is a UsageError. Reads nothing of `process`. */
export function plan({ flags, given }: PlanInput<ServeFlags>): ServePlan {
  const settings = serveSettings(flags);
  if (flags.smtp && !settings.dns) throw new UsageError('--smtp needs DNS to find mail servers: drop --no-dns');
  const warnings: string[] = [];
  const { smtp, argvSecret } = smtpSettings(flags, given, (line) => warnings.push(`warning: ${line}`));
  return { settings, ...(smtp ? { smtp: servePolicy(smtp, settings) } : {}), ...(argvSecret ? { argvSecret } : {}), warnings };
}

/**
 * The mailbox check as serve runs it, unlike a validate run: anyone with a key
 * picks the domain, and so where we connect (public addresses only, unless
 * told); pending checks are bounded; and serve runs for months, so a host's
 * time budget is renewed, never spent for good.
 */
function servePolicy(smtp: SmtpSettings, settings: ServeSettings): SmtpSettings {
  return { ...smtp, publicOnly: !settings.smtpAllowPrivate, maxPending: SERVE_SMTP_MAX_PENDING, hostBudgetWindowMs: SERVE_SMTP_BUDGET_WINDOW_MS };
}

/** Checks the parsed flags together, reading no file; every problem is a UsageError. */
function serveSettings(flags: ServeFlags): ServeSettings {
  let redis: ServeSettings['redis'];
  if (flags.redis !== undefined) {
    const prefix = flags.redisPrefix;
    if (/[\s\x00-\x1f]/.test(prefix)) throw new UsageError('--redis-prefix must not hold spaces or control characters');
    redis = { target: flags.redis, prefix, timeoutMs: flags.redisTimeout };
  }
  if (Boolean(flags.tlsCert) !== Boolean(flags.tlsKey)) {
    throw new UsageError('--tls-cert and --tls-key go together: give both or neither');
  }
  // The spec says HTTPS only; plain HTTP is for a sandbox on this machine.
  if (!flags.tlsCert && !isLoopback(flags.host) && !flags.allowInsecureHttp) {
    throw new UsageError(`refusing plain HTTP on ${flags.host}: give --tls-cert/--tls-key, bind a loopback host, or pass --allow-insecure-http`);
  }
  return {
    host: flags.host,
    port: flags.port,
    rateLimit: flags.rateLimit,
    shape: flags.shape,
    dns: flags.dns,
    dnsServer: flags.dnsServer,
    dnsTimeoutMs: flags.dnsTimeout,
    redis,
    metrics: Boolean(flags.metrics),
    drainTimeoutMs: flags.drainTimeout,
    files: { keysFile: flags.keysFile, tlsCert: flags.tlsCert, tlsKey: flags.tlsKey },
    smtpAllowPrivate: flags.smtpAllowPrivate === true,
    smtpLeaseMs: flags.smtpLease,
  };
}

/** `mailsift serve ARGV…` planned in-process, as the CLI plans it: nothing read, no port taken. */
export function planServe(argv: readonly string[], context: PlanContext): Promise<Planned<ServePlan>> {
  return planWith(SERVE, helpDepth(argv), argv, context, plan);
}
