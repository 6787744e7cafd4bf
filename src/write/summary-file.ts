import type { Summary } from '../summary.js';
import { openAtomic, writeOnly, type AtomicFile, type Placement, type StdStreams } from './atomic-file.js';
import type { Outcome } from './outputs.js';

/**
 * `--summary FILE`, opened before the first request like every output (an
 * unwritable path found after a paid run would lose nothing but still fail it),
 * written at the end, whole (atomic-file.ts). A run that ends without a summary
 * leaves the file as it was.
 */
export class SummaryFile {
  private constructor(
    private readonly path: string,
    private readonly file: AtomicFile,
  ) {}

  /** `std`: the run's stdout and stderr, which the path may name (`--summary /dev/stderr`) */
  static async open(path: string, std?: StdStreams): Promise<SummaryFile> {
    return new SummaryFile(path, await openAtomic(path, `the summary to ${path}`, std ? { std } : {}));
  }

  /**
   * Writes the summary beside its target, to be put in place with the run's other
   * outputs (commitTogether): an interrupted run's (`partial`) only where no summary was.
   */
  async write(summary: Summary, outcome: Exclude<Outcome, 'failed'> = 'complete'): Promise<Placement> {
    const text = JSON.stringify(summary, null, 2) + '\n';
    await writeOnly(this.file, text, `the summary to ${this.path}`);
    return { file: this.file, mode: outcome === 'complete' ? 'replace' : 'create', label: this.path };
  }

  /** The run ends without a summary. */
  discard(): Promise<void> {
    return this.file.discard();
  }
}
