import { createReadStream, promises as fs } from 'node:fs';
import { Readable } from 'node:stream';
import type { Parser } from 'csv-parse';
import { UsageError } from '../errors.js';
import { fileTrouble } from '../fs/errno.js';
import { chooseColumns, columnsByNumber, looksHeaderless, type ColumnChoice } from './column.js';
import { rowOf } from './cell-addresses.js';
import { decodeBytes, MAX_LINE, prepend, readHead, splitLines, tooLong, type DecodedAs } from './decode.js';
import type { Dialect } from '../dialect.js';
import { checkedColumns, type Input, type InputBytes, type InputRow } from './input-row.js';
import { binaryKind } from './file-kind.js';
import { scanPlainCsv, scanPlainText, type CsvScan, type CsvScanShape } from './csv-scan.js';
import { classifyText, detectDelimiter, lineEnding, LIST_HEADER, sepLine } from './sniff.js';
import { spool } from './spool.js';
import { isBlankRecord, fitRow, tooWide, usedWidth, widenHeader, withoutTrailingBlanks } from './table-shape.js';
import { isOle2, isZip, xlsxFormulaCells, xlsxRecords, type SheetShape } from './xlsx.js';
import { formulasNotice, noColumnButFormulas, uncalculatedAddresses } from './formula-cells.js';

export interface OpenInputOptions {
  /** a path, or '-' for stdin */
  path: string;
  /** --column: a header name or a 1-based number */
  column?: string;
  /** --sheet: which sheet of a workbook, a name or a 1-based number */
  sheet?: string;
  /** --encoding: the text's encoding when it has no BOM (an iconv-lite name) */
  encoding?: string;
  stdin?: NodeJS.ReadableStream;
  /** a one-line notice for stderr (what the input turned out to be) */
  onNotice?: (line: string) => void;
  /** Ctrl-C: stops the reading done here (a workbook's copy from stdin, its shared strings) */
  signal?: AbortSignal;
}

/** Rows looked at to find the address column when no header names it. */
const SAMPLE_ROWS = 50;

/**
 * Opens the input and reads just enough of it to know its shape: a workbook,
 * CSV or text, the encoding, the delimiter, the header and the address column.
 * Rows are then streamed; the input is never read whole.
 */
export async function openInput(options: OpenInputOptions): Promise<Input> {
  const name = options.path === '-' ? 'stdin' : options.path;
  const size: InputBytes = { read: 0 };
  const { stream: bytes, regular } = options.path === '-' ? { stream: options.stdin ?? process.stdin, regular: false } : await openFile(options.path, size);
  const { head, rest } = await readHead(counted(bytes as AsyncIterable<Buffer>, size), 4);
  const all = prepend(head, rest);
  const named = (ext: RegExp): boolean => options.path !== '-' && ext.test(options.path);

  let input: Input;
  if (isZip(head)) {
    if (options.encoding !== undefined) throw new UsageError(`--encoding: ${name} is an Excel workbook (.xlsx), not text`);
    if (!named(/\.xlsx$/i)) options.onNotice?.(`${name} is an Excel workbook (.xlsx), not text: reading it as one`);
    try {
      return await openWorkbook(options, name, regular ? undefined : all, bytes, size);
    } catch (err) {
      // an open pipe (stdin) would keep the process alive after the error
      (bytes as NodeJS.ReadableStream & { destroy(): void }).destroy();
      throw err;
    }
  } else {
    if (isOle2(head)) throw new UsageError(`${name} is a legacy Excel .xls workbook or a password-protected .xlsx: save it as .xlsx (no password) or CSV`);
    if (named(/\.xlsx$/i)) throw new UsageError(`${name}: not an Excel workbook (an .xlsx file is a zip archive)`);
    if (options.sheet !== undefined) throw new UsageError(`--sheet ${options.sheet}: ${name} is not an Excel workbook`);
    const binary = binaryKind(head, options.encoding !== undefined);
    if (binary !== undefined) throw new UsageError(`${name} is ${binary}, not a list of addresses or a CSV file`);
    const decoded: DecodedAs = { encoding: 'utf-8', bom: false };
    const chunks = peekable(decodeBytes(all, name, options.encoding, decoded));
    const text = await chunks.peek(64 * 1024);
    if (text.trim().length === 0) throw new UsageError(`${name}: empty input, no addresses to validate`);
    // What a text is comes from its content (a table saved as .txt, the wrong file);
    // a file named .csv or .tsv is a table, of one column perhaps.
    const shape = named(/\.(csv|tsv)$/i)
      ? { kind: 'table' as const, delimiter: sepLine(text)?.delimiter ?? detectDelimiter(text) }
      : classifyText(text, chunks.done);
    if (shape.kind === 'other') throw new UsageError(`${name} looks like ${shape.what}`);
    const dialect: Dialect = { delimiter: ',', eol: lineEnding(text), encoding: decoded.encoding, bom: decoded.bom };
    if (shape.kind === 'table') {
      dialect.delimiter = shape.delimiter;
      const sep = sepLine(text);
      if (sep) {
        if (sep.delimiter === '"') throw new UsageError(`${name}: its first line ${sep.prefix}" names the quote as the delimiter, which no CSV can have`);
        // Excel's directive: not a row, not the header; the output repeats it
        dialect.sep = sep.prefix;
        chunks.skip(sep.length);
      }
      input = await openCsv(chunks, dialect.delimiter, name, options.column, options.onNotice);
    } else input = openText(chunks, name, options.column);
    input.dialect = dialect;
  }
  // A run that stops early must not stay alive for an open pipe (stdin of `tail -f`).
  input.close = () => (bytes as NodeJS.ReadableStream & { destroy(): void }).destroy();
  input.bytes = size;
  return input;
}

