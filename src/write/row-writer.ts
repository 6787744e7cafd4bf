import type { Summary } from '../summary.js';
import type { Verdict } from '../verdict.js';
import { cellWriters } from './csv-cell.js';
import type { Sink } from './sink.js';
import { ALL_COLUMNS, groupNames, type Columns, type OutputFormat } from './output-plan.js';
import { csvRowTail, csvVerdictCell, inputKeys, inputObject, resultObject, withCells, type CheckedCell } from './verdict-columns.js';
import { DEFAULT_DIALECT, type Dialect } from '../dialect.js';
import type { Reason } from '../reason.js';

export type { CheckedCell, ReasonedVerdict } from './verdict-columns.js';

/** Writes rows in the chosen format; rows arrive already in input order. */
export interface RowWriter {
  begin(): Promise<void>;
  /**
   * buffers one row, with its reason (see reasonOf: worked out once, by the
   * pipeline); `drain()` passes buffered rows on. `cells`: for a row with
   * several addresses (several checked columns, or a cell that lists
   * several), each checked cell's verdict, in the order of the checked
   * columns; `verdict` is then the row's (the deciding one).
   */
  row(fields: readonly string[], verdict: Verdict, reason: Reason | '', cells?: readonly CheckedCell[]): void;
  /** passes buffered rows on once there are enough of them, or now with `force` */
  drain(force?: boolean): Promise<void>;
  /** `summary` is embedded by formats that carry it (JSON) */
  end(summary: Summary): Promise<void>;
}

/** What a text format needs to know of the input and the flags beyond its columns. */
export interface TextOptions {
  /** the address column: JSON's `input` holds the row's other cells */
  emailColumn?: number;
  /** every checked column, when there are several (Columns.groups names their verdict columns) */
  checkedColumns?: readonly number[];
  /** CSV: the delimiter, line ending, BOM and `sep=` line (the sink encodes) */
  dialect?: Dialect;
  /** --escape-formulas: defuse the input's own cells too (the appended ones always are) */
  escapeFormulas?: boolean;
}

/** Text formats go through a Sink; `xlsx` has its own writer (xlsx-writer.ts). */
export function createRowWriter(
  format: Exclude<OutputFormat, 'xlsx'>,
  sink: Sink,
  header: readonly string[],
  columns: Columns = ALL_COLUMNS,
  options: TextOptions = {},
): RowWriter {
  const checked = options.checkedColumns ?? (options.emailColumn === undefined ? undefined : [options.emailColumn]);
  const keys = checked === undefined ? undefined : inputKeys(header, checked);
  const result = (fields: readonly string[], v: Verdict, reason: Reason | '', cells?: readonly CheckedCell[]) =>
    JSON.stringify(withCells(resultObject(v, reason, keys && inputObject(keys, fields)), fields, v, header, checked, cells));
  const { delimiter, eol, bom, sep } = options.dialect ?? DEFAULT_DIALECT;
  const cells = cellWriters(delimiter);
  /** an input cell: as read, unless asked to defuse it */
  const inputCell = options.escapeFormulas ? cells.defused : cells.plain;
  /** what every text format shares: rows buffered in the sink, flushed at the end */
  const writer = (own: Pick<RowWriter, 'row'> & Partial<RowWriter>): RowWriter => ({
    begin: async () => {},
    drain: (force) => (force ? sink.flush() : sink.drain()),
    end: () => sink.flush(),
    ...own,
  });
  switch (format) {
    case 'csv': {
      const tail = csvRowTail(delimiter);
      const verdictCell = csvVerdictCell(delimiter);
      return writer({
        // Excel's `sep=` line first, as the input had it (after the BOM): not a row
        begin: async () =>
          sink.write((bom ? '\ufeff' : '') + (sep === undefined ? '' : sep + delimiter + eol) + columnHeader(columns, header, inputCell, delimiter) + eol),
        row: columns.groups
          ? (fields, v, reason, checkedCells) => {
              // each checked cell's verdict columns, one group after another
              let text = cellsOf(fields, inputCell, delimiter);
              const groups = checkedCells ?? [{ verdict: v, reason }];
              for (let k = 0; k < columns.groups!.length; k++) {
                const g = groups[k] ?? groups[0]!;
                if (columns.standard) text += tail(g.verdict, g.reason);
                else for (const c of columns.order) if (c !== 'input') text += delimiter + verdictCell(g.verdict, c, g.reason);
              }
              sink.write(text + eol);
            }
          : columns.standard
            ? (fields, v, reason) => sink.write(cellsOf(fields, inputCell, delimiter) + tail(v, reason) + eol)
            : (fields, v, reason) => {
                const out: string[] = [];
                for (const c of columns.order) {
                  if (c === 'input') for (const f of fields) out.push(inputCell(f));
                  else out.push(verdictCell(v, c, reason));
                }
                sink.write(out.join(delimiter) + eol);
              },
      });
    }
    case 'txt':
      // The address as the input spells it (trimmed), one a line: a line break
      // inside a (then invalid) cell would split it in two.
      return writer({
        row: (_fields, v, _reason, checkedCells) =>
          sink.write(
            addressesOf(v, checkedCells)
              .map((a) => a.replace(/[\r\n]+/g, ' ') + '\n')
              .join(''),
          ),
      });
    case 'ndjson':
      return writer({ row: (fields, v, reason, checkedCells) => sink.write(result(fields, v, reason, checkedCells) + '\n') });
    case 'json': {
      let first = true;
      return writer({
        begin: async () => sink.write('{"results":['),
        row: (fields, v, reason, checkedCells) => {
          sink.write((first ? '\n' : ',\n') + result(fields, v, reason, checkedCells));
          first = false;
        },
        end: async (summary) => {
          sink.write(`${first ? '' : '\n'}],\n"summary":${JSON.stringify(summary)}}\n`);
          await sink.flush();
        },
      });
    }
  }
}

/**
 * `--format txt`: the row's addresses, one a line — the address checked, or
 * each address of a row with several (an empty cell adds none; a row
 * without any is one empty line, in place).
 */
function addressesOf(v: Verdict, cells: readonly CheckedCell[] | undefined): string[] {
  if (cells === undefined) return [v.email];
  const out: string[] = [];
  for (const c of cells) {
    if (c.addresses) for (const a of c.addresses) out.push(a.verdict.email);
    else if (c.reason !== 'empty') out.push(c.verdict.email);
  }
  return out.length > 0 ? out : [v.email];
}

function cellsOf(cells: readonly string[], cell: (s: string) => string, delimiter: string): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) line += (i ? delimiter : '') + cell(cells[i]!);
  return line;
}

/**
 * The CSV header: the input's own cells as read, the appended columns' names
 * (with their prefix) as ours — each group's named after its column, which is
 * input text, so defused.
 */
function columnHeader(columns: Columns, header: readonly string[], inputCell: (s: string) => string, delimiter: string): string {
  const { plain: ours, defused } = cellWriters(delimiter);
  if (columns.groups) return [...header.map(inputCell), ...groupNames(columns).map(defused)].join(delimiter);
  return columns.order.flatMap((c) => (c === 'input' ? header.map(inputCell) : [ours(columns.prefix + c)])).join(delimiter);
}
