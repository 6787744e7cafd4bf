import { PassThrough, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { writeError, type MailsiftError } from '../errors.js';
import { columnNames, type Columns } from './output-plan.js';
import type { RowWriter } from './row-writer.js';
import { waitDrain } from './sink.js';
import { verdictValue } from './verdict-columns.js';

/**
 * Writes the rows as one sheet of an Excel workbook through exceljs's streaming
 * writer: each row is committed (serialised and compressed) as it comes, so
 * memory does not grow with the output. Cells are typed — the input's cells as
 * text (a zip code or phone number keeps its leading zeros), booleans and
 * confidence as Excel booleans and numbers, unknown values empty. A sheet
 * never evaluates a text cell, so no formula defusing is needed here.
 */
export async function createXlsxWriter(
  dest: Writable,
  label: string,
  header: readonly string[],
  columns: Columns,
): Promise<RowWriter & { gone: AbortSignal; close(): Promise<void> }> {
  const ExcelJS = (await import('exceljs')).default;
  // exceljs resolves its commit on the stream's 'finish', which stdout never
  // emits: it writes into a pipe of ours, and we wait for the destination.
  const pipe = new PassThrough();
  const isStdout = dest === process.stdout;
  const gone = new AbortController();
  let failure: MailsiftError | undefined;
  dest.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') gone.abort();
    else failure ??= writeError(label, err);
  });
  pipe.pipe(dest, { end: !isStdout });
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: pipe, useStyles: false, useSharedStrings: false });
  const sheet = workbook.addWorksheet('verdicts');
  /** end() was called: the workbook is finished, or its output failed */
  let ended = false;

  return {
    gone: gone.signal,
    begin: async () => {
      sheet.addRow(columnNames(columns, header)).commit();
    },
    row: (fields, v, reason) => {
      const cells: (string | number | boolean | null)[] = [];
      for (const c of columns.order) {
        if (c === 'input') for (const f of fields) cells.push(f === '' ? null : f);
        else cells.push(verdictValue(v, c, reason) ?? null);
      }
      sheet.addRow(cells).commit();
    },
    drain: async () => {
      if (failure) throw failure;
      // exceljs's sheet stream writes into the zip whatever it is told, and never
      // says "wait": without waiting here for the compressor, then the output,
      // rows pile up in memory when they come faster than they are written
      // (200k rows from CSV: 266 MB peak RSS without this wait, 150 MB with).
      const broken = (): boolean => gone.signal.aborted || failure !== undefined;
      for (const next of [...sheetPipes(sheet), pipe, dest]) {
        if (broken()) return;
        if (needsDrain(next)) await waitDrain(next, broken);
      }
    },
    end: async () => {
      ended = true;
      if (failure) throw failure;
      sheet.commit();
      await workbook.commit();
      if (!isStdout) await finished(dest).catch(() => {});
      else if (dest.writableNeedDrain) await waitDrain(dest, () => failure !== undefined);
      if (failure) throw failure;
    },
    /** a run that failed before its end leaves a truncated workbook; the file is still closed */
    close: async () => {
      if (ended || isStdout) return;
      dest.end();
      await finished(dest).catch(() => {});
    },
  };
}

/** The streams exceljs pipes a sheet's XML into (its StreamBuf's consumers: the zip's compressor). */
function sheetPipes(sheet: unknown): Writable[] {
  const pipes = (sheet as { stream?: { pipes?: unknown } }).stream?.pipes;
  return Array.isArray(pipes) ? (pipes as Writable[]) : [];
}

/** archiver's streams come from readable-stream 2, which has no `writableNeedDrain`. */
function needsDrain(stream: Writable): boolean {
  const state = (stream as { _writableState?: { needDrain?: boolean } })._writableState;
  return stream.writableNeedDrain ?? state?.needDrain ?? false;
}
