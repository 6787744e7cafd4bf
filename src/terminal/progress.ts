import type { RunProgress } from '../pipeline/tally.js';
import type { InputBytes } from '../read/input-row.js';

/**
 * What the progress line shows, owned by the CLI: the pipeline's progress
 * events and the API client's rate-limit waits are copied in as they come, and
 * the display polls it, so a fast run never floods the renderer.
 */
export interface Progress extends RunProgress {
  /** epoch ms until which dispatch waits for a rate-limit reset, if it does */
  rateLimitWaitUntil?: number;
  startedAt: number;
  /** the reader's byte count, live, with the input's size when known (files, not stdin) */
  inputBytes?: InputBytes;
  /**
   * the engine's finished checks, in addresses (parts of one while an address
   * is half done): what moves the line while a batch waits on DNS or SMTP
   */
  addressesChecked: number;
}

/** `now`: the run's start, epoch ms (io.clock's) */
export function newProgress(now: number): Progress {
  return {
    rowsRead: 0,
    addressesQueued: 0,
    addressesDone: 0,
    rowsWritten: 0,
    rowsAnswered: 0,
    addressesReused: 0,
    inputDone: false,
    startedAt: now,
    addressesChecked: 0,
  };
}
