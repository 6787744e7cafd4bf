import { Command } from 'commander';
import { EXIT } from '../errors.js';
import { reasonOf } from '../reason.js';
import type { Verdict } from '../verdict.js';
import { resultObject } from '../write/verdict-columns.js';
import type { SmtpSettings } from '../engines/local/index.js';
import { parseDnsServer } from '../engines/local/dns.js';
import { apiSettings, localSettings, resolveEngine, type EngineChoice } from './api-config.js';
import { addOptions } from './option-table.js';
import { planWith, processContext, type PlanContext, type Planned } from './plan.js';
import { ENGINE_OPTIONS, type EngineFlags } from './shared-options.js';
import { hideProxyPassword, SMTP_OPTIONS, smtpSettings, type SmtpFlags } from './smtp-flags.js';

interface CheckFlags extends EngineFlags, Partial<SmtpFlags> {
  json?: boolean;
}

const EXAMPLES = `
Examples:
  $ mailsift check jane@example.com
  $ mailsift check --json jane@gmial.com | jq .details.suggestion
  $ mailsift check --engine local --dns-server 127.0.0.1:5353 info@example.org
  $ mailsift check --engine local --smtp --smtp-helo mx.example.com jane@example.com
  $ MAILSIFT_API_KEY=... mailsift check --base-url https://api.example.com jane@example.com
`;

const AFTER = `
With an API key (MAILSIFT_API_KEY or --api-key-file) the address goes to
POST /api/validate; without one, the offline engine answers.
Exit status: 0 a verdict was printed (whatever its status), 2 usage error,
3 the API refused the key, 4 no verdict could be obtained (the error is printed).`;

export function checkCommand(): Command {
  const cmd = new Command('check')
    .description('validate one address and print its verdict')
    .argument('<email>', 'the address to check')
    .option('--json', 'print the verdict as one JSON object')
    .addHelpText('before', EXAMPLES)
    .addHelpText('after', AFTER);
  for (const table of [ENGINE_OPTIONS, SMTP_OPTIONS]) addOptions(cmd, table);
  return cmd.action(async (email: string, flags: CheckFlags) => {
      const verdict = await check(checkPlan(email, flags, processContext()), (line) => process.stderr.write(`mailsift: ${line}\n`));
      process.stdout.write(
        formatVerdict(verdict, { json: flags.json === true, tty: process.stdout.isTTY === true }),
      );
      if (verdict.error) process.exitCode = EXIT.rowErrors;
    });
}

/** What `mailsift check` will do, decided before anything is sent. */
export interface CheckPlan {
  email: string;
  engine: EngineChoice;
  /** the mailbox check's settings, when --smtp is on */
  smtp?: SmtpSettings;
  /** lines for stderr before the check */
  warnings: string[];
  /** every flag as the command's option table parsed it */
  flags: CheckFlags;
}

/** check's address and flags as a plan; a flag that does not fit is a UsageError. Reads nothing of `process`. */
export function checkPlan(email: string, flags: CheckFlags, context: PlanContext): CheckPlan {
  const engine = resolveEngine(flags, context.env);
  const warnings: string[] = [];
  const smtp = smtpSettings(flags as SmtpFlags, context.env, (line) => warnings.push(`warning: ${line}`));
  if (engine.engine === 'local' && flags.dnsServer !== undefined) parseDnsServer(flags.dnsServer);
  return { email: email.trim(), engine, ...(smtp ? { smtp } : {}), warnings, flags };
}

/** `mailsift check ARGV…` planned in-process, as the CLI plans it: nothing sent. */
export function planCheck(argv: readonly string[], context: PlanContext): Promise<Planned<CheckPlan>> {
  return planWith(checkCommand(), argv, context, ([email], flags: CheckFlags) => checkPlan(email as string, flags, context));
}

/** One verdict from whichever engine the plan names; notices and warnings go to `say`. */
export async function check(plan: CheckPlan, say: (line: string) => void): Promise<Verdict> {
  const { email, flags } = plan;
  const choice = plan.engine;
  // Engines are loaded when used, not whenever the CLI starts.
  if (choice.engine === 'api') {
    const { validateOneViaApi } = await import('../engines/api/client.js');
    return validateOneViaApi({ ...apiSettings(choice, flags, say), concurrency: 1 }, email);
  }
  if (choice.notice) say(choice.notice);
  for (const line of plan.warnings) say(line);
  hideProxyPassword(flags, plan.smtp);
  const { createLocalValidator } = await import('../engines/local/index.js');
  const engine = createLocalValidator(localSettings(flags, plan.smtp, (line) => say(`warning: ${line}`)));
  try {
    const verdict = await engine.validateOne(email);
    // an empty smtp deserves a reason: the server's words, or why there were none
    const problem = (engine.stats() as { smtpProblem?: string }).smtpProblem;
    if (flags.smtp && verdict.details.syntax && verdict.details.smtp === undefined && problem) say(`mailbox check undetermined: ${problem}`);
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
