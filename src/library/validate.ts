import { validateStream, type RunResult } from '../pipeline/validate-stream.js';
import { openAddressInput } from '../pipeline/address-check.js';
import type { Input, InputRow } from '../read/input-row.js';
import type { Summary } from '../summary.js';
import { batchesInFlight, type Validator } from '../engines/validator.js';
import type { Verdict } from '../verdict.js';
import type { CheckedCell, RowWriter } from '../write/row-writer.js';
import { rowOf } from '../read/cell-addresses.js';
import { checkInteger } from '../check-options.js';

export interface LibraryValidateOptions {
  /** createApiValidator(…) or createLocalValidator(…); default: the offline engine with the system resolver */
  validator?: Validator;
  /** distinct addresses per engine call, an integer 1..1000 (default 1000); else a RangeError at the call */
  batchSize?: number;
  /**
   * engine calls in flight at most, an integer of at least 1; else a RangeError at the call.
   * Default: with an API validator, its client's in-flight limit as it moves and two more (64 at most); 4 with the offline engine.
   */
  concurrency?: number;
  /**
   * stops the run: no more rows are read or sent, calls in flight are given up
   * (even one that never settles), and the iteration rejects with the signal's reason
   */
  signal?: AbortSignal;
  /** called once at the end of a complete run with the run's summary (the CLI's --summary) */
  onSummary?: (summary: Summary) => void;
}

export interface FileValidateOptions extends LibraryValidateOptions {
  /** the address column of a CSV file: a header name or a 1-based number, or several comma-separated (default: detected) */
  column?: string;
}

/** One input row of a file and its verdict. */
export interface RowVerdict {
  /** the row's cells as read (a text file: the line) */
  fields: string[];
  /** the row's verdict: of its address, or of the deciding one when it has several (see `cells`) */
  verdict: Verdict;
  /**
   * for a row with several addresses (several columns asked for, or a cell
   * that lists several, `a@x.com ::: b@y.com`): each checked cell's verdict,
   * in the order of the columns, and each address's for a cell that lists several
   */
  cells?: readonly CheckedCell[];
}

/** Rows held for a consumer that has not asked for them yet: the pipeline waits beyond this. */
const HIGH_WATER = 2048;

/**
 * Validates addresses and yields one verdict per address, in input order —
 * duplicates, empty and malformed ones included, as the CLI writes them. The
 * addresses are streamed: an async iterable is read as the run goes.
 */
export function validate(addresses: Iterable<string> | AsyncIterable<string>, options: LibraryValidateOptions = {}): AsyncGenerator<Verdict> {
  checkOptions(options);
  return validateRows(addresses, options);
}

async function* validateRows(addresses: Iterable<string> | AsyncIterable<string>, options: LibraryValidateOptions): AsyncGenerator<Verdict> {
  const input: Input = { kind: 'text', header: ['email'], emailColumn: 0, rows: rowsOf(addresses), close: () => {} };
  for await (const r of run(input, options)) yield r.verdict;
}

/**
 * Validates a file the way `mailsift validate FILE` reads it (a table, a
 * workbook or a list of addresses, told by its content) and yields
 * each row with its verdict, in order. A file that cannot be read rejects with
 * a UsageError; a damaged or hostile workbook with an XlsxError.
 */
export function validateFile(path: string, options: FileValidateOptions = {}): AsyncGenerator<RowVerdict> {
  checkOptions(options);
  return validateFileRows(path, options);
}

/** Bad numbers fail at the call, not as a hang at the first row (a concurrency of 0 never gets a free slot). */
function checkOptions(options: LibraryValidateOptions): void {
  checkInteger('batchSize', options.batchSize, 1, 1000);
  checkInteger('concurrency', options.concurrency, 1);
}

async function* validateFileRows(path: string, options: FileValidateOptions): AsyncGenerator<RowVerdict> {
  // the CLI's reading and its checks: a column, sheet or file without addresses rejects before anything is sent
  const input = await openAddressInput({ path, ...(options.column === undefined ? {} : { column: options.column }) });
  try {
    yield* run(input, options);
  } finally {
    input.close();
  }
}

async function* rowsOf(addresses: Iterable<string> | AsyncIterable<string>): AsyncGenerator<InputRow[]> {
  const row = (line: string): InputRow => rowOf([String(line)], [0]);
  if (Symbol.iterator in addresses) {
    // a list in memory: in chunks, as the file reader gives them
    let chunk: InputRow[] = [];
    for (const a of addresses) {
      chunk.push(row(a));
      if (chunk.length === 1024) {
        yield chunk;
        chunk = [];
      }
    }
    if (chunk.length) yield chunk;
    return;
  }
  // a stream: each address as it comes, so a slow source is not held back
  for await (const a of addresses) yield [row(a)];
}

/** The CLI's pipeline with a writer that hands rows to the iterating caller, with backpressure. */
async function* run(input: Input, options: LibraryValidateOptions): AsyncGenerator<RowVerdict> {
  const owned = options.validator === undefined;
  const validator = options.validator ?? (await import('../engines/local/index.js')).createLocalValidator();
  const queue: RowVerdict[] = [];
  let wakeConsumer: (() => void) | undefined;
  let wakeProducer: (() => void) | undefined;
  const stop = new AbortController();
  const notify = (): void => {
    wakeConsumer?.();
    wakeConsumer = undefined;
  };
  const onAbort = (): void => {
    stop.abort(options.signal?.reason);
    // both sides may be waiting: the pipeline for room, the caller for rows
    wakeProducer?.();
    notify();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const writer: RowWriter = {
    begin: async () => {},
    row: (fields, verdict, _reason, cells) => void queue.push(cells ? { fields: [...fields], verdict, cells } : { fields: [...fields], verdict }),
    drain: async () => {
      notify();
      while (queue.length >= HIGH_WATER && !stop.signal.aborted) await new Promise<void>((resolve) => (wakeProducer = resolve));
    },
    end: async () => notify(),
  };
  let finished = false;
  let failure: unknown;
  let result: RunResult | undefined;
  const running = validateStream({
    input,
    validator,
    writer,
    batchSize: options.batchSize ?? 1000,
    // as many as the engine can use now, and two more (see batchesInFlight)
    concurrency: batchesInFlight(validator, options.concurrency),
    stop: stop.signal,
    cancel: stop.signal,
  })
    .then(
      (r) => void (result = r),
      (err: unknown) => void (failure = err),
    )
    .finally(() => {
      finished = true;
      notify();
    });
  try {
    for (;;) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (queue.length) {
        const ready = queue.splice(0);
        wakeProducer?.();
        wakeProducer = undefined;
        yield* ready;
        continue;
      }
      if (finished) break;
      await new Promise<void>((resolve) => (wakeConsumer = resolve));
    }
    if (options.signal?.aborted) throw options.signal.reason;
    if (failure !== undefined) throw failure;
    if (result?.complete) options.onSummary?.(result.summary);
  } finally {
    // the caller stopped early (break, or an error): end the run, release what it holds
    stop.abort();
    wakeProducer?.();
    await running;
    options.signal?.removeEventListener('abort', onAbort);
    if (owned) await validator.close();
  }
}
