import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { UsageError, type MailsiftError } from '../errors.js';
import { writeError } from '../fs/errno.js';
import { columnNames, type Columns } from './output-plan.js';
import type { RowWriter } from './row-writer.js';
import { waitDrain } from './sink.js';
import { verdictValue, type CellValue } from './verdict-columns.js';
import { booleanCell, columnLetters, numberCell, SHEET_END, SHEET_PATH, SHEET_START, textCell, workbookParts, XLSX_SHEET_LIMITS } from './xlsx-xml.js';
import { ZIP32_MAX, ZipStream } from './zip-stream.js';

/** sheet XML buffered before it is handed to deflate */
const CHUNK_CHARS = 64 * 1024;
/**
 * deflate's level: zlib's default. Level 1 saved no CPU worth its 25% larger
 * files (`npm run bench xlsx`, 100k rows: 2.64 s against 2.70 s, under load).
 */
const LEVEL = 6;

/** The limits the writer holds the output to: the format's, and a zip's without ZIP64. */
export const XLSX_WRITE_LIMITS = { ...XLSX_SHEET_LIMITS, bytes: ZIP32_MAX };

export interface XlsxWriterOptions {
  /** lower limits (tests); past one the output is refused (exit 2) */
  limits?: { [K in keyof typeof XLSX_WRITE_LIMITS]?: number };
  /** deflate's level, 0..9 (the benchmark compares them) */
  level?: number;
  /** `dest` is the run's stdout: its buffered writes are waited for, but it is never ended */
  keepOpen?: boolean;
  /** what to write instead, in the advice past a limit: `-o out.csv` by default; a --split file is told `--format csv` (it takes no -o) */
  instead?: string;
}

/**
 * Writes the rows as the one sheet of an Excel workbook, streamed: each row
 * becomes XML, deflated into the zip as it comes (zip-stream.ts), so memory
 * does not grow with the output. Cells are typed — the input's cells as
 * inline text, exactly as read (a zip code or a phone number keeps its
 * leading zeros and spaces; line breaks, tabs and control characters survive
 * through xml:space="preserve" and `_xHHHH_`), the verdict's booleans and
 * confidence as Excel booleans and numbers, unknown values empty. Text is
 * never a formula, so no defusing is needed here.
 *
 * The format's limits (16,384 columns, 1,048,576 rows, 32,767 characters a
 * cell, and 4 GiB for a zip without ZIP64) are checked as the rows come: past
 * one, the next drain() or end() throws a UsageError naming it, and the run
 * fails, which leaves a file output as it was.
 */
export async function createXlsxWriter(
  dest: Writable,
  label: string,
  header: readonly string[],
  columns: Columns,
  options: XlsxWriterOptions = {},
): Promise<RowWriter & { gone: AbortSignal; close(): Promise<void> }> {
  const limits = { ...XLSX_WRITE_LIMITS, ...options.limits };
  limits.bytes = Math.min(limits.bytes, ZIP32_MAX);
  const instead = options.instead ?? csvInstead(label);
  const names = columnNames(columns, header);
  // the header is as wide as the widest row (read/), so this is known before anything is sent
  if (names.length > limits.columns) throw tooWide(label, names.length, header.length, limits.columns, instead);
  const appended = names.length - header.length;
  const keepOpen = options.keepOpen === true;
  const gone = new AbortController();
  let failure: MailsiftError | undefined;
  dest.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') gone.abort();
    else failure ??= writeError(label, err);
  });
  const broken = (): boolean => gone.signal.aborted || failure !== undefined;
  const zip = new ZipStream(dest, broken, options.level ?? LEVEL);
  /** the sheet's XML, once begin() has opened it */
  let sheet: Awaited<ReturnType<ZipStream['stream']>> | undefined;
  /** sheet XML not yet handed to deflate */
  let text = '';
  /** the row number of the next row (1-based, as in the sheet) */
  let rowNumber = 1;
  /** cell references of the columns seen so far: `A`, `B`, ... */
  const letters: string[] = [];
  const letter = (i: number): string => (letters[i] ??= columnLetters(i));
  /** end() was called: the workbook is finished, or its output failed */
  let ended = false;

  const cell = (out: string, col: number, value: CellValue): string => {
    if (value === undefined || value === '') return out;
    const ref = letter(col) + rowNumber;
    if (typeof value === 'number') return out + numberCell(ref, value);
    if (typeof value === 'boolean') return out + booleanCell(ref, value);
    if (value.length > limits.cellChars) throw tooLong(label, ref, value.length, limits.cellChars, instead);
    return out + textCell(ref, value);
  };

  const addRow = (cells: (col: number) => string): void => {
    if (failure) return;
    if (rowNumber > limits.rows) {
      failure = tooManyRows(label, limits.rows, instead);
      return;
    }
    try {
      text += `<row r="${rowNumber}">${cells(0)}</row>`;
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      failure = err;
      return;
    }
    rowNumber++;
  };

  /** Hands the XML so far to deflate, waiting while the output is full; past the size limit, fails. */
  const flush = async (): Promise<void> => {
    if (failure) throw failure;
    if (!sheet || text === '' || gone.signal.aborted) return;
    const bytes = Buffer.from(text, 'utf8');
    text = '';
    // deflate makes XML smaller, so the sheet's own size bounds the archive's too (beside what is written already)
    if (zip.written + bytes.length > limits.bytes || sheet.size + bytes.length > limits.bytes) {
      throw (failure = tooBig(label, limits.bytes, instead));
    }
    await sheet.write(bytes);
    if (failure) throw failure;
  };

  return {
    gone: gone.signal,
    begin: async () => {
      for (const [name, content] of workbookParts('verdicts')) await zip.add(name, content);
      sheet = await zip.stream(SHEET_PATH);
      text = SHEET_START;
      addRow(() => names.reduce((out, name, i) => cell(out, i, name), ''));
      await flush();
    },
    row: (fields, v, reason, cells) => {
      if (fields.length + appended > limits.columns) {
        failure ??= tooWide(label, fields.length + appended, fields.length, limits.columns, instead, rowNumber);
        return;
      }
      addRow(() => {
        let out = '';
        let col = 0;
        // several checked columns: the input's cells, then each one's verdict columns (Columns.groups)
        const groups = columns.groups ? (cells ?? [{ verdict: v, reason }]) : undefined;
        for (const c of columns.order) {
          if (c === 'input') for (const f of fields) out = cell(out, col++, f);
          else if (!groups) out = cell(out, col++, verdictValue(v, c, reason));
        }
        if (groups) {
          for (let k = 0; k < columns.groups!.length; k++) {
            const g = groups[k] ?? groups[0]!;
            for (const c of columns.order) if (c !== 'input') out = cell(out, col++, verdictValue(g.verdict, c, g.reason));
          }
        }
        return out;
      });
    },
    drain: async (force) => {
      if (force || text.length >= CHUNK_CHARS) await flush();
      if (failure) throw failure;
      // Every caller waits while deflate is full, not only the one whose XML filled it: the
      // pipeline drains from several places at once, and one that found nothing to write
      // must not go on reading (xlsx to xlsx, 100k rows: 385-399 MB peak RSS without this).
      await sheet?.ready();
    },
    end: async () => {
      ended = true;
      if (!sheet) throw new Error('the xlsx writer ended before it began');
      text += SHEET_END;
      await flush();
      await sheet.end();
      if (failure) throw failure;
      // the central directory: 46 bytes and a short name per part, 22 for its end
      if (zip.written + 1024 > limits.bytes) throw (failure = tooBig(label, limits.bytes, instead));
      await zip.finish();
      if (gone.signal.aborted) return;
      if (!keepOpen) {
        dest.end();
        await finishedQuietly(dest);
      } else if (dest.writableNeedDrain) {
        await waitDrain(dest, broken);
      }
      if (failure) throw failure;
    },
    /** a run that failed before its end leaves a truncated workbook; the file is still closed */
    close: async () => {
      if (ended || keepOpen) return;
      dest.end();
      await finishedQuietly(dest);
    },
  };
}

