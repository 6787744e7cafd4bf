import { fstatSync, promises as fs } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { fileTrouble } from '../fs/errno.js';
import { openAtomic, type AtomicFile, type OpenOptions, type Placement, type StdStreams } from './atomic-file.js';
import type { Summary } from '../summary.js';
import type { Status } from '../verdict.js';
import type { Columns, OutputPlan } from './output-plan.js';
import { createRowWriter, type RowWriter, type TextOptions } from './row-writer.js';
import { Sink } from './sink.js';
import { DEFAULT_DIALECT, encoderFor, unicodeEncoding, type Dialect, type CharsetEncoder } from '../dialect.js';
import { createXlsxWriter } from './xlsx-writer.js';

/**
 * How a run ended, for its output files: `complete` replaces what was there;
 * `partial` (interrupted, the rows so far) is put in place only where no file
 * was, never over a complete one; `failed` leaves every file as it was.
 */
export type Outcome = 'complete' | 'partial' | 'failed';

/** Where the rows of a run go: one writer, however many files are behind it. */
export interface Output {
  writer: RowWriter;
  /** aborted once the reader of stdout has gone away (`| head`) */
  gone: AbortSignal;
  /**
   * Flushes and closes what was opened; throws when something could not be
   * written (the files are then left as they were). Resolves to the files to
   * put in place as the outcome says — with the run's other outputs, together
   * (commitTogether) — none when the run failed.
   */
  end(outcome: Outcome): Promise<Placement[]>;
  /** what the output is called in the summary: a file, a directory, or stdout */
  label: string;
  /** lines for stderr once the rows are written: characters the output's encoding could not hold */
  notices(): string[];
}

/** The files `--split DIR` writes: one per status kept. */
export function splitFiles(plan: OutputPlan): string[] {
  return plan.split ? plan.split.statuses.map((s) => join(plan.split!.dir, `${s}.${plan.format}`)) : [];
}

/** The input's shape, as the outputs need it. */
export interface OutputShape {
  header: readonly string[];
  columns: Columns;
  emailColumn?: number;
  /** the CSV output's dialect (default: comma, LF, UTF-8) */
  dialect?: Dialect;
  /** the checked columns, when several */
  checkedColumns?: readonly number[];
}

/**
 * Opens every output file of the plan before the first request (so a path that
 * cannot be written fails the run before anything is paid for). Each is
 * written beside its target and renamed into place at the end (atomic-file.ts).
 * Rows without a file go to the run's stdout (`io`, the process's or a buffer).
 */
export async function openOutputs(plan: OutputPlan, shape: OutputShape, io: StdStreams, signal?: AbortSignal): Promise<Output> {
  const { header, columns, emailColumn, dialect = DEFAULT_DIALECT, checkedColumns } = shape;
  const text: TextOptions = { emailColumn, dialect, escapeFormulas: plan.escapeFormulas, ...(checkedColumns ? { checkedColumns } : {}) };
  const open: OpenOptions = { signal, std: { stdout: io.stdout, stderr: io.stderr } };
  if (plan.split) {
    const { dir, statuses } = plan.split;
    let created: string | undefined;
    try {
      created = await fs.mkdir(dir, { recursive: true });
    } catch (err) {
      throw new UsageError(`--split ${dir}: cannot create the directory: ${fileTrouble(err, 'write')}`);
    }
    const parts: Opened[] = [];
    try {
      for (const path of splitFiles(plan)) parts.push(await openOne(path, plan, header, columns, text, open));
    } catch (err) {
      await Promise.allSettled(parts.map((p) => p.file?.discard()));
      if (created) await removeEmptyDirs(created, dir);
      throw err;
    }
    return splitOutput(dir, statuses, parts, created);
  }
  return single(await openOne(plan.file, plan, header, columns, text, open));
}

/** One destination opened: its writer, how to flush and close it, and the file behind it (none for stdout). */
interface Opened {
  writer: RowWriter;
  gone: AbortSignal;
  label: string;
  close(): Promise<void>;
  file?: AtomicFile;
  /** whether a row has been handed to the writer: a run that fails before its first puts nothing on stdout */
  started(): boolean;
  /** a CSV's encoder, when not UTF-8: it counts what it could not hold */
  encoder?: CharsetEncoder;
}

