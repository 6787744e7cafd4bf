import type { SmtpSettings } from '../engines/local/index.js';
import { parseDnsServer } from '../engines/local/dns.js';
import { UsageError } from '../errors.js';
import { planWith, type PlanContext, type Planned } from './plan.js';
import { serveCommand, type ServeFlags } from './serve-command.js';
import { checkServeFlags, type ServeSettings } from './serve-config.js';
import { smtpSettings } from './smtp-flags.js';

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
  return planWith(serveCommand(async () => {}), argv, context, (_args, flags: ServeFlags) => servePlan(flags, context));
}
