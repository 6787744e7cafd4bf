import { createReadStream, promises as fs } from 'node:fs';
import { Readable } from 'node:stream';
import type { Parser } from 'csv-parse';
import { UsageError } from '../errors.js';
import { detectEmailColumn, looksHeaderless } from './column.js';
import { decodeBytes, MAX_LINE, prepend, readHead, splitLines, tooLong } from './decode.js';
import type { Input, InputBytes, InputRow } from './input-row.js';
import { detectDelimiter, looksLikeCsv } from './sniff.js';
import { spool, interruptedReading } from './spool.js';
import { isOle2, isZip, xlsxRecords } from './xlsx.js';

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
/** Header lines of a bare list (`cut -f3 users.csv` keeps the header). */
const TEXT_HEADER = /^\s*e[-_ ]?mail([-_ ]?address)?\s*$/i;

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
    const chunks = peekable(decodeBytes(all, name, options.encoding));
    const text = await chunks.peek(64 * 1024);
    if (text.trim().length === 0) throw new UsageError(`${name}: empty input, no addresses to validate`);
    const isCsv = options.path === '-' ? looksLikeCsv(text) : named(/\.(csv|tsv)$/i);
    input = isCsv ? await openCsv(chunks, text, name, options.column) : openText(chunks, name, options.column);
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
  const records = xlsxRecords(spooled?.path ?? options.path, name, {
    ...(options.sheet === undefined ? {} : { sheet: options.sheet }),
    signal: opening.signal,
    progress: size,
  });
  const close = (): void => {
    void records.return(undefined).catch(() => {});
    void spooled?.remove().catch(() => {});
  };
  try {
    const input = await fromRecords(records, name, options.column, 'xlsx');
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
    throw new UsageError(`cannot read ${path}: ${describeFsError(err)}`);
  }
  if (stat.isDirectory()) throw new UsageError(`cannot read ${path}: it is a directory`);
  // a FIFO or a device has no size that says where the input ends
  if (stat.isFile()) size.total = stat.size;
  const stream = createReadStream(path, { highWaterMark: 64 * 1024 });
  // Open errors (EACCES) surface on first read; make them input errors.
  const wrapped = Readable.from(
    (async function* () {
      try {
        for await (const chunk of stream) yield chunk as Buffer;
      } catch (err) {
        throw new UsageError(`cannot read ${path}: ${describeFsError(err)}`);
      } finally {
        stream.destroy();
      }
    })(),
  );
  return { stream: wrapped, regular: stat.isFile() };
}

function describeFsError(err: unknown): string {
  const code = (err as { code?: string }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return (err as Error).message;
}

async function openCsv(chunks: Peekable, head: string, name: string, column?: string): Promise<Input> {
  // loaded here: a text list has no use for it
  const { parse } = await import('csv-parse');
  const parser = parse({
    delimiter: detectDelimiter(head),
    skip_empty_lines: true,
    bom: true,
    relax_quotes: true,
    max_record_size: MAX_LINE,
  });
  const text = Readable.from(chunks);
  // pipe() does not pass a source error on: without this, invalid UTF-8 past the
  // first chunk would be an unhandled 'error' event (a stack trace), not exit 2.
  text.on('error', (err) => parser.destroy(err));
  text.pipe(parser);
  return fromRecords(recordChunks(parser, name), name, column, 'csv');
}

/** The shape of a table (CSV or a sheet): its header, its address column; then its rows. */
async function fromRecords(
  records: AsyncGenerator<string[][]>,
  name: string,
  column: string | undefined,
  kind: 'csv' | 'xlsx',
): Promise<Input> {
  // Enough rows to find the address column; they are yielded first.
  const sample: string[][] = [];
  while (sample.length <= SAMPLE_ROWS) {
    const r = await records.next();
    if (r.done) break;
    sample.push(...r.value);
  }
  const first = sample.shift();
  if (!first) throw new UsageError(`${name}: empty input, no addresses to validate`);
  // A column asked for by name implies a header; one asked for by number does not.
  const namedColumn = column !== undefined && !/^\d+$/.test(column);
  const headerless = !namedColumn && looksHeaderless(first);
  if (headerless) sample.unshift(first);
  const header = headerless ? first.map((_, i) => `column${i + 1}`) : first;
  const emailColumn = detectEmailColumn(header, sample.slice(0, SAMPLE_ROWS), column);
  if (headerless) header[emailColumn] = 'email';

  const toRows = (records: string[][]): InputRow[] =>
    records.map((fields) => ({ fields, email: (fields[emailColumn] ?? '').trim() }));
  async function* rows(): AsyncGenerator<InputRow[]> {
    if (sample.length) yield toRows(sample);
    for await (const chunk of { [Symbol.asyncIterator]: () => records }) yield toRows(chunk);
  }
  return { kind, header, emailColumn, rows: rows(), close: () => {} };
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

function openText(chunks: Peekable, name: string, column?: string): Input {
  if (column !== undefined && column !== '1' && !TEXT_HEADER.test(column)) {
    throw new UsageError(`--column ${column}: a text input has one column (one address per line)`);
  }
  async function* rows(): AsyncGenerator<InputRow[]> {
    let first = true;
    for await (const lines of splitLines(chunks, name)) {
      // A header kept by `cut` is not an address.
      if (first && TEXT_HEADER.test(lines[0]!)) lines.shift();
      first = false;
      yield lines.map((line) => ({ fields: [line], email: line.trim() }));
    }
  }
  return { kind: 'text', header: ['email'], emailColumn: 0, rows: rows(), close: () => {} };
}

interface Peekable extends AsyncIterable<string> {
  /** reads ahead until at least `min` characters or one full line are buffered */
  peek(min: number): Promise<string>;
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
    async *[Symbol.asyncIterator]() {
      while (buffered.length) yield buffered.shift()!;
      if (!done) yield* source;
    },
  };
}
