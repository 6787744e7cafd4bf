import { once } from 'node:events';
import { constants, createWriteStream, fstatSync, openSync } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { Socket } from 'node:net';
import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { EXIT, MailsiftError, UsageError } from '../errors.js';
import { writeError } from '../fs/errno.js';
import { replacement } from '../fs/replace.js';
import { realOf, slotOf } from './path-collisions.js';
import { systemClock } from '../time/clock.js';
import { sleep } from '../time/waits.js';

/**
 * An output file written whole or not at all (fs/replace.ts: a temp file
 * beside the target, renamed over it when complete). Until then the target is
 * untouched, so a run that fails or is interrupted leaves the previous file
 * byte-identical. What is the output's own: the path checked again before the
 * rename, symbolic links written through, a stream written in place, and the
 * outputs of a run put in place as one set (commitTogether).
 */
export interface AtomicFile {
  /** where the new content is written; the caller ends it */
  readonly stream: Writable;
  /**
   * Waits for the ended stream to close, makes the content durable and puts
   * it in place. `'create'` puts it there only if no file is there (an
   * interrupted run's partial output never replaces a complete one). False
   * when the file was left as it was.
   */
  commit(mode?: 'replace' | 'create'): Promise<boolean>;
  /**
   * The first half of commit: waits for the ended stream to close, checks the
   * path again and makes the content durable, without putting it in place
   * (commit then only renames). Throws what a commit would; the outputs of a
   * run are all prepared before any is put in place (commitTogether).
   */
  prepare(): Promise<void>;
  /** Drops the new content: the target stays as it was, the temporary file is removed. */
  discard(): Promise<void>;
}

export interface OpenOptions {
  /** Ctrl-C: stops waiting for a reader of a FIFO */
  signal?: AbortSignal;
  /** the run's own stdout and stderr (its io's); by default the process's */
  std?: StdStreams;
}

/**
 * The run's stdout and stderr: a path that names one of them (`/dev/stdout`,
 * `/dev/fd/2`, or the file it is redirected to) is written where it stands.
 */
export interface StdStreams {
  readonly stdout: StdStream;
  readonly stderr: StdStream;
}

/**
 * A standard stream, with its descriptor when it is one of the process's own:
 * only then can a path be the same file (by device and inode). An in-process
 * run's buffer has none, and is found by the name alone.
 */
export type StdStream = Writable & { readonly fd?: number };

/**
 * Writes `text` as the whole content of `file` and puts it in place (see
 * AtomicFile.commit for `mode`); on a failed write the target stays as it was.
 * For outputs written in one piece at the end of a run: --summary, --report.
 */
export async function writeWhole(file: AtomicFile, text: string, label: string, mode: 'replace' | 'create'): Promise<boolean> {
  await writeOnly(file, text, label);
  return file.commit(mode);
}

/**
 * writeWhole without putting the file in place: the content written and
 * prepared (see AtomicFile.prepare), for commitTogether. On a failed write the
 * temp file is removed and the target stays as it was.
 */
export async function writeOnly(file: AtomicFile, text: string, label: string): Promise<void> {
  try {
    // end()'s callback gets a write error (ENOSPC) before 'error' is emitted: both must fail the write
    await new Promise<void>((resolve, reject) => {
      file.stream.once('error', reject);
      file.stream.end(text, (err?: Error | null) => (err ? reject(err) : resolve()));
    });
  } catch (err) {
    await file.discard();
    throw writeError(label, err);
  }
  try {
    await file.prepare();
  } catch (err) {
    await file.discard();
    throw err;
  }
}

/** A file of a set and how it goes in place (see AtomicFile.commit). */
export interface Placement {
  file: AtomicFile;
  mode: 'replace' | 'create';
  label: string;
}

/**
 * The outputs of a run are one set: each is prepared — written whole and made
 * durable beside its target — and only once all are does any replace its older
 * file; if one cannot be prepared (a full disk), every one is discarded and the
 * older files all stay as they were. What is left is renames in the targets'
 * own directories, which need no room. Resolves to the labels of the files left
 * as they were by `create` (a file was there).
 */
