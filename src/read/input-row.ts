import type { Dialect } from '../dialect.js';

/** One input row on its way through the pipeline. */
export interface InputRow {
  /** the row's cells, unchanged (CSV) or the single line (text) */
  fields: string[];
  /** the address cell, trimmed ('' when the row has none) */
  email: string;
}

/** An opened input: its header (what the output repeats) and its rows. */
export interface Input {
  /** 'csv', 'xlsx' (a sheet: a table like CSV) or 'text' — text input yields the single column `email` */
  kind: 'csv' | 'xlsx' | 'text';
  header: string[];
  /** index of the address column within `fields` */
  emailColumn: number;
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
