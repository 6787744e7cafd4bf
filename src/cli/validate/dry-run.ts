import { validateStream } from '../../pipeline/validate-stream.js';
import type { KnownVerdicts } from '../../stores/known-verdicts.js';
import type { Input } from '../../read/input-row.js';
import { renderDryRun } from '../../terminal/dry-run-report.js';
import { terminalPolicy, type TerminalFlags } from '../../terminal/style.js';
import { batchesInFlight, type Validator } from '../../engines/validator.js';
import { errorVerdict, type Verdict } from '../../verdict.js';
import type { RowWriter } from '../../write/row-writer.js';
import type { ConcurrencySetting } from '../../engines/api/concurrency-limit.js';
import type { ReportFile } from './report-file.js';
import { commitTogether } from '../../write/atomic-file.js';
import type { Io } from '../io.js';

/**
 * `validate --dry-run`: the real pipeline (reading, precheck, dedupe,
 * journal/cache lookups, batching) against a validator that only counts what it
 * would have sent, and a writer that writes nothing: the figures cannot drift
 * from what a real run does, nothing leaves the machine and no output file is
 * created. The report is this command's result, so it goes to stdout
 * (`--dry-run | less` works).
 */
export async function runDryRun(
  input: Input,
  engine: 'api' | 'local',
  options: { batchSize: number; concurrency: ConcurrencySetting; terminal: TerminalFlags; stop?: AbortSignal; report?: ReportFile },
  io: Pick<Io, 'stdout' | 'env' | 'clock'>,
  /** the --journal/--cache answers, so the report leaves out what is already known */
  known?: KnownVerdicts,
  /** the API settings, which a dry run does not try: it says so, and how to */
  api?: { baseUrl: string; baseUrlSource: string; keySource: string },
): Promise<void> {
  const counter = new CountingValidator(engine);
  const { summary } = await validateStream({
    input,
    clock: io.clock,
    validator: counter,
    writer: discardingWriter,
    batchSize: options.batchSize,
    concurrency: batchesInFlight(counter, options.concurrency),
    known,
    onRow: options.report?.onRow,
    ...(options.stop ? { stop: options.stop } : {}),
  });
  const alreadyKnown = summary.fromJournal + summary.fromCache;
  const figures = {
    rows: summary.total,
    distinctAddresses: counter.addresses + alreadyKnown,
    duplicates: summary.duplicates,
    prechecked: summary.prechecked,
    empty: summary.empty,
    ...(summary.columns ? { columns: summary.columns } : {}),
    alreadyKnown,
    toSend: counter.addresses,
    engine,
    batchSize: options.batchSize,
    requests: engine === 'api' ? counter.batches : 0,
    concurrency: options.concurrency,
  };
  io.stdout.write(renderDryRun(figures, terminalPolicy(io.stdout, options.terminal, io.env).color));
  const page = await options.report?.write(summary, { dryRun: figures }, options.stop?.aborted ? 'partial' : 'complete');
  if (page) await commitTogether([page]);
  if (api) {
    // the same settings, given the same way: check reads the same flags and environment
    const flagsToRepeat = [
      api.baseUrlSource === '--base-url' ? `--base-url ${api.baseUrl} ` : '',
      api.keySource.startsWith('--') ? `${api.keySource} ` : '',
    ].join('');
    io.stdout.write(
      `  not tried  the API at ${api.baseUrl} (${api.baseUrlSource}) and the key (${api.keySource}) were not contacted;\n` +
        `             to try both with one address: mailsift check ${flagsToRepeat}someone@example.com\n`,
    );
  }
}

class CountingValidator implements Validator {
  batches = 0;
  addresses = 0;

  constructor(readonly engine: 'api' | 'local') {}

  async validate(emails: readonly string[]): Promise<Verdict[]> {
    this.batches++;
    this.addresses += emails.length;
    // An error verdict is never recorded in a journal or cache.
    return emails.map((e) => errorVerdict(e, 'DRY_RUN', 'not sent'));
  }

  stats() {
    return { requests: 0, retries: 0, rateLimited: 0 };
  }

  async close(): Promise<void> {}
}

const discardingWriter: RowWriter = {
  begin: async () => {},
  row: () => {},
  drain: async () => {},
  end: async () => {},
};
