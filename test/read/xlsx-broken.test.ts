import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalValidator } from '../../src/engines/local/index.js';
import { XlsxError } from '../../src/errors.js';
import { validateFile } from '../../src/library/validate.js';
import { xlsxRecords } from '../../src/read/xlsx.js';
import { contacts } from '../support/contacts.js';
import { runInProcess } from '../support/run-in-process.js';
import { excelParts, zip, type ZipPart } from '../support/workbook.js';

// Corrupt and hostile workbooks, built here byte by byte: each is refused with
// one line naming what is wrong (XlsxError in the library, exit 2 from the
// binary) — never read as a shorter sheet, never a hang, never a stack trace.
const dir = mkdtempSync(join(tmpdir(), 'mailsift-broken-xlsx-'));
const file = (name: string, bytes: Buffer): string => {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
};
const SHEET = 'xl/worksheets/sheet1.xml';
const parts = (rows = 60): ZipPart[] => excelParts(contacts(rows).cells);
/** the workbook's parts with the sheet (or another part) replaced */
const withPart = (name: string, change: (p: ZipPart) => ZipPart, base = parts()): Buffer => zip(base.map((p) => (p.name === name ? change(p) : p)));
const xml = (body: string): string =>
  `<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${body}</sheetData></worksheet>`;

