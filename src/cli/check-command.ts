import { Command } from 'commander';
import { EXIT } from '../errors.js';
import { reasonOf } from '../reason.js';
import type { Verdict } from '../verdict.js';
import { apiSettings, localSettings, resolveEngine } from './api-config.js';
import { addOptions } from './option-table.js';
import { ENGINE_OPTIONS, type EngineFlags } from './shared-options.js';
import { SMTP_OPTIONS, smtpSettings, type SmtpFlags } from './smtp-flags.js';

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
      const verdict = await check(email.trim(), flags, (line) => process.stderr.write(`mailsift: ${line}\n`));
      process.stdout.write(
        formatVerdict(verdict, { json: flags.json === true, tty: process.stdout.isTTY === true }),
      );
      if (verdict.error) process.exitCode = EXIT.rowErrors;
    });
}

/** One verdict from whichever engine is configured; notices and warnings go to `say`. */
export async function check(email: string, flags: CheckFlags, say: (line: string) => void): Promise<Verdict> {
  const choice = resolveEngine(flags);
  // Engines are loaded when used, not whenever the CLI starts.
  if (choice.engine === 'api') {
    const { validateOneViaApi } = await import('../engines/api/client.js');
    return validateOneViaApi({ ...apiSettings(choice, flags, say), concurrency: 1 }, email);
  }
  if (choice.notice) say(choice.notice);
  const { createLocalValidator } = await import('../engines/local/index.js');
  const warn = (line: string): void => say(`warning: ${line}`);
  const engine = createLocalValidator(localSettings(flags, smtpSettings(flags as SmtpFlags, process.env, warn), warn));
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
  if (how.json) {
    const { email, isValid, status, confidence, provider, details, error } = v;
    return `${JSON.stringify({ email, isValid, status, reason: reasonOf(v), confidence, provider, details, error }, null, 2)}\n`;
  }
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
