import type { Summary } from '../summary.js';
import type { Verdict } from '../verdict.js';
import { csvCell, defusedCsvCell } from './csv-cell.js';
import type { Sink } from './sink.js';
import { ALL_COLUMNS, groupNames, type Columns, type OutputFormat } from './output-plan.js';
import { inputKeys, inputObject, resultObject, verdictCell, verdictCsv, withCells, type CheckedCell } from './verdict-columns.js';

export type { CheckedCell, ReasonedVerdict } from './verdict-columns.js';
import type { Reason } from '../reason.js';

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
  /** --bom: a UTF-8 byte order mark first (CSV), for Excel on Windows */
  bom?: boolean;
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
  /** an input cell: as read, unless asked to defuse it */
  const inputCell = options.escapeFormulas ? defusedCsvCell : csvCell;
  /** what every text format shares: rows buffered in the sink, flushed at the end */
  const writer = (own: Pick<RowWriter, 'row'> & Partial<RowWriter>): RowWriter => ({
    begin: async () => {},
    drain: (force) => (force ? sink.flush() : sink.drain()),
    end: () => sink.flush(),
    ...own,
  });
  switch (format) {
    case 'csv':
      return writer({
        // the input's header cells are input cells; the verdict columns' names are ours
        begin: async () =>
          sink.write(
            (options.bom ? '\ufeff' : '') +
              // the input's header cells are input cells; the verdict columns' names are ours (a group's carries its column's name)
              (columns.groups
                ? [...header.map(inputCell), ...groupNames(columns).map(defusedCsvCell)]
                : columns.order.flatMap((c) => (c === 'input' ? header.map(inputCell) : [c]))
              ).join(',') + '\n',
          ),
        row: columns.groups
          ? (fields, v, reason, cells) => sink.write(cellsOf(fields, inputCell) + groupCsv(columns, cells ?? [{ verdict: v, reason }]) + '\n')
          : columns.standard
          ? (fields, v, reason) => sink.write(cellsOf(fields, inputCell) + verdictCsv(v, reason) + '\n')
          : (fields, v, reason) => {
              const cells: string[] = [];
              for (const c of columns.order) {
                if (c === 'input') for (const f of fields) cells.push(inputCell(f));
                else cells.push(verdictCell(v, c, reason));
              }
              sink.write(cells.join(',') + '\n');
            },
      });
    case 'txt':
      // The address as the input spells it (trimmed), one a line: a line break
      // inside a (then invalid) cell would split it in two.
      return writer({ row: (_fields, v, _reason, cells) => sink.write(addressesOf(v, cells).map((a) => a.replace(/[\r\n]+/g, ' ') + '\n').join('')) });
    case 'ndjson':
      return writer({ row: (fields, v, reason, cells) => sink.write(result(fields, v, reason, cells) + '\n') });
    case 'json': {
      let first = true;
      return writer({
        begin: async () => sink.write('{"results":['),
        row: (fields, v, reason, cells) => {
          sink.write((first ? '\n' : ',\n') + result(fields, v, reason, cells));
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

/** Each checked cell's verdict columns, one group after another (Columns.groups). */
function groupCsv(columns: Columns, cells: readonly CheckedCell[]): string {
  let text = '';
  for (let k = 0; k < columns.groups!.length; k++) {
    const c = cells[k] ?? cells[0]!;
    if (columns.standard) text += verdictCsv(c.verdict, c.reason);
    else for (const name of columns.order) if (name !== 'input') text += ',' + verdictCell(c.verdict, name, c.reason);
  }
  return text;
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

function cellsOf(cells: readonly string[], cell: (s: string) => string): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) line += (i ? ',' : '') + cell(cells[i]!);
  return line;
}
