/**
 * A live view of a run, updated in place by the pipeline and read (polled) by the
 * terminal layer: the core never prints, and polling keeps a fast run from
 * flooding a renderer with events.
 */
export interface Progress {
  rowsRead: number;
  /** distinct addresses to answer so far (by the engine, the journal or the cache) */
  addressesQueued: number;
  /** distinct addresses answered so far (engine, journal or cache) */
  addressesDone: number;
  rowsWritten: number;
  /** true once the whole input has been read: the totals above are then final */
  inputDone: boolean;
  /** epoch ms until which dispatch waits for a rate-limit reset, if it does */
  rateLimitWaitUntil?: number;
  startedAt: number;
  /** the reader's byte count, live, with the input's size when known (files, not stdin) */
  inputBytes?: { read: number; total?: number };
}

export function newProgress(now = Date.now()): Progress {
  return { rowsRead: 0, addressesQueued: 0, addressesDone: 0, rowsWritten: 0, inputDone: false, startedAt: now };
}
