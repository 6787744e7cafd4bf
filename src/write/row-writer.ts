import type { Summary } from '../summary.js';
import type { Verdict } from '../verdict.js';
import { csvCell } from './csv-cell.js';
import type { Sink } from './sink.js';
import { VERDICT_COLUMNS, resultObject, verdictCsv } from './verdict-columns.js';

export type OutputFormat = 'csv' | 'json' | 'ndjson';

/** Writes rows in the chosen format; rows arrive already in input order. */
export interface RowWriter {
  begin(): Promise<void>;
  /** buffers one row; `drain()` passes buffered rows on */
  row(fields: readonly string[], verdict: Verdict): void;
  /** passes buffered rows on once there are enough of them, or now with `force` */
  drain(force?: boolean): Promise<void>;
  /** `summary` is embedded by formats that carry it (JSON) */
  end(summary: Summary): Promise<void>;
}

export function createRowWriter(format: OutputFormat, sink: Sink, header: readonly string[]): RowWriter {
  const drain = (force?: boolean): Promise<void> => (force ? sink.flush() : sink.drain());
  switch (format) {
    case 'csv':
      return {
        begin: async () => sink.write(csvCells([...header, ...VERDICT_COLUMNS]) + '\n'),
        row: (fields, v) => sink.write(csvCells(fields) + verdictCsv(v, csvCell) + '\n'),
        drain,
        end: () => sink.flush(),
      };
    case 'ndjson':
      return {
        begin: async () => {},
        row: (_fields, v) => sink.write(JSON.stringify(resultObject(v)) + '\n'),
        drain,
        end: () => sink.flush(),
      };
    case 'json': {
      let first = true;
      return {
        begin: async () => sink.write('{"results":['),
        row: (_fields, v) => {
          sink.write((first ? '\n' : ',\n') + JSON.stringify(resultObject(v)));
          first = false;
        },
        drain,
        end: async (summary) => {
          sink.write(`${first ? '' : '\n'}],\n"summary":${JSON.stringify(summary)}}\n`);
          await sink.flush();
        },
      };
    }
  }
}

function csvCells(cells: readonly string[]): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) line += (i ? ',' : '') + csvCell(cells[i]!);
  return line;
}
