import { CountingValidator, discardingWriter, dryRunFigures } from './dry-run-figures.js';
import { validateStream } from '../pipeline/validate-stream.js';
import type { KnownVerdicts } from '../pipeline/known-verdicts.js';
import type { Input } from '../read/input-row.js';
import { renderDryRun } from '../terminal/dry-run-report.js';
import { terminalPolicy } from '../terminal/style.js';
import type { TerminalFlags } from '../terminal/style.js';

/**
 * `validate --dry-run`: the real pipeline with a validator that only counts,
 * so nothing is sent and no output file is created. The report is this
 * command's result, so it goes to stdout (`--dry-run | less` works).
 */
export async function runDryRun(
  input: Input,
  engine: 'api' | 'local',
  options: { batchSize: number; concurrency: number; terminal: TerminalFlags },
  /** the --journal/--cache answers, so the report leaves out what is already known */
  known?: KnownVerdicts,
  /** the API settings, which a dry run does not try: it says so, and how to */
  api?: { baseUrl: string; baseUrlSource: string; keySource: string },
): Promise<void> {
  const counter = new CountingValidator(engine);
  const { summary } = await validateStream({
    input,
    validator: counter,
    writer: discardingWriter,
    batchSize: options.batchSize,
    concurrency: options.concurrency,
    known,
  });
  const figures = dryRunFigures(summary, counter, options);
  process.stdout.write(renderDryRun(figures, terminalPolicy(process.stdout, options.terminal).color));
  if (api) {
    // the same settings, given the same way: check reads the same flags and environment
    const flagsToRepeat = [
      api.baseUrlSource === '--base-url' ? `--base-url ${api.baseUrl} ` : '',
      api.keySource.startsWith('--') ? `${api.keySource} ` : '',
    ].join('');
    process.stdout.write(
      `  not tried  the API at ${api.baseUrl} (${api.baseUrlSource}) and the key (${api.keySource}) were not contacted;\n` +
        `             to try both with one address: mailsift check ${flagsToRepeat}someone@example.com\n`,
    );
  }
}
