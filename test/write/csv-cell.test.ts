import { describe, expect, it } from 'vitest';
import { csvCell, defusedCsvCell } from '../../src/write/csv-cell.js';

describe('CSV cells', () => {
  it.each<[string, string, string]>([
    // value, as an input cell (as read), defused (appended text; input cells with --escape-formulas)
    ['plain', 'plain', 'plain'],
    ['a,b', '"a,b"', '"a,b"'],
    ['say "hi"', '"say ""hi"""', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"', '"two\nlines"'],
    ['trailing  ', 'trailing  ', 'trailing  '],
    ['=1+2', '=1+2', "'=1+2"],
    ['+1 555 0100', '+1 555 0100', "'+1 555 0100"],
    ['+cmd', '+cmd', "'+cmd"],
    ['@SUM(A1)', '@SUM(A1)', "'@SUM(A1)"],
    ['\tx', '\tx', "'\tx"],
    ['\rx', '"\rx"', `"'\rx"`],
    ['-5', '-5', '-5'],
    ['-2.5e3', '-2.5e3', '-2.5e3'],
    ['-1+2', '-1+2', "'-1+2"],
    ['=HYPERLINK("x"),y', '"=HYPERLINK(""x""),y"', `"'=HYPERLINK(""x""),y"`],
  ])('%j → %s, defused %s', (value, cell, defused) => {
    expect(csvCell(value)).toBe(cell);
    expect(defusedCsvCell(value)).toBe(defused);
  });
});
