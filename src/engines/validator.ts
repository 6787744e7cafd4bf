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

/**
 * Batches the pipeline keeps in flight for each engine, unless its caller pins
 * a number (`--concurrency N`, the library's `concurrency`): for the API, as
 * many as its client may itself put in flight (the ceiling of its adaptive
 * limit, api/concurrency-limit.ts's MAX_IN_FLIGHT: a test holds the two
 * equal), so the client never waits for the pipeline; the offline engine has
 * its own limits (DNS, SMTP), and four batches keep it busy. The CLI and the
 * library both ask here.
 */
export const BATCHES_IN_FLIGHT: Readonly<Record<Validator['engine'], number>> = { api: 64, local: 4 };

/** The batches in flight for `engine`: `pinned` when the caller pinned a number, else the engine's own. */
export function batchesInFlight(engine: Validator['engine'], pinned?: number | 'auto'): number {
  return typeof pinned === 'number' ? pinned : BATCHES_IN_FLIGHT[engine];
}
