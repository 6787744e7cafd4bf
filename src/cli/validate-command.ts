import { Command, Option } from 'commander';
import { FAIL_ON_METRICS, parseFailOn, type FailOnRule } from '../terminal/fail-on.js';
import type { RowToken } from '../write/row-filter.js';
import { REASON_TABLE } from '../reason.js';
import type { OutputFormat } from '../write/output-plan.js';
import { VERDICT_COLUMNS } from '../write/verdict-columns.js';
import { addOptions, type FlagsOf, spec } from './option-table.js';
import { concurrencySetting, csvDelimiter, durationMs, intIn, lineEnding, outputFormat, tokenList } from './parse-flags.js';
import type { Eol } from '../dialect.js';
import { MAX_IN_FLIGHT, type ConcurrencySetting } from '../engines/api/concurrency-limit.js';
import { ENGINE_OPTIONS, type EngineFlags } from './shared-options.js';
import { SMTP_OPTIONS, type SmtpFlags } from './smtp-flags.js';
import { EXIT_MEANINGS } from '../errors.js';
import { exitStatusHelp, withHelp, wrap, type HelpDepth } from './help.js';

const EXAMPLES = `
Examples:
  $ mailsift validate contacts.csv -o cleaned.csv      # a verdict per row
  $ mailsift validate users.csv --only valid --format txt > good.txt
  $ mailsift validate signups.csv -o checked.csv --cache verdicts.cache \\
      --journal "signups-$(date +%F).journal" --fail-on 'invalid>5%'   # nightly`;

/** What `--help all` adds: more examples, then what a script author looks up; the lists come from the code that uses them. */
const reference = (): string => `
More examples:
  $ mailsift validate contacts.csv --only valid,risky \\
      --except disposable,typo,mailbox_full -o mailable.csv
  $ mailsift validate contacts.csv --columns status,is_valid -o checked.xlsx
  $ mailsift validate contacts.xlsx --sheet Leads --split sorted/
  $ mailsift validate export.csv --encoding windows-1252 -o cleaned.csv
  $ mailsift validate list.txt --format ndjson |
      jq -r 'select(.status=="invalid").email'
  $ mailsift validate contacts.csv --dry-run   # reports what it would send
  $ mailsift validate contacts.csv -o cleaned.csv --report report.html
  $ mailsift validate contacts.csv --engine local --smtp \\
      --smtp-helo mx.example.com -o checked.csv
  $ MAILSIFT_API_KEY=... mailsift validate signups.csv \\
      --base-url https://api.example.com -o out.csv

Output columns (after the input's own; a text or stdin list gets "email" first):
${wrap('  ', VERDICT_COLUMNS.join(', '))}
  status is valid, invalid, risky or unknown; an unknown value is an empty cell.
  reason says why a row is not plainly valid (empty when it is):
${(['invalid', 'risky', 'unknown'] as const).map((s) => wrap(`    ${`${s}:`.padEnd(9)}`, REASON_TABLE[s].join(', '))).join('\n')}

--fail-on rules: METRIC OP N[%], comma-separated; exit 5 when one holds.
${wrap('  metrics: ', FAIL_ON_METRICS.join(', '))}
  ops: > >= < <=   N% is a share of the rows with an address (empty: of all
  rows), N a row count; invalid leaves out empty cells, which are empty's.
  e.g. 'invalid>5%,errors>0' or 'valid<80%'

${exitStatusHelp(EXIT_MEANINGS, 'help')}

Environment:
  MAILSIFT_API_KEY    the API key (or --api-key-file FILE); never in a flag
  MAILSIFT_BASE_URL   the API's base address (or --base-url)
  NO_COLOR, TERM=dumb no colour; CI, or stderr not a terminal: no progress line
  HTTPS_PROXY, HTTP_PROXY, NO_PROXY   proxy for the API requests`;

/** The flags the short --help lists, in few words: what most runs use. */
const COMMON = {
  '--output': ['-o, --output <file>', 'write the verdicts here (default: stdout)'],
  '--format': ['--format <format>', 'csv, json, ndjson, txt or xlsx (default: from -o)'],
  '--column': ['--column <name|n>[,…]', 'the column(s) that hold the address, always checked'],
  '--only': ['--only <list>', 'only rows with these statuses or reasons: valid,risky'],
  '--except': ['--except <list>', 'leave out these: disposable,role,typo'],
  '--journal': ['--journal <file>', 'resumable: a re-run sends nothing already answered'],
  '--fail-on': ['--fail-on <rules>', "exit 5 when a rule holds: 'invalid>5%,errors>0'"],
  '--engine': ['--engine <api|local>', 'the API (when a key is set) or the offline engine'],
  '--dry-run': ['--dry-run', 'read and check the input; send nothing'],
  '--quiet': ['-q, --quiet', 'nothing on stderr but errors'],
} as const;

// One parser per option, made once.
const parseBatchSize = intIn(1, 1000);
const parseConcurrency = concurrencySetting(MAX_IN_FLIGHT);
/** no bare number: `30` could be seconds or days, and the default is 30d */
const parseCacheTtl = durationMs({ min: 0, max: 3650 * 86_400_000 });
const CACHE_TTL_DEFAULT_MS = 30 * 86_400_000;

