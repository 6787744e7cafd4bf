import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { emptySummary } from '../../src/summary.js';
import { evaluateFailOn, parseFailOn } from '../../src/terminal/fail-on.js';

const summary = { ...emptySummary('api'), total: 1000, valid: 800, invalid: 72, risky: 100, unknown: 28, errors: 0 };

describe('parseFailOn', () => {
  it('reads several rules separated by commas, with blanks and any case', () => {
    expect(parseFailOn('invalid>5%, unknown >= 100 ,Risky<2.5%')).toEqual([
      { metric: 'invalid', op: '>', value: 5, percent: true, text: 'invalid>5%' },
      { metric: 'unknown', op: '>=', value: 100, percent: false, text: 'unknown >= 100' },
      { metric: 'risky', op: '<', value: 2.5, percent: true, text: 'Risky<2.5%' },
    ]);
  });

  it.each([
    ['invalid', /cannot read rule "invalid".*quote the rule/],
    ['invalid=5', /cannot read rule "invalid=5"/],
    ['bogus>1', /unknown measure "bogus"/],
    ['invalid>150%', /more than 100%/],
    ['invalid>5%,', /cannot read rule ""/],
    ['', /needs a rule/],
  ])('refuses %j naming the problem', (spec, message) => {
    expect(() => parseFailOn(spec)).toThrow(UsageError);
    expect(() => parseFailOn(spec)).toThrow(message);
  });
});

describe('evaluateFailOn', () => {
  it.each([
    ['invalid>5%', true],
    ['invalid>7.2%', false],
    ['invalid>=7.2%', true],
    ['unknown>100', false],
    ['risky>=100', true],
    ['valid<80%', false],
    ['valid<=80%', true],
    ['errors>0', false],
  ])('%s holds: %s', (rule, holds) => {
    expect(evaluateFailOn(parseFailOn(rule), summary).length > 0).toBe(holds);
  });

  it('explains which rules hold and why', () => {
    const hits = evaluateFailOn(parseFailOn('errors>0,invalid>5%,risky>=10%'), summary);
    expect(hits.map((h) => h.message)).toEqual([
      '--fail-on invalid>5% holds: invalid is 7.2% (72 of 1,000 rows)',
      '--fail-on risky>=10% holds: risky is 10.0% (100 of 1,000 rows)',
    ]);
  });

  it('treats shares of an empty input as 0%', () => {
    expect(evaluateFailOn(parseFailOn('invalid>0%'), emptySummary('api'))).toEqual([]);
  });
});
