import { dnsDomain } from './checks.js';
import type { Checks } from './decide.js';

/**
 * How far a batch's checks have come, told as they finish (LocalEngineOptions.onChecked),
 * so that a progress line moves before the batch's verdicts come. Each address
 * adds up to 1 exactly: at once when there is nothing to look up; else its
 * DNS answer is all of it, or half with --smtp, the other half coming once
 * when its mailbox check is over (or is not made).
 */
export class BatchProgress {
  private readonly perDomain = new Map<string, number>();
  /** addresses whose mailbox half is told */
  private readonly credited = new Set<number>();

  constructor(
    private readonly checks: readonly Checks[],
    private readonly tell: ((addresses: number) => void) | undefined,
    /** --smtp: DNS is half of an address's work */
    private readonly halves: boolean,
  ) {
    let nothingToAsk = 0;
    for (const c of checks) {
      const domain = dnsDomain(c);
      if (domain === undefined) nothingToAsk++;
      else this.perDomain.set(domain, (this.perDomain.get(domain) ?? 0) + 1);
    }
    if (nothingToAsk > 0) tell?.(nothingToAsk);
  }

  /** DNS answered for `domain` (once per batch). */
  answered(domain: string): void {
    this.tell?.((this.perDomain.get(domain) ?? 0) * (this.halves ? 0.5 : 1));
  }

  /** The mailbox check is over for these addresses (by index): their other half, once each. */
  checked(indexes: Iterable<number>): void {
    let n = 0;
    for (const i of indexes) {
      if (dnsDomain(this.checks[i]!) === undefined || this.credited.has(i)) continue;
      this.credited.add(i);
      n++;
    }
    if (n > 0) this.tell?.(n * 0.5);
  }

  /** The batch is done: every address's share is told by now. */
  finish(): void {
    if (this.halves) this.checked(this.checks.keys());
  }
}
