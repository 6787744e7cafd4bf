// Cells of a hand-made workbook read through the reader, as Excel shows them:
// ISO dates stored as text (t="d"), built-in formats by id, General numbers in
// Excel's exponent form, halves rounded on the decimal.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { readTable } from '../support/contacts.js';
import { excelParts, zip } from '../support/workbook.js';

const ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';

it('t="d" cells, built-in 40, General 1E-07 and a half in 0.00, from one sheet', async () => {
  // styles: 1 = yyyy-mm-dd (14), 2 = built-in 40, 3 = 0.00 (2), 4 = h:mm (20)
  const styles = `<styleSheet ${ns}><cellXfs count="5"><xf numFmtId="0"/><xf numFmtId="14"/><xf numFmtId="40"/><xf numFmtId="2"/><xf numFmtId="20"/></cellXfs></styleSheet>`;
  const c = (ref: string, inner: string, attrs = ''): string => `<c r="${ref}"${attrs}>${inner}</c>`;
  const sheet = `<worksheet ${ns}><sheetData>
    <row r="1">${c('A1', '<is><t>email</t></is>', ' t="inlineStr"')}${c('B1', '<is><t>when</t></is>', ' t="inlineStr"')}${c('C1', '<is><t>n</t></is>', ' t="inlineStr"')}</row>
    <row r="2">${c('A2', '<is><t>a@mx.test</t></is>', ' t="inlineStr"')}${c('B2', '<v>2024-01-31T00:00:00Z</v>', ' t="d"')}${c('C2', '<v>1234.5</v>', ' s="2"')}</row>
    <row r="3">${c('A3', '<is><t>b@mx.test</t></is>', ' t="inlineStr"')}${c('B3', '<v>2024-01-31T09:30:00Z</v>', ' t="d"')}${c('C3', '<v>1E-7</v>')}</row>
    <row r="4">${c('A4', '<is><t>c@mx.test</t></is>', ' t="inlineStr"')}${c('B4', '<v>2024-01-31T09:30:00Z</v>', ' t="d" s="1"')}${c('C4', '<v>1.005</v>', ' s="3"')}</row>
    <row r="5">${c('A5', '<is><t>d@mx.test</t></is>', ' t="inlineStr"')}${c('B5', '<v>2024-01-31T09:30:00Z</v>', ' t="d" s="4"')}${c('C5', '<v>1.5E-7</v>')}</row>
  </sheetData></worksheet>`;
  const parts = excelParts([['unused']], { sheetXml: sheet });
  for (const p of parts) if (p.name === 'xl/styles.xml') p.data = styles;
  const path = join(mkdtempSync(join(tmpdir(), 'mailsift-xlsx-cells-')), 'cells.xlsx');
  writeFileSync(path, zip(parts));
  expect(await readTable(path)).toEqual([
    ['email', 'when', 'n'],
    ['a@mx.test', '2024-01-31', '1,234.50 '],
    ['b@mx.test', '2024-01-31 09:30:00', '1E-07'],
    ['c@mx.test', '2024-01-31', '1.01'],
    ['d@mx.test', '09:30:00', '1.5E-07'],
  ]);
});
