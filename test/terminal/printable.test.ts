// Issue 29 point 12: text from elsewhere (a file name, a sheet name, what was
// typed) is printed with its control characters shown as escapes, so that an
// error line can neither retitle or clear the terminal, nor break in two.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../support/run-in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'mailsift-printable-'));
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('what mailsift prints on stderr', () => {
  it('shows the escapes in a file name instead of sending them to the terminal', async () => {
    const name = join(dir, 'list\u001b]0;pwned\u0007\u001b[2J\nsecond line\u202Egpj.csv');
    const run = await runInProcess(['validate', name, '--engine', 'local', '--no-dns']);
    expect(run.code).toBe(2);
    expect(run.stderr).not.toMatch(RAW);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('list\\x1B]0;pwned\\x07\\x1B[2J\\x0Asecond line\\u202Egpj.csv');
  });

  it('and in what was typed: an unknown option', async () => {
    const run = await runInProcess(['validate', '--\u001b[31mred', 'x.csv']);
    expect(run.code).toBe(2);
    expect(run.stderr).not.toMatch(RAW);
    expect(run.stderr).toContain('\\x1B[31mred');
  });

  it('advises a sheet whose name holds control characters by its number, which can be typed', async () => {
    const book = new ExcelJS.Workbook();
    const notes = book.addWorksheet('Notes');
    for (const line of ['note', 'no addresses here', 'nor here']) notes.addRow([line]);
    const leads = book.addWorksheet('Le\u202Eads');
    leads.addRow(['email']);
    for (let i = 0; i < 5; i++) leads.addRow([`u${i}@example.com`]);
    const file = join(dir, 'book.xlsx');
    await book.xlsx.writeFile(file);
    const run = await runInProcess(['validate', file, '--engine', 'local', '--no-dns']);
    expect(run.code).toBe(2);
    expect(run.stderr).not.toMatch(RAW);
    expect(run.stderr).toContain('sheet "Le\\u202Eads" does');
    expect(run.stderr).toMatch(/use --sheet 2\n$/);
  });
});
