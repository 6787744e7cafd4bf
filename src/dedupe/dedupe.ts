import type { Verdict } from '../verdict.js';
import { Claim, VerdictMemo, type KeyHash } from './verdict-memo.js';

/** What `take` says of a row's address: its verdict now, send it, or wait for the row that sent it. */
export type Take = Verdict | 'send' | 'wait';

/**
 * Deduplication: each distinct address (by its key, see addressKey) is sent
 * once per run, and every later row of it gets the same verdict — at once when
 * it is already answered, or when its answer comes (`settle`).
 */
export class Dedupe {
  private readonly memo: VerdictMemo;
  /**
   * the addresses sent and not yet answered, with the later rows (sequence
   * numbers) that wait for them; as many as the batches in flight hold
   */
  private readonly pending = new Map<string, { ticket: number; rows: number[] | undefined }>();

  /** `hash` only chooses slots (a test injects a degenerate one to make every key collide). */
  constructor(hash?: KeyHash) {
    this.memo = new VerdictMemo(hash);
  }

  /**
   * The row `seq` holds `email`, whose key is `key`. A verdict: a duplicate of
   * an answered address, under this row's spelling. 'wait': a duplicate of one
   * sent, answered through `settle`. 'send': first sight — the caller gets a
   * verdict for it (from the engine, a journal or a cache) and settles it.
   */
  take(key: string, email: string, seq: number): Take {
    const ticket = this.memo.claim(key);
    switch (this.memo.claimed) {
      case Claim.Done:
        return this.memo.verdictAt(ticket, key, email);
      case Claim.Pending: {
        const p = this.pending.get(key)!;
        (p.rows ??= []).push(seq);
        return 'wait';
      }
      default:
        this.pending.set(key, { ticket, rows: undefined });
        return 'send';
    }
  }

  /** Files the verdict of an address `take` said to send; returns the rows that wait for it (their own spelling aside). */
  settle(key: string, verdict: Verdict): readonly number[] {
    const p = this.pending.get(key);
    if (p === undefined) return NONE;
    this.pending.delete(key);
    this.memo.fulfil(p.ticket, key, verdict);
    return p.rows ?? NONE;
  }
}

const NONE: readonly number[] = [];
