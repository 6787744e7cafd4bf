import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { readTable } from '../support/contacts.js';
import { parseCsv } from '../support/run-cli.js';
import { missingTool, missingToolNow } from '../support/tools.js';
import { excelParts, zip } from '../support/workbook.js';

// The second oracle: cells as the spreadsheet programs show them. Workbooks
// are written by their producers (openpyxl and XlsxWriter from Debian's
// python3 packages; Gnumeric by converting one with ssconvert) and by hand
// (raw CR in the XML, which no library writes), then shown by Gnumeric
// (ssconvert, "format=preserve") and LibreOffice (CSV "as shown", one
// soffice start for every file: it is slow to start). mailsift's reading of
// each cell must agree with both, in its documented forms (docs/files.md):
// times as HH:MM:SS on a 24-hour clock, a duration with all its hours.
const run = promisify(execFile);
const PYTHON = ['/usr/bin/python3', 'python3'].find((p) => spawnSync(p, ['-c', 'import openpyxl']).status === 0);
const SSCONVERT = spawnSync('ssconvert', ['--version']).status === 0;
const SOFFICE = ['/usr/bin/soffice', '/usr/local/bin/soffice', '/usr/lib/libreoffice/program/soffice'].find(existsSync);
const missing = [!PYTHON && 'python3-openpyxl', !SSCONVERT && 'gnumeric', !SOFFICE && 'libreoffice-calc-nogui'].filter(Boolean);
const GENERATOR = fileURLToPath(new URL('../support/oracle-workbooks.py', import.meta.url));

/** How a case's reading is compared with what a program shows. */
type Compare =
  /** the same text (Gnumeric's U+2212 minus read as "-") */
  | 'same'
  /** a time: the fields the format shows, in the format's order (h m s; H = all the hours; M = all the minutes) */
  | { time: string; ampm?: boolean };

interface Case {
  label: string;
  cell: { number: number; format: string } | { text: string; format: string };
  /** what mailsift reads, in its documented form */
  reads: string;
  compare: Compare;
}

const day = 86_400;
const CASES: Case[] = [
  // a time-only format on a date-time: the time of day, not 1,087,746 hours
  { label: 'h:mm on a date-time', cell: { number: 45322.75, format: 'h:mm' }, reads: '18:00:00', compare: { time: 'hm' } },
  { label: 'mm:ss on a date-time', cell: { number: 45322.75 + 65 / day, format: 'mm:ss' }, reads: '18:01:05', compare: { time: 'ms' } },
  { label: 'h:mm AM/PM, evening', cell: { number: 45322.75, format: 'h:mm AM/PM' }, reads: '18:00:00', compare: { time: 'hm', ampm: true } },
  { label: 'h:mm AM/PM, morning', cell: { number: 45322.25, format: 'h:mm AM/PM' }, reads: '06:00:00', compare: { time: 'hm', ampm: true } },
  { label: 'h:mm:ss on a date-time', cell: { number: 45322.5 + 3723 / day, format: 'h:mm:ss' }, reads: '13:02:03', compare: { time: 'hms' } },
  { label: 'hh:mm on a time', cell: { number: 0.375, format: 'hh:mm' }, reads: '09:00:00', compare: { time: 'hm' } },
  { label: 'h:mm on a negative value', cell: { number: -0.25, format: 'h:mm' }, reads: '18:00:00', compare: { time: 'hm' } },
  // elapsed formats keep their hours, and their sign
  { label: '[h]:mm on a date-time', cell: { number: 45322.75, format: '[h]:mm' }, reads: '1087746:00:00', compare: { time: 'Hm' } },
  { label: '[h]:mm:ss past a day', cell: { number: 1.5, format: '[h]:mm:ss' }, reads: '36:00:00', compare: { time: 'Hms' } },
  { label: '[mm]:ss past a day', cell: { number: 1.5 + 30 / day, format: '[mm]:ss' }, reads: '36:00:30', compare: { time: 'Ms' } },
  { label: '[h]:mm negative', cell: { number: -0.5, format: '[h]:mm' }, reads: '-12:00:00', compare: { time: 'Hm' } },
  { label: '[h]:mm:ss negative, past a day', cell: { number: -1.25, format: '[h]:mm:ss' }, reads: '-30:00:00', compare: { time: 'Hms' } },
  // empty sections hide what they are for
  { label: '0;-0;;@ positive', cell: { number: 2.5, format: '0;-0;;@' }, reads: '3', compare: 'same' },
  { label: '0;-0;;@ negative', cell: { number: -2.5, format: '0;-0;;@' }, reads: '-3', compare: 'same' },
  { label: '0;-0;;@ zero', cell: { number: 0, format: '0;-0;;@' }, reads: '', compare: 'same' },
  { label: ';;; positive', cell: { number: 5, format: ';;;' }, reads: '', compare: 'same' },
  { label: ';;; negative', cell: { number: -5, format: ';;;' }, reads: '', compare: 'same' },
  { label: ';;; zero', cell: { number: 0, format: ';;;' }, reads: '', compare: 'same' },
  { label: '0.00; negative', cell: { number: -3, format: '0.00;' }, reads: '', compare: 'same' },
  { label: '0.00; positive', cell: { number: 3, format: '0.00;' }, reads: '3.00', compare: 'same' },
  { label: '0.00;; zero', cell: { number: 0, format: '0.00;;' }, reads: '', compare: 'same' },
  { label: 'a negative section of text', cell: { number: -3, format: '0;"neg"' }, reads: 'neg', compare: 'same' },
  { label: 'a zero section of text', cell: { number: 0, format: '0;-0;"zero"' }, reads: 'zero', compare: 'same' },
  { label: 'text hidden by ;;;', cell: { text: 'hidden@example.com', format: ';;;' }, reads: '', compare: 'same' },
  { label: 'text placed by "x"@', cell: { text: 'text', format: '"x"@' }, reads: 'xtext', compare: 'same' },
  { label: 'text through 0;-0;;@', cell: { text: 'text', format: '0;-0;;@' }, reads: 'text', compare: 'same' },
  // 1E+21 and past keep their format
  { label: '0 on 1E+21', cell: { number: 1e21, format: '0' }, reads: '1000000000000000000000', compare: 'same' },
  { label: '0% on 1E+21', cell: { number: 1e21, format: '0%' }, reads: '100000000000000000000000%', compare: 'same' },
  { label: '0 on 1.5E+22', cell: { number: 1.5e22, format: '0' }, reads: '15000000000000000000000', compare: 'same' },
  { label: '#,##0 on 1E+21', cell: { number: 1e21, format: '#,##0' }, reads: '1,000,000,000,000,000,000,000', compare: 'same' },
  { label: '0.00 on 1E+21', cell: { number: 1e21, format: '0.00' }, reads: '1000000000000000000000.00', compare: 'same' },
  // what already agreed, kept so
  { label: 'a zip code', cell: { number: 1234, format: '00000' }, reads: '01234', compare: 'same' },
  { label: 'an amount', cell: { number: 1234.5, format: '#,##0.00' }, reads: '1,234.50', compare: 'same' },
  { label: 'a date', cell: { number: 45322, format: 'yyyy-mm-dd' }, reads: '2024-01-31', compare: 'same' },
];

