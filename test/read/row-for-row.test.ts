// Sheets and CSV read as the user sees them, row for row. The yardstick is a
// real producer: LibreOffice makes the workbooks (from hand-written FODS) and
// exports them "as shown" (the CSV filter's 9th token), and mailsift's reader
// must give the same cells — the same rounding, the same blank rows in the
// same places, the same width. Then the command (in-process): output row N is
// input row N, the wrong file is exit 2, a header alone is exit 0.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { columnLetters } from '../../src/read/table-shape.js';
import { readTable } from '../support/contacts.js';
import { parseCsv } from '../support/run-cli.js';
import { runInProcess } from '../support/run-in-process.js';
import { missingToolNow } from '../support/tools.js';
import { excelParts, zip } from '../support/workbook.js';

const dir = mkdtempSync(join(tmpdir(), 'mailsift-row-for-row-'));
const SOFFICE = ['/usr/bin/soffice', '/usr/local/bin/soffice', '/usr/lib/libreoffice/program/soffice'].find(existsSync);
const local = ['--engine', 'local', '--no-dns'];

// ---- FODS written by hand: number styles as a user picks them in Calc ----

const NUMBER_STYLES: Record<string, string> = {
  // name → the <number:*-style> body
  d0: '<number:number number:decimal-places="0" number:min-decimal-places="0" number:min-integer-digits="1"/>',
  d1: '<number:number number:decimal-places="1" number:min-decimal-places="1" number:min-integer-digits="1"/>',
  d2: '<number:number number:decimal-places="2" number:min-decimal-places="2" number:min-integer-digits="1"/>',
  d17: '<number:number number:decimal-places="17" number:min-decimal-places="17" number:min-integer-digits="1"/>',
  g2: '<number:number number:decimal-places="2" number:min-decimal-places="2" number:min-integer-digits="1" number:grouping="true"/>',
  zip: '<number:number number:decimal-places="0" number:min-decimal-places="0" number:min-integer-digits="5"/>',
};
const PERCENT =
  '<number:percentage-style style:name="Npct"><number:number number:decimal-places="2" number:min-decimal-places="2" number:min-integer-digits="1"/><number:text>%</number:text></number:percentage-style>';

type FodsCell = string | { v: number; s?: keyof typeof NUMBER_STYLES | 'pct' } | null;