/**
 * A workbook is read from its end (the zip's directory), so it must be a file:
 * one piped in (`stream`) is first copied to a temp file, deleted when the
 * input is closed or the process exits.
 */
async function openWorkbook(
  options: OpenInputOptions,
  name: string,
  stream: AsyncIterable<Buffer> | undefined,
  source: NodeJS.ReadableStream,
  size: InputBytes,
): Promise<Input> {
  const spooled = stream ? await spool(stream, name, options.signal) : undefined;
  if (!spooled) (source as NodeJS.ReadableStream & { destroy(): void }).destroy();
  // Ctrl-C stops the reading done here (the shared strings can take seconds);
  // the rows read later stop with the run, as for any input
  const opening = new AbortController();
  const onAbort = (): void => opening.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  // progress counts the sheet's compressed bytes read, against its compressed size
  size.read = 0;
  delete size.total;
  const shape: SheetShape = {};
  const path = spooled?.path ?? options.path;
  const sheet = options.sheet === undefined ? {} : { sheet: options.sheet };
  const records = xlsxRecords(path, name, { ...sheet, signal: opening.signal, progress: size, shape });
  const close = (): void => {
    void records.return(undefined).catch(() => {});
    void spooled?.remove().catch(() => {});
  };
  try {
    // Known before any row is read, so an address column that would read
    // as empty is exit 2 before the first request, wherever in the sheet it is.
    const formulas = await xlsxFormulaCells(path, name, { ...sheet, signal: opening.signal });
    let input: Input;
    try {
      input = await fromRecords(records, name, options.column, 'xlsx', shape, options.onNotice);
    } catch (err) {
      if (formulas.count > 0 && err instanceof UsageError && err.message.startsWith('no address column found')) {
        throw noColumnButFormulas(name, formulas, 'no address column found');
      }
      throw err;
    }
    // every checked column (--column may name several)
    for (const col of checkedColumns(input)) {
      if (formulas.inColumn(col) > 0) throw uncalculatedAddresses(name, input.header[col] ?? '', col, formulas);
    }
    if (formulas.count > 0) options.onNotice?.(formulasNotice(name, formulas));
    input.close = close;
    input.bytes = size;
    return input;
  } catch (err) {
    close();
    throw err;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** Counts the bytes as they pass, for the progress line's percentage. */
async function* counted(source: AsyncIterable<Buffer>, size: InputBytes): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    size.read += chunk.length;
    yield chunk;
  }
}

