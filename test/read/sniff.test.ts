import { describe, expect, it } from 'vitest';
import { detectDelimiter, looksLikeCsv } from '../../src/read/sniff.js';

describe('CSV sniffing', () => {
  it.each<[string, boolean, string]>([
    ['a@example.com\nb@example.com\n', false, ','],
    ['email\na@example.com\n', false, ','],
    ['id,email\n1,a@example.com\n', true, ','],
    ['id;email;name\n', true, ';'],
    ['id\temail\n', true, '\t'],
    ['"a,b";c;d\n', true, ';'],
    ['"john,smith"@example.com\n', false, ','],
  ])('%j: csv %s, delimiter %j', (head, csv, delimiter) => {
    expect(looksLikeCsv(head)).toBe(csv);
    expect(detectDelimiter(head)).toBe(delimiter);
  });
});
