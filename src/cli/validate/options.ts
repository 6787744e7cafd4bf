import { FAIL_ON_METRICS, parseFailOn, type FailOnRule } from '../../terminal/fail-on.js';
import type { RowToken } from '../../write/row-filter.js';
import { REASON_TABLE } from '../../reason.js';
import type { OutputFormat } from '../../write/output-plan.js';
import { VERDICT_COLUMNS } from '../../write/verdict-columns.js';
import { type FlagsOf, option } from '../option-record.js';
import { concurrencySetting, csvDelimiter, durationMs, intIn, lineEnding, outputFormat, cacheTarget, tokenList } from '../parse-flags.js';
import type { CacheTarget } from '../../stores/open-stores.js';
import type { Eol } from '../../dialect.js';
import { MAX_IN_FLIGHT, type ConcurrencySetting } from '../../engines/api/concurrency-limit.js';
import { ENGINE_OPTIONS } from '../engine-options.js';
import { SMTP_OPTIONS } from '../smtp-options.js';
import { declare } from '../command.js';
import { EXIT_MEANINGS } from '../../errors.js';
import { exitStatusHelp, wrap } from '../help.js';

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

// One parser per option, made once.
const parseBatchSize = intIn(1, 1000);
const parseConcurrency = concurrencySetting(MAX_IN_FLIGHT);
/** no bare number: `30` could be seconds or days, and the default is 30d */
const parseCacheTtl = durationMs({ min: 0, max: 3650 * 86_400_000 });
const CACHE_TTL_DEFAULT_MS = 30 * 86_400_000;