export async function commitTogether(set: readonly Placement[]): Promise<string[]> {
  const prepared = await Promise.allSettled(set.map((p) => p.file.prepare()));
  const failed = prepared.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.allSettled(set.map((p) => p.file.discard()));
    throw failed.reason;
  }
  const kept: string[] = [];
  for (const p of set) if (!(await p.file.commit(p.mode))) kept.push(p.label);
  return kept;
}

/**
 * Opens `path` for an atomic write; `label` names it in errors. A path that
 * cannot be written fails here, before anything is read or sent. A symbolic
 * link is written through (its target is replaced, the link stays). A stream
 * is written in place, never renamed over: the process's own stdout or stderr
 * (`/dev/stdout`, `/dev/fd/2`, or the file they are redirected to), a device,
 * a FIFO (waited on for a reader without holding a thread) or a pipe.
 */
export async function openAtomic(path: string, label: string, o: OpenOptions = {}): Promise<AtomicFile> {
  const std = o.std ?? { stdout: process.stdout, stderr: process.stderr };
  const named = namedStream(path, std);
  if (named !== undefined) return 'stream' in named ? standing(forwardTo(named.stream), label) : inPlace(named.fd, label);
  const target = await realOf(resolve(path));
  const st = await stat(target, { bigint: true }).catch(() => undefined);
  if (st?.isDirectory()) throw writeError(label, { code: 'EISDIR' });
  if (st?.isFIFO()) return fifo(target, label, o.signal);
  if (st && !st.isFile()) return direct(target, label);
  const mine = st && [std.stdout.fd, std.stderr.fd].find((fd) => fd !== undefined && sameFile(fd, st));
  if (mine !== undefined) return inPlace(mine, label); // `-o log.txt >> log.txt`: stdout's own file, appended to
  // Renaming over a file the user made read-only would bypass the protection: refuse as a write would.
  if (st) await access(target, constants.W_OK).catch((err: unknown) => Promise.reject(writeError(label, err)));
  const slot = await slotOf(target);
  // beside the target, durable before the rename, the mode of the file it replaces (fs/replace.ts)
  const r = await replacement(target, { mode: 0o666 }).catch((err: unknown) => Promise.reject(writeError(label, err)));
  const stream = r.handle.createWriteStream();
  const closed = (): Promise<unknown> => (stream.closed ? Promise.resolve() : once(stream, 'close').catch(() => {}));
  let prepared: Promise<void> | undefined;
  const prepare = async (): Promise<void> => {
    await closed();
    try {
      // What was checked is what is written: a link that appeared at the path
      // since it was opened (and checked against the input) is not followed.
      const now = await realOf(resolve(path));
      if (now !== target || (await slotOf(now)) !== slot) {
        throw new UsageError(`${label} changed during the run: it now leads to ${now}, not to the file that was checked; nothing was written there`);
      }
      await r.sync();
    } catch (err) {
      throw err instanceof UsageError ? err : writeError(label, err);
    }
  };
  return {
    stream,
    prepare: () => (prepared ??= prepare()),
    async commit(mode = 'replace') {
      try {
        await (prepared ??= prepare());
      } catch (err) {
        await r.discard();
        throw err;
      }
      try {
        return await r.put(mode);
      } catch (err) {
        throw writeError(label, err);
      }
    },
    async discard() {
      stream.destroy();
      await closed();
      await r.discard();
    },
  };
}

/**
 * The stream a path names in this run (`/dev/stdout`, `/dev/fd/3`,
 * `/proc/self/fd/1`): stdout and stderr are the run's own (a buffer in
 * process has no descriptor); another descriptor the process's, when open.
 */
