import { hostname } from 'node:os';
import { InvalidArgumentError } from 'commander';
import { type FlagsOf, type Given, option } from './option-record.js';
import { durationMs, intIn, SMTP_TLS_MODES, smtpTls } from './parse-flags.js';
import { parseSmtpProxy, showProxy } from '../engines/local/smtp/proxy.js';
import type { SmtpSettings } from '../engines/local/index.js';
import type { TlsMode } from '../engines/local/smtp/dialogue.js';
import type { ArgvSecret } from './argv-secrets.js';

export const SMTP_DEFAULTS = {
  tls: 'opportunistic' as TlsMode,
  port: 25,
  timeoutMs: 10_000,
  concurrency: 32,
  perHost: 2,
  retryDelayMs: 60_000,
  deadlineMs: 25_000,
  budgetMs: 120_000,
};

// One parser per option, made once: validate, check and serve parse alike.
const parsePort = intIn(1, 65535);
const parseSmtpTimeout = durationMs({ bare: 'ms', min: 1, max: 600_000 });
const parseSmtpConcurrency = intIn(1, 1000);
const parsePerHost = intIn(1, 100);
const parseRetryDelay = durationMs({ bare: 's', min: 0, max: 86_400_000 });
const parseBudget = durationMs({ bare: 's', min: 1, max: 86_400_000 });
const parseDeadline = durationMs({ bare: 's', min: 1, max: 3_600_000 });

/** --smtp-helo: a host name or an [address literal], as EHLO takes it */
function smtpHelo(value: string): string {
  const helo = value.trim();
  if (!/^(\[[0-9a-f.:]+\]|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)$/i.test(helo)) {
    throw new InvalidArgumentError('expected a host name (or an [address literal]), e.g. mx.example.com');
  }
  return helo;
}

/** --smtp-from: an address, or <> (the null reverse path, given as '') */
function smtpFrom(value: string): string {
  let from = value.trim();
  if (from.startsWith('<') && from.endsWith('>')) from = from.slice(1, -1);
  if (from !== '' && !/^[^\s<>@]+@[^\s<>@]+$/.test(from)) throw new InvalidArgumentError('expected an address (you@your-domain.example) or <>');
  return from;
}

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
  smtp: option<boolean | undefined>({
    flags: '--smtp',
    help: "check the mailbox with the domain's mail server (RCPT TO; never sends mail)",
    brief: "offline engine: ask the domain's mail server",
  }),
  smtpHelo: option<string | undefined>({
    flags: '--smtp-helo <name>',
    help: 'the name given in EHLO: use one whose DNS you control (default: this host if fully qualified, else localhost)',
    parse: smtpHelo,
  }),
  smtpFrom: option<string | undefined>({ flags: '--smtp-from <address>', help: 'the MAIL FROM reverse path (default: <>, the null path)', parse: smtpFrom }),
  smtpPort: option<number>({ flags: '--smtp-port <n>', help: 'port of the mail servers', parse: parsePort, default: SMTP_DEFAULTS.port }),
  smtpTls: option<TlsMode>({
    flags: '--smtp-tls <mode>',
    help: 'STARTTLS: opportunistic (whenever a server offers or asks for it; the certificate is not verified) or require (a server that does not offer it is not asked)',
    choices: SMTP_TLS_MODES,
    parse: smtpTls,
    default: SMTP_DEFAULTS.tls,
  }),
  /** milliseconds */
  smtpTimeout: option<number>({
    flags: '--smtp-timeout <ms>',
    help: 'per SMTP reply and TCP handshake; the banner may take up to 60 s (or this, when longer), within --smtp-budget',
    parse: parseSmtpTimeout,
    default: SMTP_DEFAULTS.timeoutMs,
    defaultShown: String(SMTP_DEFAULTS.timeoutMs),
  }),
  smtpProxy: option<string | undefined>({
    flags: '--smtp-proxy <url>',
    help: 'connect through socks5://[user:pass@]host:port; a password goes in the variable, not in argv',
    // parsed when planned (smtpSettings), where an error can name the flag or the variable without quoting the password
    env: 'MAILSIFT_SMTP_PROXY',
  }),
  smtpConcurrency: option<number>({
    flags: '--smtp-concurrency <n>',
    help: 'SMTP sessions open at once, in all',
    parse: parseSmtpConcurrency,
    default: SMTP_DEFAULTS.concurrency,
  }),
  smtpPerHost: option<number>({
    flags: '--smtp-per-host <n>',
    help: 'SMTP sessions open at once to one mail server (its address, whatever names point at it)',
    parse: parsePerHost,
    default: SMTP_DEFAULTS.perHost,
  }),
  /** milliseconds */
  smtpRetryDelay: option<number>({
    flags: '--smtp-retry-delay <seconds>',
    help: 'wait before asking a greylisting server again (once)',
    parse: parseRetryDelay,
    default: SMTP_DEFAULTS.retryDelayMs,
    defaultShown: String(SMTP_DEFAULTS.retryDelayMs / 1000),
  }),
  /** milliseconds */
  smtpBudget: option<number>({
    flags: '--smtp-budget <seconds>',
    help: 'the most time spent on one mail server (its address); rows it leaves unchecked get smtp empty (reason smtp_timeout). The banner may take up to 60 s of it',
    parse: parseBudget,
    default: SMTP_DEFAULTS.budgetMs,
    defaultShown: String(SMTP_DEFAULTS.budgetMs / 1000),
  }),
};

