import type { SmtpSettings } from '../engines/local/index.js';
import { UsageError } from '../errors.js';
import { helpDepth } from './help.js';
import { planWith, type PlanContext, type Planned } from './plan.js';
import { serveCommand, type ServeFlags } from './serve-command.js';
import { checkServeFlags, type ServeSettings } from './serve-config.js';
import { smtpSettings, type ArgvSecret } from './smtp-flags.js';

/** What `mailsift serve` will do, decided before any file is read or port taken: typed settings, no raw flags. */
export interface ServePlan {
  /** what the flags alone decide; the keys and TLS files are read when serving starts */
  settings: ServeSettings;
  /** the mailbox check's settings, when --smtp is on */
  smtp?: SmtpSettings;
  /** a proxy password given in argv, masked in `ps` when serving starts */
  argvSecret?: ArgvSecret;
  /** lines for stderr before serving */
  warnings: string[];
}

/** serve's flags as a plan; a flag that does not fit is a UsageError. Reads nothing of `process`. */
export function servePlan(flags: ServeFlags, context: PlanContext): ServePlan {
  const settings = checkServeFlags(flags);
  if (flags.smtp && !settings.dns) throw new UsageError('--smtp needs DNS to find mail servers: drop --no-dns');
  const warnings: string[] = [];
  const { smtp, argvSecret } = smtpSettings(flags, context.env, (line) => warnings.push(`warning: ${line}`));
  return { settings, ...(smtp ? { smtp } : {}), ...(argvSecret ? { argvSecret } : {}), warnings };
}

/** `mailsift serve ARGV…` planned in-process, as the CLI plans it: nothing read, no port taken. */
export function planServe(argv: readonly string[], context: PlanContext): Promise<Planned<ServePlan>> {
  return planWith(serveCommand(async () => {}, helpDepth(argv)), argv, context, (_args, flags: ServeFlags) => servePlan(flags, context));
}
