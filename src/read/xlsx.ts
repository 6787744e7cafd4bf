import { Readable } from 'node:stream';
import { UsageError } from '../errors.js';
import { MAX_LINE, tooLong } from './decode.js';

/** A zip archive's first bytes: every .xlsx starts with them. */
export const isZip = (head: Buffer): boolean => head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
/** An OLE2 compound file: the legacy binary .xls (and .doc). */
export const isOle2 = (head: Buffer): boolean =>
  head[0] === 0xd0 && head[1] === 0xcf && head[2] === 0x11 && head[3] === 0xe0;

/**
 * The rows of one sheet of a workbook, as text cells, a chunk at a time, read
 * with exceljs's streaming reader: the sheet is never held whole (its shared
 * strings are: the format keeps each distinct text once, for the whole file).
 * `sheet` is a name or a 1-based number; the first sheet by default.
 */
export async function* xlsxRecords(bytes: AsyncIterable<Buffer>, name: string, sheet?: string): AsyncGenerator<string[][]> {
  const ExcelJS = (await import('exceljs')).default;
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(Readable.from(bytes), {
    worksheets: 'emit',
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    // read for its number formats: without them a date is a bare serial number (45322)
    styles: 'cache',
    entries: 'ignore',
  });
  const seen: string[] = [];
  let found = false;
  try {
    for await (const ws of reader as unknown as AsyncIterable<WorksheetReader>) {
      const sheetName = ws.name ?? `sheet${seen.length + 1}`;
      seen.push(sheetName);
      if (found || !wanted(sheet, sheetName, seen.length, reader)) {
        // Read to its end, unparsed: exceljs may have spooled the sheet to a
        // temporary file, which it deletes as soon as we move on — a stream
        // left unread then fails to open it, an uncaught error (exit 1).
        for await (const _ of ws.iterator) void _;
        continue;
      }
      found = true;
      /** a sheet stores no trailing empty cells: rows are padded to the first row's width, so columns line up */
      let width = -1;
      for await (const events of ws.parse()) {
        const rows: string[][] = [];
        for (const { eventType, value } of events) {
          if (eventType !== 'row') continue;
          const cells = rowCells(value.values, name, value.number);
          if (!cells.some((c) => c !== '')) continue;
          if (width < 0) width = cells.length;
          while (cells.length < width) cells.push('');
          rows.push(cells);
        }
        if (rows.length) yield rows;
      }
    }
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${name}: not a readable Excel workbook (${(err as Error).message})`);
  }
  if (!found) {
    if (sheet === undefined) throw new UsageError(`${name}: the workbook has no worksheet`);
    throw new UsageError(`--sheet ${sheet}: no such sheet in ${name} (sheets: ${seen.join(', ')})`);
  }
}

interface WorksheetReader {
  name?: string;
  /** the sheet's XML, as exceljs reads it (a zip entry, or a temporary file) */
  iterator: AsyncIterable<unknown>;
  parse(): AsyncIterable<{ eventType: string; value: { values: unknown[]; number: number } }[]>;
}

/**
 * Whether this is the sheet asked for. "First" means first in the workbook's
 * own order (its tab order), which need not be the order of the zip entries.
 */
function wanted(sheet: string | undefined, sheetName: string, position: number, reader: unknown): boolean {
  const order = ((reader as { model?: { sheets?: { name: string }[] } }).model?.sheets ?? []).map((s) => s.name);
  if (sheet === undefined) return order.length ? sheetName === order[0] : position === 1;
  if (/^\d+$/.test(sheet)) return order.length ? sheetName === order[Number(sheet) - 1] : position === Number(sheet);
  return sheetName === sheet;
}

/** A row's cells as the text a user sees in them (exceljs rows are 1-based and sparse). */
function rowCells(values: unknown[], name: string, rowNumber: number): string[] {
  const cells: string[] = [];
  for (let i = 1; i < values.length; i++) {
    const text = cellText(values[i]);
    if (text.length > MAX_LINE) throw tooLong(name, 'row', rowNumber);
    cells.push(text);
  }
  return cells;
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v instanceof Date) {
    const iso = v.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
  }
  if (typeof v === 'object') {
    const o = v as { richText?: { text: string }[]; text?: unknown; result?: unknown; error?: string; hyperlink?: string };
    if (Array.isArray(o.richText)) return o.richText.map((r) => r.text).join('');
    // a mailto: link shows its text (the address); a formula, its last computed value
    if (o.text !== undefined) return cellText(o.text);
    if ('result' in o) return cellText(o.result);
    if (typeof o.error === 'string') return o.error;
  }
  return String(v);
}