async function openOne(
  path: string | undefined,
  plan: OutputPlan,
  header: readonly string[],
  columns: Columns,
  text: TextOptions,
  open: OpenOptions,
): Promise<Opened> {
  const { format } = plan;
  const file = path === undefined ? undefined : await openAtomic(path, path, open);
  const dest = file?.stream ?? open.std!.stdout;
  const label = path ?? 'stdout';
  let rows = false;
  /** the writer, noting its first row: until then nothing is passed on, not even the header (a run may yet fail) */
  const noting = (w: RowWriter): RowWriter => ({
    ...w,
    row: (fields, v, reason, cells) => {
      rows = true;
      w.row(fields, v, reason, cells);
    },
    drain: (force) => (rows ? w.drain(force) : Promise.resolve()),
  });
  try {
    if (format === 'xlsx') {
      // stdout is the run's, not the writer's to end
      const writer = await createXlsxWriter(dest, label, header, columns, { keepOpen: file === undefined, ...(plan.split ? { instead: '--format csv' } : {}) });
      return { writer: noting(writer), gone: writer.gone, label, close: () => writer.close(), file, started: () => rows };
    }
    // JSON is UTF-8 (RFC 8259), and so is a list of addresses; a CSV is in its dialect's encoding
    const encoding = text.dialect?.encoding ?? 'utf-8';
    const encoder = format === 'csv' && unicodeEncoding(encoding) !== 'utf-8' ? await encoderFor(encoding) : undefined;
    const sink = new Sink(dest, label, encoder, file === undefined && isPipe(open.std!.stdout.fd));
    const writer = noting(createRowWriter(format, sink, header, columns, text));
    return { writer, gone: sink.gone, label, close: () => sink.end(file !== undefined), file, started: () => rows, ...(encoder ? { encoder } : {}) };
  } catch (err) {
    await file?.discard();
    throw err;
  }
}

function single(part: Opened): Output {
  return { writer: part.writer, gone: part.gone, label: part.label, end: (outcome) => finish([part], outcome), notices: () => lossNotices([part]) };
}

/** What an encoding could not hold, per output: written `?`, said rather than left silent. */
function lossNotices(parts: readonly Opened[]): string[] {
  return parts.flatMap((p) => {
    const lost = p.encoder?.lost ?? 0;
    if (lost === 0) return [];
    return [
      `${p.label}: ${lost} character${lost === 1 ? '' : 's'} that the output's encoding cannot hold written as "?" (--output-encoding utf-8 keeps every character)`,
    ];
  });
}

/**
 * Flushes and closes every part, and hands back the files to put in place: all
 * of them, or — when one cannot be written, or the run failed — none (stdout
 * has had its rows already).
 */
async function finish(parts: readonly Opened[], outcome: Outcome): Promise<Placement[]> {
  // stdout has had its rows already; before the first, not even the header goes out
  const closing = outcome === 'failed' ? parts.filter((p) => !p.file && p.started()) : parts;
  const closed = await Promise.allSettled(closing.map((p) => p.close()));
  const failed = closed.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (outcome === 'failed' || failed) {
    await Promise.allSettled(parts.map((p) => p.file?.discard()));
    if (failed) throw failed.reason;
    return [];
  }
  const mode = outcome === 'complete' ? 'replace' : 'create';
  return parts.flatMap((p) => (p.file ? [{ file: p.file, mode, label: p.label } as const] : []));
}

/** `--split`: each row goes to the file of its status. */
function splitOutput(dir: string, statuses: readonly Status[], parts: Opened[], created: string | undefined): Output {
  const byStatus = new Map(statuses.map((s, i) => [s, parts[i]!.writer]));
  const writers = parts.map((p) => p.writer);
  return {
    label: dir,
    gone: new AbortController().signal,
    notices: () => lossNotices(parts),
    writer: {
      begin: async () => {
        for (const w of writers) await w.begin();
      },
      // `--only` already kept the other statuses from reaching here
      row: (fields, v, reason, cells) => byStatus.get(v.status)?.row(fields, v, reason, cells),
      drain: async (force) => {
        for (const w of writers) await w.drain(force);
      },
      end: async (summary: Summary) => {
        for (const w of writers) await w.end(summary);
      },
    },
    end: async (outcome) => {
      try {
        return await finish(parts, outcome);
      } finally {
        // a directory this run created and left empty (the run failed) goes too; rmdir keeps one with files
        if (created && outcome === 'failed') await removeEmptyDirs(created, dir);
      }
    },
  };
}

/** Removes `dir` and its parents up to `top` (the first that mkdir created), as long as each is empty. */
async function removeEmptyDirs(top: string, dir: string): Promise<void> {
  for (let d = resolve(dir); d.startsWith(resolve(top)); d = dirname(d)) {
    if (
      !(await fs.rmdir(d).then(
        () => true,
        () => false,
      ))
    )
      return;
  }
}

/** `fd` is a pipe (`| head`, `| jq`) or a socket: its reader takes rows as they come, and may leave. */
function isPipe(fd: number | undefined): boolean {
  if (fd === undefined) return false; // an in-process run's buffer
  try {
    const st = fstatSync(fd);
    return st.isFIFO() || st.isSocket();
  } catch {
    return false;
  }
}
