import type { Summary } from '../summary.js';
import type { Verdict } from '../verdict.js';
import { cellWriters } from './csv-cell.js';
import type { Sink } from './sink.js';
import { ALL_COLUMNS, type Columns, type OutputFormat } from './output-plan.js';
import { csvRowTail, csvVerdictCell, inputKeys, inputObject, resultObject } from './verdict-columns.js';
import { DEFAULT_DIALECT, type Dialect } from '../dialect.js';
import type { Reason } from '../reason.js';

/** Writes rows in the chosen format; rows arrive already in input order. */
export interface RowWriter {
  begin(): Promise<void>;
  /** buffers one row, with its reason (see reasonOf: worked out once, by the pipeline); `drain()` passes buffered rows on */
  row(fields: readonly string[], verdict: Verdict, reason: Reason | ''): void;
  /** passes buffered rows on once there are enough of them, or now with `force` */
  drain(force?: boolean): Promise<void>;
  /** `summary` is embedded by formats that carry it (JSON) */
  end(summary: Summary): Promise<void>;
}

/** What a text format needs to know of the input and the flags beyond its columns. */
export interface TextOptions {
  /** the address column: JSON's `input` holds the row's other cells */
  emailColumn?: number;
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
  const keys = options.emailColumn === undefined ? undefined : inputKeys(header, options.emailColumn);
  const result = (fields: readonly string[], v: Verdict, reason: Reason | '') => JSON.stringify(resultObject(v, reason, keys && inputObject(keys, fields)));
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
        begin: async () => sink.write((bom ? '\ufeff' : '') + (sep === undefined ? '' : sep + delimiter + eol) + columnHeader(columns, header, inputCell, delimiter) + eol),
        row: columns.standard
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
      return writer({ row: (_fields, v) => sink.write(v.email.replace(/[\r\n]+/g, ' ') + '\n') });
    case 'ndjson':
      return writer({ row: (fields, v, reason) => sink.write(result(fields, v, reason) + '\n') });
    case 'json': {
      let first = true;
      return writer({
        begin: async () => sink.write('{"results":['),
        row: (fields, v, reason) => {
          sink.write((first ? '\n' : ',\n') + result(fields, v, reason));
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

function cellsOf(cells: readonly string[], cell: (s: string) => string, delimiter: string): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) line += (i ? delimiter : '') + cell(cells[i]!);
  return line;
}

/** The CSV header: the input's own cells as read, the appended columns' names (with their prefix) as ours. */
function columnHeader(columns: Columns, header: readonly string[], inputCell: (s: string) => string, delimiter: string): string {
  const ours = cellWriters(delimiter).plain;
  return columns.order.flatMap((c) => (c === 'input' ? header.map(inputCell) : [ours(columns.prefix + c)])).join(delimiter);
}
