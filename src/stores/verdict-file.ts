import { open, stat, type FileHandle } from 'node:fs/promises';
import { syncDirectory } from '../fs/durable.js';
import { fileTrouble } from '../fs/errno.js';
import { UsageError } from '../errors.js';

import type { KnownVerdicts } from './known-verdicts.js';
import { DurableAppender } from './appender.js';
import { bindingDifference, type JobBinding } from './binding.js';
import { VerdictEncoder, type Evidence } from '../codec/verdict-encoding.js';
import { keptBy } from '../reason.js';
import { scanLines } from './lines.js';

export type FileKind = 'journal' | 'cache';
/**
 * 2: each record carries its evidence and a checksum. A file begun by version
 * 1 is still read (its records of the first format are asked again, see
 * TailPool) and appended to.
 */
const VERSION = 2;
const READABLE_VERSIONS: readonly unknown[] = [1, 2];

export interface OpenedVerdictFile {
  appender: DurableAppender;
  /** complete lines that `onLine` refused as damaged (ignored; their addresses are asked again) */
  badLines: number;
  /** bytes of a torn or damaged tail that were cut off before appending */
  repairedBytes: number;
  /** the file was begun before `expiry.notBefore` and so begun afresh: when the old one was begun (epoch ms) */
  restarted?: { began: number };
}

/**
 * A file whose verdicts all expire together, when the file was begun (a
 * journal: see openJournal): its header records when, and a file begun before
 * `notBefore` is begun afresh, none of its lines read.
 */
export interface Expiry {
  /** epoch ms: now, recorded in a new header */
  now: number;
  /** epoch ms: a file begun before this is too old to reuse */
  notBefore: number;
  /** look, but change nothing (a dry run): an old file's lines are left unread, and the file as it is */
  readOnly?: boolean;
}

export function headerLine(kind: FileKind, binding: JobBinding, began?: number): string {
  const { engine, baseUrl, fingerprint } = binding;
  // `began` in epoch seconds, as the cache's lines have their time
  return (
    JSON.stringify({ mailsift: kind, version: VERSION, engine, baseUrl, fingerprint, ...(began === undefined ? {} : { began: Math.floor(began / 1000) }) }) +
    '\n'
  );
}

/** Stops a scan at the header of a file that is too old (see Expiry). */
const TOO_OLD = Symbol('too old');

/** What to do next, in words, for a file that belongs to someone else. */
function elsewhere(kind: FileKind, path: string): string {
  return `give another --${kind} path, or delete ${path} to start over`;
}

/**
 * Opens (creating if need be) an append-only NDJSON file of verdicts: a header
 * line recording the job's binding, then one line per verdict, each passed to
 * `onLine` (which returns false for a line it cannot use). Refuses, with a
 * UsageError, a file of another kind or job — and anything that is not ours at
 * all, so a mistyped `--journal contacts.csv` never gets truncated. A torn or
 * damaged tail left by a crash is cut off so appends always start on a clean line.
 */