/** serve's own: a request is answered within this, with or without the mailbox check. */
export const SMTP_DEADLINE_OPTION = {
  /** milliseconds */
  smtpDeadline: option<number | undefined>({
    flags: '--smtp-deadline <seconds>',
    help: 'answer without the mailbox check (not determined: smtp_timeout) when it takes longer; it goes on to fill the cache',
    parse: parseDeadline,
    default: SMTP_DEFAULTS.deadlineMs,
    defaultShown: String(SMTP_DEFAULTS.deadlineMs / 1000),
  }),
  smtpAllowPrivate: option<boolean | undefined>({
    flags: '--smtp-allow-private',
    help: 'let the mailbox check dial MX hosts on loopback, private, link-local or CGNAT addresses and IP-literal MX names (off: an API key must not reach inside this network)',
  }),
};

/** The --smtp flags as commander hands them over. */
export type SmtpFlags = FlagsOf<typeof SMTP_OPTIONS> & Partial<FlagsOf<typeof SMTP_DEADLINE_OPTION>>;

/** The mailbox check as planned: its settings when --smtp is on, and what to mask in argv. */
export interface SmtpPlan {
  smtp?: SmtpSettings;
  argvSecret?: ArgvSecret;
}

/**
 * Builds the settings (undefined when --smtp is off) from the parsed flags,
 * --smtp-proxy's from the flag or MAILSIFT_SMTP_PROXY (`given` says which). A
 * bad proxy is a UsageError naming where it came from. Touches nothing:
 * `hideInArgv` masks argv when the run starts.
 */
export function smtpSettings(flags: SmtpFlags, given: Given<SmtpFlags>, warn: (line: string) => void): SmtpPlan {
  if (!flags.smtp) return {};
  const typed = given.smtpProxy === 'flag';
  const proxy = flags.smtpProxy === undefined ? undefined : parseSmtpProxy(flags.smtpProxy, typed ? '--smtp-proxy' : 'MAILSIFT_SMTP_PROXY');
  let argvSecret: ArgvSecret | undefined;
  if (typed && proxy?.password !== undefined) {
    warn('--smtp-proxy holds a password, which other users of this machine can read in the process list: put the URL in MAILSIFT_SMTP_PROXY instead');
    argvSecret = { text: flags.smtpProxy!, shown: showProxy(proxy) };
  }
  const smtp: SmtpSettings = {
    helo: flags.smtpHelo ?? defaultHelo(),
    from: flags.smtpFrom ?? '',
    port: flags.smtpPort,
    tls: flags.smtpTls,
    timeoutMs: flags.smtpTimeout,
    concurrency: flags.smtpConcurrency,
    perHost: flags.smtpPerHost,
    retryDelayMs: flags.smtpRetryDelay,
    hostBudgetMs: flags.smtpBudget,
  };
  if (proxy) smtp.proxy = proxy;
  if (flags.smtpDeadline !== undefined) smtp.deadlineMs = flags.smtpDeadline;
  return { smtp, ...(argvSecret ? { argvSecret } : {}) };
}