const HEADER = ['email', 'case', 'shown'];
const rows = [HEADER.map((text) => ({ text })), ...CASES.map((c, i) => [{ text: `user${i}@example.com` }, { text: c.label }, c.cell])];

/** Numbers out of a time a program shows ("6:00 PM", "−12:00", "2160:30"), as the format's fields. */
function timeFields(shown: string, compare: { time: string; ampm?: boolean }): number[] | undefined {
  const m = /^([-\u2212])?(\d+):(\d+)(?::(\d+))?(?:\s*([AP])M)?$/i.exec(shown.trim());
  if (!m) return undefined;
  const parts = [m[2], m[3], m[4]].filter((p) => p !== undefined).map(Number);
  if (compare.ampm && compare.time[0] === 'h') parts[0] = (parts[0]! % 12) + (m[5]?.toUpperCase() === 'P' ? 12 : 0);
  return m[1] ? [-parts[0]!, ...parts.slice(1)] : parts;
}

/** mailsift's HH:MM:SS as the fields a format shows. */
function readFields(text: string, fields: string): number[] {
  const m = /^(-)?(\d+):(\d\d):(\d\d)$/.exec(text);
  if (!m) return [NaN];
  const [h, mi, s] = [Number(m[2]), Number(m[3]), Number(m[4])];
  const sign = m[1] ? -1 : 1;
  const value = { h, H: h, m: mi, M: h * 60 + mi, s };
  const out = [...fields].map((f) => value[f as keyof typeof value]);
  out[0] = sign * out[0]!;
  return out;
}

