import type { Status } from '../verdict.js';

/** One domain's rows, by the statuses the report breaks out. */
export interface DomainCount {
  domain: string;
  rows: number;
  invalid: number;
  risky: number;
  unknown: number;
  /**
   * rows the slot held before this domain took it (0 while counts are exact):
   * the domain's true row count lies between `rows - over` (the rows counted
   * as its own, whose statuses are the counts above) and `rows`
   */
  over: number;
}

interface Slot extends DomainCount {
  /** where the slot sits in the heap */
  at: number;
}

/** Distinct domains counted exactly before the approximation starts. */
export const DOMAIN_SLOTS = 10_000;

/**
 * Rows per domain in bounded memory: the Space-Saving algorithm (Metwally,
 * Agrawal, El Abbadi, "Efficient Computation of Frequent and Top-k Elements
 * in Data Streams", ICDT 2005). Up to `slots` distinct domains every count is
 * exact. Past that, a new domain takes the slot of the least counted one and
 * inherits its count as `over`, so a million distinct domains still hold
 * `slots` entries; every domain with more than rows/slots rows keeps a slot
 * (a top-20 domain of a real list is far above that), and its count is
 * off by at most its `over`. A min-heap on the row count finds the slot to
 * give up in O(log slots).
 */
export class TopDomains {
  private readonly bySlot = new Map<string, Slot>();
  private readonly heap: Slot[] = [];

  constructor(private readonly slots = DOMAIN_SLOTS) {}

  /** true once a domain has been displaced: counts may be over by their `over` */
  approximate = false;

  add(domain: string, status: Status): void {
    let slot = this.bySlot.get(domain);
    if (slot === undefined) {
      if (this.heap.length < this.slots) {
        slot = { domain, rows: 0, invalid: 0, risky: 0, unknown: 0, over: 0, at: this.heap.length };
        this.heap.push(slot);
        this.bySlot.set(domain, slot);
        this.up(slot.at);
      } else {
        slot = this.heap[0]!;
        this.bySlot.delete(slot.domain);
        this.bySlot.set(domain, slot);
        Object.assign(slot, { domain, over: slot.rows, invalid: 0, risky: 0, unknown: 0 });
        this.approximate = true;
      }
    }
    slot.rows++;
    if (status !== 'valid') slot[status]++;
    this.down(slot.at);
  }

  /** distinct domains held (all of them while not `approximate`) */
  get size(): number {
    return this.heap.length;
  }

  /**
   * The `n` domains with the most rows counted as theirs (`rows - over`, so
   * that a rare domain which just inherited a slot's count does not rank),
   * most first; ties by name, so the report is stable.
   */
  top(n: number): DomainCount[] {
    return [...this.heap]
      .sort((a, b) => b.rows - b.over - (a.rows - a.over) || (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0))
      .slice(0, n)
      .map(({ domain, rows, invalid, risky, unknown, over }) => ({ domain, rows, invalid, risky, unknown, over }));
  }

  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent]!.rows <= h[i]!.rows) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) return;
      const r = l + 1;
      const least = r < h.length && h[r]!.rows < h[l]!.rows ? r : l;
      if (h[i]!.rows <= h[least]!.rows) return;
      this.swap(i, least);
      i = least;
    }
  }

  private swap(i: number, j: number): void {
    const h = this.heap;
    const a = h[i]!;
    const b = h[j]!;
    h[i] = b;
    h[j] = a;
    a.at = j;
    b.at = i;
  }
}
