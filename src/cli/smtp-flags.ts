import { hostname } from 'node:os';
import { Option } from 'commander';
import { type FlagsOf, spec } from './option-table.js';
import { UsageError } from '../errors.js';
import { intIn, nonNegativeSeconds, positiveNumber } from './parse-flags.js';
import { parseSmtpProxy, showProxy } from '../engines/local/smtp/proxy.js';
import type { SmtpSettings } from '../engines/local/index.js';

export const SMTP_DEFAULTS = { port: 25, timeoutMs: 10_000, concurrency: 32, perHost: 2, retryDelaySeconds: 60, deadlineSeconds: 25, budgetSeconds: 120 };

/**
 * The default EHLO name: this machine's name when it is a fully-qualified one
 * (holds a dot), else `localhost`. Servers that check HELO names refuse
 * `localhost` (Postfix reject_non_fqdn_helo_hostname), so real use wants
 * --smtp-helo with a name whose DNS you control (docs/offline-engine.md).
 */
export function defaultHelo(): string {
  const name = hostname().toLowerCase();
  return /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(name) ? name : 'localhost';
}

/** The --smtp flags of validate, check and serve, declared once. */
export const SMTP_OPTIONS = {
  smtp: spec<boolean | undefined>(() => new Option('--smtp', "check the mailbox with the domain's mail server (RCPT TO; never sends mail)")),
  smtpHelo: spec<string | undefined>(() =>
    new Option('--smtp-helo <name>', 'the name given in EHLO: use one whose DNS you control (default: this host if fully qualified, else localhost)')),
  smtpFrom: spec<string | undefined>(() => new Option('--smtp-from <address>', 'the MAIL FROM reverse path (default: <>, the null path)')),
  smtpPort: spec<number>(() => new Option('--smtp-port <n>', 'port of the mail servers').argParser(intIn(1, 65535)).default(SMTP_DEFAULTS.port)),
  smtpTimeout: spec<number>(() =>
    new Option('--smtp-timeout <ms>', 'per SMTP reply and TCP handshake; the banner may take up to 60 s (or this, when longer), within --smtp-budget').argParser(intIn(1, 600_000)).default(SMTP_DEFAULTS.timeoutMs)),
  smtpProxy: spec<string | undefined>(() =>
    new Option('--smtp-proxy <url>', 'connect through socks5://[user:pass@]host:port (env MAILSIFT_SMTP_PROXY; keep a password there, not in argv)')),
  smtpConcurrency: spec<number>(() =>
    new Option('--smtp-concurrency <n>', 'SMTP sessions open at once, in all').argParser(intIn(1, 1000)).default(SMTP_DEFAULTS.concurrency)),
  smtpPerHost: spec<number>(() =>
    new Option('--smtp-per-host <n>', 'SMTP sessions open at once to one MX host').argParser(intIn(1, 100)).default(SMTP_DEFAULTS.perHost)),
  smtpRetryDelay: spec<number>(() =>
    new Option('--smtp-retry-delay <seconds>', 'wait before asking a greylisting server again (once)')
      .argParser(nonNegativeSeconds)
      .default(SMTP_DEFAULTS.retryDelaySeconds)),
  smtpBudget: spec<number>(() =>
    new Option('--smtp-budget <seconds>', 'the most time spent on one mail server (MX host); rows it leaves unchecked get smtp empty (reason smtp_timeout). The banner may take up to 60 s of it')
      .argParser(positiveNumber)
      .default(SMTP_DEFAULTS.budgetSeconds)),
};

/** serve's own: a request is answered within this, with or without the mailbox check. */
export const SMTP_DEADLINE_OPTION = {
  smtpDeadline: spec<number | undefined>(() =>
    new Option('--smtp-deadline <seconds>', 'answer from DNS and the lists when the mailbox check takes longer; it goes on to fill the cache')
      .argParser(positiveNumber)
      .default(SMTP_DEFAULTS.deadlineSeconds)),
  smtpAllowPrivate: spec<boolean | undefined>(() =>
    new Option('--smtp-allow-private', 'let the mailbox check dial MX hosts on loopback, private, link-local or CGNAT addresses and IP-literal MX names (off: an API key must not reach inside this network)')),
};

/** The --smtp flags as commander hands them over. */
export type SmtpFlags = FlagsOf<typeof SMTP_OPTIONS> & Partial<FlagsOf<typeof SMTP_DEADLINE_OPTION>>;

/**
 * Rewrites our command line as `ps` shows it (on Linux, node's process.title
 * overwrites the argv area) with the proxy's password masked, as mysql does
 * for `-p`. It only shortens the window: the warning still tells the user to
 * use the environment.
 */
function hideFromProcessList(secret: string, shown: string): void {
  try {
    process.title = process.argv.map((a) => a.split(secret).join(shown)).join(' ');
  } catch {
    // not supported here: the warning stands
  }
}

/** Builds the settings, or undefined when --smtp is off. A bad value is a UsageError. */
export function smtpSettings(flags: SmtpFlags, env: Record<string, string | undefined> = process.env, warn?: (line: string) => void): SmtpSettings | undefined {
  if (!flags.smtp) return undefined;
  const proxyText = flags.smtpProxy ?? (env.MAILSIFT_SMTP_PROXY || undefined);
  const proxy = proxyText === undefined ? undefined : parseSmtpProxy(proxyText, flags.smtpProxy !== undefined ? '--smtp-proxy' : 'MAILSIFT_SMTP_PROXY');
  if (flags.smtpProxy !== undefined && proxy?.password !== undefined) {
    hideFromProcessList(flags.smtpProxy, showProxy(proxy));
    warn?.('--smtp-proxy holds a password, which other users of this machine can read in the process list: put the URL in MAILSIFT_SMTP_PROXY instead');
  }
  const helo = (flags.smtpHelo ?? defaultHelo()).trim();
  if (!/^(\[[0-9a-f.:]+\]|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)$/i.test(helo)) {
    throw new UsageError(`--smtp-helo wants a host name (or an [address literal]), not "${helo.slice(0, 80)}"`);
  }
  let from = (flags.smtpFrom ?? '<>').trim();
  if (from.startsWith('<') && from.endsWith('>')) from = from.slice(1, -1);
  if (from !== '' && !/^[^\s<>@]+@[^\s<>@]+$/.test(from)) {
    throw new UsageError(`--smtp-from wants an address (you@your-domain.example) or <>, not "${from.slice(0, 80)}"`);
  }
  const settings: SmtpSettings = {
    helo,
    from,
    port: flags.smtpPort,
    timeoutMs: flags.smtpTimeout,
    concurrency: flags.smtpConcurrency,
    perHost: flags.smtpPerHost,
    retryDelayMs: Math.round(flags.smtpRetryDelay * 1000),
    hostBudgetMs: Math.round(flags.smtpBudget * 1000),
  };
  if (proxy) settings.proxy = proxy;
  if (flags.smtpDeadline !== undefined) settings.deadlineMs = Math.round(flags.smtpDeadline * 1000);
  return settings;
}
