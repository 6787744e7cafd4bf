import type { Summary } from '../summary.js';
import type { Verdict } from '../verdict.js';
import { csvCell } from './csv-cell.js';
import type { Sink } from './sink.js';
import { VERDICT_COLUMNS, resultObject, verdictCells } from './verdict-columns.js';

export type OutputFormat = 'csv' | 'json' | 'ndjson';

/** Writes rows in the chosen format; rows arrive already in input order. */
export interface RowWriter {
  begin(): Promise<void>;
  row(fields: readonly string[], verdict: Verdict): Promise<void>;
  /** `summary` is embedded by formats that carry it (JSON) */
  end(summary: Summary): Promise<void>;
}

export function createRowWriter(format: OutputFormat, sink: Sink, header: readonly string[]): RowWriter {
  switch (format) {
    case 'csv':
      return {
        begin: () => sink.write(csvLine([...header, ...VERDICT_COLUMNS])),
        row: (fields, v) => sink.write(csvLine([...fields, ...verdictCells(v)])),
        end: () => sink.flush(),
      };
    case 'ndjson':
      return {
        begin: async () => {},
        row: (_fields, v) => sink.write(JSON.stringify(resultObject(v)) + '\n'),
        end: () => sink.flush(),
      };
    case 'json': {
      let first = true;
      return {
        begin: () => sink.write('{"results":['),
        row: (_fields, v) => {
          const text = (first ? '\n' : ',\n') + JSON.stringify(resultObject(v));
          first = false;
          return sink.write(text);
        },
        end: async (summary) => {
          await sink.write(`${first ? '' : '\n'}],\n"summary":${JSON.stringify(summary)}}\n`);
          await sink.flush();
        },
      };
    }
  }
}

function csvLine(cells: readonly string[]): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) line += (i ? ',' : '') + csvCell(cells[i]!);
  return line + '\n';
}
