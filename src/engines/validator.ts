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
  /**
   * Requests the engine lets through at once now, for an engine whose limit
   * moves as the run goes (the API client: its in-flight limit, adaptive or
   * pinned); absent for one that keeps its own limits (the offline engine).
   * The pipeline sizes its batches in flight on it (batchesInFlight).
   */
  requestsAllowed?(): number;
}

/**
 * The most batches the pipeline keeps in flight for each engine, unless its
 * caller pins a number (`--concurrency N`, the library's `concurrency`): for
 * the API, as many as its client may itself put in flight (the ceiling of its
 * adaptive limit, api/concurrency-limit.ts's MAX_IN_FLIGHT: a test holds the
 * two equal); the offline engine has its own limits (DNS, SMTP), and four
 * batches keep it busy.
 */
export const BATCHES_IN_FLIGHT: Readonly<Record<Validator['engine'], number>> = { api: 64, local: 4 };

/**
 * Batches ready beyond what an engine with a moving limit lets through now
 * (see Validator.requestsAllowed). The client refills a freed slot from its
 * own queue at once, before the pipeline hears of the answer; the pipeline
 * then reads and routes one batch to put the queue back (under 4 ms of CPU
 * for 1000 rows, every stage counted: 3.7 µs an address in `npm run bench
 * throughput`). With two queued, the client waits for the pipeline only when
 * two more answers come within that time. 64 batches ahead against a client
 * sending 8 cost 0.6–0.8 s more CPU and 22–55 MB more peak RSS for 1M
 * addresses than two (docs/development.md, the throughput bench's figures).
 */
export const BATCH_LEAD = 2;

/** How many batches the pipeline keeps in flight. */
export interface BatchWindow {
  /** allowed now: asked again before each batch is sent */
  now(): number;
  /** the most `now` gives in the run (the rows the pipeline may hold are bounded on it) */
  readonly most: number;
}

/**
 * The batches in flight for `validator`: `pinned` when the caller pinned a
 * number; else, for an engine whose limit moves (the API client's adaptive
 * limit, from 1 up by slow start), that limit plus BATCH_LEAD, up to the
 * engine's ceiling, so that the rows read ahead follow what the engine can
 * use now rather than the most it ever may; else the engine's own number.
 * The CLI and the library both ask here.
 */
export function batchesInFlight(validator: Pick<Validator, 'engine' | 'requestsAllowed'>, pinned?: number | 'auto'): BatchWindow {
  if (typeof pinned === 'number') return { now: () => pinned, most: pinned };
  const most = BATCHES_IN_FLIGHT[validator.engine];
  const allowed = validator.requestsAllowed?.bind(validator);
  return { now: allowed ? () => Math.min(most, allowed() + BATCH_LEAD) : () => most, most };
}