async function openFile(path: string, size: InputBytes): Promise<{ stream: NodeJS.ReadableStream; regular: boolean }> {
  let stat;
  try {
    stat = await fs.stat(path);
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${fileTrouble(err, 'read')}`);
  }
  if (stat.isDirectory()) throw new UsageError(`cannot read ${path}: ${fileTrouble({ code: 'EISDIR' }, 'read')}`);
  // a FIFO or a device has no size that says where the input ends
  if (stat.isFile()) size.total = stat.size;
  const stream = createReadStream(path, { highWaterMark: 64 * 1024 });
  // Open errors (EACCES) surface on first read; make them input errors.
  const wrapped = Readable.from(
    (async function* () {
      try {
        for await (const chunk of stream) yield chunk as Buffer;
      } catch (err) {
        throw new UsageError(`cannot read ${path}: ${fileTrouble(err, 'read')}`);
      } finally {
        stream.destroy();
      }
    })(),
  );
  return { stream: wrapped, regular: stat.isFile() };
}

async function openCsv(chunks: Peekable, delimiter: string, name: string, column?: string, onNotice?: (line: string) => void): Promise<Input> {
  // loaded here: a text list has no use for it
  const { parse } = await import('csv-parse');
  const parser = parse({
    delimiter,
    // CRLF, LF and CR each end a record, mixed in one file too (edited on two
    // systems): csv-parse would otherwise take the first it meets for the whole file
    record_delimiter: ['\r\n', '\n', '\r'],
    // a blank line is a row (output row N is input row N), and a short or
    // wide record is shaped by fromRecords, as a sheet's rows are
    skip_empty_lines: false,
    relax_column_count: true,
    bom: true,
    relax_quotes: true,
    max_record_size: MAX_LINE,
  });
  const text = Readable.from(chunks);
  // pipe() does not pass a source error on: without this, invalid UTF-8 past the
  // first chunk would be an unhandled 'error' event (a stack trace), not exit 2.
  text.on('error', (err) => parser.destroy(err));
  text.pipe(parser);
  return fromRecords(recordChunks(parser, name), name, column, 'csv', {}, onNotice);
}

/**
 * The quick scan of a CSV file (see scanPlainCsv), its bytes decoded as
 * openInput decodes them: invalid text is the same error, the rest is `unsure`
 * or vouched for. For '-', `options.stdin` is read (a second reading of a
 * file given as stdin: stdin-file.ts).
 */
export function scanCsvFile(options: OpenInputOptions, shape: CsvScanShape): Promise<CsvScan> {
  return scanFile(options, (text) => scanPlainCsv(text, shape));
}

/** The quick scan of a text list (see scanPlainText), decoded as scanCsvFile decodes a CSV; '-' as there. */
export function scanTextFile(options: OpenInputOptions, shape: Pick<CsvScanShape, 'cellChars' | 'signal'>): Promise<CsvScan> {
  return scanFile(options, (text) => scanPlainText(text, shape));
}

async function scanFile(options: OpenInputOptions, scan: (text: AsyncIterable<string>) => Promise<CsvScan>): Promise<CsvScan> {
  const { stream } = options.path === '-' && options.stdin ? { stream: options.stdin } : await openFile(options.path, { read: 0 });
  try {
    return await scan(decodeBytes(stream as AsyncIterable<Buffer>, options.path === '-' ? 'stdin' : options.path, options.encoding));
  } finally {
    (stream as NodeJS.ReadableStream & { destroy(): void }).destroy();
  }
}

/**
 * The shape of a table (CSV or a sheet): its header, its width, its address
 * column; then its rows, each as wide as the table (see table-shape.ts). Blank
 * rows above the header are not part of the table; blank rows below the last
 * row are left out.
 */
async function fromRecords(
  records: AsyncGenerator<string[][]>,
  name: string,
  column: string | undefined,
  kind: 'csv' | 'xlsx',
  shape: SheetShape,
  onNotice?: (line: string) => void,
): Promise<Input> {
  const source = withoutTrailingBlanks(records, isBlankRecord)[Symbol.asyncIterator]();
  // Enough rows to find the address column and the table's width; they are yielded first.
  let first: string[] | undefined;
  let blanksAbove = 0;
  const sample: string[][] = [];
  while (sample.length < SAMPLE_ROWS) {
    const r = await source.next();
    if (r.done) break;
    for (const record of r.value) {
      if (first !== undefined) sample.push(record);
      else if (isBlankRecord(record)) blanksAbove++;
      else first = record;
    }
  }
  if (!first) throw new UsageError(`${name}: empty input, no addresses to validate`);
  // A column asked for by name implies a header; one asked for by number does not.
  const namedColumn = column !== undefined && !columnsByNumber(column);
  const headerless = !namedColumn && looksHeaderless(first);
  if (headerless) sample.unshift(first);
  // the widest of the header, the sheet's declared range and the first rows
  let width = Math.max(first.length, shape.width ?? 0);
  for (const record of sample) width = Math.max(width, usedWidth(record));
  const header = widenHeader(headerless ? [] : first, width, headerless);
  let choice: ColumnChoice;
  if (sample.length === 0 && !headerless) {
    // A header and no rows: a quiet day's export, not an error (a cron job must not fail on it).
    onNotice?.(`${name}: a header and no rows below it, nothing to validate`);
    choice = column === undefined ? namedColumnOr0(header) : chooseColumns(header, [], column);
  } else choice = chooseColumns(header, sample.slice(0, SAMPLE_ROWS), column);
  const columns = choice.columns;
  const emailColumn = columns[0]!;
  if (headerless && columns.length === 1) header[emailColumn] = 'email';

  /** the row number of the next row, as the file counts (a sheet's own numbers) */
  let next = (shape.firstRow ?? 1) + blanksAbove + (headerless ? 0 : 1);
  const toRows = (records: string[][]): InputRow[] =>
    records.map((cells) => {
      const fields = fitRow(cells, width);
      if (fields === undefined) throw tooWide(`${name}: row ${next}`, cells, width);
      next++;
      return rowOf(fields, columns);
    });
  async function* rows(): AsyncGenerator<InputRow[]> {
    if (sample.length) yield toRows(sample);
    for await (const chunk of { [Symbol.asyncIterator]: () => source }) yield toRows(chunk);
  }
  return { kind, header, emailColumn, emailColumns: columns, columnChoice: choice, rows: rows(), close: () => {} };
}

/** The column the header names like "email", else the first: with no rows there is nothing to find it by. */
function namedColumnOr0(header: string[]): ColumnChoice {
  try {
    return chooseColumns(header, []);
  } catch {
    return { columns: [0], by: 'content', others: [] };
  }
}

/** The parser's records, as many at a time as it has ready. */
async function* recordChunks(parser: Parser, name: string): AsyncGenerator<string[][]> {
  let failure: Error | undefined;
  let ended = false;
  let wake: (() => void) | undefined;
  const signal = (): void => {
    wake?.();
    wake = undefined;
  };
  parser.on('readable', signal);
  parser.on('end', () => {
    ended = true;
    signal();
  });
  parser.on('error', (err) => {
    failure = err;
    signal();
  });
  for (;;) {
    const chunk: string[][] = [];
    for (let r = parser.read() as string[] | null; r !== null; r = parser.read() as string[] | null) chunk.push(r);
    if (chunk.length) yield chunk;
    else if (failure) {
      if (failure instanceof UsageError) throw failure;
      const { code, lines } = failure as { code?: string; lines?: number };
      if (code === 'CSV_MAX_RECORD_SIZE') throw tooLong(name, 'line', lines);
      throw new UsageError(`${name}: malformed CSV: ${failure.message}`);
    } else if (ended) return;
    else await new Promise<void>((resolve) => (wake = resolve));
  }
}

/** a text input's one column */
const TEXT_COLUMN = [0];

function openText(chunks: Peekable, name: string, column?: string): Input {
  if (column !== undefined && column !== '1' && !LIST_HEADER.test(column)) {
    throw new UsageError(`--column ${column}: a text input has one column (one address per line)`);
  }
  async function* rows(): AsyncGenerator<InputRow[]> {
    let first = true;
    // an empty line comes out in place (output row N is line N), but not those at the very end
    for await (const lines of withoutTrailingBlanks(splitLines(chunks, name), (line: string) => line === '')) {
      // A header kept by `cut` is not an address.
      if (first && LIST_HEADER.test(lines[0]!)) lines.shift();
      first = false;
      yield lines.map((line) => rowOf([line], TEXT_COLUMN));
    }
  }
  return { kind: 'text', header: ['email'], emailColumn: 0, rows: rows(), close: () => {} };
}

interface Peekable extends AsyncIterable<string> {
  /** reads ahead until at least `min` characters or one full line are buffered */
  peek(min: number): Promise<string>;
  /** drops the first `n` characters, which peek() has buffered */
  skip(n: number): void;
  /** the source has ended: what peek() gave is all of it */
  readonly done: boolean;
}

function peekable(source: AsyncGenerator<string>): Peekable {
  const buffered: string[] = [];
  let bufferedLength = 0;
  let done = false;
  return {
    async peek(min) {
      while (!done && bufferedLength < min && !buffered.some((c) => c.includes('\n'))) {
        const r = await source.next();
        if (r.done) done = true;
        else {
          buffered.push(r.value);
          bufferedLength += r.value.length;
        }
      }
      return buffered.join('');
    },
    skip(n) {
      const text = buffered.join('').slice(n);
      buffered.length = 0;
      bufferedLength = text.length;
      if (text) buffered.push(text);
    },
    get done() {
      return done;
    },
    async *[Symbol.asyncIterator]() {
      while (buffered.length) yield buffered.shift()!;
      if (!done) yield* source;
    },
  };
}