function namedStream(path: string, std: StdStreams): { stream: StdStream } | { fd: number } | undefined {
  const m = /^\/(?:dev\/(?:(stdout)|(stderr)|fd\/(\d+))|proc\/self\/fd\/(\d+))$/.exec(resolve(path));
  if (!m) return undefined;
  const fd = m[1] ? 1 : m[2] ? 2 : Number(m[3] ?? m[4]);
  const own = fd === 1 ? std.stdout : fd === 2 ? std.stderr : undefined;
  if (own !== undefined && own.fd === undefined) return { stream: own };
  try {
    fstatSync(own?.fd ?? fd);
    return { fd: own?.fd ?? fd };
  } catch {
    return undefined; // not open here: opened by its path like any other
  }
}

function sameFile(fd: number, st: { dev: bigint; ino: bigint }): boolean {
  try {
    const own = fstatSync(fd, { bigint: true });
    return own.isFile() && own.dev === st.dev && own.ino === st.ino;
  } catch {
    return false;
  }
}

/**
 * A descriptor the process already holds (stdout, stderr): written where it
 * stands, appending when the shell opened it with `>>`, never closed, never
 * renamed over; a log it points to keeps its earlier content.
 */
function inPlace(fd: number, label: string): AtomicFile {
  return standing(createWriteStream(`/dev/fd/${fd}`, { fd, autoClose: false }), label);
}

/** A stream written where it stands: its writer ends it, nothing renames over it. */
function standing(stream: Writable, label: string): AtomicFile {
  const done = (): Promise<void> => (stream.writableFinished || stream.destroyed ? Promise.resolve() : finished(stream).catch(() => {}));
  const settle = async (): Promise<void> => {
    await done();
    if (stream.errored) throw writeError(label, stream.errored);
  };
  return {
    stream,
    prepare: settle,
    commit: async () => (await settle(), true),
    discard: async () => {
      // what is written is written: a stream cannot be taken back
      if (!stream.writableEnded) stream.end();
      await done();
    },
  };
}

/** What is written to it goes on to `target`, which its end leaves open: an in-process run's stdout outlives the output written to it. */
function forwardTo(target: Writable): Writable {
  return new Writable({ write: (chunk, _encoding, done) => void target.write(chunk, (err) => done(err ?? undefined)) });
}

/** Polls for a FIFO's reader this often: opening it for writing blocks a thread until one comes. */
const FIFO_POLL_MS = 50;

/**
 * A FIFO: opened without blocking (a blocking open would hold one of libuv's
 * few threads, which no signal can free, until a reader comes), retried until
 * a reader is there or `signal` (Ctrl-C) says stop, then written as a pipe.
 */
async function fifo(target: string, label: string, signal?: AbortSignal): Promise<AtomicFile> {
  let fd: number;
  for (;;) {
    try {
      // never blocks: O_NONBLOCK fails at once (ENXIO) while no reader is there
      fd = openSync(target, constants.O_WRONLY | constants.O_NONBLOCK);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw writeError(label, err);
    }
    // no reader yet
    if (signal?.aborted) {
      const code = (signal.reason as { exitCode?: number } | undefined)?.exitCode ?? EXIT.sigint;
      throw new MailsiftError(`${code === EXIT.sigint ? 'interrupted' : 'terminated'} while waiting for a reader of ${label}; nothing was sent`, code);
    }
    await sleep(systemClock, FIFO_POLL_MS, signal).catch(() => {});
  }
  const stream = new Socket({ fd, readable: false, writable: true });
  return asItIs(stream, () => (stream.destroyed ? Promise.resolve() : finished(stream).catch(() => {})));
}

/** A device (`/dev/null`): written as it is, since it cannot be replaced. */
async function direct(target: string, label: string): Promise<AtomicFile> {
  const stream = createWriteStream(target);
  try {
    await once(stream, 'open');
  } catch (err) {
    throw writeError(label, err);
  }
  return asItIs(stream, () => (stream.closed ? Promise.resolve() : once(stream, 'close').catch(() => {})));
}

/** A FIFO or a device, written in place: committed once `settled`, discarded by cutting the stream off. */
function asItIs(stream: Writable, settled: () => Promise<unknown>): AtomicFile {
  return {
    stream,
    prepare: async () => void (await settled()),
    commit: async () => (await settled(), true),
    discard: async () => {
      stream.destroy();
      await settled();
    },
  };
}
