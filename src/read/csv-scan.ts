import { MAX_LINE } from './decode.js';

/**
 * What a quick scan of a CSV found: every record plain (see scanPlainCsv), with
 * how many there are; or `unsure`, for anything else.
 */
export type CsvScan = { records: number } | 'unsure';

export interface CsvScanShape {
  /** the delimiter the reader found */
  delimiter: string;
  /** the table's width as the reader set it (the header widened): a record with a cell past it is not vouched for */
  width: number;
  /** a cell longer than this is not vouched for (an .xlsx output's limit) */
  cellChars?: number;
  /** stops the scan between chunks (Ctrl-C), with the signal's reason */
  signal?: AbortSignal;
}

const QUOTE = 34;
const LF = 10;
const CR = 13;
/** a record this long is left to the parser, whose own limit (MAX_LINE) it nears */
const LONG_RECORD = MAX_LINE / 2;

const enum S {
  FieldStart,
  Unquoted,
  Quoted,
  /** a quote inside a quoted field: another quote (an escaped one), a delimiter or a line end must follow */
  QuoteInQuoted,
}

/**
 * The pre-flight pass's fast path for CSV (pipeline/preflight.ts): a scan of
 * the decoded text that vouches for the common file — every field unquoted or
 * quoted as RFC 4180 has it, records ended by CRLF, LF or CR as the reader
 * has them, no record wider than the table or longer than half of MAX_LINE, no cell longer than
 * `cellChars` — without building a row. Such a file the reader (csv-parse,
 * relax_column_count, relax_quotes) reads without an error, and its rows fit.
 * Anything else — a quote inside an unquoted field, text after a closing
 * quote, a quote never closed, a wide row — is
 * `unsure`, and the caller reads the file with the reader itself, which alone
 * says what is wrong, in its own words: this scan never refuses a file.
 * (`npm run bench preflight`, 1M rows on a loaded two-core machine: reading
 * every row took 3.8–5.7 s, this scan 0.8–1.4 s, about a tenth of an offline
 * run without DNS.)
 */
export async function scanPlainCsv(text: AsyncIterable<string>, shape: CsvScanShape): Promise<CsvScan> {
  const delim = shape.delimiter.charCodeAt(0);
  const { width } = shape;
  const cellChars = shape.cellChars ?? Infinity;
  let state = S.FieldStart;
  /** a CR was the last character of the previous chunk (outside quotes): an LF first in this one is its pair */
  let pendingCR = false;
  let field = 0;
  let fieldLen = 0;
  /** cells up to the last non-empty one (usedWidth) */
  let used = 0;
  let recordLen = 0;
  let records = 0;
  for await (const chunk of text) {
    if (shape.signal?.aborted) throw shape.signal.reason;
    const n = chunk.length;
    let i = 0;
    if (pendingCR) {
      pendingCR = false;
      if (chunk.charCodeAt(0) === LF) i = 1;
    }
    for (; i < n; i++) {
      const c = chunk.charCodeAt(i);
      if (state === S.Quoted) {
        if (c === QUOTE) state = S.QuoteInQuoted;
        else fieldLen++;
        continue;
      }
      if (state === S.QuoteInQuoted) {
        if (c === QUOTE) {
          fieldLen++;
          state = S.Quoted;
          continue;
        }
        if (c !== delim && c !== LF && c !== CR) return 'unsure';
        // the field ends here, as after an unquoted one
      } else if (state === S.Unquoted) {
        if (c === QUOTE) return 'unsure';
        if (c !== delim && c !== LF && c !== CR) {
          fieldLen++;
          continue;
        }
      } else if (c === QUOTE) {
        state = S.Quoted;
        continue;
      } else if (c !== delim && c !== LF && c !== CR) {
        state = S.Unquoted;
        fieldLen = 1;
        continue;
      }
      // a field ends (c is a delimiter or a line end)
      if (fieldLen > 0) {
        if (fieldLen > cellChars) return 'unsure';
        used = field + 1;
      }
      recordLen += fieldLen + 1;
      field++;
      fieldLen = 0;
      state = S.FieldStart;
      if (c === delim) continue;
      // a record ends: at CRLF, LF or CR, as the reader has it (mixed in one file too)
      if (c === CR) {
        if (i + 1 === n) pendingCR = true;
        else if (chunk.charCodeAt(i + 1) === LF) i++;
      }
      if (used > width || recordLen > LONG_RECORD) return 'unsure';
      records++;
      field = 0;
      used = 0;
      recordLen = 0;
    }
    if (recordLen + fieldLen > LONG_RECORD) return 'unsure';
  }
  if (state === S.Quoted) return 'unsure'; // a quote never closed: the reader refuses the file
  if (state !== S.FieldStart || field > 0) {
    // the last record has no line end
    if (fieldLen > cellChars) return 'unsure';
    if (fieldLen > 0) used = field + 1;
    if (used > width) return 'unsure';
    records++;
  }
  return { records };
}

/**
 * The pre-flight pass's fast path for a text list (one address a line): the
 * decoded text's line lengths, without building a row. Lines end at CRLF, LF
 * or CR, as splitLines has them; every line no longer than half of MAX_LINE
 * and `cellChars` is vouched for, with how many lines there are (at least as
 * many as the rows: blank lines at the end and a header line are not rows).
 * A longer line is `unsure`: the reader says what is wrong with it. Reading
 * every row instead cost 0.23-0.27 s of CPU at 1M addresses, a twentieth of
 * a run against a fast API (the run then reads them again).
 */
export async function scanPlainText(text: AsyncIterable<string>, shape: Pick<CsvScanShape, 'cellChars' | 'signal'>): Promise<CsvScan> {
  const longest = Math.min(LONG_RECORD, shape.cellChars ?? Infinity);
  let lines = 0;
  /** the characters of the line not yet ended, before this chunk */
  let carried = 0;
  /** a CR ended the previous chunk: an LF first in this one is its pair */
  let pendingCR = false;
  for await (const chunk of text) {
    if (shape.signal?.aborted) throw shape.signal.reason;
    let start = pendingCR && chunk.charCodeAt(0) === LF ? 1 : 0;
    pendingCR = false;
    // the next LF and the next CR, each looked for again only once passed (as splitLines does)
    let lf = chunk.indexOf('\n', start);
    let cr = chunk.indexOf('\r', start);
    while (lf >= 0 || cr >= 0) {
      const i = cr < 0 || (lf >= 0 && lf < cr) ? lf : cr;
      if (carried + i - start > longest) return 'unsure';
      carried = 0;
      lines++;
      if (i === cr && i === chunk.length - 1) pendingCR = true;
      start = i === cr && lf === i + 1 ? i + 2 : i + 1;
      if (lf >= 0 && lf < start) lf = chunk.indexOf('\n', start);
      if (cr >= 0 && cr < start) cr = chunk.indexOf('\r', start);
    }
    carried += chunk.length - start;
    if (carried > longest) return 'unsure';
  }
  return { records: carried > 0 ? lines + 1 : lines };
}
