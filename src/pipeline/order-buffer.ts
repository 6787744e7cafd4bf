import type { InputRow } from '../read/input-row.js';
import type { Verdict } from '../verdict.js';

/**
 * Restores input order: verdicts arrive batch by batch, in any order, and a row
 * is released only when every row before it has been. Rows are known by their
 * sequence number in the input; the pipeline bounds how many it holds (the
 * batches in flight), not the input size.
 *
 * Rows and verdicts sit in two parallel arrays rather than in an object per row:
 * a million rows pass through here, and each object would be one more thing for
 * the garbage collector to copy while the row waits.
 */
export class OrderBuffer {
  private rows: (InputRow | undefined)[] = [];
  private verdicts: (Verdict | undefined)[] = [];
  /** index of the next row to release */
  private head = 0;
  /** sequence number of rows[0] */
  private base = 0;
  /**
   * rows that have their verdict, released or not: what the engine has
   * answered, where `release` can pass on only what no earlier row holds back
   */
  answered = 0;

  get size(): number {
    return this.rows.length - this.head;
  }

  /** Adds the next input row, with its verdict if it already has one; returns its sequence number. */
  push(row: InputRow, verdict?: Verdict): number {
    this.rows.push(row);
    this.verdicts.push(verdict);
    if (verdict !== undefined) this.answered++;
    return this.base + this.rows.length - 1;
  }

  /** The row `seq`, not yet released. */
  rowAt(seq: number): InputRow {
    return this.rows[seq - this.base]!;
  }

  answer(seq: number, verdict: Verdict): void {
    if (this.verdicts[seq - this.base] === undefined) this.answered++;
    this.verdicts[seq - this.base] = verdict;
  }

  /** Hands every answered row at the head, in order, to `emit`. */
  release(emit: (row: InputRow, verdict: Verdict) => void): void {
    const rows = this.rows;
    const verdicts = this.verdicts;
    while (this.head < rows.length) {
      const v = verdicts[this.head];
      if (v === undefined) break;
      emit(rows[this.head]!, v);
      // released: let the row and its verdict be collected before compaction
      rows[this.head] = undefined;
      verdicts[this.head] = undefined;
      this.head++;
    }
    // Compact now and then rather than shift() per row.
    if (this.head > 4096 && this.head * 2 > rows.length) {
      this.rows = rows.slice(this.head);
      this.verdicts = verdicts.slice(this.head);
      this.base += this.head;
      this.head = 0;
    }
  }
}
