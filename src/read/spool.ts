import { rmSync } from 'node:fs';
import { mkdtemp, open, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT, MailsiftError } from '../errors.js';
import { OWNER, ownerIsGone, SELF } from '../owner.js';

/** Temp directories alive now: removed at exit whatever the way out (process.exit included). */
const live = new Set<string>();
let hooked = false;

function removeAllNow(): void {
  for (const dir of live) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // nothing more can be done on the way out
    }
  }
  live.clear();
}

const SPOOLED = new RegExp(String.raw`^mailsift-(${OWNER})-[A-Za-z0-9]{6}$`);

/** Copies left in the temp directory by runs that are gone (kill -9, a crash): their owner is in the name. */
async function removeDeadCopies(): Promise<void> {
  for (const name of await readdir(tmpdir()).catch(() => [] as string[])) {
    const owner = SPOOLED.exec(name)?.[1];
    // (a directory holds no lock: an owner in another PID namespace is left be; a temp directory is seldom shared)
    if (owner !== undefined && owner !== SELF && (await ownerIsGone(owner))) await rm(join(tmpdir(), name), { recursive: true, force: true }).catch(() => {});
  }
}

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
  if (!hooked) {
    process.on('exit', removeAllNow);
    hooked = true;
  }
  signal?.throwIfAborted();
  await removeDeadCopies();
  // named after this run, so that a later one can tell a killed run's copy (kill -9 leaves it)
  const dir = await mkdtemp(join(tmpdir(), `mailsift-${SELF}-`));
  live.add(dir);
  const remove = async (): Promise<void> => {
    if (!live.delete(dir)) return;
    await rm(dir, { recursive: true, force: true });
  };
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
    throw new MailsiftError(`cannot copy ${name} to a temp file in ${tmpdir()}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, EXIT.ioError, {
      cause: err,
    });
  }
  return { path, remove };
}
