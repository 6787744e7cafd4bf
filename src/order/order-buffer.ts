import type { Verdict } from '../verdict.js';

/** A row waiting for its verdict; slots leave the buffer in input order. */
export interface Slot {
  fields: string[];
  /** the row's address, trimmed: its verdict is reported under this spelling */
  email: string;
  verdict: Verdict | undefined;
}

/** Stands in for released slots until compaction, so their rows can be collected. */
const RELEASED: Slot = { fields: [], email: '', verdict: undefined };

/**
 * Restores input order: verdicts arrive batch by batch, in any order, and a row
 * is released only when every row before it has been. The pipeline bounds how
 * many slots it holds (the batches in flight), not the input size.
 */
export class OrderBuffer {
  private slots: Slot[] = [];
  private head = 0;

  get size(): number {
    return this.slots.length - this.head;
  }

  push(fields: string[], email: string, verdict?: Verdict): Slot {
    const slot: Slot = { fields, email, verdict };
    this.slots.push(slot);
    return slot;
  }

  /** Hands every resolved row at the head, in order, to `emit`. */
  release(emit: (slot: Slot) => void): void {
    while (this.head < this.slots.length && this.slots[this.head]!.verdict !== undefined) {
      emit(this.slots[this.head]!);
      this.slots[this.head] = RELEASED;
      this.head++;
    }
    // Compact now and then rather than shift() per row.
    if (this.head > 4096 && this.head * 2 > this.slots.length) {
      this.slots = this.slots.slice(this.head);
      this.head = 0;
    }
  }
}
