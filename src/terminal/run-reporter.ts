import { EXIT } from '../errors.js';
import type { Progress } from './progress.js';
import type { Summary } from '../summary.js';
import { evaluateFailOn, type FailOnRule } from './fail-on.js';
import { renderFailure } from './failure-advice.js';
import { outageLines } from '../report/outage.js';
import { ProgressDisplay } from './progress-display.js';
import { renderSummary } from './summary-table.js';
import { say, sayLine } from './say.js';
import { terminalPolicy, type TerminalFlags, type TerminalPolicy, type TerminalStream } from './style.js';
import type { Clock } from '../time/clock.js';

export interface RunReporterOptions {
  flags: TerminalFlags;
  failOn?: readonly FailOnRule[];
  /** where the verdicts went, as the user should read it: a path or "stdout" */
  output: string;
  summaryFile?: string;
  reportFile?: string;
}

/** What the reporter takes of the run's io: stderr, with its terminal facts, the environment (colour, CI) and the clock. */
export interface ReporterIo {
  stderr: TerminalStream;
  env: Readonly<Record<string, string | undefined>>;
  clock: Clock;
}

/**
 * Everything a validate run shows on stderr, behind one object so the command
 * stays a thin mapping of flags: progress while running, then the summary and
 * the --fail-on verdict. `finish` returns the exit code the run deserves.
 */
export class RunReporter {
  private readonly policy: TerminalPolicy;
  private readonly stderr: TerminalStream;
  private readonly display: ProgressDisplay;

  constructor(
    progress: Progress,
    io: ReporterIo,
    private readonly options: RunReporterOptions,
  ) {
    this.stderr = io.stderr;
    this.policy = terminalPolicy(this.stderr, options.flags, io.env);
    this.display = new ProgressDisplay(progress, { stream: this.stderr, policy: this.policy, clock: io.clock });
  }

  start(): Promise<void> {
    return this.display.start();
  }

  /** A line said mid-run (even with --quiet: the caller decides), above a progress line that goes on. */
  say(line: string): void {
    this.display.interject(sayLine(line));
  }

  /** Clears the progress line; call before printing anything else, and on every way out. */
  stop(): void {
    this.display.stop();
  }

  /**
   * After a run that read the whole input: prints the summary (unless --quiet)
   * and any --fail-on rule that holds (even with --quiet: it is why the exit
   * code is not 0). Rows without a verdict (exit 4) outrank a rule (exit 5):
   * the figures a rule judges are incomplete then. Rules judge complete runs
   * only: an interrupted run's figures say nothing about the list.
   */
  finish(summary: Summary, complete = true, input?: { rowsRead: number; inputDone: boolean }): number {
    this.stop();
    if (this.policy.summary) {
      const { output, summaryFile, reportFile } = this.options;
      this.stderr.write(renderSummary(summary, { color: this.policy.color, output, summaryFile, reportFile, input }));
    }
    // Why rows have no verdict, even with --quiet: it is why the exit code is 4.
    const red = this.policy.color;
    for (const f of summary.failures ?? []) say(this.stderr, renderFailure(f), { red });
    // The run's own DNS or SMTP failed, even with --quiet: it is why the exit code is 4.
    for (const line of outageLines(summary)) say(this.stderr, line, { red });
    const hits = complete ? evaluateFailOn(this.options.failOn ?? [], summary) : [];
    for (const hit of hits) say(this.stderr, hit.message, { red });
    if (summary.errors > 0 || summary.outage) return EXIT.rowErrors;
    return hits.length > 0 ? EXIT.failOn : EXIT.ok;
  }
}
