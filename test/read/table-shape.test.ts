// Output row N is input row N, and no verdict lands under another column's
// header: blank rows in place, short rows padded, the table as wide as its
// widest row (the header widened with column letters) or the file refused
// naming the row — one rule for CSV, sheets and text lists.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { openInput } from '../../src/read/open-input.js';
import { columnLetters } from '../../src/read/table-shape.js';
import { excelParts, zip } from '../support/workbook.js';

const dir = mkdtempSync(join(tmpdir(), 'mailsift-table-shape-'));
const file = (name: string, content: string | Buffer): string => {
  writeFileSync(join(dir, name), content);
  return join(dir, name);
};

interface Read {
  header: string[];
  rows: string[][];
  emails: string[];
  notices: string[];
}

async function read(path: string): Promise<Read | string> {
  const notices: string[] = [];
  try {
    const input = await openInput({ path, onNotice: (line) => notices.push(line) });
    const rows: string[][] = [];
    const emails: string[] = [];
    for await (const chunk of input.rows) {
      for (const row of chunk) {
        rows.push(row.fields);
        emails.push(row.email);
      }
    }
    return { header: input.header, rows, emails, notices };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    expect(err.message.split('\n'), 'one line').toHaveLength(1);
    return err.message;
  }
}

const ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
/** A one-sheet workbook whose sheet XML is written by hand (rows as given, `<dimension>` as given). */
function sheet(name: string, rowsXml: string, dimension?: string): string {
  const parts = excelParts([['unused']], {
    sheetXml: `<worksheet ${ns}>${dimension ? `<dimension ref="${dimension}"/>` : ''}<sheetData>${rowsXml}</sheetData></worksheet>`,
  });
  return file(name, zip(parts));
}
const cell = (ref: string, text: string): string => `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;
const row = (r: number, ...cells: [string, string][]): string => `<row r="${r}">${cells.map(([col, text]) => cell(`${col}${r}`, text)).join('')}</row>`;

describe('blank rows come out in place', () => {
  it('a sheet with rows 3, 5 and 6 missing: 7 rows in, 7 out (header included)', async () => {
    const path = sheet(
      'gaps.xlsx',
      [row(1, ['A', 'email'], ['B', 'name']), row(2, ['A', 'a@mx.test'], ['B', 'A']), row(4, ['A', 'b@mx.test']), row(7, ['A', 'c@mx.test'], ['B', 'C'])].join(
        '',
      ),
    );
    const r = await read(path);
    expect(r).toMatchObject({
      header: ['email', 'name'],
      rows: [
        ['a@mx.test', 'A'],
        ['', ''],
        ['b@mx.test', ''],
        ['', ''],
        ['', ''],
        ['c@mx.test', 'C'],
      ],
      emails: ['a@mx.test', '', 'b@mx.test', '', '', 'c@mx.test'],
    });
  });

  it('a styled empty row, and an empty cell row, hold their place; styled rows below the data do not count', async () => {
    const path = sheet(
      'styled.xlsx',
      [
        row(1, ['A', 'email']),
        row(2, ['A', 'a@mx.test']),
        '<row r="3" s="1" customFormat="1"/>',
        '<row r="4"><c r="A4" s="1"/></row>',
        row(5, ['A', 'b@mx.test']),
        '<row r="6" s="1"/>',
        '<row r="9" s="1"/>',
      ].join(''),
    );
    expect(await read(path)).toMatchObject({ rows: [['a@mx.test'], [''], [''], ['b@mx.test']] });
  });

  it('blank rows above the header are not part of the table', async () => {
    const path = sheet('late-header.xlsx', [row(3, ['B', 'email']), row(4, ['B', 'a@mx.test']), row(6, ['B', 'b@mx.test'])].join(''));
    expect(await read(path)).toMatchObject({
      header: ['', 'email'],
      rows: [
        ['', 'a@mx.test'],
        ['', ''],
        ['', 'b@mx.test'],
      ],
    });
  });

  it('a blank line inside a CSV is a row (empty address); blank lines at the very end are not', async () => {
    const r = await read(file('blank.csv', 'email,name\na@mx.test,A\n\nb@mx.test,B\n,\nc@mx.test,C\n\n\n'));
    expect(r).toMatchObject({
      rows: [
        ['a@mx.test', 'A'],
        ['', ''],
        ['b@mx.test', 'B'],
        ['', ''],
        ['c@mx.test', 'C'],
      ],
      emails: ['a@mx.test', '', 'b@mx.test', '', 'c@mx.test'],
    });
  });

  it('blank lines before a CSV header are skipped, CRLF blank lines kept in place', async () => {
    expect(await read(file('crlf.csv', '\r\nemail\r\na@mx.test\r\n\r\nb@mx.test\r\n'))).toMatchObject({
      header: ['email'],
      rows: [['a@mx.test'], [''], ['b@mx.test']],
    });
  });

  it('an empty line in a text list is a row in place; empty lines at the very end are not', async () => {
    expect(await read(file('list.txt', 'a@mx.test\n\nb@mx.test\n  \nc@mx.test\n\n\n'))).toMatchObject({
      header: ['email'],
      rows: [['a@mx.test'], [''], ['b@mx.test'], ['  '], ['c@mx.test']],
    });
  });

  it('a long run of blank rows between data is kept whole', async () => {
    const body = `email\na@mx.test\n${'\n'.repeat(10_000)}b@mx.test\n`;
    const r = (await read(file('long-gap.csv', body))) as Read;
    expect(r.rows).toHaveLength(10_002);
    expect(r.rows.at(-1)).toEqual(['b@mx.test']);
  });
});

describe('rows shorter or wider than the header', () => {
  it('a CSV row shorter than the header (as Excel writes trailing empties) is padded, not refused', async () => {
    expect(await read(file('short.csv', 'email,name,phone\na@mx.test,A\nb@mx.test\nc@mx.test,C,1\n'))).toMatchObject({
      header: ['email', 'name', 'phone'],
      rows: [
        ['a@mx.test', 'A', ''],
        ['b@mx.test', '', ''],
        ['c@mx.test', 'C', '1'],
      ],
    });
  });

  it('a CSV row wider than the header among the first rows widens the header with column letters', async () => {
    expect(await read(file('wide.csv', 'email,name\na@mx.test,A\nb@mx.test,B,,note\n'))).toMatchObject({
      header: ['email', 'name', 'C', 'D'],
      rows: [
        ['a@mx.test', 'A', '', ''],
        ['b@mx.test', 'B', '', 'note'],
      ],
    });
  });

  it('empty cells past the header are nothing to make room for', async () => {
    expect(await read(file('trailing-commas.csv', 'email,name\na@mx.test,A,,\n'))).toMatchObject({ header: ['email', 'name'], rows: [['a@mx.test', 'A']] });
  });

  it('a CSV row wider than the table found past the first rows is refused, naming the row', async () => {
    // far enough down to be past what is read before the header is written out
    const rows = Array.from({ length: 20_000 }, (_, i) => `u${i}@mx.test,${i}`);
    rows[19_000] += ',,late note';
    expect(await read(file('late-wide.csv', `email,n\n${rows.join('\n')}\n`))).toMatch(
      /late-wide\.csv: row 19002 has a cell in column D \(4\), past the 2 columns of the header and the first rows/,
    );
  });

  it('a sheet with a note past the header: the header is widened, the verdicts start after it', async () => {
    const path = sheet(
      'note.xlsx',
      [row(1, ['A', 'email'], ['B', 'name']), row(2, ['A', 'a@mx.test'], ['B', 'A']), row(3, ['A', 'b@mx.test'], ['D', 'call back'])].join(''),
    );
    expect(await read(path)).toMatchObject({
      header: ['email', 'name', 'C', 'D'],
      rows: [
        ['a@mx.test', 'A', '', ''],
        ['b@mx.test', '', '', 'call back'],
      ],
    });
  });

  it("a sheet's <dimension> gives the width up front, for a note far below the first rows", async () => {
    const rows = [row(1, ['A', 'email'])];
    for (let r = 2; r <= 200; r++) rows.push(row(r, ['A', `u${r}@mx.test`]));
    rows.push(row(201, ['A', 'z@mx.test'], ['C', 'note']));
    const r = (await read(sheet('dimension.xlsx', rows.join(''), 'A1:C201'))) as Read;
    expect(r.header).toEqual(['email', 'B', 'C']);
    expect(r.rows.at(-1)).toEqual(['z@mx.test', '', 'note']);
    expect(r.rows[0]).toEqual(['u2@mx.test', '', '']);
  });

  it('a sheet whose <dimension> is missing or wrong: a later wider row is refused by its sheet row number', async () => {
    const rows = [row(1, ['A', 'email'])];
    for (let r = 2; r <= 2000; r++) rows.push(row(r, ['A', `u${r}@mx.test`]));
    rows.push(row(2050, ['A', 'z@mx.test'], ['C', 'note']));
    expect(await read(sheet('lying.xlsx', rows.join(''), 'A1:A2001'))).toMatch(/lying\.xlsx: row 2050 has a cell in column C \(3\), past the 1 columns/);
  });

  it('column letters as a spreadsheet names them', () => {
    expect([0, 25, 26, 51, 701, 702, 16383].map(columnLetters)).toEqual(['A', 'Z', 'AA', 'AZ', 'ZZ', 'AAA', 'XFD']);
  });
});

describe('a header and no rows', () => {
  it('is no error: zero rows, and a notice saying so', async () => {
    expect(await read(file('header-only.csv', 'name,email\n'))).toMatchObject({
      header: ['name', 'email'],
      rows: [],
      notices: [expect.stringMatching(/header-only\.csv: a header and no rows below it/)],
    });
  });

  it('a header without an address column and no rows is no error either', async () => {
    expect(await read(file('header-only-2.csv', 'name,phone\n\n'))).toMatchObject({ rows: [], notices: [expect.stringMatching(/a header and no rows/)] });
  });

  it('an empty file, or one of blank lines, is still an empty input', async () => {
    expect(await read(file('empty.csv', ''))).toMatch(/empty input/);
    expect(await read(file('blank-lines.csv', '\n\n\n'))).toMatch(/empty input/);
  });
});
