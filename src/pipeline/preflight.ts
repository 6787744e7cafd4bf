import type { Input, InputRow } from '../read/input-row.js';

/** A check of each input row against what the output can hold (an .xlsx sheet's limits); throws a UsageError. */
export type RowCheck = (fields: readonly string[]) => void;

/**
 * The pre-flight pass of a file input: every row read once before the first
 * request, through the same reader as the run, so that whatever would end the
 * run in exit 2 halfway — a row wider than the table, bytes that do not
 * decode, malformed CSV, a line past 1 MB, a sheet the reader refuses, an
 * output limit (`check`) — ends it before anything is paid for. A read is
 * cheap next to the API; the run then reads the file again from its start
 * (`npm run bench preflight` measures what the pass costs).
 *
 * `input` is a second opening of the file, closed here; `signal` (Ctrl-C)
 * stops the pass between chunks with its reason.
 */
export async function preflight(input: Input, check?: RowCheck, signal?: AbortSignal): Promise<void> {
  try {
    for await (const rows of input.rows) {
      if (signal?.aborted) throw signal.reason;
      if (check) for (const row of rows) check(row.fields);
    }
  } finally {
    input.close();
  }
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
