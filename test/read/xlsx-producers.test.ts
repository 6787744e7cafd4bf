import ExcelJS from 'exceljs';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { contacts, exceljsContacts, readTable } from '../support/contacts.js';
import { parseCsv } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';
import { missingToolNow } from '../support/tools.js';
import { excelParts, zip } from '../support/workbook.js';

// Workbooks as real producers write them, read back cell for cell as a user
// sees them: LibreOffice (shared strings after the sheet, its own styles),
// exceljs, and a zip in Excel's own part order (sheet, theme, styles, then the
// shared strings), at 2, 40 and 300 rows — small sheets are where reading in
// archive order went wrong.
const dir = mkdtempSync(join(tmpdir(), 'mailsift-producers-'));
const SIZES = [2, 40, 300];
const FIXTURES = new URL('../fixtures/xlsx/', import.meta.url);
const SOFFICE = ['/usr/bin/soffice', '/usr/local/bin/soffice', '/usr/lib/libreoffice/program/soffice'].find(existsSync);

describe('workbooks from real producers', () => {
  it.each(SIZES)("Excel's part order, %i rows (shared strings last, inline strings, number formats)", async (n) => {
    const { cells, shown } = contacts(n);
    const path = join(dir, `excel-order-${n}.xlsx`);
    writeFileSync(path, zip(excelParts(cells)));
    expect(await readTable(path)).toEqual(shown);
  });

  it.each(SIZES)('exceljs, %i rows', async (n) => {
    const path = join(dir, `exceljs-${n}.xlsx`);
    await exceljsContacts(n, path);
    expect(await readTable(path)).toEqual(contacts(n).shown);
  });

  it('exceljs streaming writer with shared strings', async () => {
    const path = join(dir, 'exceljs-stream.xlsx');
    const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useSharedStrings: true });
    const ws = wb.addWorksheet('contacts');
    ws.addRow(['id', 'email']).commit();
    for (let i = 0; i < 40; i++) ws.addRow([i, `user${i}@mx.test`]).commit();
    ws.commit();
    await wb.commit();
    const rows = await readTable(path);
    expect(rows).toHaveLength(41);
    expect(rows[40]).toEqual(['39', 'user39@mx.test']);
  });

  it.each(SIZES)('LibreOffice (committed fixture), %i rows', async (n) => {
    expect(await readTable(new URL(`libreoffice-${n}.xlsx`, FIXTURES).pathname)).toEqual(contacts(n).shown);
  });

  it('LibreOffice headless, converting now (soffice)', async (ctx) => {
    if (!SOFFICE) {
      missingToolNow(ctx, 'LibreOffice', 'soffice not found (apt-get install libreoffice-calc-nogui); the committed LibreOffice fixtures were read instead');
      return;
    }
    const inputs = SIZES.map((n) => join(dir, `lo-in-${n}.xlsx`));
    await Promise.all(SIZES.map((n, k) => exceljsContacts(n, inputs[k]!)));
    const out = join(dir, 'lo-out');
    // its own profile: a user's (or another run's) LibreOffice is not disturbed, nor waited for
    const profile = pathToFileURL(join(dir, 'lo-profile')).href;
    await promisify(execFile)(SOFFICE, [`-env:UserInstallation=${profile}`, '--headless', '--convert-to', 'xlsx', '--outdir', out, ...inputs], {
      timeout: 120_000,
    });
    for (const [k, n] of SIZES.entries()) {
      const converted = join(out, `lo-in-${n}.xlsx`);
      expect(await readTable(converted)).toEqual(contacts(n).shown);
      if (process.env.UPDATE_FIXTURES) copyFileSync(converted, new URL(`libreoffice-${n}.xlsx`, FIXTURES));
      void k;
    }
  }, 150_000);

  it('the command validates a LibreOffice workbook, every row once and in order', async () => {
    const r = await runInProcess(['validate', new URL('libreoffice-40.xlsx', FIXTURES).pathname, '--engine', 'local', '--no-dns', '--columns', 'status', '-q']);
    expect(r.code).toBe(0);
    const rows = parseCsv(r.stdout);
    expect(rows.map((row) => row.slice(0, -1))).toEqual(contacts(40).shown);
  });
});
