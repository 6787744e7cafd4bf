import type { SmtpSettings } from '../engines/local/index.js';
import { UsageError } from '../errors.js';
import { parseDnsServer } from '../engines/local/dns.js';
import { knownEncoding } from '../read/decode.js';
import { parseDuration } from '../stores/duration.js';
import { planOutput, type OutputFlags, type OutputPlan } from '../write/output-plan.js';
import type { RowFilter } from '../write/row-filter.js';
import { resolveEngine, type EngineChoice, type EngineChoiceInput } from './api-config.js';
import { planWith, type PlanContext, type Planned } from './plan.js';
import { smtpSettings, type SmtpFlags } from './smtp-flags.js';
import { validateCommand, type ValidateFlags } from './validate-command.js';

/** The flags that decide a validate run's plan; the command has more, which the plan carries as they are. */
export type ValidatePlanFlags = EngineChoiceInput & Omit<OutputFlags, 'filter'> & SmtpFlags & RowFilter & { encoding?: string; dnsServer?: string; cacheTtl?: string };

/** What `mailsift validate` will do, decided before anything is opened or sent. */
export interface ValidatePlan<F extends ValidatePlanFlags = ValidatePlanFlags> {
  /** a file's path, or - for stdin */
  input: string;
  engine: EngineChoice;
  output: OutputPlan;
  /** which rows are written: --only, --except, --unique */
  filter: RowFilter;
  /** the mailbox check's settings, when --smtp is on */
  smtp?: SmtpSettings;
  /** lines for stderr (unless --quiet) before the run */
  warnings: string[];
  /** every flag as the command's option table parsed it: the run reads the rest from here */
  flags: F;
}

/**
 * Turns validate's argument and flags into a plan: every flag that does not fit,
 * alone or with another, is a UsageError naming it, before the input is even
 * opened. Reads nothing of `process` (the context says it) and no file but the API key's.
 */
export async function validatePlan<F extends ValidatePlanFlags>(inputArg: string | undefined, flags: F, context: PlanContext): Promise<ValidatePlan<F>> {
  const engine = resolveEngine(flags, context.env);
  const warnings: string[] = [];
  const smtp = smtpSettings(flags, context.env, (line) => warnings.push(`warning: ${line}`));
  const input = inputArg ?? (context.stdinIsTTY ? undefined : '-');
  if (input === undefined) {
    throw new UsageError('no input: give a file (mailsift validate contacts.csv) or pipe addresses on stdin');
  }
  const filter = { only: flags.only, except: flags.except, unique: flags.unique };
  const output = planOutput({ ...flags, filter }, context.stdoutIsTTY);
  if (engine.engine === 'local' && flags.dnsServer !== undefined) parseDnsServer(flags.dnsServer);
  if (flags.cacheTtl !== undefined) parseDuration(flags.cacheTtl);
  if (flags.encoding !== undefined && !(await knownEncoding(flags.encoding))) {
    throw new UsageError(`--encoding ${flags.encoding}: unknown encoding (e.g. latin1, windows-1252, utf-16le, shift_jis)`);
  }
  return { input, engine, output, filter, ...(smtp ? { smtp } : {}), warnings, flags };
}

/** `mailsift validate ARGV…` planned in-process, as the CLI plans it: nothing opened, nothing sent. */
export function planValidate(argv: readonly string[], context: PlanContext): Promise<Planned<ValidatePlan<ValidateFlags>>> {
  const declared = validateCommand(async () => {});
  return planWith(declared, argv, context, ([input], flags: ValidateFlags) => validatePlan(input as string | undefined, flags, context));
}
