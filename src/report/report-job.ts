import { reasonOf } from '../reason.js';
import type { Summary } from '../summary.js';
import type { Verdict } from '../verdict.js';
import { VERSION } from '../version.js';
import { renderReport, type ReportMeta } from './render.js';
import { checkReportPath, writeFileAtomic } from './report-file.js';
import { ReportTally } from './tally.js';

/**
 * `--report FILE` for one run, at the edge: the path checked before the run,
 * the tally fed each row as it leaves the pipeline, the page written at the end.
 */
export class ReportJob {
  private readonly tally = new ReportTally();

  private constructor(
    readonly path: string,
    private readonly run: Pick<ReportMeta, 'input' | 'engine'>,
  ) {}

  static async open(path: string, run: Pick<ReportMeta, 'input' | 'engine'>): Promise<ReportJob> {
    await checkReportPath(path);
    return new ReportJob(path, run);
  }

  /** for validateStream's `onRow` */
  readonly onRow = (verdict: Verdict): void => {
    this.tally.add(verdict, reasonOf(verdict));
  };

  write(summary: Summary, more: Pick<ReportMeta, 'output' | 'dryRun'> = {}): Promise<void> {
    const page = renderReport(this.tally, { ...this.run, ...more, summary, finishedAt: new Date(), version: VERSION });
    return writeFileAtomic(this.path, page, `the report to ${this.path}`);
  }
}
