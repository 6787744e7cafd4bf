import { describe, expect, it } from 'vitest';
import { ReportTally, TYPO_EXAMPLES } from '../../src/report/tally.js';
import { TopDomains } from '../../src/report/top-domains.js';
import { verdict } from './verdict.js';

describe('TopDomains', () => {
  it('counts exactly while the domains fit, with the statuses broken out', () => {
    const t = new TopDomains(10);
    for (const [d, s] of [
      ['a.test', 'valid'],
      ['b.test', 'invalid'],
      ['a.test', 'risky'],
      ['a.test', 'unknown'],
      ['b.test', 'valid'],
    ] as const)
      t.add(d, s);
    expect(t.approximate).toBe(false);
    expect(t.top(5)).toEqual([
      { domain: 'a.test', rows: 3, invalid: 0, risky: 1, unknown: 1, over: 0 },
      { domain: 'b.test', rows: 2, invalid: 1, risky: 0, unknown: 0, over: 0 },
    ]);
  });

  it('holds no more than its slots however many domains pass, and keeps the frequent ones with a bound on their error', () => {
    const slots = 1000;
    const t = new TopDomains(slots);
    // 100,000 distinct one-row domains, with three big ones spread among them
    const every = { 'gmail.test': 33, 'yahoo.test': 50, 'corp.test': 100 };
    const big: Record<string, number> = {};
    let n = 0;
    for (let i = 0; i < 100_000; i++) {
      t.add(`d${i}.test`, 'valid');
      n++;
      for (const [domain, period] of Object.entries(every)) {
        if (i % period === 0) {
          t.add(domain, 'invalid');
          big[domain] = (big[domain] ?? 0) + 1;
          n++;
        }
      }
    }
    expect(t.size).toBe(slots);
    expect(t.approximate).toBe(true);
    const top = t.top(3);
    expect(top.map((d) => d.domain)).toEqual(['gmail.test', 'yahoo.test', 'corp.test']);
    for (const d of top) {
      const truth = big[d.domain]!;
      // Space-Saving: the true count lies in [rows - over, rows], and over is at most n / slots
      expect(d.rows - d.over).toBeLessThanOrEqual(truth);
      expect(d.rows).toBeGreaterThanOrEqual(truth);
      expect(d.over).toBeLessThanOrEqual(n / slots);
      // the statuses are those of the rows counted as the domain's own
      expect(d.invalid).toBe(d.rows - d.over);
    }
  });
});

describe('ReportTally', () => {
  it('counts every row by status, reason, domain and typo', () => {
    const t = new ReportTally();
    t.add(verdict('a@x.test', 'valid', { domain: 'x.test' }), '');
    t.add(verdict('b@X.test', 'valid'), ''); // no domain detail: taken from the address, lower-cased
    t.add(verdict('info@x.test', 'risky', { domain: 'x.test', role: true }), 'role');
    t.add(verdict('c@gmial.com', 'invalid', { domain: 'gmial.com', suggestion: 'c@gmail.com' }), 'domain_not_found');
    t.add(verdict('d@gmial.com', 'risky', { domain: 'gmial.com', suggestion: 'd@gmail.com' }), 'typo');
    t.add(verdict('e@hotmial.com', 'valid', { domain: 'hotmial.com', suggestion: 'e@hotmail.com' }), '');
    t.add(verdict('not an address', 'invalid', { syntax: false }), 'syntax');
    t.add(verdict('', 'invalid', { syntax: false }), 'syntax');

    // every row in exactly one group (the rows and statuses themselves are the summary's)
    expect(t.byGroup().reduce((n, g) => n + g.rows, 0)).toBe(8);
    expect(t.reasonsGiven).toBe(true);
    expect(t.byGroup()).toEqual([
      { status: 'valid', reason: '', fixable: false, rows: 3 },
      { status: 'invalid', reason: 'syntax', fixable: false, rows: 2 },
      { status: 'invalid', reason: 'domain_not_found', fixable: true, rows: 1 },
      { status: 'risky', reason: 'role', fixable: false, rows: 1 },
      { status: 'risky', reason: 'typo', fixable: true, rows: 1 },
    ]);
    expect(t.noDomain).toBe(2);
    expect(t.domains.top(2).map((d) => [d.domain, d.rows])).toEqual([
      ['x.test', 3],
      ['gmial.com', 2],
    ]);
    // three rows carry a suggestion; the valid one needs no fixing
    expect([t.typoRows, t.typoNotValid]).toEqual([3, 2]);
    expect(t.topTypos(5)).toEqual([
      { from: 'gmial.com', to: 'gmail.com', rows: 2 },
      { from: 'hotmial.com', to: 'hotmail.com', rows: 1 },
    ]);
    // one example per misspelling
    expect(t.typoExamples.map((e) => e.email)).toEqual(['c@gmial.com', 'e@hotmial.com']);
  });

  it('takes no reason when the caller has none, and says so', () => {
    const t = new ReportTally();
    t.add(verdict('a@x.test', 'risky'));
    expect(t.reasonsGiven).toBe(false);
    expect(t.byGroup()).toEqual([{ status: 'risky', reason: '', fixable: false, rows: 1 }]);
  });

  it('keeps a bounded number of typo examples', () => {
    const t = new ReportTally();
    for (let i = 0; i < 50; i++) t.add(verdict(`u@gmai${i}.com`, 'risky', { suggestion: 'u@gmail.com' }), 'typo');
    expect(t.typoExamples).toHaveLength(TYPO_EXAMPLES);
    expect(t.typoRows).toBe(50);
  });
});