function fods(rows: (FodsCell[] | 'blank')[]): string {
  const cell = (c: FodsCell): string => {
    if (c === null) return '<table:table-cell/>';
    if (typeof c === 'string')
      return `<table:table-cell office:value-type="string"><text:p>${c.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</text:p></table:table-cell>`;
    const style = c.s ? ` table:style-name="ce_${c.s}"` : '';
    return `<table:table-cell${style} office:value-type="${c.s === 'pct' ? 'percentage' : 'float'}" office:value="${c.v}"/>`;
  };
  const styles = [
    ...Object.entries(NUMBER_STYLES).map(([name, body]) => `<number:number-style style:name="N${name}">${body}</number:number-style>`),
    PERCENT,
    ...[...Object.keys(NUMBER_STYLES), 'pct'].map(
      (name) => `<style:style style:name="ce_${name}" style:family="table-cell" style:parent-style-name="Default" style:data-style-name="N${name}"/>`,
    ),
  ].join('');
  const body = rows
    .map((r) => (r === 'blank' ? '<table:table-row><table:table-cell/></table:table-row>' : `<table:table-row>${r.map(cell).join('')}</table:table-row>`))
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:automatic-styles>${styles}</office:automatic-styles>
<office:body><office:spreadsheet><table:table table:name="Contacts">${body}</table:table></office:spreadsheet></office:body></office:document>`;
}

/** Halves, digits past the 15th, grouping, leading zeros, percentages — and rows 3, 5, 6 blank, a note past the header. */
const AMOUNTS: (FodsCell[] | 'blank')[] = [
  ['email', 'name', 'two', 'one', 'seventeen', 'whole', 'grouped', 'zip', 'share'],
  [
    'ann@mx.test',
    'Ann',
    { v: 1.005, s: 'd2' },
    { v: 1.45, s: 'd1' },
    { v: 0.1 + 0.2, s: 'd17' },
    { v: 123456789012345678, s: 'd0' },
    { v: 1234.005, s: 'g2' },
    { v: 1234, s: 'zip' },
    { v: 0.00125, s: 'pct' },
  ],
  'blank',
  [
    'bob@mx.test',
    'Bob',
    { v: 2.675, s: 'd2' },
    { v: 0.05, s: 'd1' },
    { v: 1 / 3, s: 'd17' },
    { v: 2.5, s: 'd0' },
    { v: -1234567.125, s: 'g2' },
    { v: 501, s: 'zip' },
    { v: 0.5, s: 'pct' },
  ],
  'blank',
  'blank',
  [
    'cy@mx.test',
    'Cy',
    { v: 8.345, s: 'd2' },
    { v: 1.25, s: 'd1' },
    { v: 2 / 3, s: 'd17' },
    { v: 0.5, s: 'd0' },
    { v: 0.125, s: 'g2' },
    { v: 12345, s: 'zip' },
    { v: 1, s: 'pct' },
    null,
    'call back',
  ],
  [
    'dee@mx.test',
    'Dee',
    { v: 1.015, s: 'd2' },
    { v: 9.95, s: 'd1' },
    { v: 12.1, s: 'd17' },
    { v: 99999999999999999, s: 'd0' },
    { v: 0.005, s: 'g2' },
    { v: 7, s: 'zip' },
    { v: 0.00005, s: 'pct' },
  ],
];

const ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
const inline = (ref: string, text: string): string => `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;

/** A hand-made workbook with built-in formats 37–40 by id, styled empty rows, and a note past the header that <dimension> announces. */
function handMade(): Buffer {
  const ids = [37, 38, 39, 40, 2, 4];
  const rows = [`<row r="1">${inline('A1', 'email')}${inline('B1', 'amount')}</row>`];
  ids.forEach((_, k) => {
    const r = k + 2;
    rows.push(`<row r="${r}">${inline(`A${r}`, `u${k}@mx.test`)}<c r="B${r}" s="${k + 1}"><v>${k % 2 ? -1234.5 : 1234.5}</v></c></row>`);
  });
  rows.push(
    '<row r="8" s="7" customFormat="1"/>',
    `<row r="9">${inline('A9', 'last@mx.test')}${inline('D9', 'note')}</row>`,
    '<row r="10" s="7" customFormat="1"/>',
  );
  const styles = `<styleSheet ${ns}><cellXfs count="${ids.length + 2}"><xf numFmtId="0"/>${ids.map((id) => `<xf numFmtId="${id}" applyNumberFormat="1"/>`).join('')}<xf numFmtId="0" fillId="0"/></cellXfs></styleSheet>`;
  const parts = excelParts([['unused']], { sheetXml: `<worksheet ${ns}><dimension ref="A1:D9"/><sheetData>${rows.join('')}</sheetData></worksheet>` });
  for (const p of parts) if (p.name === 'xl/styles.xml') p.data = styles;
  return zip(parts);
}

/** LibreOffice's CSV export, as shown: every row padded to the used width; blank rows at the end are not the table's. */
function loTable(path: string): string[][] {
  const rows = parseCsv(readFileSync(path, 'utf8'));
  while (rows.length && rows.at(-1)!.every((c) => c === '')) rows.pop();
  return rows;
}

/** mailsift's header names a column past the header by its letters where LibreOffice leaves it empty. */
const asLibreOffice = (table: string[][]): string[][] => [table[0]!.map((h, i) => (h === columnLetters(i) ? '' : h)), ...table.slice(1)];

describe('workbooks from LibreOffice, cell for cell against its own "as shown" CSV', () => {
  let converted: { xlsx: string; csv: string }[] | undefined;

  beforeAll(async () => {
    if (!SOFFICE) return;
    writeFileSync(join(dir, 'amounts.fods'), fods(AMOUNTS));
    writeFileSync(join(dir, 'builtin.xlsx'), handMade());
    const profile = pathToFileURL(join(dir, 'lo-profile')).href;
    const run = promisify(execFile);
    mkdirSync(join(dir, 'xlsx'));
    mkdirSync(join(dir, 'csv'));
    // two soffice calls in all (it is slow to start): FODS → xlsx, then every workbook → CSV as shown
    await run(SOFFICE, [`-env:UserInstallation=${profile}`, '--headless', '--convert-to', 'xlsx', '--outdir', join(dir, 'xlsx'), join(dir, 'amounts.fods')], {
      timeout: 150_000,
    });
    const books = [join(dir, 'xlsx', 'amounts.xlsx'), join(dir, 'builtin.xlsx')];
    await run(
      SOFFICE,
      [
        `-env:UserInstallation=${profile}`,
        '--headless',
        '--convert-to',
        'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true',
        '--outdir',
        join(dir, 'csv'),
        ...books,
      ],
      { timeout: 150_000 },
    );
    converted = books.map((xlsx) => ({ xlsx, csv: join(dir, 'csv', basename(xlsx).replace(/\.xlsx$/, '.csv')) }));
  }, 320_000);

  it('numbers rounded on their 15-digit decimal, blank rows in place, the note widening the table', async (ctx) => {
    if (!converted) {
      missingToolNow(ctx, 'LibreOffice', 'soffice not found (apt-get install libreoffice-calc-nogui)');
      return;
    }
    const { xlsx, csv } = converted[0]!;
    const shown = loTable(csv);
    // what the issue names, read off LibreOffice's own export first, so that the yardstick is seen to agree with Excel
    expect(shown[1]!.slice(2, 9)).toEqual(['1.01', '1.5', '0.30000000000000000', '123456789012346000', '1,234.01', '01234', '0.13%']);
    expect(shown).toHaveLength(8);
    expect(shown[2]!.every((c) => c === '')).toBe(true);
    const mine = await readTable(xlsx);
    expect(asLibreOffice(mine)).toEqual(shown);
    expect(mine[0]!.slice(9)).toEqual(['J', 'K']);
  });

  it('built-in formats 37–40 with their padding space, styled empty rows, a note past the header', async (ctx) => {
    if (!converted) {
      missingToolNow(ctx, 'LibreOffice', 'soffice not found (apt-get install libreoffice-calc-nogui)');
      return;
    }
    const { xlsx, csv } = converted[1]!;
    const shown = loTable(csv);
    expect(shown[3]![1]).toBe('1,234.50 '); // format 39
    const mine = await readTable(xlsx);
    expect(asLibreOffice(mine)).toEqual(shown);
  });
});

describe('the command, row for row', () => {
  it('a workbook with blank rows and a note past the header: output row N is input row N, verdicts after the widest row', async () => {
    const path = join(dir, 'gaps.xlsx');
    writeFileSync(path, handMade());
    const r = await runInProcess(['validate', path, ...local, '--columns', 'status,reason', '-q']);
    expect(r.code, r.stderr).toBe(0);
    const out = parseCsv(r.stdout);
    expect(out[0]).toEqual(['email', 'amount', 'C', 'D', 'status', 'reason']);
    expect(out).toHaveLength(9); // rows 1–9 of the sheet; the styled row 10 below the data is not a row
    expect(out[7]).toEqual(['', '', '', '', 'invalid', 'empty']); // the styled empty row 8, in place
    expect(out[8]).toEqual(['last@mx.test', '', '', 'note', 'valid', '']);
  });

  it('a blank line inside a CSV comes out in place, and a short row is padded', async () => {
    const path = join(dir, 'blank.csv');
    writeFileSync(path, 'email,name,phone\na@mx.test,A,1\n\nb@mx.test\n');
    const r = await runInProcess(['validate', path, ...local, '--columns', 'status', '-q']);
    expect(r.code, r.stderr).toBe(0);
    expect(parseCsv(r.stdout)).toEqual([
      ['email', 'name', 'phone', 'status'],
      ['a@mx.test', 'A', '1', 'valid'],
      ['', '', '', 'invalid'],
      ['b@mx.test', '', '', 'valid'],
    ]);
  });

  it('a CSV row wider than the table, found late, is exit 2 naming the row, and -o is not written', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => `u${i}@mx.test,${i}`);
    rows[19_500] += ',stray';
    const path = join(dir, 'late.csv');
    writeFileSync(path, `email,n\n${rows.join('\n')}\n`);
    const out = join(dir, 'late-out.csv');
    const r = await runInProcess(['validate', path, ...local, '-o', out, '-q'], { timeoutMs: 150_000 });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/^mailsift: .*late\.csv: row 19502 has a cell in column C \(3\), past the 2 columns/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
  });

  it('the wrong file: a README is exit 2 (not 150 invalid rows), a PNG is named as one', async () => {
    const readme = join(dir, 'README.md');
    writeFileSync(readme, `# A project\n\n${'Prose about the project, nothing to mail.\n'.repeat(150)}Contact: someone@example.com\n`);
    const text = await runInProcess(['validate', readme, ...local]);
    expect(text.code).toBe(2);
    expect(text.stdout).toBe('');
    expect(text.stderr).toMatch(/README\.md looks like prose or a document, not a list \(1 of its 152 non-blank lines holds an address/);
    const png = join(dir, 'logo.png');
    writeFileSync(png, Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'));
    const image = await runInProcess(['validate', png, ...local]);
    expect(image.code).toBe(2);
    expect(image.stderr.trim()).toMatch(/^mailsift: .*logo\.png is a PNG image, not a list of addresses or a CSV file$/);
  });

  it('a header and no rows (a quiet day) is exit 0 with a notice; an empty file is exit 2', async () => {
    const path = join(dir, 'quiet-day.csv');
    writeFileSync(path, 'name,email\n');
    const r = await runInProcess(['validate', path, ...local, '--columns', 'status']);
    expect(r.code, r.stderr).toBe(0);
    expect(parseCsv(r.stdout)).toEqual([['name', 'email', 'status']]);
    expect(r.stderr).toMatch(/quiet-day\.csv: a header and no rows below it, nothing to validate/);
    const quiet = await runInProcess(['validate', path, ...local, '-q']);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
    const empty = join(dir, 'empty.csv');
    writeFileSync(empty, '');
    const e = await runInProcess(['validate', empty, ...local]);
    expect(e.code).toBe(2);
    expect(e.stderr).toMatch(/empty input/);
  });
});