const corrupt: [string, Buffer, RegExp][] = [
  ['invalid deflate data', withPart(SHEET, (p) => ({ ...p, compressed: Buffer.alloc(200, 0xff) })), /sheet1\.xml: invalid compressed data/],
  ['an unknown compression method', withPart(SHEET, (p) => ({ ...p, method: 12 })), /sheet1\.xml uses compression method 12/],
  ['a size that says less than the data', withPart(SHEET, (p) => ({ ...p, declaredSize: 1000 })), /sheet1\.xml holds more data than its declared size/],
  ['a size that says more than the data', withPart(SHEET, (p) => ({ ...p, declaredSize: 10_000_000 })), /sheet1\.xml holds less data than its declared size/],
  ['a zip cut short', zip(parts()).subarray(0, 3000), /no zip directory at its end \(the file is cut short/],
  ['a zip with no sheet', zip(parts().filter((p) => p.name !== SHEET)), /the sheet "Sheet1" \(xl\/worksheets\/sheet1\.xml\) is missing/],
  ['a workbook that lists no sheet', withPart('xl/workbook.xml', (p) => ({ ...p, data: '<workbook><sheets/></workbook>' })), /the workbook has no worksheet/],
  [
    'a checksum that does not match',
    withPart('xl/sharedStrings.xml', (p) => ({ ...p, data: String(p.data).replace('user5@', 'user6@'), crcOf: p.data })),
    /fails its checksum/,
  ],
];

const hostile: [string, Buffer, RegExp, Parameters<typeof xlsxRecords>[2]?][] = [
  [
    'elements nested 200 deep',
    withPart(SHEET, (p) => ({ ...p, data: xml('<row r="1">' + '<x>'.repeat(200) + '</x>'.repeat(200) + '</row>') })),
    /nested deeper than 128 levels \(the limit\)/,
  ],
  ['a document type declaration', withPart(SHEET, (p) => ({ ...p, data: `<!DOCTYPE x [<!ENTITY a "aaaa">]>${xml('')}` })), /a document type declaration/],
  ['a shared string over 1 MB', zip(excelParts([['email'], ['x'.repeat(1024 * 1024 + 1)]])), /a shared string longer than 1 MB \(the limit\)/],
  ['an inline cell over 1 MB', zip(excelParts([['email'], [{ inline: 'x'.repeat(1024 * 1024 + 1) }]])), /row 2 is longer than 1 MB/],
  [
    'a row wider than Excel allows',
    withPart(SHEET, (p) => ({ ...p, data: xml('<row r="1"><c r="XFE1" t="inlineStr"><is><t>a@b.c</t></is></c></row>') })),
    /row 1 is wider than 16384 columns \(the limit\)/,
  ],
  [
    'a tag that never ends',
    withPart(SHEET, (p) => ({ ...p, data: xml(`<row r="1" a="${'x'.repeat(1024 * 1024 + 10)}`) })),
    /a tag longer than 1 MB \(the limit\)/,
  ],
  ['more shared strings than the limit', zip(excelParts(contacts(60).cells)), /more than 100 shared strings \(the limit\)/, { limits: { sharedStrings: 100 } }],
  [
    'shared strings larger than the limit',
    zip(excelParts(contacts(60).cells)),
    /shared strings over 1000 bytes \(the limit\)/,
    { limits: { sharedStringBytes: 1000 } },
  ],
  // refused from the table's own count, before its items are parsed (70M tiny strings took seconds to reach the limit)
  [
    'a table that declares more shared strings than the limit',
    zip(excelParts([['email']], { sharedStringsXml: sst(70_000_000, 1) })),
    /more than 16,000,000 shared strings \(the limit\)/,
  ],
  // a table that declares fewer than it holds is still counted item by item
  [
    'a table that declares fewer shared strings than it holds',
    zip(excelParts([['email']], { sharedStringsXml: sst(1, 150) })),
    /more than 100 shared strings \(the limit\)/,
    { limits: { sharedStrings: 100 } },
  ],
];

/** A shared-strings part that says it holds `declared` strings and holds `held`. */
function sst(declared: number, held: number): string {
  const items = Array.from({ length: held }, (_, i) => `<si><t>s${i}</t></si>`).join('');
  return `<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="${declared}" uniqueCount="${declared}">${items}</sst>`;
}

async function readAll(path: string, options?: Parameters<typeof xlsxRecords>[2]): Promise<number> {
  let rows = 0;
  for await (const chunk of xlsxRecords(path, 'book.xlsx', options)) rows += chunk.length;
  return rows;
}

describe('a corrupt .xlsx', () => {
  it.each(corrupt)('%s: XlsxError naming it', async (name, bytes, message) => {
    const path = file(`${name.replace(/\W+/g, '-')}.xlsx`, bytes);
    const error = await readAll(path).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(XlsxError);
    expect((error as Error).message).toMatch(/^book\.xlsx: not a readable \.xlsx: /);
    expect((error as Error).message).toMatch(message);
  });

  it('a zip that is no spreadsheet is the wrong file, named as what it is (still an XlsxError)', async () => {
    const error = await readAll(file('hello.xlsx', zip([{ name: 'hello.txt', data: 'hello' }]))).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(XlsxError);
    expect((error as Error).message).toBe('book.xlsx is a zip archive, not an Excel workbook (.xlsx) or a list of addresses');
  });

  it('validateFile rejects with the XlsxError, it does not hang', async () => {
    const validator = createLocalValidator({ dns: false });
    for (const [name, bytes] of corrupt.slice(0, 5)) {
      const path = file(`lib-${name.replace(/\W+/g, '-')}.xlsx`, bytes);
      const seen: unknown[] = [];
      const error = await (async () => {
        for await (const r of validateFile(path, { validator })) seen.push(r);
      })().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error, name).toBeInstanceOf(XlsxError);
    }
    await validator.close();
  });

  it('the command: exit 2 and one line, for each', async () => {
    for (const [name, bytes, message] of corrupt) {
      const path = file(`cli-${name.replace(/\W+/g, '-')}.xlsx`, bytes);
      const r = await runInProcess(['validate', path, '--engine', 'local', '--dns-server', '127.0.0.1:9', '--dns-timeout', '50']);
      expect(r.code, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/^mailsift: .*: not a readable \.xlsx: /);
      expect(r.stderr.trim().split('\n'), name).toHaveLength(1);
      expect(r.stdout).toBe('');
    }
  }, 120_000);
});

describe('a hostile .xlsx is refused at a documented limit', () => {
  it.each(hostile)('%s', async (name, bytes, message, options) => {
    const path = file(`hostile-${name.replace(/\W+/g, '-')}.xlsx`, bytes);
    const error = await readAll(path, options).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as { exitCode?: number }).exitCode).toBe(2);
    expect((error as Error).message).toMatch(message);
  });
});

describe('reading stopped by a signal', () => {
  it('is neither a damaged file nor a short sheet: the error says interrupted and carries the exit code of the signal', async () => {
    const path = file('signalled.xlsx', zip(parts()));
    const stop = new AbortController();
    stop.abort(Object.assign(new Error('terminated'), { exitCode: 143 }));
    const error = await readAll(path, { signal: stop.signal }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).not.toBeInstanceOf(XlsxError);
    expect((error as Error).message).toBe('terminated while reading book.xlsx; nothing was sent');
    expect((error as { exitCode: number }).exitCode).toBe(143);
  });
});
