import { describe, expect, it } from 'vitest';
import { csvCell } from '../../src/write/csv-cell.js';

describe('CSV cells', () => {
  it.each<[string, string]>([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['=1+2', "'=1+2"],
    ['+cmd', "'+cmd"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['-5', '-5'],
    ['-2.5e3', '-2.5e3'],
    ['-1+2', "'-1+2"],
    ['=HYPERLINK("x"),y', `"'=HYPERLINK(""x""),y"`],
  ])('%j → %s', (value, cell) => expect(csvCell(value)).toBe(cell));
});