/** validate's own options, in --help order (the shared ones follow, then --smtp's). */
export const VALIDATE_OPTIONS = {
  column: option<string | undefined>({
    flags: '--column <name|number>',
    help:
      'the column that holds the address (header name or 1-based number), or several comma-separated, each with verdict columns of its own; ' +
      'checked however few addresses it holds (default: the column a header names like "email", else the one whose cells hold addresses)',
    brief: 'the column(s) that hold the address, always checked',
    briefTerm: '--column <name|n>[,…]',
  }),
  output: option<string | undefined>({
    flags: '-o, --output <file>',
    help: 'write verdicts to this file (default: stdout)',
    brief: 'write the verdicts here (default: stdout)',
  }),
  format: option<OutputFormat | undefined>({
    flags: '--format <csv|json|ndjson|txt|xlsx>',
    help: 'output format; txt is the addresses alone (default: from the output extension, else csv)',
    brief: 'csv, json, ndjson, txt or xlsx (default: from -o)',
    briefTerm: '--format <format>',
    parse: outputFormat,
  }),
  columns: option<string | undefined>({
    flags: '--columns <list>',
    help: 'the verdict columns to append, in this order, e.g. status,is_valid (and email for a text input)',
  }),
  split: option<string | undefined>({ flags: '--split <dir>', help: 'write valid, invalid, risky and unknown rows to their own files in this directory' }),
  sheet: option<string | undefined>({ flags: '--sheet <name|number>', help: 'which sheet of an .xlsx input (default: the first)' }),
  encoding: option<string | undefined>({
    flags: '--encoding <name>',
    help: "the input's encoding when it has no BOM, e.g. latin1, windows-1252 (default: UTF-8)",
  }),
  only: option<Set<RowToken> | undefined>({
    flags: '--only <statuses|reasons>',
    help: 'write only rows with these statuses or reasons, e.g. valid,risky or valid,catch_all',
    brief: 'only rows with these statuses or reasons: valid,risky',
    briefTerm: '--only <list>',
    parse: tokenList,
  }),
  except: option<Set<RowToken> | undefined>({
    flags: '--except <statuses|reasons>',
    help: 'leave out rows with these statuses or reasons, e.g. disposable,typo,mailbox_full',
    brief: 'leave out these: disposable,role,typo',
    briefTerm: '--except <list>',
    parse: tokenList,
  }),
  unique: option<boolean | undefined>({ flags: '--unique', help: 'write only the first row of each address (the summary counts the rest)' }),
  bom: option<boolean | undefined>({
    flags: '--bom',
    help: 'start CSV output with a byte order mark, for Excel on Windows (default: as the input)',
    negate: { flags: '--no-bom', help: 'CSV output without a byte order mark, even where the input has one' },
  }),
  outputDelimiter: option<string | undefined>({
    flags: '--output-delimiter <char>',
    help: "the CSV output's delimiter: one character, or tab (default: the input's, else ,)",
    parse: csvDelimiter,
  }),
  outputEol: option<Eol | undefined>({
    flags: '--output-eol <lf|crlf|cr>',
    help: "the CSV output's line ending (default: the input's, else lf)",
    parse: lineEnding,
  }),
  outputEncoding: option<string | undefined>({
    flags: '--output-encoding <name>',
    help: "the CSV output's encoding, e.g. utf-8, windows-1252, utf-16le (default: the input's, else UTF-8)",
  }),
  escapeFormulas: option<boolean | undefined>({
    flags: '--escape-formulas',
    help: "also defuse input cells a spreadsheet would execute (=, +, -, @, tab, CR): a leading ' (CSV)",
  }),
  summary: option<string | undefined>({ flags: '--summary <file>', help: 'also write the summary as JSON to this file' }),
  report: option<string | undefined>({
    flags: '--report <file.html>',
    help: 'also write an HTML overview of the run: charts of statuses and reasons, top domains, typos, next steps',
  }),
  batchSize: option<number>({ flags: '--batch-size <n>', help: 'addresses per bulk request, 1..1000', parse: parseBatchSize, default: 1000 }),
  concurrency: option<ConcurrencySetting>({
    flags: '--concurrency <n|auto>',
    help: 'API requests in flight: auto follows the server (its plan, its latency, its refusals), up to 64; a number 1..64 pins it',
    parse: parseConcurrency,
    default: 'auto',
  }),
  quiet: option<boolean | undefined>({ flags: '-q, --quiet', help: 'print nothing on stderr but errors', brief: 'nothing on stderr but errors' }),
  progress: option<boolean>({ flags: '--no-progress', help: 'no progress line on stderr (it only shows on a terminal anyway)' }),
  color: option<boolean>({ flags: '--no-color', help: 'no colour on stderr (also NO_COLOR=1 or TERM=dumb)' }),
  journal: option<string | undefined>({
    flags: '--journal <file>',
    help: 'crash-safe record of finished verdicts: re-running with it re-sends nothing already answered',
    brief: 'resumable: a re-run sends nothing already answered',
  }),
  cache: option<CacheTarget | undefined>({
    flags: '--cache <file|redis-url>',
    help: 'reuse verdicts across runs and input files (for cron jobs); redis://host:port[/db] shares them between machines',
    parse: cacheTarget,
  }),
  /** milliseconds */
  cacheTtl: option<number>({
    flags: '--cache-ttl <duration>',
    help: 'how long a cached verdict is reused, with its unit: 30d, 12h, 90m, 3600s; a --journal begun longer ago is begun afresh',
    parse: parseCacheTtl,
    default: CACHE_TTL_DEFAULT_MS,
    defaultShown: '30d',
  }),
  dryRun: option<boolean | undefined>({
    flags: '--dry-run',
    help: 'read and check the input, report what would be sent, send nothing',
    brief: 'read and check the input; send nothing',
  }),
  failOn: option<FailOnRule[] | undefined>({
    flags: '--fail-on <rules>',
    help: "exit 5 when a rule holds after the run, e.g. 'invalid>5%' or 'unknown>100,errors>0' (quote it: > is a shell redirection)",
    brief: "exit 5 when a rule holds: 'invalid>5%,errors>0'",
    parse: (value: string, previous: FailOnRule[] | undefined) => [...(previous ?? []), ...parseFailOn(value)],
  }),
};

/** Everything `validate` takes, in --help order. */
const OPTIONS = { ...VALIDATE_OPTIONS, ...ENGINE_OPTIONS, ...SMTP_OPTIONS };

/** Everything `validate` takes, typed from the tables that declare it. */
export type ValidateFlags = FlagsOf<typeof OPTIONS>;

/** `mailsift validate [input]`: planned by ./plan.ts, run by ./run.ts. */
export const VALIDATE = declare({
  name: 'validate',
  description: 'validate a CSV file, a text file (one address a line) or stdin',
  args: [{ name: '[input]', help: 'a .csv file, a text file, or - for stdin (the default when stdin is piped)' }],
  options: OPTIONS,
  help: {
    // what most runs use
    brief: ['output', 'format', 'column', 'only', 'except', 'journal', 'failOn', 'engine', 'dryRun', 'quiet'],
    examples: EXAMPLES,
    reference,
    more: 'All flags, columns, exit codes',
  },
});