describe.skipIf(missingTool('the spreadsheet oracles', missing.length > 0 && `install ${missing.join(', ')}`))(
  'cells as Gnumeric and LibreOffice show them',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailsift-oracles-'));
    /** workbook path → [mailsift, Gnumeric, LibreOffice] tables */
    const tables = new Map<string, { ours: string[][]; gnumeric: string[][]; libreoffice: string[][] }>();

    beforeAll(async () => {
      const generated = JSON.parse(spawnSync(PYTHON!, [GENERATOR], { input: JSON.stringify({ dir, rows }), encoding: 'utf8' }).stdout) as string[];
      // Gnumeric as a producer: its own writer, from the openpyxl workbook
      const gnumericBook = join(dir, 'gnumeric.xlsx');
      await run('ssconvert', ['-T', 'Gnumeric_Excel:xlsx2', generated[0]!, gnumericBook], { timeout: 60_000 });
      const books = [...generated, gnumericBook, crWorkbook(dir)];
      const oracle = join(dir, 'csv');
      mkdirSync(oracle);
      for (const book of books) {
        await run(
          'ssconvert',
          ['-T', 'Gnumeric_stf:stf_assistant', '-O', 'separator=, format=preserve eol=unix', book, join(oracle, `${basename(book, '.xlsx')}.gnumeric.csv`)],
          { timeout: 60_000 },
        );
      }
      // its own profile: a user's LibreOffice is not disturbed, nor waited for
      const profile = pathToFileURL(join(dir, 'lo-profile')).href;
      const lo = join(dir, 'lo');
      await run(
        SOFFICE!,
        [
          `-env:UserInstallation=${profile}`,
          '--headless',
          '--convert-to',
          'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true',
          '--outdir',
          lo,
          ...books,
        ],
        { timeout: 150_000 },
      );
      for (const book of books) {
        const name = basename(book, '.xlsx');
        tables.set(name, {
          ours: await readTable(book),
          gnumeric: parseCsv(readFileSync(join(oracle, `${name}.gnumeric.csv`), 'utf8')),
          libreoffice: parseCsv(readFileSync(join(lo, `${name}.csv`), 'utf8')),
        });
      }
    }, 200_000);

    it('the producers all wrote their workbook', () => {
      expect([...tables.keys()]).toEqual(expect.arrayContaining(['openpyxl', 'gnumeric', 'cr']));
    });

    it.each(['openpyxl', 'xlsxwriter', 'gnumeric'])('%s: every case reads as documented, and as both programs show it', (book) => {
      const t = tables.get(book);
      if (!t) {
        // only xlsxwriter's is ever left out: the generator skips it where the module is missing
        missingToolNow(undefined, 'python3-xlsxwriter', `the ${book} workbook was not written (apt-get install python3-xlsxwriter)`);
        return;
      }
      const problems: string[] = [];
      CASES.forEach((c, i) => {
        const ours = t.ours[i + 1]?.[2] ?? '';
        if (ours !== c.reads) problems.push(`${c.label}: mailsift reads ${JSON.stringify(ours)}, documented ${JSON.stringify(c.reads)}`);
        for (const program of ['gnumeric', 'libreoffice'] as const) {
          const shown = t[program][i + 1]?.[2] ?? '';
          const agrees =
            c.compare === 'same'
              ? shown.replace(/\u2212/g, '-') === ours
              : JSON.stringify(timeFields(shown, c.compare)) === JSON.stringify(readFields(ours, c.compare.time));
          if (!agrees) problems.push(`${c.label}: ${program} shows ${JSON.stringify(shown)}, mailsift reads ${JSON.stringify(ours)}`);
        }
      });
      expect(problems).toEqual([]);
      // every other cell as both show it too
      expect(t.ours.map((r) => r.slice(0, 2))).toEqual(t.libreoffice.map((r) => r.slice(0, 2)));
    });

    it('a CR in the sheet XML is read as XML says: CR LF and a lone CR as LF; &#13; and _x000D_ stay CR', () => {
      const t = tables.get('cr')!;
      expect(t.ours.slice(1).map((r) => r[1])).toEqual(CR_CELLS.map((c) => c.reads));
      // Gnumeric does not read Excel's _x000D_ escape (it keeps the six characters): LibreOffice and Excel do
      const escaped = CR_CELLS.findIndex((c) => c.xml.includes('_x000D_'));
      expect(t.ours.map((r) => r[1])).toEqual(t.libreoffice.map((r) => r[1]));
      expect(t.ours.map((r) => r[1]).filter((_, i) => i !== escaped + 1)).toEqual(t.gnumeric.map((r) => r[1]).filter((_, i) => i !== escaped + 1));
    });
  },
);

/** Cells whose XML holds CR as no library writes it (raw), and as openpyxl (&#13;) and Excel (_x000D_) write it. */
const CR_CELLS = [
  { xml: 'line one\r\nline two', reads: 'line one\nline two' },
  { xml: 'old mac\rline', reads: 'old mac\nline' },
  { xml: 'two\r\n\r\nbreaks\r', reads: 'two\n\nbreaks\n' },
  { xml: 'a character reference&#13;here', reads: 'a character reference\rhere' },
  { xml: 'an Excel escape_x000D_here', reads: 'an Excel escape\rhere' },
];

/** A hand-made workbook: the CR cells as shared strings (Excel's way) and, in a second column, inline. */
function crWorkbook(dir: string): string {
  const ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
  const strings = `<sst ${ns} count="${CR_CELLS.length + 2}" uniqueCount="${CR_CELLS.length + 2}"><si><t>email</t></si><si><t>note</t></si>${CR_CELLS.map((c) => `<si><t xml:space="preserve">${c.xml}</t></si>`).join('')}</sst>`;
  const sheet = `<worksheet ${ns}><sheetData>\r\n<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>\r\n${CR_CELLS.map(
    (_, i) => `<row r="${i + 2}"><c r="A${i + 2}" t="inlineStr"><is><t>u${i}@example.com</t></is></c><c r="B${i + 2}" t="s"><v>${i + 2}</v></c></row>\r\n`,
  ).join('')}</sheetData></worksheet>`;
  const parts = excelParts([['unused']], { sheetXml: sheet, sharedStringsXml: strings });
  const path = join(dir, 'cr.xlsx');
  writeFileSync(path, zip(parts));
  return path;
}
