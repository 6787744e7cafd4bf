import type { Verdict } from '../verdict.js';
import type { ConcurrencyStats, SmtpStats } from '../summary.js';
import type { FailureCount } from './failure.js';

/** What a validator adds to the run's summary. */
export interface ValidatorStats {
  requests: number;
  retries: number;
  /** 429 answers */
  rateLimited: number;
  /** pauses of dispatch until a rate-limit window reset (API engine) */
  rateLimitWaits?: number;
  /** why addresses got no verdict, one entry per distinct cause (API engine) */
  failures?: FailureCount[];
  /** requests in flight: pinned or adaptive, at most and on average (API engine) */
  concurrency?: ConcurrencyStats;
  /** the disposable-domain list's package version, for the local engine */
  disposableListVersion?: string;
  warnings?: string[];
  /** the mailbox check's counts, when it was on (local engine, --smtp) */
  smtp?: SmtpStats;
}

/**
 * The one interface between the pipeline and whatever gives verdicts: the API
 * client (`engines/api`) or the offline engine (`engines/local`). The pipeline
 * must not know which one it talks to.
 */
export interface Validator {
  readonly engine: 'api' | 'local';
  /**
   * Validates distinct, trimmed, prechecked addresses. Resolves with exactly one
   * verdict per address, in any order, each carrying `email` as given; an address
   * that could not be validated gets a verdict with `error` (never a rejection).
   * Rejects only for a failure that must end the run: `AuthError` (exit 3) or an
   * abort.
   */
  validate(emails: readonly string[], signal: AbortSignal): Promise<Verdict[]>;
  stats(): ValidatorStats;
  close(): Promise<void>;
}
