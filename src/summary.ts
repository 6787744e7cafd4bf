/** The run's summary; printed on stderr, written by --summary. */
export interface Summary {
  total: number;
  valid: number;
  invalid: number;
  risky: number;
  unknown: number;
  /**
   * rows by reason (a token of REASONS in reason.ts, which sits above this
   * module), duplicates included; only the reasons that occurred, in the
   * vocabulary's order
   */
  reasons: Record<string, number>;
  /** rows carrying an `error` (no verdict could be obtained) */
  errors: number;
  /** rows whose address already appeared earlier in the input */
  duplicates: number;
  /** --unique: the duplicates left out of the output */
  duplicatesRemoved?: number;
  requests: number;
  retries: number;
  /** 429 answers */
  rateLimited: number;
  /** pauses until a rate-limit window reset (the pacing that avoids 429s, and after one) */
  rateLimitWaits?: number;
  elapsedMs: number;
  /** distinct addresses answered from --journal or --cache instead of the engine */
  fromJournal: number;
  fromCache: number;
  /** rows rejected by the local precheck without an engine call (not counting empty ones) */
  prechecked: number;
  /**
   * rows whose address cell is empty (status `invalid`, reason `empty`):
   * counted apart, and left out of the shares --fail-on judges
   */
  empty: number;
  /** the column(s) checked for addresses, and how they were chosen (a table's; absent for a text input) */
  columns?: CheckedColumn[];
  engine: 'api' | 'local';
  /** rows written after --only filtering */
  written: number;
  disposableListVersion?: string;
  warnings?: string[];
  /** why rows got no verdict: one entry per distinct cause, with advice (API engine) */
  failures?: { kind: string; cause: string; addresses: number; advice: string }[];
  /**
   * the cache (Redis) stopped answering mid-run: the run went on without it, and
   * `unstored` verdicts it paid for are not in the cache (the next run asks again)
   */
  cacheLost?: { cache: string; unstored: number };
  /** set when Ctrl-C or SIGTERM stopped the run before every row was written */
  interrupted?: boolean;
  /**
   * rows the run's own means failed for, by which (the DNS resolver unusable;
   * outbound SMTP judged blocked): not recorded as final, exit 4; absent when none
   */
  outage?: { dns?: number; smtp?: number };
  /** the mailbox check (--smtp), present only when it was on */
  smtp?: SmtpStats;
  /** API requests in flight (API engine) */
  concurrency?: ConcurrencyStats;
}

/** A column checked for addresses: its header, its 1-based number, and whether --column, its header or its cells chose it. */
export interface CheckedColumn {
  name: string;
  number: number;
  by: 'flag' | 'header' | 'content';
}

/** How many API requests were in flight: the limit's mode, the most at once, the average over the run. */
export interface ConcurrencyStats {
  /** auto: the limit followed the server (--concurrency auto); fixed: --concurrency N */
  mode: 'auto' | 'fixed';
  peak: number;
  /** time-weighted, from the first request sent to the last answer; one decimal */
  mean: number;
}

/** What the mailbox check (--smtp) did in a run. */
export interface SmtpStats {
  /** addresses the check was asked about (distinct; not dialled when cached, blocked or a known provider) */
  asked: number;
  /** accepted by a domain that is not catch-all */
  accepted: number;
  /** refused as unknown, or mailbox full */
  refused: number;
  /** accepted by a catch-all domain */
  catchAll: number;
  undetermined: number;
  /** SMTP connections opened */
  sessions: number;
}

export function emptySummary(engine: 'api' | 'local'): Summary {
  return {
    total: 0,
    valid: 0,
    invalid: 0,
    risky: 0,
    unknown: 0,
    reasons: {},
    errors: 0,
    duplicates: 0,
    requests: 0,
    retries: 0,
    rateLimited: 0,
    elapsedMs: 0,
    fromJournal: 0,
    fromCache: 0,
    prechecked: 0,
    empty: 0,
    engine,
    written: 0,
  };
}

/** What a dry run found, counted by the pipeline; the terminal and the HTML report each show it. */
export interface DryRunCounts {
  rows: number;
  /** distinct addresses after trimming and case-folding the domain */
  distinctAddresses: number;
  duplicates: number;
  /** rows the local precheck answers `invalid` without a call */
  prechecked: number;
  /** rows whose address cell is empty */
  empty: number;
  /** the column(s) that would be checked (a table's) */
  columns?: CheckedColumn[];
  /** distinct addresses already answered by --journal or --cache */
  alreadyKnown: number;
  /** distinct addresses that would go to the engine */
  toSend: number;
  /** bulk requests it would send (0 with the local engine) */
  requests: number;
}
