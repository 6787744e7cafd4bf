import { describe, expect, it } from 'vitest';
import { builtinFormat, compileFormat, formatNumber } from '../../src/read/cell-format.js';

// A number cell as Excel shows it: format code, stored value → text.
const cases: [string, number, string][] = [
  ['General', 0.1 + 0.2, '0.3'],
  ['General', 4915112345678, '4915112345678'],
  ['General', -17.25, '-17.25'],
  ['00000', 1234, '01234'],
  ['000-00-0000', 123456789, '123-45-6789'],
  ['0', 2.5, '3'],
  ['0.00', 0.5, '0.50'],
  ['0.0#', 1.5, '1.5'],
  ['#,##0', -1234567, '-1,234,567'],
  ['#,##0.00', 1234.5, '1,234.50'],
  ['#,##0 ;(#,##0)', -5, '(5)'],
  ['0%', 0.5, '50%'],
  ['0.00%', 0.1234, '12.34%'],
  ['"USD "#,##0.00', 5, 'USD 5.00'],
  ['[$€-407] #,##0.00', 5, '€ 5.00'],
  ['[Red]0.00', 3, '3.00'],
  ['#,##0,"k"', 12345, '12k'],
  ['[<=9999999]###-####;(###) ###-####', 5550100, '5550100'],
  ['# ?/?', 1.5, '1.5'],
  ['0.00E+00', 12345, '12345'],
  ['yyyy-mm-dd', 45322, '2024-01-31'],
  ['m/d/yyyy h:mm', 45322.5, '2024-01-31 12:00:00'],
  ['d-mmm-yy', 1, '1900-01-01'],
  ['d-mmm-yy', 59, '1900-02-28'],
  ['d-mmm-yy', 61, '1900-03-01'],
  ['h:mm', 0.75, '18:00:00'],
  ['[h]:mm:ss', 1.5, '36:00:00'],
];

describe('number formats', () => {
  it.each(cases)('%s: %d → %s', (code, value, shown) => {
    expect(formatNumber(value, compileFormat(code), false)).toBe(shown);
  });

  it('built-in formats by id, and the 1904 date system', () => {
    expect(formatNumber(45322, builtinFormat(14), false)).toBe('2024-01-31');
    expect(formatNumber(1234.5, builtinFormat(4), false)).toBe('1,234.50');
    expect(formatNumber(45322, builtinFormat(0), false)).toBe('45322');
    expect(formatNumber(45322, builtinFormat(57), false)).toBe('2024-01-31');
    expect(formatNumber(0, builtinFormat(14), true)).toBe('1904-01-01');
  });
});
