import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../support/fault-server.js';
import { parseCsv } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';
import { missingTool } from '../support/tools.js';

// A formula whose value the workbook does not hold: openpyxl writes the
// formula and never a value (it cannot calculate), and only a spreadsheet
// program can work it out. In the address column that is exit 2 naming the
// cells, found before any request wherever the cell is; elsewhere the cell is
// empty and a notice counts them. Opening and saving the workbook in a
// spreadsheet program (LibreOffice here), as the message says, mends it.
const run = promisify(execFile);
const PYTHON = ['/usr/bin/python3', 'python3'].find((p) => spawnSync(p, ['-c', 'import openpyxl']).status === 0);
const SOFFICE = ['/usr/bin/soffice', '/usr/local/bin/soffice', '/usr/lib/libreoffice/program/soffice'].find(existsSync);
const GENERATOR = fileURLToPath(new URL('../support/oracle-workbooks.py', import.meta.url));
const API_KEY = 'formulas-test-key';

/** 1,500 contacts; `formulaAt(row)` says which address cells are formulas (sheet row numbers) */
function contacts(formulaAt: (row: number) => boolean, header = ['name', 'email', 'domain']) {
  const rows: unknown[][] = [header.map((text) => ({ text }))];
  for (let r = 2; r <= 1501; r++) {
    rows.push([
      { text: `person${r}` },
      formulaAt(r) ? { formula: `=A${r}&"@example.com"` } : { text: `person${r}@example.com` },
      { formula: `=MID(B${r},FIND("@",B${r})+1,99)` },
    ]);
  }
  return rows;
}

describe.skipIf(missingTool('python3-openpyxl', !PYTHON && 'python3 cannot import openpyxl (apt-get install python3-openpyxl)'))(
  'formulas with no saved value (openpyxl)',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailsift-formulas-'));
    let server: FaultServer;
    const write = (name: string, rows: unknown[][]): string => {
      const sub = join(dir, name);
      spawnSync('mkdir', ['-p', sub]);
      const out = spawnSync(PYTHON!, [GENERATOR], { input: JSON.stringify({ dir: sub, rows }), encoding: 'utf8' });
      const written = (JSON.parse(out.stdout) as string[]).find((p) => p.endsWith('openpyxl.xlsx'));
      if (!written) throw new Error(`openpyxl wrote nothing: ${out.stderr}`);
      return written;
    };
    const env = () => ({ MAILSIFT_API_KEY: API_KEY, MAILSIFT_BASE_URL: server.url });

    beforeAll(async () => {
      server = await startFaultServer({ apiKey: API_KEY });
    });
    afterAll(async () => {
      await server.close();
    });

    it('in the address column: exit 2 naming the cells, saying to open and save the workbook, before any request', async () => {
      // far below the rows looked at to find the column (and the 1,000 cells checked for "@")
      const book = write(
        'address',
        contacts((r) => r === 1200 || (r >= 1300 && r <= 1302)),
      );
      for (const extra of [[], ['--dry-run']]) {
        const r = await runInProcess(['validate', book, '-o', join(dir, 'out.csv'), ...extra], { env: env() });
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        expect(r.stderr).toContain('4 cells of the address column "email" hold formulas with no saved value (B1200, B1300:B1302)');
        expect(r.stderr).toMatch(/open the workbook in a spreadsheet program .*save it, and run again/);
        expect(r.stdout).toBe('');
      }
      expect(server.requests).toHaveLength(0);
      expect(existsSync(join(dir, 'out.csv'))).toBe(false);
    });

    it('an address column made only of such formulas, under no header that names it: the formulas are named, not "no address column"', async () => {
      const book = write(
        'unnamed',
        contacts(() => true, ['name', 'contact', 'domain']),
      );
      const r = await runInProcess(['validate', book], { env: env() });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('3,000 cells hold formulas with no saved value (B2:B1501, C2:C1501)');
      expect(r.stderr).toMatch(/open the workbook in a spreadsheet program/);
      expect(server.requests).toHaveLength(0);
    });

    describe('elsewhere', () => {
      let book: string;
      beforeAll(() => {
        book = write(
          'elsewhere',
          contacts(() => false),
        );
      });

      it('the cell is empty and a notice counts them; every row is checked', async () => {
        const r = await runInProcess(['validate', book, '--columns', 'status'], { env: env() });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toContain('1,500 cells hold formulas with no saved value (C2:C1501), read as empty');
        const rows = parseCsv(r.stdout);
        expect(rows).toHaveLength(1501);
        expect(rows[1]).toEqual(['person2', 'person2@example.com', '', 'valid']);
        expect(rows.slice(1).every((row) => row[2] === '')).toBe(true);
      });

      it.skipIf(missingTool('LibreOffice', !SOFFICE && 'soffice not found (apt-get install libreoffice-calc-nogui)'))(
        'opened and saved in a spreadsheet program (LibreOffice), as the notice says, the cells have their values',
        async () => {
          const saved = join(dir, 'saved');
          const profile = pathToFileURL(join(dir, 'lo-profile')).href;
          await run(SOFFICE!, [`-env:UserInstallation=${profile}`, '--headless', '--convert-to', 'xlsx', '--outdir', saved, book], { timeout: 150_000 });
          const r = await runInProcess(['validate', join(saved, 'openpyxl.xlsx'), '--columns', 'status'], { env: env() });
          expect(r.code, r.stderr).toBe(0);
          expect(r.stderr).not.toContain('formulas');
          expect(parseCsv(r.stdout)[1]).toEqual(['person2', 'person2@example.com', 'example.com', 'valid']);
        },
        180_000,
      );
    });
  },
);
