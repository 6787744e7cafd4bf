import { emptySummary, type Summary } from '../summary.js';
import type { ValidatorStats } from '../engines/validator.js';
import type { FailureCount } from '../engines/failure.js';
import type { Verdict } from '../verdict.js';
import { REASONS, type Reason } from '../reason.js';
import { keeps, type RowFilter } from '../write/row-filter.js';
import { systemClock, type Clock } from '../time/clock.js';

/** How far a run has got: what the progress line shows. */
export interface RunProgress {
  rowsRead: number;
  /** distinct addresses to answer so far (by the engine, the journal or the cache) */
  addressesQueued: number;
  /** distinct addresses answered so far (engine, journal or cache) */
  addressesDone: number;
  rowsWritten: number;
  /**
   * rows with their verdict, written or not: a slow batch holds back the
   * writing of every row after it (output order is input order), not their
   * answers, so this is what tells how far the work has got
   */
  rowsAnswered: number;
  /** of addressesDone, those answered from the journal or the cache (not by the engine) */
  addressesReused: number;
  /** true once the whole input has been read: the totals above are then final */
  inputDone: boolean;
}

/** How a run ended, and how its failures read to a person: what the summary says beyond the counts. */
export interface RunEnd {
  /** the run stopped (Ctrl-C, SIGTERM) before every row was written */
  interrupted: boolean;
  /** the engine's failures, one entry per cause, with advice (the CLI knows the flags to name) */
  explainFailures?: (failures: readonly FailureCount[]) => Summary['failures'];
}

/**
 * The one owner of a run's counters: the pipeline counts here, the progress
 * events are read from here, and the summary is built here once, at the end.
 */
export class Tally {
  rowsRead = 0;
  addressesQueued = 0;
  addressesDone = 0;
  inputDone = false;
  /** the rows' counts, in the summary's own shape (prechecked and duplicates are counted by the pipeline) */
  readonly counts: Summary;
  private readonly startedAt: number;

  constructor(
    engine: Summary['engine'],
    /** --unique: the summary always says how many duplicates it left out */
    private readonly unique = false,
    /** what the run's elapsed time is read on */
    private readonly clock: Clock = systemClock,
  ) {
    this.startedAt = clock.now();
    this.counts = emptySummary(engine);
  }

  /** An address answered from the journal or the cache: queued and done at once, so progress never passes 100%. */
  reused(source: 'journal' | 'cache'): void {
    if (source === 'journal') this.counts.fromJournal++;
    else this.counts.fromCache++;
    this.addressesQueued++;
    this.addressesDone++;
  }

  /** rows by reason, while the run lasts (the summary lists them in the vocabulary's order) */
  private readonly reasons = new Map<Reason, number>();

  /**
   * A row leaves in order with its verdict; true when the filter (--only,
   * --except, --unique for a `duplicate`) lets it be written. Every row is
   * counted, written or not.
   */
  written(v: Verdict, reason: Reason | '', filter: RowFilter, duplicate = false): boolean {
    const s = this.counts;
    s.total++;
    s[v.status]++;
    if (v.error) s.errors++;
    if (v.outage) (s.outage ??= {})[v.outage] = (s.outage[v.outage] ?? 0) + 1;
    if (reason !== '') this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + 1);
    if (duplicate && filter.unique) {
      s.duplicatesRemoved = (s.duplicatesRemoved ?? 0) + 1;
      return false;
    }
    if (!keeps(filter, v, reason)) return false;
    s.written++;
    return true;
  }

  /** `rowsAnswered`: kept by the order buffer, which every verdict passes */
  progress(rowsAnswered: number): RunProgress {
    const { rowsRead, addressesQueued, addressesDone, inputDone } = this;
    const addressesReused = this.counts.fromJournal + this.counts.fromCache;
    return { rowsRead, addressesQueued, addressesDone, rowsWritten: this.counts.total, rowsAnswered, addressesReused, inputDone };
  }

  /** The run's summary, whole: the rows' counts with the engine's own, and how the run ended. */
  summary(stats: ValidatorStats, end: RunEnd = { interrupted: false }): Summary {
    const s = this.counts;
    if (end.interrupted) s.interrupted = true;
    if (stats.failures?.length && end.explainFailures) s.failures = end.explainFailures(stats.failures);
    s.requests = stats.requests;
    s.retries = stats.retries;
    s.rateLimited = stats.rateLimited;
    if (stats.rateLimitWaits !== undefined) s.rateLimitWaits = stats.rateLimitWaits;
    if (stats.disposableListVersion) s.disposableListVersion = stats.disposableListVersion;
    if (stats.warnings?.length) s.warnings = stats.warnings;
    if (stats.smtp) s.smtp = { ...stats.smtp };
    if (stats.concurrency) s.concurrency = { ...stats.concurrency };
    s.reasons = {};
    for (const r of REASONS) {
      const n = this.reasons.get(r);
      if (n) s.reasons[r] = n;
    }
    if (this.unique) s.duplicatesRemoved ??= 0;
    s.elapsedMs = this.clock.now() - this.startedAt;
    return s;
  }
}
