import { EXIT_MEANINGS } from '../../errors.js';
import { declare } from '../command.js';
import { ENGINE_OPTIONS } from '../engine-options.js';
import { exitStatusHelp } from '../help.js';
import { type FlagsOf, option } from '../option-record.js';
import { SMTP_OPTIONS } from '../smtp-options.js';

/** check's own options (the shared and --smtp ones follow). */
export const CHECK_OPTIONS = {
  json: option<boolean | undefined>({ flags: '--json', help: 'print the verdict as one JSON object', brief: 'print the verdict as one JSON object' }),
};

/** Everything `check` takes, in --help order. */
const OPTIONS = { ...CHECK_OPTIONS, ...ENGINE_OPTIONS, ...SMTP_OPTIONS };

/** Everything `check` takes, typed from the tables that declare it. */
export type CheckFlags = FlagsOf<typeof OPTIONS>;

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

/** `mailsift check <email>`: planned by ./plan.ts, run by ./run.ts. */
export const CHECK = declare({
  name: 'check',
  description: 'validate one address and print its verdict',
  args: [{ name: '<email>', help: 'the address to check' }],
  options: OPTIONS,
  help: { brief: ['json', 'engine', 'baseUrl', 'apiKeyFile', 'dnsServer', 'smtp'], examples: EXAMPLES, reference, more: 'All flags, exit codes' },
});
