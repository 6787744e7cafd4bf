import { closeSync, createReadStream, openSync, readSync } from 'node:fs';

/** A sheet of a workbook and whether its first rows hold addresses. */
export interface SheetSurvey {
  name: string;
  /** 1-based, in the workbook's tab order */
  position: number;
  holdsAddresses: boolean;
}

/** cells looked at per sheet */
const CELLS = 1000;

/**
 * Which sheets of the workbook at `path` hold addresses: a sheet does when at
 * least `share` of its first non-empty cells (any column) contain "@". Used
 * only to say which sheet to pick when the chosen one holds none, so it reads
 * the file again rather than burden the run's own reading.
 */
export async function surveySheets(path: string, share: number): Promise<SheetSurvey[]> {
  const ExcelJS = (await import('exceljs')).default;
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(createReadStream(path), {
    worksheets: 'emit',
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'ignore',
    entries: 'ignore',
  });
  const found: { name: string; holdsAddresses: boolean }[] = [];
  for await (const ws of reader as unknown as AsyncIterable<Sheet>) {
    let cells = 0;
    let withAt = 0;
    // every sheet is parsed to its end: exceljs may have spooled it to a file it removes once we move on
    for await (const events of ws.parse()) {
      for (const { eventType, value } of events) {
        if (eventType !== 'row' || cells >= CELLS) continue;
        for (const v of value.values) {
          const text = typeof v === 'string' ? v : typeof v === 'object' && v !== null ? JSON.stringify(v) : '';
          if (text.trim() === '') continue;
          cells++;
          if (text.includes('@')) withAt++;
        }
      }
    }
    found.push({ name: ws.name ?? `sheet${found.length + 1}`, holdsAddresses: cells > 0 && withAt / cells >= share });
  }
  const order = ((reader as unknown as { model?: { sheets?: { name: string }[] } }).model?.sheets ?? []).map((s) => s.name);
  const position = (name: string, i: number) => (order.includes(name) ? order.indexOf(name) + 1 : i + 1);
  return found.map((s, i) => ({ ...s, position: position(s.name, i) })).sort((a, b) => a.position - b.position);
}

interface Sheet {
  name?: string;
  parse(): AsyncIterable<{ eventType: string; value: { values: unknown[] } }[]>;
}

/** A file that starts as a zip archive (an .xlsx workbook), whatever its name. */
export function isWorkbook(path: string): boolean {
  if (path === '-') return false;
  try {
    const fd = openSync(path, 'r');
    try {
      const head = Buffer.alloc(4);
      return readSync(fd, head, 0, 4, 0) === 4 && head.readUInt32BE(0) === 0x504b0304;
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}
