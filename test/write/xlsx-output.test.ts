import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';
import { missingToolNow } from '../support/tools.js';

// .xlsx output, the command in-process (issue 30.8, 29.11): what a user's spreadsheet gets
// back from `-o out.xlsx`, read by LibreOffice and by mailsift itself; and an
// output past the format's limits refused with exit 2, the old file kept.
const root = mkdtempSync(join(tmpdir(), 'mailsift-xlsx-out-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const SOFFICE = ['/usr/bin/soffice', '/usr/local/bin/soffice', '/usr/lib/libreoffice/program/soffice'].find(existsSync);
const OFFLINE = ['--engine', 'local', '--no-dns', '-q'];

/** Cells a spreadsheet round trip loses unless written with care: CR LF and a lone CR, edge spaces, tabs, control characters, phone numbers, zip codes. */
const ROWS = [
  ['id', 'email', 'phone', 'zip', 'note'],
  ['1', 'ann@example.com', '+1 555 0100', '01234', 'line1\r\nline2'],
  ['2', 'bob@example.com', '  +44 20 7946 0000 ', '00501', ' $1,234.50 '],
  ['3', 'cy@example.com', 'tab\there', '   ', 'x\u0001y\u001fz _x0041_ & <b> é中😀'],
  ['4', 'dee@example.com', '=SUM(A1)', '-1+2', 'cr\ronly\nlf'],
  ['5', 'eve@example.com', '007', '0', '\t lead and trail \t'],
];

const csvField = (s: string): string => (/[",\r\n]|^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** The rows as a CSV file with CRLF line ends, as Excel saves one; the workbook mailsift makes of it. */
async function workbook(dir: string): Promise<string> {
  writeFileSync(join(dir, 'in.csv'), ROWS.map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n');
  const r = await runInProcess(['validate', 'in.csv', '-o', 'out.xlsx', ...OFFLINE], { cwd: dir });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return join(dir, 'out.xlsx');
}

describe('.xlsx output read back', () => {
  it('LibreOffice gives back every input cell', async (ctx) => {
    if (!SOFFICE) {
      missingToolNow(ctx, 'LibreOffice', 'soffice not found (apt-get install libreoffice-calc-nogui): the round trip of .xlsx output');
      return;
    }
    const dir = mkdtempSync(join(root, 'lo-'));
    await workbook(dir);
    // CSV filter options: comma, double quotes, UTF-8 (76), from line 1, default formats, default language,
    // quote every text cell, (detect special numbers: import only), save cells as shown
    const filter = 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,true,false,true';
    const profile = pathToFileURL(join(dir, 'profile')).href; // a private profile: no clash with another soffice
    await promisify(execFile)(SOFFICE, [`-env:UserInstallation=${profile}`, '--headless', '--convert-to', filter, '--outdir', join(dir, 'lo'), 'out.xlsx'], {
      cwd: dir,
      timeout: 180_000,
    });
    const back = parseCsv(readFileSync(join(dir, 'lo', 'out.csv'), 'utf8'));
    // Why this comparison is exact but for CR: LibreOffice holds a cell's text
    // as paragraphs. Its import ends a paragraph at LF, at CR LF and at a lone
    // CR alike — whether the CR comes as Excel's `_x000D_` (what mailsift
    // writes) or as `&#13;` (tried: the same) — and its CSV export joins the
    // paragraphs with LF. So no file gives a CR back through LibreOffice, and
    // the expectation writes CR LF and a lone CR as LF for that reason alone;
    // every other character, edge spaces and control characters included, is
    // compared as it is. That the CR itself survives is shown by mailsift's
    // own reader below (and by Excel, whose convention `_x000D_` is).
    const expected = ROWS.map((r) => r.map((cell) => cell.replace(/\r\n?/g, '\n')));
    expect(back.map((r) => r.slice(0, 5))).toEqual(expected);
    expect(back[0]!.slice(5, 9)).toEqual(['status', 'reason', 'is_valid', 'confidence']);
    expect(back[1]![5]).toBe('valid');
    expect(back[1]![7]).toBe('TRUE'); // a boolean cell, shown as Calc shows one
  }, 240_000);

  it('mailsift reads its own .xlsx output back: every input cell byte for byte, CR included', async () => {
    const dir = mkdtempSync(join(root, 'self-'));
    await workbook(dir);
    const r = await runInProcess(['validate', 'out.xlsx', '-o', 'back.csv', '--column', 'email', ...OFFLINE], { cwd: dir });
    expect(r.code).toBe(0);
    const back = parseCsv(readFileSync(join(dir, 'back.csv'), 'utf8'));
    expect(back.map((row) => row.slice(0, 5))).toEqual(ROWS);
  });
});

describe(".xlsx output past the format's limits: exit 2, one line naming the limit, the old file as it was", () => {
  const refused = async (name: string, input: string | Buffer, args: string[] = []): Promise<{ stderr: string; dir: string }> => {
    const dir = mkdtempSync(join(root, `${name}-`));
    writeFileSync(join(dir, name), input);
    writeFileSync(join(dir, 'old.xlsx'), 'the previous workbook');
    const r = await runInProcess(['validate', name, '-o', 'old.xlsx', ...OFFLINE, ...args], { cwd: dir, timeoutMs: 180_000 });
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1); // one line, no stack trace
    expect(readFileSync(join(dir, 'old.xlsx'), 'utf8')).toBe('the previous workbook');
    expect(readdirSync(dir).sort()).toEqual([name, 'old.xlsx'].sort()); // no temp file left
    return { stderr: r.stderr, dir };
  };

  it('16,385 columns (16,370 of the input and 15 verdict columns)', async () => {
    const width = 16_370;
    const header = ['email', ...Array.from({ length: width - 1 }, (_, i) => `c${i}`)];
    const row = ['a@example.com', ...Array.from({ length: width - 1 }, (_, i) => String(i))];
    const { stderr } = await refused('wide.csv', `${header.join(',')}\n${row.join(',')}\n`);
    expect(stderr).toBe(
      'mailsift: old.xlsx: 16,385 columns, past the 16,384 an .xlsx sheet holds (column XFD); write CSV instead (-o old.csv) or fewer verdict columns (--columns status,reason)\n',
    );
  }, 120_000);

  it('a cell of 32,768 characters', async () => {
    const { stderr } = await refused('long.csv', `email,note\na@example.com,ok\nb@example.com,${'x'.repeat(32_768)}\n`);
    expect(stderr).toBe('mailsift: old.xlsx: cell B3 holds 32,768 characters, past the 32,767 an .xlsx cell holds; write CSV instead (-o old.csv)\n');
  }, 120_000);

  it('1,048,577 rows (a list of 1,048,576 addresses and the header)', async () => {
    const { stderr } = await refused('list.txt', 'a@example.com\n'.repeat(1_048_576), ['--columns', 'status']);
    expect(stderr).toBe('mailsift: old.xlsx: more than 1,048,576 rows (the header included), the most an .xlsx sheet holds; write CSV instead (-o old.csv)\n');
  }, 180_000);
});
