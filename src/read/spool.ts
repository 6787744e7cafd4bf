import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT, MailsiftError } from '../errors.js';
import { fileTrouble } from '../fs/errno.js';
import { tempDirectory } from '../fs/temp.js';

export interface Spooled {
  path: string;
  /** deletes the copy; safe to call more than once */
  remove(): Promise<void>;
}

/** The error of a read stopped by Ctrl-C (or SIGTERM) before anything was sent. */
export function interruptedReading(name: string, signal: AbortSignal): MailsiftError {
  const reason = signal.reason as { exitCode?: number; message?: string } | undefined;
  const word = reason?.message === 'terminated' ? 'terminated' : 'interrupted';
  return new MailsiftError(`${word} while reading ${name}; nothing was sent`, reason?.exitCode ?? EXIT.sigint);
}

/**
 * Copies a stream (a workbook piped on stdin) to a private temp file, because a
 * zip is read from its end. The copy is deleted by `remove()`, and in any case
 * when the process exits; `signal` (Ctrl-C) stops the copy at once, even while
 * the source is silent.
 */
export async function spool(source: AsyncIterable<Buffer>, name: string, signal?: AbortSignal): Promise<Spooled> {
  signal?.throwIfAborted();
  // named after this run, so that a later one can tell a killed run's copy (kill -9 leaves it)
  const { path: dir, remove } = await tempDirectory();
  const path = join(dir, 'input.xlsx');
  try {
    const file = await open(path, 'wx', 0o600);
    try {
      const it = source[Symbol.asyncIterator]();
      let onAbort: (() => void) | undefined;
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(interruptedReading(name, signal!));
        signal?.addEventListener('abort', onAbort, { once: true });
      });
      aborted.catch(() => {});
      try {
        for (;;) {
          const r = await Promise.race([it.next(), aborted]);
          if (r.done) break;
          await file.write(r.value);
          if (signal?.aborted) throw interruptedReading(name, signal);
        }
      } finally {
        if (onAbort) signal?.removeEventListener('abort', onAbort);
      }
    } finally {
      await file.close();
    }
  } catch (err) {
    await remove();
    if (err instanceof MailsiftError) throw err;
    throw new MailsiftError(`cannot copy ${name} to a temp file in ${tmpdir()}: ${fileTrouble(err, 'write')}`, EXIT.ioError, {
      cause: err,
    });
  }
  return { path, remove };
}