async function finishedQuietly(stream: Writable): Promise<void> {
  await finished(stream).catch(() => {});
}

const fmt = (n: number): string => n.toLocaleString('en-US');

/** `out.xlsx` → `-o out.csv`, for the advice */
const csvInstead = (label: string): string => `-o ${label === 'stdout' ? 'out.csv' : label.replace(/\.xlsx$/i, '') + '.csv'}`;

function tooWide(label: string, width: number, inputWidth: number, most: number, instead: string, row?: number): UsageError {
  const where = row === undefined ? '' : ` in row ${row}`;
  const hint = width - inputWidth > 0 ? ' or fewer verdict columns (--columns status,reason)' : '';
  return new UsageError(
    `${label}: ${fmt(width)} columns${where}, past the ${fmt(most)} an .xlsx sheet holds (column ${columnLetters(most - 1)}); write CSV instead (${instead})${hint}`,
  );
}

/**
 * The check of the pre-flight pass (pipeline/preflight.ts) for an .xlsx output
 * that every input row reaches (no --only, --except or --unique): the input's
 * cells against the format's limits, with the writer's own words, so that a
 * cell or a row count past them is found before the first request rather than
 * after most of the list was paid for. Called with each row's cells in input
 * order (blank rows included: they are written too); throws. (For --split's
 * files, each row reaching one of them, the caller lifts the row limit.)
 */
export function xlsxRowCheck(
  label: string,
  header: readonly string[],
  columns: Columns,
  limits: { rows: number; cellChars: number } = XLSX_SHEET_LIMITS,
  instead = csvInstead(label),
): ((fields: readonly string[]) => void) & { cellChars: number; rows: number } {
  // where the input's cells start in an output row (--columns may put a text list's email after verdicts)
  const first = columns.order.indexOf('input');
  const check = (fields: readonly string[], row: number): void => {
    for (let i = 0; i < fields.length; i++) {
      if (fields[i]!.length > limits.cellChars) throw tooLong(label, `${columnLetters(first + i)}${row}`, fields[i]!.length, limits.cellChars, instead);
    }
  };
  check(header, 1);
  let row = 1;
  const each = (fields: readonly string[]): void => {
    if (++row > limits.rows) throw tooManyRows(label, limits.rows, instead);
    check(fields, row);
  };
  return Object.assign(each, { cellChars: limits.cellChars, rows: limits.rows });
}

function tooManyRows(label: string, most: number, instead: string): UsageError {
  return new UsageError(`${label}: more than ${fmt(most)} rows (the header included), the most an .xlsx sheet holds; write CSV instead (${instead})`);
}

function tooLong(label: string, ref: string, chars: number, most: number, instead: string): UsageError {
  return new UsageError(`${label}: cell ${ref} holds ${fmt(chars)} characters, past the ${fmt(most)} an .xlsx cell holds; write CSV instead (${instead})`);
}

function tooBig(label: string, maxBytes: number, instead: string): UsageError {
  return new UsageError(
    `${label}: the workbook passes ${fmt(maxBytes)} bytes, the most an .xlsx that mailsift writes holds (a zip without ZIP64); write CSV instead (${instead})`,
  );
}