/** validate's own options, in --help order (the shared ones follow, then --smtp's). */
export const VALIDATE_OPTIONS = {
  column: spec<string | undefined>(() =>
    new Option(
      '--column <name|number>',
      'the column that holds the address (header name or 1-based number), or several comma-separated, each with verdict columns of its own; ' +
        'checked however few addresses it holds (default: the column a header names like "email", else the one whose cells hold addresses)',
    )),
  output: spec<string | undefined>(() => new Option('-o, --output <file>', 'write verdicts to this file (default: stdout)')),
  format: spec<OutputFormat | undefined>(() =>
    new Option('--format <csv|json|ndjson|txt|xlsx>', 'output format; txt is the addresses alone (default: from the output extension, else csv)')
      .argParser(outputFormat)),
  columns: spec<string | undefined>(() =>
    new Option('--columns <list>', 'the verdict columns to append, in this order, e.g. status,is_valid (and email for a text input)')),
  split: spec<string | undefined>(() => new Option('--split <dir>', 'write valid, invalid, risky and unknown rows to their own files in this directory')),
  sheet: spec<string | undefined>(() => new Option('--sheet <name|number>', 'which sheet of an .xlsx input (default: the first)')),
  encoding: spec<string | undefined>(() =>
    new Option('--encoding <name>', "the input's encoding when it has no BOM, e.g. latin1, windows-1252 (default: UTF-8)")),
  only: spec<Set<RowToken> | undefined>(() =>
    new Option('--only <statuses|reasons>', 'write only rows with these statuses or reasons, e.g. valid,risky or valid,catch_all').argParser(tokenList)),
  except: spec<Set<RowToken> | undefined>(() =>
    new Option('--except <statuses|reasons>', 'leave out rows with these statuses or reasons, e.g. disposable,typo,mailbox_full').argParser(tokenList)),
  unique: spec<boolean | undefined>(() => new Option('--unique', 'write only the first row of each address (the summary counts the rest)')),
  bom: spec<boolean | undefined>(
    () => new Option('--bom', 'start CSV output with a byte order mark, for Excel on Windows (default: as the input)'),
    () => new Option('--no-bom', 'CSV output without a byte order mark, even where the input has one'),
  ),
  outputDelimiter: spec<string | undefined>(() =>
    new Option('--output-delimiter <char>', 'the CSV output\'s delimiter: one character, or tab (default: the input\'s, else ,)').argParser(csvDelimiter)),
  outputEol: spec<Eol | undefined>(() =>
    new Option('--output-eol <lf|crlf|cr>', 'the CSV output\'s line ending (default: the input\'s, else lf)').argParser(lineEnding)),
  outputEncoding: spec<string | undefined>(() =>
    new Option('--output-encoding <name>', 'the CSV output\'s encoding, e.g. utf-8, windows-1252, utf-16le (default: the input\'s, else UTF-8)')),
  escapeFormulas: spec<boolean | undefined>(() =>
    new Option('--escape-formulas', "also defuse input cells a spreadsheet would execute (=, +, -, @, tab, CR): a leading ' (CSV)")),
  summary: spec<string | undefined>(() => new Option('--summary <file>', 'also write the summary as JSON to this file')),
  report: spec<string | undefined>(() =>
    new Option('--report <file.html>', 'also write an HTML overview of the run: charts of statuses and reasons, top domains, typos, next steps')),
  batchSize: spec<number>(() => new Option('--batch-size <n>', 'addresses per bulk request, 1..1000').argParser(parseBatchSize).default(1000)),
  concurrency: spec<ConcurrencySetting>(() =>
    new Option('--concurrency <n|auto>', 'API requests in flight: auto follows the server (its plan, its latency, its refusals), up to 64; a number 1..64 pins it')
      .argParser(parseConcurrency)
      .default('auto')),
  quiet: spec<boolean | undefined>(() => new Option('-q, --quiet', 'print nothing on stderr but errors')),
  progress: spec<boolean>(() => new Option('--no-progress', 'no progress line on stderr (it only shows on a terminal anyway)')),
  color: spec<boolean>(() => new Option('--no-color', 'no colour on stderr (also NO_COLOR=1 or TERM=dumb)')),
  journal: spec<string | undefined>(() =>
    new Option('--journal <file>', 'crash-safe record of finished verdicts: re-running with it re-sends nothing already answered')),
  cache: spec<string | undefined>(() =>
    new Option('--cache <file|redis-url>', 'reuse verdicts across runs and input files (for cron jobs); redis://host:port[/db] shares them between machines')),
  /** milliseconds */
  cacheTtl: spec<number>(() =>
    new Option('--cache-ttl <duration>', 'how long a cached verdict is reused, with its unit: 30d, 12h, 90m, 3600s; a --journal begun longer ago is begun afresh')
      .argParser(parseCacheTtl)
      .default(CACHE_TTL_DEFAULT_MS, '30d')),
  dryRun: spec<boolean | undefined>(() => new Option('--dry-run', 'read and check the input, report what would be sent, send nothing')),
  failOn: spec<FailOnRule[] | undefined>(() =>
    new Option(
      '--fail-on <rules>',
      "exit 5 when a rule holds after the run, e.g. 'invalid>5%' or 'unknown>100,errors>0' (quote it: > is a shell redirection)",
    ).argParser((value: string, previous: FailOnRule[] = []) => [...previous, ...parseFailOn(value)])),
};

/** Everything `validate` takes, typed from the tables that declare it. */
export type ValidateFlags = FlagsOf<typeof VALIDATE_OPTIONS> & EngineFlags & SmtpFlags;

export function validateCommand(run: (input: string | undefined, flags: ValidateFlags) => Promise<void>, help: HelpDepth = 'short'): Command {
  const cmd = new Command('validate')
    .description('validate a CSV file, a text file (one address a line) or stdin')
    .argument('[input]', 'a .csv file, a text file, or - for stdin (the default when stdin is piped)');
  for (const table of [VALIDATE_OPTIONS, ENGINE_OPTIONS, SMTP_OPTIONS]) addOptions(cmd, table);
  withHelp(cmd, help, { common: COMMON, examples: EXAMPLES, reference, more: 'All flags, columns, exit codes' });
  // the pipeline is loaded when the command runs, not for --help or --version (main.ts wires `run`)
  return cmd.action(run);
}
