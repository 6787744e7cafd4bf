import { UsageError } from '../errors.js';
import { printable } from '../format.js';

/** Ranges kept per column to name in a message: enough to find them, bounded whatever the sheet. */
const RANGES_KEPT = 4;

/**
 * The cells of a sheet that hold a formula and no saved value. A spreadsheet
 * program stores each formula's last value beside it; a file written by a
 * library that cannot calculate (openpyxl never does) stores none, and only a
 * spreadsheet program can work it out. Kept as a count and the first few runs
 * of rows per column, so a sheet of a million such cells costs nothing.
 */
export class FormulaCells {
  private readonly columns = new Map<number, { count: number; runs: [number, number][] }>();
  count = 0;

  /** `column` 0-based, `row` as the sheet numbers it; cells come in sheet order */
  add(column: number, row: number): void {
    this.count++;
    let c = this.columns.get(column);
    if (!c) this.columns.set(column, (c = { count: 0, runs: [] }));
    c.count++;
    const last = c.runs.at(-1);
    if (last && row === last[1] + 1) last[1] = row;
    else if (c.runs.length < RANGES_KEPT) c.runs.push([row, row]);
  }

  inColumn(column: number): number {
    return this.columns.get(column)?.count ?? 0;
  }

  /** `B2:B41, B45` — the first runs of rows (of one column, or of all), and how many cells are left unnamed */
  cells(column?: number): string {
    const cols = column === undefined ? [...this.columns.keys()].sort((a, b) => a - b) : [column];
    const named: string[] = [];
    let counted = 0;
    for (const col of cols) {
      const c = this.columns.get(col);
      if (!c) continue;
      for (const [from, to] of c.runs) {
        if (named.length >= RANGES_KEPT) break;
        named.push(from === to ? `${letters(col)}${from}` : `${letters(col)}${from}:${letters(col)}${to}`);
        counted += to - from + 1;
      }
    }
    const total = column === undefined ? this.count : this.inColumn(column);
    return total > counted ? `${named.join(', ')} and ${(total - counted).toLocaleString('en-US')} more` : named.join(', ');
  }
}

const ADVICE = 'open the workbook in a spreadsheet program (Excel, LibreOffice, Gnumeric), save it, and run again';

/** The address column holds formulas without a value: nothing to check there until a spreadsheet program has worked them out. */
export function uncalculatedAddresses(name: string, header: string, column: number, f: FormulaCells): UsageError {
  const n = f.inColumn(column);
  return new UsageError(
    `${name}: ${cellCount(n)} of the address column ${printable(JSON.stringify(header))} ${n === 1 ? 'holds a formula' : 'hold formulas'} with no saved value (${f.cells(column)}); ` +
      `mailsift does not calculate formulas: ${ADVICE}`,
  );
}

/** No column was found to hold addresses, and formulas without a value may be why. */
export function noColumnButFormulas(name: string, f: FormulaCells, reason: string): UsageError {
  return new UsageError(
    `${name}: ${reason}; ${cellCount(f.count)} hold formulas with no saved value (${f.cells()}), which mailsift does not calculate: ${ADVICE}`,
  );
}

/** The one-line notice for formulas without a value outside the address column: those cells are read as empty. */
export function formulasNotice(name: string, f: FormulaCells): string {
  return `${name}: ${cellCount(f.count)} ${f.count === 1 ? 'holds a formula' : 'hold formulas'} with no saved value (${f.cells()}), read as empty: to have their values, ${ADVICE}`;
}

const cellCount = (n: number): string => (n === 1 ? '1 cell' : `${n.toLocaleString('en-US')} cells`);

/** 0 → A, 26 → AA */
function letters(col: number): string {
  let s = '';
  for (let n = col + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}
