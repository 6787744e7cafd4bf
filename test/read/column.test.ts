import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { detectEmailColumn, looksHeaderless } from '../../src/read/column.js';
import { openInput } from '../../src/read/open-input.js';

describe('address column detection', () => {
  const sample = [
    ['1', 'Ann', 'ann@example.com', 'note@x'],
    ['2', 'Bob', 'bob@example.com', ''],
  ];
  it.each<[string, string[], string | undefined, number]>([
    ['a header named email', ['id', 'name', 'email', 'notes'], undefined, 2],
    ['E-Mail, any case', ['id', 'name', 'E-Mail', 'notes'], undefined, 2],
    ['email_address', ['id', 'name', 'EMAIL_ADDRESS', 'notes'], undefined, 2],
    ['"Email Address"', ['id', 'name', 'Email Address', 'notes'], undefined, 2],
    ['no such header: the column with most @', ['id', 'name', 'contact', 'notes'], undefined, 2],
    ['--column by number', ['id', 'name', 'contact', 'notes'], '4', 3],
    ['--column by name', ['id', 'name', 'contact', 'notes'], 'contact', 2],
    ['--column by name, other case', ['id', 'name', 'contact', 'notes'], 'CONTACT', 2],
  ])('%s', (_name, header, requested, expected) => {
    expect(detectEmailColumn(header, sample, requested)).toBe(expected);
  });

  it.each<[string, string[], string[][], string | undefined, RegExp]>([
    ['no @ anywhere', ['a', 'b'], [['1', '2']], undefined, /no address column/],
    ['--column 0', ['a', 'b'], [], '0', /has 2 column/],
    ['--column past the end', ['a', 'b'], [], '3', /has 2 column/],
    ['--column unknown name', ['a', 'b'], [], 'mail', /no such column/],
  ])('refuses %s', (_name, header, rows, requested, message) => {
    expect(() => detectEmailColumn(header, rows, requested)).toThrow(message);
  });

  it.each<[string[], boolean]>([
    [['id', 'email'], false],
    [['1', 'ann@example.com'], true],
    [['email', 'ann@example.com'], false],
  ])('first row %j is data: %s', (row, expected) => expect(looksHeaderless(row)).toBe(expected));

  it.each<[string, string | undefined]>([
    ['found', undefined],
    ['chosen by number', '2'],
  ])('a headerless CSV keeps its first row when the column is %s', async (_name, column) => {
    const stdin = Readable.from([Buffer.from('Bob,bob@example.com\nAnn,ann@example.com\n')]);
    const input = await openInput({ path: '-', stdin, column });
    const emails: string[] = [];
    for await (const rows of input.rows) emails.push(...rows.map((r) => r.email));
    expect(input.header).toEqual(['column1', 'email']);
    expect(emails).toEqual(['bob@example.com', 'ann@example.com']);
  });
});
