import type { SmtpSettings } from '../../engines/local/index.js';
import type { ConcurrencySetting } from '../../engines/api/concurrency-limit.js';
import { UsageError } from '../../errors.js';
import { knownEncoding } from '../../read/decode.js';
import type { StoreOptions } from '../../stores/open-stores.js';
import type { FailOnRule } from '../../terminal/fail-on.js';
import type { TerminalFlags } from '../../terminal/style.js';
import { planOutput, type OutputPlan } from '../../write/output-plan.js';
import type { RowFilter } from '../../write/row-filter.js';
import { resolveEngine, type EngineChoice } from '../engine-choice.js';
import { helpDepth } from '../help.js';
import { planWith, type PlanContext, type PlanInput, type Planned } from '../command.js';
import { engineSettings, type EngineSettings } from '../engine-options.js';
import type { ArgvSecret } from '../argv-secrets.js';
import { smtpSettings } from '../smtp-options.js';
import { VALIDATE, type ValidateFlags } from './options.js';

/**
 * What `mailsift validate` will do, decided before anything is opened or sent:
 * typed settings only (each flag parsed once, by its option's parser), grouped
 * by the part of the run that uses them.
 */
export interface ValidatePlan {
  /** a file's path, or - for stdin */
  input: string;
  /** how the input is read: --column, --sheet, --encoding */
  read: { column?: string; sheet?: string; encoding?: string };
  engine: EngineChoice;
  /** the engines' settings from the shared options (timeouts, retries, DNS) */
  engineSettings: EngineSettings;
  /** the mailbox check's settings, when --smtp is on */
  smtp?: SmtpSettings;
  /** a proxy password given in argv, masked in `ps` when the run starts */
  argvSecret?: ArgvSecret;
  /** addresses per request and requests in flight */
  batching: { batchSize: number; concurrency: ConcurrencySetting };
  output: OutputPlan;
  /** which rows are written: --only, --except, --unique */
  filter: RowFilter;
  /** --summary and --report files */
  summary?: string;
  report?: string;
  /** --journal, --cache, --cache-ttl */
  stores: StoreOptions;
  dryRun: boolean;
  failOn?: FailOnRule[];
  terminal: TerminalFlags;
  /** lines for stderr (unless --quiet) before the run */
  warnings: string[];
}

/**
 * Turns validate's argument and parsed flags into a plan: every flag that does
 * not fit with another is a UsageError naming it, before the input is even
 * opened. Reads nothing of `process` (the context says it) and no file but the API key's.
 */
export async function plan({ args: [inputArg], flags, given, context }: PlanInput<ValidateFlags>): Promise<ValidatePlan> {
  const engine = resolveEngine(flags, given, context.env);
  const warnings: string[] = [];
  const { smtp, argvSecret } = smtpSettings(flags, given, (line) => warnings.push(`warning: ${line}`));
  const input = (inputArg as string | undefined) ?? (context.stdinIsTTY ? undefined : '-');
  if (input === undefined) {
    throw new UsageError('no input: give a file (mailsift validate contacts.csv) or pipe addresses on stdin');
  }
  for (const [flag, name] of [
    ['--encoding', flags.encoding],
    ['--output-encoding', flags.outputEncoding],
  ] as const) {
    if (name !== undefined && !(await knownEncoding(name))) {
      throw new UsageError(`${flag} ${name}: unknown encoding (e.g. latin1, windows-1252, utf-16le, shift_jis)`);
    }
  }
  const filter: RowFilter = { only: flags.only, except: flags.except, unique: flags.unique };
  const output = planOutput({ ...flags, filter }, context.stdoutIsTTY);
  return {
    input,
    read: { column: flags.column, sheet: flags.sheet, encoding: flags.encoding },
    engine,
    engineSettings: engineSettings(flags),
    ...(smtp ? { smtp } : {}),
    ...(argvSecret ? { argvSecret } : {}),
    batching: { batchSize: flags.batchSize, concurrency: flags.concurrency },
    output,
    filter,
    summary: flags.summary,
    report: flags.report,
    stores: { journal: flags.journal, cache: flags.cache, cacheTtlMs: flags.cacheTtl },
    dryRun: flags.dryRun === true,
    failOn: flags.failOn,
    terminal: { color: flags.color, progress: flags.progress, quiet: flags.quiet },
    warnings,
  };
}

/** `mailsift validate ARGV…` planned in-process, as the CLI plans it: nothing opened, nothing sent. */
export function planValidate(argv: readonly string[], context: PlanContext): Promise<Planned<ValidatePlan>> {
  return planWith(VALIDATE, helpDepth(argv), argv, context, plan);
}
