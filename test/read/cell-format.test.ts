import { describe, expect, it } from 'vitest';
import { builtinFormat, compileFormat, formatIsoDate, formatNumber, formatText } from '../../src/read/cell-format.js';

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

// What Excel (and LibreOffice's "as shown" export, which agrees on these) shows:
// the number taken to 15 significant digits, then the decimal rounded half up.
const asShown: [string, number, string][] = [
  ['0.00', 1.005, '1.01'],
  ['0.00', 2.675, '2.68'],
  ['0.0', 1.45, '1.5'],
  ['0.00', -1.005, '-1.01'],
  ['0.00', 0.125, '0.13'],
  ['0.00', 1.015, '1.02'],
  ['0.00', 8.345, '8.35'],
  ['0.000', 1.0005, '1.001'],
  ['#,##0.00', 1234.005, '1,234.01'],
  ['0.00%', 0.00125, '0.13%'],
  ['0.00', 0.005, '0.01'],
  ['0.00', 0.000005, '0.00'],
  ['0.00000000000000000', 0.1 + 0.2, '0.30000000000000000'],
  ['0', 123456789012345678, '123456789012346000'],
  ['#,##0', 123456789012345678, '123,456,789,012,346,000'],
  ['0', 2.5, '3'],
  ['0', 0.5, '1'],
  ['0', 0.4, '0'],
];

describe('as Excel shows them', () => {
  it.each(asShown)('%s: %d → %s', (code, value, shown) => {
    expect(formatNumber(value, compileFormat(code), false)).toBe(shown);
  });

  it("General numbers in Excel's exponent form, to 15 significant digits", () => {
    const general = (v: number): string => formatNumber(v, builtinFormat(0), false);
    expect(general(1e-7)).toBe('1E-07');
    expect(general(1.5e-7)).toBe('1.5E-07');
    expect(general(-1e-7)).toBe('-1E-07');
    expect(general(1e21)).toBe('1E+21');
    expect(general(1.23456789012345e-10)).toBe('1.23456789012345E-10');
    expect(general(123456789012345678)).toBe('123456789012346000');
    expect(general(4915112345678)).toBe('4915112345678');
    expect(general(0.0001)).toBe('0.0001');
    expect(general(123456.789012345678)).toBe('123456.789012346');
  });

  it('built-in formats 37–40 keep the padding space of a positive', () => {
    for (const id of [37, 38]) {
      expect(formatNumber(1234.5, builtinFormat(id), false)).toBe('1,235 ');
      expect(formatNumber(-1234.5, builtinFormat(id), false)).toBe('(1,235)');
    }
    for (const id of [39, 40]) {
      expect(formatNumber(1234.5, builtinFormat(id), false)).toBe('1,234.50 ');
      expect(formatNumber(-1234.5, builtinFormat(id), false)).toBe('(1,234.50)');
    }
  });

  it('t="d" cells (ISO text) in the documented ISO form', () => {
    expect(formatIsoDate('2024-01-31T00:00:00Z', undefined)).toBe('2024-01-31');
    expect(formatIsoDate('2024-01-31', undefined)).toBe('2024-01-31');
    expect(formatIsoDate('2024-01-31T09:30:00Z', undefined)).toBe('2024-01-31 09:30:00');
    expect(formatIsoDate('2024-01-31T09:30:00.000', undefined)).toBe('2024-01-31 09:30:00');
    expect(formatIsoDate('2024-01-31T09:30:00+02:00', undefined)).toBe('2024-01-31 09:30:00');
    expect(formatIsoDate('2024-01-31T09:30:00Z', compileFormat('yyyy-mm-dd'))).toBe('2024-01-31');
    expect(formatIsoDate('2024-01-31T09:30:00Z', compileFormat('h:mm'))).toBe('09:30:00');
    expect(formatIsoDate('not a date', undefined)).toBe('not a date');
  });

  it('time-only and [h]:mm duration cells as HH:MM:SS (hours past 24 kept), as docs/files.md says', () => {
    expect(formatNumber(0.75, compileFormat('h:mm'), false)).toBe('18:00:00');
    expect(formatNumber(1.5, compileFormat('[h]:mm'), false)).toBe('36:00:00');
    expect(formatNumber(2.25, compileFormat('[h]:mm:ss'), false)).toBe('54:00:00');
  });
});

// What Gnumeric (ssconvert, format=preserve) and LibreOffice (CSV "as shown")
// both show for these cells, in mailsift's documented forms: times as
// HH:MM:SS (24-hour), durations with their hours and sign.
describe('as the spreadsheet shows them: times, empty sections, big numbers', () => {
  const shown: [string, number, string][] = [
    // a time-only format on a date-time: the time of day, not 1087746 hours
    ['h:mm', 45322.75, '18:00:00'],
    ['mm:ss', 45322.75, '18:00:00'],
    ['h:mm AM/PM', 45322.75, '18:00:00'],
    ['h:mm:ss', 45322.75, '18:00:00'],
    ['hh:mm:ss', 45322.5 + 1 / 86400, '12:00:01'],
    ['h:mm', -0.25, '18:00:00'],
    // an elapsed format keeps the hours past a day, and the sign
    ['[h]:mm', 45322.75, '1087746:00:00'],
    ['[h]:mm:ss', 1.5, '36:00:00'],
    ['[mm]:ss', 1.5, '36:00:00'],
    ['[h]:mm', 0.0625, '01:30:00'],
    ['[h]:mm', -0.5, '-12:00:00'],
    ['[h]:mm:ss', -1.25, '-30:00:00'],
    // empty sections hide what they are for; the others still apply
    ['0;-0;;@', 2.5, '3'],
    ['0;-0;;@', -2.5, '-3'],
    ['0;-0;;@', 0, ''],
    [';;;', 5, ''],
    [';;;', -5, ''],
    [';;;', 0, ''],
    ['0.00;', -3, ''],
    ['0.00;', 3, '3.00'],
    ['0.00;;', 0, ''],
    ['0;"neg"', -3, 'neg'],
    ['0;-0;"zero"', 0, 'zero'],
    // 1E+21 and past: the format still applies, every digit written
    ['0', 1e21, '1000000000000000000000'],
    ['0%', 1e21, '100000000000000000000000%'],
    ['0', 1.5e22, '15000000000000000000000'],
    ['#,##0', 1e21, '1,000,000,000,000,000,000,000'],
  ];
  it.each(shown)('%s: %d → %j', (code, value, text) => {
    expect(formatNumber(value, compileFormat(code), false)).toBe(text);
  });

  it('a text cell through the text section: hidden by ;;; or an empty fourth section, placed by @', () => {
    expect(formatText('jane@x.test', compileFormat(';;;'))).toBe('');
    expect(formatText('jane@x.test', compileFormat('0;-0;0;'))).toBe('');
    expect(formatText('jane@x.test', compileFormat('0;-0;;@'))).toBe('jane@x.test');
    expect(formatText('jane', compileFormat('"x"@'))).toBe('xjane');
    expect(formatText('42A', compileFormat('"ID "@'))).toBe('ID 42A');
    expect(formatText('jane', compileFormat('0.00'))).toBe('jane');
    expect(formatText('jane', compileFormat('@'))).toBe('jane');
  });
});
