import type { Verdict } from '../verdict.js';

/**
 * Verdicts already paid for — the journal of an interrupted run (`--journal`) or
 * the cross-run cache (`--cache`). The pipeline asks before sending an address
 * and reports every batch it finishes; it never knows which store is behind.
 */
export interface KnownVerdicts {
  /** a verdict already obtained for this (trimmed) address, or undefined */
  get(email: string): { verdict: Verdict; source: 'journal' | 'cache' } | undefined;
  /**
   * called once per finished batch with the engine's verdicts, before their
   * rows are written; keeps those final for its kind of store (keptBy)
   */
  record(verdicts: readonly Verdict[]): Promise<void>;
  /** flush and release; called once at the end of a run, interrupted or not */
  close(): Promise<void>;
}
