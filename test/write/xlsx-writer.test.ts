import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XlsxError } from '../../src/errors.js';
import { xlsxRecords } from '../../src/read/xlsx.js';
import { ZipFile } from '../../src/read/zip.js';
import { emptySummary } from '../../src/summary.js';
import type { Verdict } from '../../src/verdict.js';
import { ALL_COLUMNS, type Columns } from '../../src/write/output-plan.js';
import { createXlsxWriter, type XlsxWriterOptions } from '../../src/write/xlsx-writer.js';
import { waitFor } from '../support/wait.js';

const verdict: Verdict = { email: 'a@b.test', isValid: true, status: 'valid', confidence: 0.9, provider: 'p', details: { domain: 'b.test' } };

describe('the Excel writer', () => {
  it('writes text that looks like a formula as a string cell, never a formula', async () => {
    const chunks: Buffer[] = [];
    const dest = new Writable({ write: (chunk: Buffer, _enc, done) => (chunks.push(chunk), done()) });
    const writer = await createXlsxWriter(dest, 'test.xlsx', ['=phone', 'email'], ALL_COLUMNS);
    await writer.begin();
    writer.row(['+1 555 0100', '=HYPERLINK("http://x")'], verdict, '');
    writer.row(['@SUM(A1)', '-1+2'], { ...verdict, provider: '=cmd', details: { suggestion: '=a@b.test' } }, '');
    await writer.end(emptySummary('local'));
    const ExcelJS = (await import('exceljs')).default;
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(Buffer.concat(chunks) as unknown as ArrayBuffer);
    const cells: unknown[] = [];
    book.worksheets[0]!.eachRow((row) => row.eachCell((cell) => cells.push(cell.formula ?? cell.value)));
    expect(cells).toEqual(expect.arrayContaining(['=phone', '+1 555 0100', '=HYPERLINK("http://x")', '@SUM(A1)', '-1+2', '=cmd', '=a@b.test']));
    book.worksheets[0]!.eachRow((row) => row.eachCell((cell) => expect(cell.type).not.toBe(ExcelJS.ValueType.Formula)));
  });

  it('waits for a slow output again and again without piling up listeners (no MaxListenersExceededWarning)', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const dest = new Writable({ highWaterMark: 16, write: (_chunk, _enc, done) => setImmediate(done) });
      const writer = await createXlsxWriter(dest, 'test.xlsx', ['email', 'note'], ALL_COLUMNS);
      await writer.begin();
      for (let i = 0; i < 20_000; i++) {
        writer.row([`a${i}@b.test`, `${i} ${Math.random()}`], verdict, '');
        if (i % 100 === 0) await writer.drain();
      }
      await writer.end(emptySummary('local'));
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on a later tick
      expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
      expect(dest.listenerCount('drain')).toBeLessThanOrEqual(1);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

let dir: string;
beforeAll(async () => void (dir = await mkdtemp(join(tmpdir(), 'mailsift-xlsxw-'))));
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Writes `rows` (input cells; each gets `verdict`) as a workbook file; resolves to its path, or rejects as the run would. */
async function writeBook(name: string, header: string[], rows: string[][], columns: Columns = ALL_COLUMNS, options?: XlsxWriterOptions): Promise<string> {
  const path = join(dir, name);
  const dest = createWriteStream(path);
  const writer = await createXlsxWriter(dest, name, header, columns, options);
  try {
    await writer.begin();
    for (const r of rows) {
      writer.row(r, verdict, '');
      await writer.drain();
    }
    await writer.end(emptySummary('local'));
  } finally {
    await writer.close();
  }
  return path;
}

async function readBack(path: string): Promise<string[][]> {
  const rows: string[][] = [];
  for await (const chunk of xlsxRecords(path, path)) rows.push(...chunk);
  return rows;
}

async function sheetXml(path: string): Promise<string> {
  const zip = await ZipFile.open(path, (reason) => new XlsxError(reason));
  try {
    const parts: Buffer[] = [];
    for await (const b of zip.read(zip.entry('xl/worksheets/sheet1.xml')!)) parts.push(b);
    return Buffer.concat(parts).toString('utf8');
  } finally {
    await zip.close();
  }
}

/** Cells a spreadsheet round trip loses unless they are written with care (issue 30.8). */
const HARD_CELLS = [
  ['1', 'ann@example.com', '+1 555 0100', '01234', 'line1\r\nline2'],
  ['2', 'bob@example.com', '  +44 20 7946 0000 ', '00501', ' $1,234.50 '],
  ['3', 'cy@example.com', 'tab\there', '   ', 'x\u0001y\u001fz\u0000 _x0041_ & <b> é中😀'],
  ['4', 'dee@example.com', '=SUM(A1)', '-1+2', 'cr\ronly\nlf'],
];

describe('the Excel writer: what it writes', () => {
  it("gives mailsift's own reader back every input cell exactly: CR, edge spaces, tabs, control characters, a literal _x0041_", async () => {
    const path = await writeBook('hard.xlsx', ['id', 'email', 'phone', 'zip', 'note'], HARD_CELLS);
    const back = await readBack(path);
    expect(back.map((r) => r.slice(0, 5))).toEqual([['id', 'email', 'phone', 'zip', 'note'], ...HARD_CELLS]);
    // the appended columns: their names, then the verdict's text, boolean and number
    expect(back[0]!.slice(5, 9)).toEqual(['status', 'reason', 'is_valid', 'confidence']);
    expect(back[1]!.slice(5, 9)).toEqual(['valid', '', 'TRUE', '0.9']);
  });

  it('types cells as inline strings, booleans and numbers; never t="str", which is a formula\'s result', async () => {
    const xml = await sheetXml(
      await writeBook(
        'typed.xlsx',
        ['phone', 'email'],
        [
          ['+1 555 0100', 'a@b.test'],
          ['', 'b@b.test'],
        ],
      ),
    );
    expect(xml).toContain('<c r="A2" t="inlineStr"><is><t xml:space="preserve">+1 555 0100</t></is></c>');
    expect(xml).toContain('<c r="E2" t="b"><v>1</v></c>'); // is_valid
    expect(xml).toContain('<c r="F2"><v>0.9</v></c>'); // confidence
    expect(xml).not.toContain('t="str"');
    expect(xml).not.toContain('<f>');
    expect(xml).not.toContain('r="A3"'); // an empty cell is left out
  });
});

describe('the Excel writer: backpressure', () => {
  it('holds back every caller of drain() while the output is full, not only the one whose rows filled it', async () => {
    // the pipeline drains from several places at once; one that finds nothing to write must wait too, or reading goes on
    const held: (() => void)[] = [];
    let blocked = false;
    const dest = new Writable({ highWaterMark: 1024, write: (_chunk, _enc, done) => (blocked ? held.push(done) : done()) });
    const writer = await createXlsxWriter(dest, 'slow.xlsx', ['email', 'note'], ALL_COLUMNS);
    await writer.begin();
    blocked = true;
    // incompressible text, so deflate's output fills the blocked output and deflate fills up behind it
    for (let i = 0; i < 3000; i++) writer.row([`a${i}@b.test`, randomBytes(32).toString('hex')], verdict, '');
    let settled = 0;
    const first = writer.drain(true).then(() => settled++);
    const second = writer.drain().then(() => settled++); // nothing left to write
    const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    // deflate works on the thread pool: wait until its output has reached the blocked output
    await waitFor(() => held.length > 0, { what: "deflate's output to reach the blocked output", intervalMs: 1 });
    for (let i = 0; i < 100; i++) await turn();
    expect(settled).toBe(0);
    blocked = false;
    while (held.length) held.shift()!();
    await Promise.all([first, second]);
    expect(settled).toBe(2);
    await writer.end(emptySummary('local'));
  });
});

describe("the Excel writer: the format's limits (exit 2, naming the limit)", () => {
  const status: Columns = { order: ['input', 'status'], standard: false, prefix: '' };

  it('holds as many rows as the limit, the header included, and refuses one more', async () => {
    const rows = Array.from({ length: 9 }, (_, i) => [`a${i}@b.test`]);
    expect(await readBack(await writeBook('rows-ok.xlsx', ['email'], rows, status, { limits: { rows: 10 } }))).toHaveLength(10);
    const refused = writeBook('rows-over.xlsx', ['email'], [...rows, ['z@b.test']], status, { limits: { rows: 10 } });
    await expect(refused).rejects.toThrow(
      'rows-over.xlsx: more than 10 rows (the header included), the most an .xlsx sheet holds; write CSV instead (-o rows-over.csv)',
    );
    await expect(refused).rejects.toMatchObject({ exitCode: 2 });
  });

  it('refuses a header wider than 16,384 columns before anything is written', async () => {
    const header = Array.from({ length: 16_384 - 1 }, (_, i) => `c${i}`); // + status = 16,384: fits
    await expect(writeBook('wide-ok.xlsx', header, [], status)).resolves.toBeDefined();
    await expect(writeBook('wide.xlsx', [...header, 'one more'], [], status)).rejects.toMatchObject({
      exitCode: 2,
      message:
        'wide.xlsx: 16,385 columns, past the 16,384 an .xlsx sheet holds (column XFD); write CSV instead (-o wide.csv) or fewer verdict columns (--columns status,reason)',
    });
  });

  it('refuses a row wider than the limit', async () => {
    await expect(writeBook('ragged.xlsx', ['email'], [['a@b.test'], ['a@b.test', 'x', 'y']], status, { limits: { columns: 3 } })).rejects.toThrow(
      'ragged.xlsx: 4 columns in row 3, past the 3 an .xlsx sheet holds (column C)',
    );
  });

  it('holds 32,767 characters in a cell and refuses 32,768, naming the cell', async () => {
    const ok = await writeBook('cell-ok.xlsx', ['email', 'note'], [['a@b.test', 'x'.repeat(32_767)]], status);
    expect((await readBack(ok))[1]![1]).toHaveLength(32_767);
    await expect(
      writeBook(
        'cell.xlsx',
        ['email', 'note'],
        [
          ['a@b.test', 'ok'],
          ['a@b.test', 'x'.repeat(32_768)],
        ],
        status,
      ),
    ).rejects.toMatchObject({
      exitCode: 2,
      message: 'cell.xlsx: cell B3 holds 32,768 characters, past the 32,767 an .xlsx cell holds; write CSV instead (-o cell.csv)',
    });
  });

  it('refuses a workbook past the size a zip without ZIP64 holds', async () => {
    const rows = Array.from({ length: 2000 }, (_, i) => [`a${i}@b.test`, `row ${i} `.repeat(20)]);
    await expect(writeBook('big.xlsx', ['email', 'note'], rows, status, { limits: { bytes: 64 * 1024 } })).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('big.xlsx: the workbook passes 65,536 bytes, the most an .xlsx that mailsift writes holds (a zip without ZIP64)'),
    });
  });
});
