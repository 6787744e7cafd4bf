import { describe, expect, it } from 'vitest';
import { count, duration, percent, rate } from '../../src/format.js';

describe('format', () => {
  it.each([
    [0, '0 ms'],
    [850, '850 ms'],
    [42_000, '42 s'],
    [185_000, '3 min 05 s'],
    [120_000, '2 min'],
    [3_720_000, '1 h 02 min'],
  ])('duration(%d) = %s', (ms, text) => expect(duration(ms)).toBe(text));

  it('counts, percentages and rates', () => {
    expect(count(1234567)).toBe('1,234,567');
    expect(percent(72, 1000)).toBe('7.2%');
    expect(percent(0, 0)).toBe('0.0%');
    expect(rate(0.44)).toBe('0.4/s');
    expect(rate(1234.4)).toBe('1,234/s');
    expect(rate(0)).toBe('0/s');
  });
});