export async function openVerdictFile(
  path: string,
  kind: FileKind,
  binding: JobBinding,
  onLine: (line: string) => boolean,
  /**
   * other runs append to the file now (see registerUser): a torn tail may be
   * one of their writes under way, so it is not cut off; appends start on a
   * new line instead, and the fragment, if it stays one, is a damaged line
   */
  shared = false,
  expiry?: Expiry,
): Promise<OpenedVerdictFile> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'a+', 0o600);
  } catch (err) {
    throw new UsageError(`cannot open --${kind} ${path}: ${fileTrouble(err, 'write')}`, {
      cause: err,
    });
  }
  try {
    const stat = await fh.stat();
    if (!stat.isFile()) throw notRegular(kind, path);
    let header = false;
    let began: number | undefined;
    const scan = await scanLines(fh, (line, index) => {
      if (index === 0) {
        const h = checkHeader(line, path, kind, binding);
        header = true;
        if (expiry) {
          // a file from before `began` was recorded: begun no later than the file system says it was
          began = typeof h.began === 'number' && Number.isFinite(h.began) ? h.began * 1000 : stat.birthtimeMs > 0 ? stat.birthtimeMs : stat.mtimeMs;
          if (began < expiry.notBefore) throw TOO_OLD;
        }
        return true;
      }
      if (line === '') return true; // see `shared`
      return onLine(line);
    }).catch((err: unknown) => {
      if (err !== TOO_OLD) throw err;
      return undefined;
    });
    if (scan === undefined) {
      // too old to reuse: begun afresh, as a new file is (a dry run only looks)
      const restarted = { began: began! };
      if (!expiry!.readOnly) {
        await fh.truncate(0);
        const appender = new DurableAppender(fh, `--${kind} ${path}`);
        await appender.append(headerLine(kind, binding, expiry!.now));
        await appender.flush();
        return { appender, badLines: 0, repairedBytes: 0, restarted };
      }
      return { appender: new DurableAppender(fh, `--${kind} ${path}`), badLines: 0, repairedBytes: 0, restarted };
    }
    if (!header && scan.size > 0) await checkTornHeader(fh, scan.size, path, kind);
    const torn = scan.goodEnd < scan.size;
    if (torn && !shared) await fh.truncate(scan.goodEnd);
    const appender = new DurableAppender(fh, `--${kind} ${path}`);
    if (torn && shared && header) await appender.append('\n');
    if (!header) {
      await appender.append(headerLine(kind, binding, expiry?.now));
      await appender.flush();
      await syncDirectory(path);
    }
    return { appender, badLines: scan.badLines, repairedBytes: torn && !shared ? scan.size - scan.goodEnd : 0 };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/**
 * A store's record() and close() on its file: what its kind keeps of each
 * finished batch (keptBy), appended in one write, as verdicts resting on
 * `evidence`, its lines prefixed with `stamp()` when given (the cache's time);
 * closed once, the file first, then `release` (its lock, its registration)
 * whatever happened.
 */
export function appending(
  kind: FileKind,
  appender: DurableAppender,
  evidence: Evidence,
  release: () => Promise<void>,
  stamp?: () => number,
): Pick<KnownVerdicts, 'record' | 'close'> {
  let closed = false;
  const encoder = new VerdictEncoder(evidence);
  return {
    record(verdicts) {
      const text = encoder.lines(
        verdicts.filter((v) => keptBy(kind, v)),
        stamp?.(),
      );
      return text ? appender.append(text) : Promise.resolve();
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await appender.close();
      } finally {
        await release();
      }
    },
  };
}

// A device or a pipe (/dev/zero, /dev/stdout) would never end or never keep anything.
function notRegular(kind: FileKind, path: string): UsageError {
  // nothing to delete: a device, a FIFO or a directory is not a file of ours (and /dev/null would keep nothing)
  return new UsageError(`--${kind} ${path} is not a regular file: it is read back by the next run; give the path of a file (new or an earlier --${kind})`);
}

/** Refuses early (before a lock file is made next to it) a path that exists and is no regular file. */
export async function checkRegularFile(path: string, kind: FileKind): Promise<void> {
  const st = await stat(path).catch(() => undefined);
  if (st && !st.isFile()) throw notRegular(kind, path);
}

function checkHeader(line: string, path: string, kind: FileKind, binding: JobBinding): Record<string, unknown> {
  let h: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(line);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) h = parsed as Record<string, unknown>;
  } catch {
    // not JSON: handled below
  }
  if (!h || (h.mailsift !== 'journal' && h.mailsift !== 'cache')) {
    throw new UsageError(`--${kind} ${path} is not a mailsift ${kind}; ${elsewhere(kind, path)}`);
  }
  if (h.mailsift !== kind) {
    throw new UsageError(`--${kind} ${path} is a mailsift ${String(h.mailsift)}, not a ${kind}; ${elsewhere(kind, path)}`);
  }
  if (!READABLE_VERSIONS.includes(h.version)) {
    throw new UsageError(`--${kind} ${path} was written by another version of mailsift; ${elsewhere(kind, path)}`);
  }
  const diff = bindingDifference(h as Partial<JobBinding>, binding);
  if (diff) throw new UsageError(`--${kind} ${path} belongs to another job: ${diff}; ${elsewhere(kind, path)}`);
  return h;
}

/**
 * No complete line at all: either a crash cut our own header short (start
 * afresh) or this is somebody else's one-line file (refuse, never truncate it).
 */
async function checkTornHeader(fh: FileHandle, size: number, path: string, kind: FileKind): Promise<void> {
  const want = `{"mailsift":"${kind}"`;
  const buf = Buffer.alloc(Math.min(size, want.length));
  await fh.read(buf, 0, buf.length, 0);
  const head = buf.toString('latin1');
  if (!want.startsWith(head) && !head.startsWith(want)) {
    throw new UsageError(`--${kind} ${path} is not a mailsift ${kind}; ${elsewhere(kind, path)}`);
  }
}
