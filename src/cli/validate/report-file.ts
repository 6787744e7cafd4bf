import { UsageError } from '../../errors.js';
import type { Reason } from '../../reason.js';
import { renderReport, type ReportMeta } from '../../report/render.js';
import { ReportTally } from '../../report/tally.js';
import type { Summary } from '../../summary.js';
import type { Verdict } from '../../verdict.js';
import { VERSION } from '../../version.js';
import { openAtomic, writeOnly, type AtomicFile, type Placement, type StdStreams } from '../../write/atomic-file.js';
import type { Outcome } from '../../write/outputs.js';

/**
 * `--report FILE` for one run, at the edge: the file opened before the first
 * request (a path that cannot be written fails the run before anything is
 * paid for), the tally fed every row as it leaves the pipeline, the page
 * written at the end, whole (atomic-file.ts).
 */
export class ReportFile {
  private readonly tally = new ReportTally();

  private constructor(
    private readonly path: string,
    private readonly file: AtomicFile,
    private readonly run: Pick<ReportMeta, 'input' | 'engine'>,
    private readonly clock: { now(): number },
  ) {}

  /** `io`: the run's stdout and stderr, which the path may name, and the clock that dates the page */
  static async open(path: string, run: Pick<ReportMeta, 'input' | 'engine'>, io: StdStreams & { clock: { now(): number } }): Promise<ReportFile> {
    if (path === '-' || path === '') throw new UsageError(`--report ${path}: give the name of an .html file to write`);
    return new ReportFile(path, await openAtomic(path, `the report to ${path}`, { std: { stdout: io.stdout, stderr: io.stderr } }), run, io.clock);
  }

  /** for validateStream's `onRow` */
  readonly onRow = (verdict: Verdict, reason: Reason | ''): void => {
    this.tally.add(verdict, reason);
  };

  /**
   * Writes the page beside its target, to be put in place with the run's other
   * outputs (commitTogether): an interrupted run's (`partial`) only where no report was.
   */
  async write(summary: Summary, more: Pick<ReportMeta, 'output' | 'dryRun'>, outcome: Exclude<Outcome, 'failed'>): Promise<Placement> {
    const page = renderReport(this.tally, { ...this.run, ...more, summary, finishedAt: new Date(this.clock.now()), version: VERSION });
    await writeOnly(this.file, page, `the report to ${this.path}`);
    return { file: this.file, mode: outcome === 'complete' ? 'replace' : 'create', label: this.path };
  }

  /** The run ends without a report: the file stays as it was. */
  discard(): Promise<void> {
    return this.file.discard();
  }
}
