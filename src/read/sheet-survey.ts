import { closeSync, openSync, readSync } from 'node:fs';
import { xlsxRecords, xlsxSheetNames } from './xlsx.js';

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
  const names = await xlsxSheetNames(path, path);
  const found: SheetSurvey[] = [];
  for (const [i, name] of names.entries()) {
    let cells = 0;
    let withAt = 0;
    // the bounded reader, stopped after the cells looked at
    reading: for await (const rows of xlsxRecords(path, path, { sheet: String(i + 1) })) {
      for (const row of rows) {
        for (const text of row) {
          if (text.trim() === '') continue;
          cells++;
          if (text.includes('@')) withAt++;
          if (cells >= CELLS) break reading;
        }
      }
    }
    found.push({ name, position: i + 1, holdsAddresses: cells > 0 && withAt / cells >= share });
  }
  return found;
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
