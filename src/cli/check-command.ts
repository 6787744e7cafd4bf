import { Command, Option } from 'commander';
import { EXIT, EXIT_MEANINGS } from '../errors.js';
import { exitStatusHelp, helpDepth, withHelp, type HelpDepth } from './help.js';
import { printable } from '../format.js';
import { reasonOf } from '../reason.js';
import type { Verdict } from '../verdict.js';
import { resultObject } from '../write/verdict-columns.js';
import type { SmtpSettings } from '../engines/local/index.js';
import { apiSettings, localSettings, resolveEngine, type EngineChoice } from './api-config.js';
import { addOptions, type FlagsOf, spec } from './option-table.js';
import { planWith, type PlanContext, type Planned } from './plan.js';
import { ENGINE_OPTIONS, engineSettings, type EngineFlags, type EngineSettings } from './shared-options.js';
import { hideInArgv, SMTP_OPTIONS, smtpSettings, type ArgvSecret, type SmtpFlags } from './smtp-flags.js';

/** check's own options (the shared and --smtp ones follow). */
export const CHECK_OPTIONS = {
  json: spec<boolean | undefined>(() => new Option('--json', 'print the verdict as one JSON object')),
};

/** Everything `check` takes, typed from the tables that declare it. */
export type CheckFlags = FlagsOf<typeof CHECK_OPTIONS> & EngineFlags & SmtpFlags;

const EXAMPLES = `
Examples:
  $ mailsift check jane@example.com
  $ mailsift check --json jane@gmial.com | jq .details.suggestion
  $ mailsift check --engine local --smtp --smtp-helo mx.example.com ann@x.org`;

const reference = (): string => `
More examples:
  $ mailsift check --engine local --dns-server 127.0.0.1:5353 info@example.org
  $ MAILSIFT_API_KEY=... mailsift check --base-url https://api.example.com \\
      jane@example.com

With an API key (MAILSIFT_API_KEY or --api-key-file) the address goes to
POST /api/validate; without one, the offline engine answers.

${exitStatusHelp(EXIT_MEANINGS, 'check')}`;

/** The flags the short --help lists, in few words. */
const COMMON = {
  '--json': ['--json', 'print the verdict as one JSON object'],
  '--engine': ['--engine <api|local>', 'the API (when a key is set) or the offline engine'],
  '--base-url': ['--base-url <url>', 'the API base address (env MAILSIFT_BASE_URL)'],
  '--api-key-file': ['--api-key-file <file>', 'read the API key from this file'],
  '--dns-server': ['--dns-server <ip[:port]>', 'offline engine: the DNS resolver'],
  '--smtp': ['--smtp', "offline engine: ask the domain's mail server"],
} as const;

/** `check`'s declaration; `run` gets its address and parsed flags (main.ts plans and runs them). */
export function checkCommand(run: (email: string, flags: CheckFlags) => Promise<void> = async () => {}, help: HelpDepth = 'short'): Command {
  const cmd = new Command('check')
    .description('validate one address and print its verdict')
    .argument('<email>', 'the address to check');
  for (const table of [CHECK_OPTIONS, ENGINE_OPTIONS, SMTP_OPTIONS]) addOptions(cmd, table);
  withHelp(cmd, help, { common: COMMON, examples: EXAMPLES, reference, more: 'All flags, exit codes' });
  return cmd.action(run);
}

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
export function checkPlan(email: string, flags: CheckFlags, context: PlanContext): CheckPlan {
  const engine = resolveEngine(flags, context.env);
  const warnings: string[] = [];
  const { smtp, argvSecret } = smtpSettings(flags, context.env, (line) => warnings.push(`warning: ${line}`));
  return {
    email: email.trim(),
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
  return planWith(checkCommand(undefined, helpDepth(argv)), argv, context, ([email], flags: CheckFlags) => checkPlan(email as string, flags, context));
}

/** `mailsift check`: prints the verdict on stdout and returns the exit code (main.ts sets it). */
export async function runCheck(plan: CheckPlan): Promise<number> {
  const verdict = await check(plan, (line) => process.stderr.write(`mailsift: ${printable(line)}\n`));
  process.stdout.write(formatVerdict(verdict, { json: plan.json, tty: process.stdout.isTTY === true }));
  return verdict.error ? EXIT.rowErrors : EXIT.ok;
}

/** One verdict from whichever engine the plan names; notices and warnings go to `say`. */
export async function check(plan: CheckPlan, say: (line: string) => void): Promise<Verdict> {
  const { email } = plan;
  const choice = plan.engine;
  // Engines are loaded when used, not whenever the CLI starts.
  if (choice.engine === 'api') {
    const { validateOneViaApi } = await import('../engines/api/client.js');
    return validateOneViaApi({ ...apiSettings(choice, plan.engineSettings, say), concurrency: 1 }, email);
  }
  if (choice.notice) say(choice.notice);
  for (const line of plan.warnings) say(line);
  hideInArgv(plan.argvSecret);
  const { createLocalValidator } = await import('../engines/local/index.js');
  const engine = createLocalValidator(localSettings(plan.engineSettings, plan.smtp, (line) => say(`warning: ${line}`)));
  try {
    const verdict = await engine.validateOne(email);
    // an empty smtp deserves a reason: the server's words, or why there were none
    const problem = (engine.stats() as { smtpProblem?: string }).smtpProblem;
    if (plan.smtp && verdict.details.syntax && verdict.details.smtp === undefined && problem) say(`mailbox check undetermined: ${problem}`);
    return verdict;
  } finally {
    await engine.close();
  }
}

const yesNo = (b: boolean | undefined) => (b === undefined ? '' : b ? 'yes' : 'no');

/**
 * `--json`: one object, the API's Shape A fields plus `reason` (and `error`),
 * as `validate` writes a result. Otherwise one `key: value` line per field,
 * aligned on a terminal; an unknown value is empty.
 */
export function formatVerdict(v: Verdict, how: { json: boolean; tty: boolean }): string {
  if (how.json) return `${JSON.stringify(resultObject(v, reasonOf(v)), null, 2)}\n`;
  const d = v.details;
  const rows: [string, string][] = [
    ['email', v.email],
    ['status', v.status],
    ['reason', reasonOf(v)],
    ['confidence', v.confidence === undefined ? '' : v.confidence.toFixed(2)],
    ['syntax', yesNo(d.syntax)],
    ['domain', d.domain ?? ''],
    ['mx', yesNo(d.mx)],
    ['disposable', yesNo(d.disposable)],
    ['role', yesNo(d.role)],
    ['free', yesNo(d.free)],
    ['suggestion', d.suggestion ?? ''],
    ['smtp', yesNo(d.smtp)],
    ['catch-all', yesNo(d.catchAll)],
    ['provider', v.provider],
  ];
  if (v.error) rows.push(['error', `${v.error.code}: ${v.error.message}`]);
  const width = Math.max(...rows.map(([k]) => k.length)) + 2;
  const label = (k: string) => (how.tty ? `${k}:`.padEnd(width) : `${k}: `);
  return rows.map(([k, val]) => `${label(k)}${val}`.trimEnd()).join('\n') + '\n';
}
