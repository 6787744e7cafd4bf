import type { Verdict } from '../verdict.js';
import { VerdictMemo, type KeyHash } from './verdict-memo.js';

/**
 * What `take` says of a row's address: its verdict now (a duplicate);
 * `{ reused }`, the verdict a journal recorded before the run; 'wait' for the
 * row that sent it; or a number, the ticket to send it under and settle it with.
 */
export type Take = Verdict | { reused: Verdict } | 'wait' | number;

/**
 * Deduplication: each distinct address (by its key, see addressKey) is sent
 * once per run, and every later row of it gets the same verdict — at once when
 * it is already answered, or when its answer comes (`settle`).
 */
export class Dedupe {
  private readonly memo: VerdictMemo;
  /** by ticket: the later rows (sequence numbers) of addresses sent and not yet answered */
  private readonly waiting = new Map<number, number[]>();

  /**
   * `resumed`: the verdicts of a journal, loaded into a memo (see openJournal):
   * the run starts from them rather than keeping a second copy of every address
   * and asking the journal per row. `hash` only chooses slots (a test injects a
   * degenerate one to make every key collide).
   */
  constructor(o: { resumed?: VerdictMemo; hash?: KeyHash } = {}) {
    this.memo = o.resumed ?? new VerdictMemo(o.hash);
  }

  /** The keys the next `take`s will ask for, in order (see VerdictMemo.expect): their look-ups overlap. */
  expect(keys: readonly (string | undefined)[]): void {
    this.memo.expect(keys);
  }

  /**
   * The row `seq` holds `email`, whose key is `key`. A verdict: a duplicate of
   * an answered address, under this row's spelling. 'wait': a duplicate of one
   * sent, answered through `settle`. A ticket: first sight, send it — the
   * caller gets a verdict for it (from the engine, a journal or a cache) and
   * settles it under that ticket.
   */
  take(key: string, email: string, seq: number): Take {
    const { kind, ticket } = this.memo.claim(key);
    switch (kind) {
      case 'done':
        return this.memo.verdictAt(ticket, key, email);
      case 'stored':
        return { reused: this.memo.verdictAt(ticket, key, email) };
      case 'pending': {
        const rows = this.waiting.get(ticket);
        if (rows) rows.push(seq);
        else this.waiting.set(ticket, [seq]);
        return 'wait';
      }
      case 'new':
        return ticket;
    }
  }

  /** Files the verdict of an address `take` gave `ticket` to; returns the later rows that wait for it. */
  settle(ticket: number, key: string, verdict: Verdict): readonly number[] {
    this.memo.fulfil(ticket, key, verdict);
    if (this.waiting.size === 0) return NONE;
    const rows = this.waiting.get(ticket);
    if (rows === undefined) return NONE;
    this.waiting.delete(ticket);
    return rows;
  }
}

const NONE: readonly number[] = [];
