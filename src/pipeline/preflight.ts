import type { CsvScan } from '../read/csv-scan.js';
import type { Input, InputRow } from '../read/input-row.js';

/**
 * A check of each input row against what the output can hold (an .xlsx
 * sheet's limits), called with the rows' cells in input order; throws a
 * UsageError. Its limits, for the quick scan.
 */
export interface RowCheck {
  (fields: readonly string[]): void;
  /** the longest cell allowed */
  readonly cellChars: number;
  /** the most rows, the header included */
  readonly rows: number;
}

export interface PreflightOptions {
  /** opens the input a second time, from its start */
  open: () => Promise<Input>;
  /** a fast scan that may vouch for the whole file (CSV: read/csv-scan.ts), else the rows are read */
  scan?: () => Promise<CsvScan>;
  check?: RowCheck;
  /** Ctrl-C: stops the pass between chunks, with its reason */
  signal?: AbortSignal;
}

/**
 * The pre-flight pass of a file input: before the first request, so that
 * whatever would end the run in exit 2 halfway — a row wider than the table,
 * bytes that do not decode, malformed CSV, a line past 1 MB, a sheet the
 * reader refuses, an output limit (`check`) — ends it before anything is paid
 * for. A read is cheap next to the API; the run then reads the file again from
 * its start.
 *
 * A CSV is first scanned quickly (`scan`), which vouches for the common file
 * without building a row; when it is unsure, every row is read through the
 * same reader as the run, which says what is wrong in its own words. Resolves
 * to how the file was vouched for. (`npm run bench preflight` measures both.)
 */
export async function preflight(o: PreflightOptions): Promise<'scanned' | 'read'> {
  if (o.scan) {
    const scanned = await o.scan();
    // a headerless table gets a header row: the records and one more must fit
    if (scanned !== 'unsure' && (!o.check || scanned.records + 1 <= o.check.rows)) return 'scanned';
  }
  const input = await o.open();
  try {
    for await (const rows of input.rows) {
      if (o.signal?.aborted) throw o.signal.reason;
      if (o.check) for (const row of rows) o.check(row.fields);
    }
  } finally {
    input.close();
  }
  return 'read';
}

/** The rows of `input` with `check` applied as they pass (a dry run, which reads them all anyway). */
export function checkedRows(rows: AsyncIterable<InputRow[]>, check: RowCheck): AsyncIterable<InputRow[]> {
  return (async function* () {
    for await (const chunk of rows) {
      for (const row of chunk) check(row.fields);
      yield chunk;
    }
  })();
}
