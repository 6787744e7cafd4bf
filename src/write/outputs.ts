import { once } from 'node:events';
import { createWriteStream, promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { MailsiftError, UsageError } from '../errors.js';
import type { Summary } from '../summary.js';
import type { Status } from '../verdict.js';
import type { Columns, OutputFormat, OutputPlan } from './output-plan.js';
import { createRowWriter, type RowWriter, type TextOptions } from './row-writer.js';
import { Sink } from './sink.js';
import { createXlsxWriter } from './xlsx-writer.js';

/** Where the rows of a run go: one writer, however many files are behind it. */
export interface Output {
  writer: RowWriter;
  /** aborted once the reader of stdout has gone away (`| head`) */
  gone: AbortSignal;
  /** flushes and closes what was opened; throws when something could not be written */
  end(): Promise<void>;
  /** what the output is called in the summary: a file, a directory, or stdout */
  label: string;
}

/**
 * Opens every output file of the plan before the first request (so a path that
 * cannot be written fails the run before anything is paid for).
 */
export async function openOutputs(plan: OutputPlan, header: readonly string[], columns: Columns, emailColumn?: number): Promise<Output> {
  const text: TextOptions = { emailColumn, bom: plan.bom };
  if (plan.split) {
    const { dir, statuses } = plan.split;
    try {
      await fs.mkdir(dir, { recursive: true });
    } catch (err) {
      throw new UsageError(`--split ${dir}: cannot create the directory: ${describe(err)}`);
    }
    const parts: Output[] = [];
    try {
      for (const status of statuses) parts.push(await openOne(join(dir, `${status}.${plan.format}`), plan.format, header, columns, text));
    } catch (err) {
      await Promise.allSettled(parts.map((p) => p.end()));
      throw err;
    }
    return splitOutput(dir, statuses, parts);
  }
  return openOne(plan.file, plan.format, header, columns, text);
}

async function openOne(
  path: string | undefined,
  format: OutputFormat,
  header: readonly string[],
  columns: Columns,
  text: TextOptions,
): Promise<Output> {
  const dest = path === undefined ? process.stdout : await openFile(path);
  const label = path ?? 'stdout';
  if (format === 'xlsx') {
    const writer = await createXlsxWriter(dest, label, header, columns);
    return { writer, gone: writer.gone, label, end: () => writer.close() };
  }
  const sink = new Sink(dest, label);
  return { writer: createRowWriter(format, sink, header, columns, text), gone: sink.gone, label, end: () => sink.end(dest !== process.stdout) };
}

/** `--split`: each row goes to the file of its status. */
function splitOutput(dir: string, statuses: readonly Status[], parts: Output[]): Output {
  const byStatus = new Map(statuses.map((s, i) => [s, parts[i]!.writer]));
  const writers = parts.map((p) => p.writer);
  return {
    label: dir,
    gone: new AbortController().signal,
    writer: {
      begin: async () => {
        for (const w of writers) await w.begin();
      },
      // `--only` already kept the other statuses from reaching here
      row: (fields, v) => byStatus.get(v.status)?.row(fields, v),
      drain: async (force) => {
        for (const w of writers) await w.drain(force);
      },
      end: async (summary: Summary) => {
        for (const w of writers) await w.end(summary);
      },
    },
    end: async () => {
      const results = await Promise.allSettled(parts.map((p) => p.end()));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}

async function openFile(path: string): Promise<Writable> {
  try {
    const stat = await fs.stat(path).catch(() => undefined);
    if (stat?.isDirectory()) throw new UsageError(`cannot write ${path}: it is a directory`);
    const stream = createWriteStream(path);
    await once(stream, 'open'); // rejects with an 'error' that comes first
    return stream;
  } catch (err) {
    if (err instanceof MailsiftError) throw err;
    throw new UsageError(`cannot write ${path}: ${describe(err)}`);
  }
}

function describe(err: unknown): string {
  const code = (err as { code?: string }).code;
  if (code === 'ENOENT') return 'no such directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOTDIR' || code === 'EEXIST') return 'a file is in the way';
  return (err as Error).message;
}
