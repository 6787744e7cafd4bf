import type { SmtpSettings } from '../../engines/local/index.js';
import { planWith, type PlanContext, type PlanInput, type Planned } from '../command.js';
import { resolveEngine, type EngineChoice } from '../engine-choice.js';
import { engineSettings, type EngineSettings } from '../engine-options.js';
import { helpDepth } from '../help.js';
import type { ArgvSecret } from '../argv-secrets.js';
import { smtpSettings } from '../smtp-options.js';
import { CHECK, type CheckFlags } from './options.js';

/** What `mailsift check` will do, decided before anything is sent: typed settings, no raw flags. */
export interface CheckPlan {
  email: string;
  engine: EngineChoice;
  engineSettings: EngineSettings;
  /** the mailbox check's settings, when --smtp is on */
  smtp?: SmtpSettings;
  /** a proxy password given in argv, masked in `ps` when the check starts */
  argvSecret?: ArgvSecret;
  /** --json: one JSON object instead of lines */
  json: boolean;
  /** lines for stderr before the check */
  warnings: string[];
}

/** check's address and parsed flags as a plan; a flag that does not fit is a UsageError. Reads nothing of `process`. */
export function plan({ args: [email], flags, given, context }: PlanInput<CheckFlags>): CheckPlan {
  const engine = resolveEngine(flags, given, context.env);
  const warnings: string[] = [];
  const { smtp, argvSecret } = smtpSettings(flags, given, (line) => warnings.push(`warning: ${line}`));
  return {
    email: (email as string).trim(),
    engine,
    engineSettings: engineSettings(flags),
    ...(smtp ? { smtp } : {}),
    ...(argvSecret ? { argvSecret } : {}),
    json: flags.json === true,
    warnings,
  };
}

/** `mailsift check ARGV…` planned in-process, as the CLI plans it: nothing sent. */
export function planCheck(argv: readonly string[], context: PlanContext): Promise<Planned<CheckPlan>> {
  return planWith(CHECK, helpDepth(argv), argv, context, plan);
}
