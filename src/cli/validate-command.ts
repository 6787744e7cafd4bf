import { Command, Option } from 'commander';
import { intIn, outputFormat, positiveNumber, statusList } from './parse-flags.js';
import type { ValidateFlags } from './run-validate.js';
import { parseFailOn, type FailOnRule } from '../terminal/fail-on.js';
import { addSmtpOptions } from './smtp-flags.js';

const EXAMPLES = `
Examples:
  $ mailsift validate contacts.csv -o cleaned.csv          # a verdict per row, columns kept
  $ mailsift validate contacts.csv --only valid,risky -o keep.csv
  $ cut -d, -f3 users.csv | mailsift validate --only valid > good.txt
  $ mailsift validate list.txt --format ndjson | jq -r 'select(.status=="invalid").email'
  $ mailsift validate signups.csv --journal signups.journal --fail-on 'invalid>5%,errors>0' -o checked.csv
  $ mailsift validate contacts.csv --dry-run                 # what would be sent; sends nothing
  $ mailsift validate contacts.csv --engine local --smtp --smtp-helo mx.example.com -o checked.csv
  $ MAILSIFT_API_KEY=... mailsift validate signups.csv --base-url https://api.example.com -o out.csv
`;

export function validateCommand(): Command {
  const cmd = new Command('validate')
    .description('validate the addresses of a CSV file, a text file (one per line) or stdin')
    .argument('[input]', 'a .csv file, a text file, or - for stdin (the default when stdin is piped)')
    .addHelpText('before', EXAMPLES)
    .option('--column <name|number>', 'the CSV column that holds the address (1-based number or header name)')
    .option('-o, --output <file>', 'write verdicts to this file (default: stdout)')
    .option('--format <csv|json|ndjson>', 'output format (default: from the output extension, else csv)', outputFormat)
    .option('--only <statuses>', 'write only rows with these statuses, e.g. valid,risky', statusList)
    .option('--summary <file>', 'also write the summary as JSON to this file')
    .option('--batch-size <n>', 'addresses per bulk request, 1..1000', intIn(1, 1000), 1000)
    .option('--concurrency <n>', 'requests in flight at most, 1..64', intIn(1, 64), 4)
    .option('--retries <n>', 'retries per request for retryable failures', intIn(0, 100), 5)
    .option('--timeout <seconds>', 'per-request timeout', positiveNumber, 30)
    .option('--base-url <url>', 'the API base address (env MAILSIFT_BASE_URL)')
    .option('--api-key-file <file>', 'read the API key from this file (env MAILSIFT_API_KEY)')
    .addOption(new Option('--engine <engine>', 'api or local (default: api when a key is configured)').choices(['api', 'local']))
    .option('--dns-server <host[:port]>', 'DNS resolver for the local engine (default: the system resolver)')
    .option('--dns-timeout <ms>', 'per DNS query, local engine', intIn(1, 600_000), 2000)
    .option('-q, --quiet', 'print nothing on stderr but errors')
    .option('--no-progress', 'no progress line on stderr (it only shows on a terminal anyway)')
    .option('--no-color', 'no colour on stderr (also NO_COLOR=1 or TERM=dumb)')
    .option('--journal <file>', 'crash-safe record of finished verdicts: re-running with it re-sends nothing already answered')
    .option('--cache <file>', 'reuse verdicts across runs and input files (for cron jobs)')
    .option('--cache-ttl <duration>', 'how long a cached verdict is reused: 30d, 12h, 90m, 3600s', '30d')
    .option('--dry-run', 'read and check the input, report what would be sent, send nothing')
    .option(
      '--fail-on <rules>',
      "exit 5 when a rule holds after the run, e.g. 'invalid>5%' or 'unknown>100,errors>0' (quote it: > is a shell redirection)",
      (value: string, previous: FailOnRule[] = []) => [...previous, ...parseFailOn(value)],
    );
  return addSmtpOptions(cmd)
    // the pipeline is loaded when the command runs, not for --help or --version
    .action(async (input: string | undefined, flags: ValidateFlags) => (await import('./run-validate.js')).runValidate(input, flags));
}
