import { CountingValidator, discardingWriter, dryRunFigures } from '../pipeline/dry-run.js';
import { validateStream } from '../pipeline/validate-stream.js';
import type { KnownVerdicts } from '../pipeline/known-verdicts.js';
import type { Input } from '../read/input-row.js';
import { renderDryRun } from '../terminal/dry-run-report.js';
import { terminalPolicy } from '../terminal/style.js';
import type { ValidateFlags } from './run-validate.js';

/**
 * `validate --dry-run`: the real pipeline with a validator that only counts,
 * so nothing is sent and no output file is created. The report is this
 * command's result, so it goes to stdout (`--dry-run | less` works).
 */
export async function runDryRun(
  input: Input,
  engine: 'api' | 'local',
  flags: ValidateFlags,
  /** the --journal/--cache answers, so the report leaves out what is already known */
  known?: KnownVerdicts,
): Promise<void> {
  const counter = new CountingValidator(engine);
  const { summary } = await validateStream({
    input,
    validator: counter,
    writer: discardingWriter,
    batchSize: flags.batchSize,
    concurrency: flags.concurrency,
    known,
  });
  const figures = dryRunFigures(summary, counter, { batchSize: flags.batchSize, concurrency: flags.concurrency });
  process.stdout.write(renderDryRun(figures, terminalPolicy(process.stdout, flags).color));
}
