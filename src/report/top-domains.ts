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
  /** where the slot sits in `sorted` */
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
 * off by at most its `over`.
 *
 * The slots are kept sorted by count, most first, with where each count's run
 * of slots starts: a count goes up by one, so a slot only ever moves to the
 * head of its run (the paper's "stream summary", in an array). Each row costs
 * O(1), a new domain past the slots included — a heap's sift was half the
 * cost of a row then.
 */
export class TopDomains {
  private readonly bySlot = new Map<string, Slot>();
  /** rows descending */
  private readonly sorted: Slot[] = [];
  /** count → index in `sorted` of the first slot with that count */
  private readonly runStart = new Map<number, number>();

  constructor(private readonly slots = DOMAIN_SLOTS) {}

  /** true once a domain has been displaced: counts may be over by their `over` */
  approximate = false;

  add(domain: string, status: Status): void {
    let slot = this.bySlot.get(domain);
    if (slot === undefined) {
      if (this.sorted.length < this.slots) {
        // a count of 0 is the least: its place is the end
        slot = { domain, rows: 0, invalid: 0, risky: 0, unknown: 0, over: 0, at: this.sorted.length };
        this.sorted.push(slot);
        if (!this.runStart.has(0)) this.runStart.set(0, slot.at);
      } else {
        slot = this.sorted[this.sorted.length - 1]!;
        this.bySlot.delete(slot.domain);
        slot.domain = domain;
        slot.over = slot.rows;
        slot.invalid = slot.risky = slot.unknown = 0;
        this.approximate = true;
      }
      this.bySlot.set(domain, slot);
    }
    this.bump(slot);
    if (status !== 'valid') slot[status]++;
  }

  /** distinct domains held (all of them while not `approximate`) */
  get size(): number {
    return this.sorted.length;
  }

  /**
   * The `n` domains with the most rows counted as theirs (`rows - over`, so
   * that a rare domain which just inherited a slot's count does not rank),
   * most first; ties by name, so the report is stable.
   */
  top(n: number): DomainCount[] {
    return [...this.sorted]
      .sort((a, b) => b.rows - b.over - (a.rows - a.over) || (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0))
      .slice(0, n)
      .map(({ domain, rows, invalid, risky, unknown, over }) => ({ domain, rows, invalid, risky, unknown, over }));
  }

  /** One more row for `slot`: it moves to the head of its count's run, which then becomes the tail of the next count's. */
  private bump(slot: Slot): void {
    const { sorted, runStart } = this;
    const c = slot.rows;
    const head = runStart.get(c)!;
    const other = sorted[head]!;
    sorted[slot.at] = other;
    other.at = slot.at;
    sorted[head] = slot;
    slot.at = head;
    if (head + 1 < sorted.length && sorted[head + 1]!.rows === c) runStart.set(c, head + 1);
    else runStart.delete(c);
    slot.rows = c + 1;
    if (!runStart.has(c + 1)) runStart.set(c + 1, head);
  }
}
