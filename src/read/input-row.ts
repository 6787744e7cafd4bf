import type { Dialect } from '../dialect.js';

/** One input row on its way through the pipeline. */
export interface InputRow {
  /** the row's cells, unchanged (CSV) or the single line (text) */
  fields: string[];
  /**
   * the address to check: the cell trimmed, or the address it holds
   * (`Jane <jane@x.com>`, `mailto:jane@x.com`: see cell-addresses.ts); ''
   * when the cell is empty
   */
  email: string;
  /**
   * Set when the row has more than one address to check — several columns
   * checked, or a cell that lists several (`a@x.com ::: b@y.com`): each
   * checked cell's addresses, in the order of the checked columns ([] for an
   * empty cell). `email` is then the first of them, or ''.
   */
  cells?: string[][];
}

/** An opened input: its header (what the output repeats) and its rows. */
export interface Input {
  /** 'csv', 'xlsx' (a sheet: a table like CSV) or 'text' — text input yields the single column `email` */
  kind: 'csv' | 'xlsx' | 'text';
  header: string[];
  /** index of the (first) address column within `fields` */
  emailColumn: number;
  /** every checked column, in the order --column gave them (emailColumn first); one for a text input */
  emailColumns?: number[];
  /** how a table's address column(s) were chosen, and the other columns that hold addresses (none for a text input) */
  columnChoice?: ColumnChoice;
  /** rows in input order, a chunk at a time (a row each would cost an await per row) */
  rows: AsyncIterable<InputRow[]>;
  /** stops reading and releases the source; for a run that ends before its input */
  close(): void;
  /**
   * how a text input is written (CSV: its delimiter, `sep=` line, line ending,
   * encoding, BOM; a list: all but the delimiter), which a CSV output follows;
   * undefined for a workbook
   */
  dialect?: Dialect;
  /** bytes taken from the source so far, live, and the source's size when known (a file; stdin has none) */
  bytes?: InputBytes;
}

export interface InputBytes {
  read: number;
  total?: number;
}

/** How the checked column(s) were chosen: --column, a header that names an address column, or the cells. */
export type ColumnSource = 'flag' | 'header' | 'content';

export interface ColumnChoice {
  /** the checked columns (0-based), in the order --column gave them */
  columns: number[];
  by: ColumnSource;
  /** other columns named as address columns or holding addresses in the first rows: named in a notice, not checked */
  others: number[];
}

/** The columns a run checks: emailColumns, or the one emailColumn. */
export function checkedColumns(input: Pick<Input, 'emailColumn' | 'emailColumns'>): number[] {
  return input.emailColumns ?? [input.emailColumn];
}
