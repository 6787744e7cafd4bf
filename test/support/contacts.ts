import ExcelJS from 'exceljs';
import { openInput } from '../../src/read/open-input.js';
import type { Cell } from './workbook.js';

/**
 * `n` contact rows as a user types them into a spreadsheet — a phone number
 * and a zip code typed as numbers (the zip shown with its leading zero), a
 * date, an amount — and the text each cell shows, which the reader must give.
 */
export function contacts(n: number): { cells: Cell[][]; shown: string[][] } {
  const cells: Cell[][] = [['Name', 'Email', 'Phone', 'Zip', 'Joined', 'Amount']];
  const shown: string[][] = [['Name', 'Email', 'Phone', 'Zip', 'Joined', 'Amount']];
  for (let i = 0; i < n; i++) {
    const email = `user${i}@mx.test`;
    const joined = new Date(Date.UTC(2024, 0, 31 + i)).toISOString().slice(0, 10);
    cells.push([
      `Person ${i} & Söhne`,
      // every seventh address an inline string, as some producers write them
      i % 7 === 3 ? { inline: email } : email,
      { number: 15550100 + i },
      { number: 1234 + i, format: '00000' },
      { number: 45322 + i, format: 'yyyy-mm-dd' },
      { number: 1234.5 + i, format: '#,##0.00' },
    ]);
    shown.push([
      `Person ${i} & Söhne`,
      email,
      String(15550100 + i),
      String(1234 + i).padStart(5, '0'),
      joined,
      (1234.5 + i).toLocaleString('en-US', { minimumFractionDigits: 2 }),
    ]);
  }
  return { cells, shown };
}

/** The same contacts written by exceljs (its default, shared-strings-first layout). */
export async function exceljsContacts(n: number, path: string): Promise<void> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Contacts');
  for (const row of contacts(n).cells) {
    const r = ws.addRow(
      row.map((c) =>
        c === null
          ? null
          : typeof c === 'string'
            ? c
            : 'inline' in c
              ? c.inline
              : 'format' in c && c.format === 'yyyy-mm-dd'
                ? new Date(Date.UTC(1899, 11, 30) + c.number * 86400000)
                : c.number,
      ),
    );
    row.forEach((c, k) => {
      if (c && typeof c === 'object' && 'format' in c && c.format) r.getCell(k + 1).numFmt = c.format;
    });
  }
  await wb.xlsx.writeFile(path);
}

/** Every row of a file as mailsift reads it: the header, then the rows' cells. */
export async function readTable(path: string, options: { sheet?: string } = {}): Promise<string[][]> {
  const input = await openInput({ path, ...options });
  const rows = [input.header];
  try {
    for await (const chunk of input.rows) for (const r of chunk) rows.push(r.fields);
  } finally {
    input.close();
  }
  return rows;
}
