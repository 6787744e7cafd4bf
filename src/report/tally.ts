import { domainOf } from '../codec/address-key.js';
import { STATUSES, type Status, type Verdict } from '../verdict.js';
import { TopDomains } from './top-domains.js';

/** Misspelt-domain pairs (gmial.com → gmail.com) counted one by one; the rest are counted together. */
export const TYPO_PAIRS = 1000;
/** addresses shown as examples of typos */
export const TYPO_EXAMPLES = 5;

/** where a status's rows are in a reason's counts: [not fixable, fixable] */
const GROUP_SLOT: Record<Status, number> = { valid: 0, invalid: 2, risky: 4, unknown: 6 };

export interface TypoPair {
  from: string;
  to: string;
  rows: number;
}

export interface TypoExample {
  email: string;
  suggestion: string;
  status: Status;
}

/**
 * What `--report` shows beyond the summary's counts, counted row by row as the
 * rows leave the pipeline in input order — every row, duplicates included,
 * before --only filters. The rows, statuses and reasons themselves are the
 * Summary's (the pipeline's Tally counts them once); this adds what the
 * summary has no room for: each reason's rows by status and by whether a
 * suggestion would fix them, the domains, the typos. Pure and bounded: the
 * domains in `TopDomains`' fixed number of slots, typo pairs up to TYPO_PAIRS,
 * reasons by their fixed vocabulary.
 */
export class ReportTally {
  /**
   * rows by reason ('' for none), then by status and whether a suggestion
   * would fix them (GROUP_SLOT): the reasons chart and the next steps are two
   * views of it. The reason of a row is the caller's to give: the tally takes
   * it, it never derives one. (Keyed by the reason alone, a token that is
   * usually '' or a constant, so that a row costs no new string.)
   */
  private readonly groups = new Map<string, Float64Array>();
  /** false while no row came with a reason (a caller that has none to give) */
  reasonsGiven = false;
  /** rows with no domain to count (an empty cell, no `@`) */
  noDomain = 0;
  readonly domains = new TopDomains();
  /** rows whose verdict carries a did-you-mean suggestion */
  typoRows = 0;
  /** of those, rows that are not valid as written (the suggestion is what would fix them) */
  typoNotValid = 0;
  readonly typoPairs = new Map<string, TypoPair>();
  /** typo rows whose pair came after TYPO_PAIRS others */
  typoOtherRows = 0;
  readonly typoExamples: TypoExample[] = [];

  /** One row, as it leaves in order; `reason` as the verdict's reason column has it ('' for none). */
  add(v: Verdict, reason?: string): void {
    if (reason !== undefined) this.reasonsGiven = true;
    const suggestion = v.details.suggestion;
    const fixable = suggestion !== undefined && suggestion !== '' && v.status !== 'valid';
    const key = reason ?? '';
    let counts = this.groups.get(key);
    if (counts === undefined) this.groups.set(key, (counts = new Float64Array(2 * STATUSES.length)));
    counts[GROUP_SLOT[v.status] + (fixable ? 1 : 0)]!++;

    const at = v.email.lastIndexOf('@');
    const domain = v.details.domain ?? (at < 0 ? '' : domainOf(v.email));
    if (domain === '') this.noDomain++;
    else this.domains.add(domain, v.status);

    if (suggestion !== undefined && suggestion !== '') this.typo(v, domain, suggestion);
  }

  private typo(v: Verdict, domain: string, suggestion: string): void {
    this.typoRows++;
    if (v.status !== 'valid') this.typoNotValid++;
    const to = domainOf(suggestion);
    const key = `${domain}\n${to}`;
    const pair = this.typoPairs.get(key);
    if (pair) pair.rows++;
    else if (this.typoPairs.size < TYPO_PAIRS) {
      this.typoPairs.set(key, { from: domain, to, rows: 1 });
      // one example per misspelling, so that the examples show different ones
      if (this.typoExamples.length < TYPO_EXAMPLES) this.typoExamples.push({ email: v.email, suggestion, status: v.status });
    } else this.typoOtherRows++;
  }

  /** rows by status, reason and fixable (a suggestion for a row not valid as written), in status order then most first */
  byGroup(): { status: Status; reason: string; fixable: boolean; rows: number }[] {
    const groups: { status: Status; reason: string; fixable: boolean; rows: number }[] = [];
    for (const [reason, counts] of this.groups) {
      for (const status of STATUSES) {
        for (const fixable of [false, true]) {
          const rows = counts[GROUP_SLOT[status] + (fixable ? 1 : 0)]!;
          if (rows > 0) groups.push({ status, reason, fixable, rows });
        }
      }
    }
    return groups.sort((a, b) => STATUSES.indexOf(a.status) - STATUSES.indexOf(b.status) || b.rows - a.rows || (a.reason < b.reason ? -1 : 1));
  }

  /** the misspellings with the most rows, most first */
  topTypos(n: number): TypoPair[] {
    return [...this.typoPairs.values()].sort((a, b) => b.rows - a.rows || (a.from < b.from ? -1 : 1)).slice(0, n);
  }
}
